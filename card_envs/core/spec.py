"""GameSpec: everything the generic environments need to know about one game (data and checks).

A game's ``env.py`` declares one ``GameSpec`` named ``SPEC``: the game's identity (name,
version, Gymnasium name, player counts), declared once; the registry derives every id from
it. Constructor arguments are checked here, so a wrong name or value raises
ValueError naming the valid choices, at construction. What is built from a spec (its
environments, ``card_envs.core.make.factories(SPEC)``, and its batched engine,
``make_batched(SPEC, **rules)``) is built in ``card_envs.core.make``.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from card_envs.core.encoding import Encoder
from card_envs.core.game import Agent, Game, State, check_choice

# Where each registered spec is defined (id(spec) -> module path), for pickling by reference;
# card_envs.registry fills it, so that this module need not import the registry.
_HOMES: dict[int, str] = {}


def record_home(spec: GameSpec, module_path: str) -> None:
    """Note that ``spec`` is the ``SPEC`` of ``module_path`` (the registry calls this)."""
    _HOMES[id(spec)] = module_path


def spec_from_module(module_path: str, env_name: str) -> GameSpec:
    """The ``SPEC`` of ``module_path`` (how a pickled spec comes back); checks its name."""
    spec = importlib.import_module(module_path).SPEC
    if spec.env_name != env_name:
        raise pickle.UnpicklingError(
            f"{module_path} now defines {spec.env_name}, not the pickled {env_name}"
        )
    return spec


RENDER_MODES = ("human", "ansi")
ENV_ARGS = ("obs_encoding", "render_mode")
GYM_ARGS = ("opponent", "learner_seat", "dict_obs", "illegal_reward")


@dataclass(frozen=True)
class ExactSolver:
    """A game small enough to play perfectly: its agent that does, and how far another agent
    is from perfect play (the ladder adds that column for the games that have one)."""

    agent: str  # the name, among the spec's agents, of the agent that plays perfectly
    # (game, agent, deals, seed) -> what the agent gives away per game against perfect play,
    # with ``mean``, ``low`` and ``high`` (a 95% interval)
    regret: Callable[[Game, Agent, int, int], Any]
    # what the regret counts, with ``{deals}``: the ladder's note under its table
    note: str


@dataclass(frozen=True)
class LadderSection:
    """One section of the strength ladder (``card-envs ladder``, docs/ladder.md) for a game:
    its ``title``, its rules arguments ``rules``, and ``games`` per agent, pair or lineup
    (``batched_games`` for a match whose every agent has a batched form; None: ``games``)."""

    title: str
    games: int
    rules: dict[str, Any] = field(default_factory=dict)
    batched_games: int | None = None


@dataclass(frozen=True, eq=False)
class GameSpec:
    """One game: its rules class, encoders, rule-based agents and text rendering.

    ``render(game, state, player)`` returns the table as text: the whole table when
    ``player`` is None, otherwise only what that seat may see.
    """

    name: str  # e.g. "simple_tricks"
    version: int
    gym_name: str  # e.g. "SimpleTricks"
    game_cls: type[Game]
    encoders: dict[str, type[Encoder]]
    render: Callable[[Game, State, int | None], str]
    agents: dict[str, type[Agent]] = field(default_factory=dict)  # name -> class taking the game
    default_opponent: str = "random"
    strongest_agent: str = "random"
    num_players: tuple[int, ...] = (2,)
    # Rules configurations that tests, docs and benchmarks exercise (beyond the encodings).
    variants: tuple[dict[str, Any], ...] = ({},)
    # Rules arguments the Gymnasium view uses unless given (e.g. {"num_players": 2}).
    gym_defaults: dict[str, Any] = field(default_factory=dict)
    # For `card-envs play`: how a legal move is listed to the seat about to make it,
    # (game, state, seat, action) -> text, and what everyone saw a seat do,
    # (game, state before, seat, action, state after) -> text. Both default to
    # game.action_name.
    move_label: Callable[[Game, State, int, int], str] | None = None
    describe_move: Callable[[Game, State, int, int, State], str] | None = None
    # For long move lists: (game, state, seat, action) -> (group, short text), e.g.
    # ("ask player_3 for", "Q♥"), so that the list is shown a group per line; None: no group.
    move_group: Callable[[Game, State, int, int], tuple[str, str] | None] | None = None
    # The module of the game's batched twin (``card_envs/<game>/batched.py``, declaring a
    # core.batched.Twin named TWIN), or None: the one place that says whether a game has one.
    batched: str | None = None
    # For the web app (`card-envs serve`): the table as data to draw, (game, state, seat) ->
    # dict (card_envs/core/board.py), only what that seat may see (everything for None);
    # None: the page shows ``render``'s text.
    board: Callable[[Game, State, int | None], dict] | None = None
    # A game small enough to solve: the agent that plays perfectly, and the regret of others.
    exact_solver: ExactSolver | None = None
    # The module of the game's per-action facts for the per-action policies
    # (``card_envs/<game>/features.py``, declaring FACT_SETS; torch, imported only by the rl
    # layer: card_envs.core.action_features), or None.
    features: str | None = None
    # The module of the game's shaping potentials (``card_envs/<game>/shaping.py``, declaring
    # POTENTIALS: name -> phi(layout, observations (B, D)) -> (B,), numpy only), or None.
    potentials: str | None = None
    # The game's sections of the strength ladder, in the order of the page.
    ladder: tuple[LadderSection, ...] = ()

    def __post_init__(self) -> None:
        # The identity every id is derived from: fail at declaration, not at registration.
        if not (self.name.isidentifier() and self.name == self.name.lower()):
            raise ValueError(f"GameSpec name must be a lower-case identifier, got {self.name!r}")
        if not (isinstance(self.version, int) and self.version >= 0):
            raise ValueError(f"{self.name}: version must be an integer >= 0, got {self.version!r}")
        if not (self.gym_name.isidentifier() and self.gym_name[:1].isupper()):
            raise ValueError(
                f"{self.name}: gym_name must be a CamelCase identifier, got {self.gym_name!r}"
            )
        counts = tuple(self.num_players)
        if not counts or any(n < 1 for n in counts) or list(counts) != sorted(set(counts)):
            raise ValueError(
                f"{self.name}: num_players must be increasing positive counts, got {counts!r}"
            )

    def __reduce__(self):
        # Pickle by the module that defines the spec (recorded when the game is registered):
        # unpickling imports that module and gets the one spec back.
        home = _HOMES.get(id(self))
        if home is None:
            raise pickle.PicklingError(
                f"{self.env_name}: only a registered game's spec pickles "
                "(card_envs.registry.register_game)"
            )
        return (spec_from_module, (home, self.env_name))

    @property
    def package(self) -> str:
        """The package of the game's rules (``card_envs.palace``), which ships its files."""
        return self.game_cls.__module__.rpartition(".")[0]

    @property
    def env_name(self) -> str:
        return f"{self.name}_v{self.version}"

    @property
    def pettingzoo_id(self) -> str:
        return f"card_envs/{self.name}-v{self.version}"

    @property
    def gymnasium_id(self) -> str:
        return f"card_envs/{self.gym_name}-v{self.version}"

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "name": self.env_name,
            "render_modes": list(RENDER_MODES),
            "is_parallelizable": False,
            "render_fps": 1,
        }

    def game_args(self) -> list[str]:
        """The rules arguments the game's constructor takes."""
        params = inspect.signature(self.game_cls.__init__).parameters
        return [p for p in params if p != "self"]

    def make_game(self, **kwargs: Any) -> Game:
        """The rules object for ``kwargs``; ValueError for an unknown argument."""
        self._check_names(kwargs, [])
        return self.game_cls(**kwargs)

    def build(
        self, kwargs: dict[str, Any], extra: tuple[str, ...] = ()
    ) -> tuple[Game, Encoder, dict]:
        """Split ``kwargs`` into the game, its encoder and the remaining env arguments."""
        self._check_names(kwargs, [*ENV_ARGS, *extra])
        kwargs = dict(kwargs)
        encoding = kwargs.pop("obs_encoding", "default")
        check_choice("obs_encoding", encoding, tuple(self.encoders))
        render_mode = kwargs.pop("render_mode", None)  # the env checks it (Gymnasium's rule)
        env_kwargs = {k: kwargs.pop(k) for k in extra if k in kwargs}
        game = self.game_cls(**kwargs)
        encoder = self.encoders[encoding](game)
        env_kwargs["render_mode"] = render_mode
        return game, encoder, env_kwargs

    def _check_names(self, kwargs: dict[str, Any], extra: list[str]) -> None:
        valid = [*self.game_args(), *extra]
        for key in kwargs:
            if key not in valid:
                raise ValueError(
                    f"{self.env_name}: unknown argument {key!r}; "
                    f"valid arguments: {', '.join(valid)}"
                )
