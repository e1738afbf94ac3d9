"""Agents: anything with ``act(view, rng) -> action``.

An agent sees only a seat's ``View`` (what that seat may know, with its legal
mask), never the state, so rule-based agents cannot cheat. ``reset()`` is called
before every game for agents that keep memory.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from card_envs.core.game import Agent, Game, View
from card_envs.core.spec import GameSpec


class BaseAgent:
    """Convenience base: a name, a no-op ``reset`` and a readable repr."""

    name = "agent"

    def __init__(self, game: Game | None = None):
        self.game = game

    def reset(self) -> None:
        """Forget anything remembered from the previous game."""

    def act(self, view: View, rng: np.random.Generator) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomAgent(BaseAgent):
    """Uniformly random among the legal actions."""

    name = "random"

    def act(self, view: View, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(view.legal)
        return int(legal[int(rng.random() * len(legal))])


def lowest_legal(mask: np.ndarray) -> int:
    """The smallest legal action index."""
    return int(np.argmax(mask))


def search_budgets(cls: type) -> tuple[int, int] | None:
    """The two budgets a search agent plays the ladder at, or None for other agents.

    A class may say them in ``ladder_budgets``; otherwise a quarter of its default
    budget and the default itself (the ``budget`` argument's default, or the class's
    ``default_budget`` when that argument defaults to None).
    """
    if not getattr(cls, "takes_budget", False):
        return None
    budgets = getattr(cls, "ladder_budgets", None)
    if budgets is not None:
        return (int(budgets[0]), int(budgets[1]))
    default = inspect.signature(cls.__init__).parameters["budget"].default
    if default is None:
        default = int(cls.default_budget)
    return (max(1, default // 4), default)


@dataclass(frozen=True)
class AgentPlugin:
    """Agents that live above core (trained models): built by ``factory(spec, name, game)``.

    ``factory`` is a callable or a ``"module:function"`` string, imported on first use, so
    that registering a plug-in imports nothing heavy (torch stays out of ``import card_envs``).
    ``extra`` names the install extra whose absence makes the import fail.
    """

    usage: str
    factory: Callable[..., Agent] | str
    extra: str = ""

    def load(self) -> Callable[..., Agent]:
        """The factory, importing its module if it was given by name."""
        if not isinstance(self.factory, str):
            return self.factory
        module, _, attr = self.factory.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ImportError as err:
            need = f" needs the {self.extra} extra (pip install 'card-envs[{self.extra}]')"
            raise ValueError(f"agent {self.usage!r}{need if self.extra else ''}: {err}") from err


_PLUGINS: dict[str, AgentPlugin] = {}


def register_agent_plugin(
    kind: str, factory: Callable[..., Agent] | str, usage: str | None = None, extra: str = ""
) -> None:
    """Let ``make_agent`` build the agents named ``KIND`` or ``KIND:ARG`` with ``factory``.

    This is how layers above core plug agents into lookup by name; ``card_envs`` registers
    ``model:PATH`` and ``best`` (card_envs.rl.policy_agent) this way. Registering a kind
    again replaces it.
    """
    _PLUGINS[kind] = AgentPlugin(usage or kind, factory, extra)


def make_agent(spec: GameSpec, agent: Any, game: Game) -> Agent:
    """An agent from a name (``random``, a rule agent, a plug-in's name) or an Agent.

    An agent class with ``takes_budget = True`` (a search agent) also answers to
    ``NAME:BUDGET``, built as ``cls(game, budget=BUDGET)`` (a positive integer whose unit,
    e.g. simulations per move, the agent documents). Plug-ins (``register_agent_plugin``)
    serve the other names, e.g. ``model:PATH``, ``best`` and ``cmd:PROGRAM`` (an outside
    program: card_envs.core.cmd_agent). Raises ValueError naming the valid names for an
    unknown one.
    """
    if not isinstance(agent, str):
        if not hasattr(agent, "act"):
            raise ValueError(f"an agent must have an act(view, rng) method, got {agent!r}")
        return agent
    if agent == "random":
        return RandomAgent(game)
    if agent in spec.agents:
        return spec.agents[agent](game)
    base, sep, budget = agent.partition(":")
    if sep and base in spec.agents and getattr(spec.agents[base], "takes_budget", False):
        if not (budget.isdecimal() and budget.isascii()) or int(budget) < 1:
            raise ValueError(
                f"agent {agent!r}: the budget after ':' must be a positive integer "
                f"(e.g. {base}:200); see the agent's documentation for its unit"
            )
        return spec.agents[base](game, budget=int(budget))
    plugin = _PLUGINS.get(base.partition("[")[0])  # a kind may take options: cmd[timeout=9]:X
    if plugin is not None and bool(sep) == (":" in plugin.usage):
        return plugin.load()(spec, agent, game)
    names = [
        "random",
        *(f"{n}[:BUDGET]" if getattr(c, "takes_budget", False) else n
          for n, c in spec.agents.items()),
        *(p.usage for p in _PLUGINS.values()),
    ]
    raise ValueError(
        f"unknown agent {agent!r} for {spec.env_name}; choose one of {', '.join(names)}"
    )


# Outside programs over JSON Lines (card_envs/core/cmd_agent.py), imported when one is asked for.
register_agent_plugin("cmd", "card_envs.core.cmd_agent:make_cmd_agent", "cmd:PROGRAM")
