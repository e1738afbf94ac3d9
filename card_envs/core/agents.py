"""Agents: anything with ``act(view, rng) -> action``.

An agent sees only a seat's ``View`` (what that seat may know, with its legal
mask), never the state, so rule-based agents cannot cheat. ``reset()`` is called
before every game for agents that keep memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from card_envs.core.game import Game, View

if TYPE_CHECKING:
    from card_envs.core.spec import GameSpec


@runtime_checkable
class Agent(Protocol):
    def act(self, view: View, rng: np.random.Generator) -> int: ...


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


def make_agent(spec: GameSpec, agent: Any, game: Game) -> Agent:
    """An agent from a name (``random``, a rule agent, ``model:PATH``, ``best``) or an Agent.

    An agent class with ``takes_budget = True`` (a search agent) also answers to
    ``NAME:BUDGET``, built as ``cls(game, budget=BUDGET)`` (a positive integer whose unit,
    e.g. simulations per move, the agent documents). Raises ValueError naming the valid
    names for an unknown one.
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
        if not budget.isdigit() or int(budget) < 1:
            raise ValueError(
                f"agent {agent!r}: the budget after ':' must be a positive integer "
                f"(e.g. {base}:200); see the agent's documentation for its unit"
            )
        return spec.agents[base](game, budget=int(budget))
    if agent.startswith("model:") or agent == "best":
        try:
            from card_envs.rl.policy_agent import load_model_agent
        except ImportError as err:
            raise ValueError(
                f"agent {agent!r} needs the train extra (pip install 'card-envs[train]'): {err}"
            ) from err
        return load_model_agent(spec, agent, game)
    names = [
        "random",
        *(f"{n}[:BUDGET]" if getattr(c, "takes_budget", False) else n
          for n, c in spec.agents.items()),
        "model:PATH",
        "best",
    ]
    raise ValueError(
        f"unknown agent {agent!r} for {spec.env_name}; choose one of {', '.join(names)}"
    )
