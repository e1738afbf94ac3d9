"""Batched twins: B games of one configuration per call, the rules compiled per slot.

A game may have a batched twin: one module beside its rules (``card_envs/<game>/batched.py``)
that its spec names (``GameSpec.batched``; the one place any tool learns whether a game has
one). The module declares a ``Twin``: the game's state for B games as a NamedTuple of arrays
with a leading batch axis, its constants, and its rules for one slot as numba kernels
(``card_envs.core.batched_loops`` says what each takes). ``BatchedGame`` is the engine over any
twin, the public interface that the Gymnasium ``VectorEnv``, the SB3 ``VecEnv``, self-play and
evaluation use::

    engine = make_batched(SPEC, num_values=10)     # core.make; or card_envs.vector.make(...)
    state = engine.init(1024, seed=0)              # or seeds=[...]: one scalar seed per game
    mask = engine.legal_action_mask(state)         # (B, actions) int8
    obs = engine.observe(state)                    # (B, size) float32, the seat to act's
    engine.step(state, actions)                    # in place; state.rewards (B, players)
    engine.autoreset(state)                        # new games where one ended

The twin is bit-identical to the scalar game: the same seed deals the same game, the same
actions give the same masks, observations, rewards and ends (tests/test_batched_twins.py).
Every random event is drawn inside the kernels from a ``numpy.random.Generator`` exactly as
the scalar rules draw from theirs: with ``seeds`` each slot has its own generator and plays the
games of ``raw_env().reset(seed=seeds[i])`` and its later resets; with one ``seed`` the batch
shares one generator, drawn from slot by slot.

This module imports numba only when an engine is built (``import card_envs`` never does).
"""

from __future__ import annotations

import collections
import copy
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from card_envs.core.batched_codes import (  # noqa: F401  (the batched envs read them here)
    EXTERNAL_AGENT,
    EXTERNAL_MOVE,
    LEARNER_AGENT,
    LEARNER_MOVE,
    NEW_GAME,
)
from card_envs.core.game import Game, check_choice

if TYPE_CHECKING:
    from card_envs.core.spec import GameSpec

# Shared fields every twin's arrays begin with (see BatchedState).
SHARED_FIELDS = ("current_player", "terminated", "truncated", "rewards", "steps", "mask")


def twin_arrays(module: str, fields: str) -> type:
    """The NamedTuple class ``Arrays`` of a twin's state in ``module``: the SHARED_FIELDS,
    then ``fields`` (names separated by spaces), each an array with a leading batch axis."""
    return collections.namedtuple("Arrays", [*SHARED_FIELDS, *fields.split()], module=module)


def shared_arrays(num_envs: int, num_players: int, num_actions: int) -> tuple:
    """Zeroed arrays of the SHARED_FIELDS for B games (the first fields of ``Arrays``)."""
    b = num_envs
    return (np.zeros(b, np.int64), np.zeros(b, bool), np.zeros(b, bool),
            np.zeros((b, num_players)), np.zeros(b, np.int64),
            np.zeros((b, num_actions), np.int8))


def numba_available() -> bool:
    """Whether numba can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except ValueError:  # sys.modules["numba"] is None: blocked, as if not installed
        return False


def require_numba() -> None:
    """ValueError naming the extra when numba is missing (the twins are compiled)."""
    if not numba_available():
        raise ValueError(
            "the batched twins are compiled with numba: pip install 'card-envs[numba]' "
            "(the train and test extras include it)"
        )


@dataclass(frozen=True)
class Twin:
    """A game's batched twin, declared once in its ``batched.py`` as ``TWIN``.

    ``arrays``: the NamedTuple class of the state's arrays (the SHARED_FIELDS first);
    ``config(game)``: the NamedTuple of the configuration's constants (``num_players`` and
    ``max_steps`` among them); ``allocate(game, cfg, B)``: zeroed arrays for B games;
    ``deal``, ``step``, ``observe``, ``act``, ``result``: the compiled kernels
    (``card_envs.core.batched_loops`` says what each takes); ``load(game, cfg, arrays, i,
    state)``: writes a scalar state into slot ``i`` (Python; for tests and tools: twin
    worlds, all deals of a small game); ``agents``: the batched rule agents, numbered from 1
    in ``act`` (``random`` is agent 0 of every twin); ``places(s, cfg, rows, out)``, for a
    game that ranks its players (``Game.results``' ``place``): row r, each seat's place in
    game rows[r] (1 = first, 0 while undecided).
    """

    arrays: type
    config: Callable[[Game], Any]
    allocate: Callable[[Game, Any, int], Any]
    deal: Any
    step: Any
    observe: Any
    act: Any
    result: Any
    load: Callable[[Game, Any, Any, int, Any], None]
    agents: tuple[str, ...] = ()
    places: Any = None

    def __post_init__(self) -> None:
        fields = tuple(self.arrays._fields)
        if fields[: len(SHARED_FIELDS)] != SHARED_FIELDS:
            raise ValueError(
                f"{self.arrays.__name__}: a twin's arrays begin with {', '.join(SHARED_FIELDS)}"
            )


def load_twin(spec: GameSpec) -> Twin:
    """The ``TWIN`` of ``spec.batched``; ValueError if the game has none."""
    if spec.batched is None:
        raise ValueError(f"{spec.env_name} has no batched twin")
    require_numba()
    twin = getattr(importlib.import_module(spec.batched), "TWIN", None)
    if not isinstance(twin, Twin):
        raise ValueError(f"{spec.batched} declares no Twin named TWIN")
    return twin


def check_batch_size(num_envs: Any) -> int:
    """``num_envs`` as an int; ValueError unless it is a positive integer."""
    ok = isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool)
    if not ok or num_envs <= 0:
        raise ValueError(f"num_envs={num_envs!r} is not valid; it must be an integer >= 1")
    return int(num_envs)


def slot_indices(arg: str, value: Any, num_envs: int) -> np.ndarray:
    """``value`` as int64 slot numbers: a (B,) bool mask (its True slots) or integers in
    0..B-1; ValueError naming ``arg`` for anything else (floats, negatives, out of range)."""
    array = np.asarray(value)
    if array.dtype == np.int64 and array.ndim == 1:  # the common case, checked by its extremes
        if len(array) and (array.min() < 0 or array.max() >= num_envs):
            bad = np.flatnonzero((array < 0) | (array >= num_envs))[0]
            raise ValueError(
                f"{arg}: slot {array[bad]} (at position {bad}) is out of range; "
                f"slots are 0..{num_envs - 1}"
            )
        return array
    if array.dtype == bool:
        if array.shape != (num_envs,):
            raise ValueError(
                f"{arg}: a bool mask must have shape ({num_envs},), one per game; "
                f"got shape {array.shape}"
            )
        return np.flatnonzero(array)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
        raise ValueError(
            f"{arg} must be a ({num_envs},) bool mask or a 1-d array of slot numbers in "
            f"0..{num_envs - 1}; got {array.dtype} of shape {array.shape}"
        )
    array = array.astype(np.int64)
    bad = np.flatnonzero((array < 0) | (array >= num_envs))
    if len(bad):
        raise ValueError(
            f"{arg}: slot {array[bad[0]]} (at position {bad[0]}) is out of range; "
            f"slots are 0..{num_envs - 1}"
        )
    return array


def bool_mask(arg: str, value: Any, num_envs: int) -> np.ndarray:
    """``value`` as a (B,) bool array; ValueError naming ``arg`` for another dtype or shape."""
    array = np.asarray(value)
    if array.dtype != bool or array.shape != (num_envs,):
        raise ValueError(
            f"{arg} must be a ({num_envs},) bool array, one per game; got {array.dtype} of "
            f"shape {array.shape}"
        )
    return array


def make_generators(num_envs: int, seed: Any = None, seeds: Any = None):
    """(generators, generator of each slot): one ``default_rng(seeds[i])`` per slot (or
    ``seeds[i]`` itself, when ``seeds`` is a list of Generators: evaluation's
    ``default_rng([seed, game, 0])``), or one generator for the batch from ``seed`` (an int,
    None or a Generator)."""
    from numba import typed

    if seeds is not None:
        if seed is not None:
            raise ValueError("give seed (one for the batch) or seeds (one per game), not both")
        if (isinstance(seeds, (list, tuple)) and len(seeds) == num_envs and seeds
                and all(isinstance(g, np.random.Generator) for g in seeds)):
            return typed.List(seeds), np.arange(num_envs, dtype=np.int64)
        seeds = np.asarray(seeds)
        if seeds.shape != (num_envs,) or not np.issubdtype(seeds.dtype, np.integer):
            raise ValueError(
                f"seeds must be {num_envs} integers, one per game; got shape {seeds.shape}, "
                f"dtype {seeds.dtype}"
            )
        gens = [np.random.default_rng(int(s)) for s in seeds.tolist()]
        return typed.List(gens), np.arange(num_envs, dtype=np.int64)
    if not isinstance(seed, np.random.Generator):
        if seed is not None and not (isinstance(seed, (int, np.integer))
                                     and not isinstance(seed, bool)):
            raise ValueError(f"seed={seed!r} is not valid; give an int, None or a Generator")
        seed = np.random.default_rng(seed)
    return typed.List([seed]), np.zeros(num_envs, np.int64)


class BatchedState:
    """B games in progress: the twin's arrays, and the generators their deals draw from.

    Every array of the twin is an attribute (``state.current_player``, ``state.mask``, ...).
    The shared ones: ``current_player`` (B,) the seat to act (as the scalar state's
    ``player`` once a game is over); ``terminated`` / ``truncated`` (B,) bool, how a game
    ended (by its rules / at the step cap); ``rewards`` (B, players) float64, what the last
    ``step`` paid each seat (0 in games that did not move); ``steps`` (B,) actions taken in
    the game; ``mask`` (B, actions) int8, the legal actions of the seat to act (0s once over).
    ``configuration`` names the game and rules arguments of the engine that made it (the only
    engines that may step or observe it).
    """

    def __init__(self, arrays: Any, rngs: Any, rng_of: np.ndarray, configuration: str):
        self.arrays = arrays
        self.rngs = rngs
        self.rng_of = rng_of
        self.configuration = configuration

    def __getattr__(self, name: str) -> Any:
        arrays = self.__dict__.get("arrays")
        if arrays is not None and name in arrays._fields:
            return getattr(arrays, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def num_envs(self) -> int:
        return len(self.arrays.current_player)

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: the game is over (terminated or truncated)."""
        return self.arrays.terminated | self.arrays.truncated

    def copy(self) -> BatchedState:
        """An independent copy: the arrays and the generators (same draws to come)."""
        from numba import typed

        arrays = type(self.arrays)(*(a.copy() for a in self.arrays))
        rngs = typed.List([copy.deepcopy(g) for g in self.rngs])
        return BatchedState(arrays, rngs, self.rng_of.copy(), self.configuration)


class BatchedGame:
    """The engine of one game configuration over its twin: the functional core and the
    Gymnasium view's turn, each one compiled call (see the module docstring)."""

    def __init__(self, spec: GameSpec, game: Game):
        self.spec = spec
        self.twin = load_twin(spec)
        self.game = game
        self.name = spec.name
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.max_steps = game.max_steps
        self.cfg = self.twin.config(game)
        self.encodings = tuple(spec.encoders)
        self._sizes = {enc: cls(game).size for enc, cls in spec.encoders.items()}
        self._size_by_index = tuple(self._sizes.values())
        self._slots = np.arange(0)
        self.agents = ("random", *self.twin.agents)
        self.configuration = repr(self)
        from card_envs.core import batched_loops

        twin = self.twin
        self.checks = batched_loops
        self.loops = batched_loops.specialize(spec.batched, twin.deal, twin.step, twin.observe,
                                              twin.act, twin.result)

    def config(self) -> dict[str, Any]:
        """The rules arguments of this engine (those of the scalar game)."""
        return self.game.config()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"BatchedGame({self.spec.env_name}, {args})"

    def check_state(self, state: BatchedState) -> None:
        """ValueError unless ``state`` was made by an engine of this configuration (another
        configuration's arrays have other shapes and meanings)."""
        if state.configuration != self.configuration:
            raise ValueError(
                f"this batched state was made by {state.configuration}, not by "
                f"{self.configuration}: only an engine of the configuration that made a "
                "state may step or observe it"
            )

    def observation_size(self, encoding: str = "default") -> int:
        check_choice("encoding", encoding, self.encodings)
        return self._sizes[encoding]

    def encoding_index(self, encoding: str) -> int:
        """The number the kernels know ``encoding`` by (its place in the spec's encoders)."""
        check_choice("encoding", encoding, self.encodings)
        return self.encodings.index(encoding)

    def agent_index(self, name: str) -> int:
        """The number the kernels know batched agent ``name`` by; ValueError listing them."""
        if name not in self.agents:
            raise ValueError(
                f"unknown agent {name!r} for the batched {self.name}; choose one of "
                + ", ".join(self.agents)
            )
        return self.agents.index(name)

    # --- the functional core ---------------------------------------------------------------
    def new_state(self, num_envs: int, seed: Any = None, seeds: Any = None) -> BatchedState:
        """B slots with no game dealt yet (``init`` deals them)."""
        num_envs = check_batch_size(num_envs)
        rngs, rng_of = make_generators(num_envs, seed, seeds)
        arrays = self.twin.allocate(self.game, self.cfg, num_envs)
        return BatchedState(arrays, rngs, rng_of, self.configuration)

    def init(self, num_envs: int, seed: Any = None, seeds: Any = None) -> BatchedState:
        """B freshly dealt games: from one ``seed`` (an int, None or a Generator) or
        ``seeds``, one int per game (game i as ``raw_env().reset(seed=seeds[i])``)."""
        state = self.new_state(num_envs, seed, seeds)
        self._deal(state, np.arange(state.num_envs))
        return state

    def _deal(self, state: BatchedState, slots: np.ndarray) -> None:
        self.check_state(state)
        self.loops.deal_slots(state.arrays, self.cfg, slots, state.rngs, state.rng_of)

    def step(self, state: BatchedState, actions: Any, active: Any = None) -> BatchedState:
        """Play ``actions`` (B,) in every game not over, in place; return ``state``.

        ``state.rewards`` then holds what this step paid each seat. Games already over are
        left as they are (their action is ignored; see ``autoreset``), and so are the games
        outside ``active`` ((B,) bool), when given. An action that is not an integer of the
        batch's shape, or illegal in its game, raises ValueError naming the slot, and the
        state is left as it was.
        """
        b = state.num_envs
        moving = ~state.done
        if active is not None:
            moving &= bool_mask("active", active, b)
        actions = self.check_actions(state, actions, moving)
        self.loops.step_slots(state.arrays, self.cfg, np.flatnonzero(moving), actions,
                              state.rngs, state.rng_of)
        return state

    def legal_action_mask(self, state: BatchedState) -> np.ndarray:
        """(B, actions) int8: the legal actions of each game's seat to act (0s once over).

        The state's own array: read it, copy it to keep it."""
        self.check_state(state)
        return state.mask

    def observe(self, state: BatchedState, encoding: str = "default", seats: Any = None,
                rows: Any = None) -> np.ndarray:
        """(B, size) float32: each game's observation for ``seats`` ((B,) ints, or one int;
        default the seat to act), exactly the AEC env's ``observe`` of that seat.

        ``rows`` (a (B,) bool mask or slot numbers) gives only those games', in that order
        (``seats`` still has one entry per game of the batch)."""
        b = state.num_envs
        index = self.encoding_index(encoding)
        if seats is None:
            seats = state.current_player
        else:
            seats = np.asarray(seats)
            if seats.shape == ():
                seats = np.full(b, seats)
            if seats.shape != (b,) or not np.issubdtype(seats.dtype, np.integer) or (
                    seats.dtype == bool):
                raise ValueError(
                    f"seats must be {b} integers (one per game) or one integer; got "
                    f"{seats.dtype} of shape {seats.shape}"
                )
            bad = np.flatnonzero((seats < 0) | (seats >= self.num_players))
            if len(bad):
                raise ValueError(
                    f"seats: {seats[bad[0]]} in slot {bad[0]} is not a seat; seats are "
                    f"0..{self.num_players - 1}"
                )
        seats = seats.astype(np.int64, copy=False)
        if rows is None:
            return self.observe_checked(state, index, self._everything(b), seats)
        rows = slot_indices("rows", rows, b)
        return self.observe_checked(state, index, rows, seats[rows])

    def observe_checked(self, state: BatchedState, encoding: int, rows: np.ndarray,
                        seats: np.ndarray) -> np.ndarray:
        """``observe`` for arguments already checked: encoder number ``encoding``, int64
        ``rows`` and their ``seats`` (one each); what the batched envs call every step."""
        self.check_state(state)
        out = np.empty((len(rows), self._size_by_index[encoding]), np.float32)
        return self.loops.observe_slots(state.arrays, self.cfg, rows, seats, encoding, out)

    def _everything(self, b: int) -> np.ndarray:
        """np.arange(b), kept (read-only) for the batch size last asked for."""
        if len(self._slots) != b:
            self._slots = np.arange(b)
            self._slots.setflags(write=False)
        return self._slots

    def act(self, state: BatchedState, agent: str, rows: Any = None,
            generators: Any = None) -> np.ndarray:
        """(len(rows),) int64: batched agent ``agent``'s action for the seat to act in each
        game of ``rows`` (default: all; games that are over must not be among them). Agents
        that draw (``random``) draw from each game's generator, as an agent in the Gymnasium
        view's play loop does, or from ``generators`` (from ``make_generators``, one per
        game: evaluation's agents' generators)."""
        self.check_state(state)
        b = state.num_envs
        index = self.agent_index(agent)
        rows = np.flatnonzero(~state.done) if rows is None else slot_indices("rows", rows, b)
        over = state.done[rows]
        if over.any():
            raise ValueError(f"rows: the game in slot {rows[over][0]} is over; no one acts")
        rngs, rng_of = (state.rngs, state.rng_of) if generators is None else generators
        out = np.empty(len(rows), np.int64)
        return self.loops.act_slots(state.arrays, self.cfg, rows, index, rngs, rng_of, out)

    def autoreset(self, state: BatchedState) -> np.ndarray:
        """Deal a new game in every slot whose game is over, in place; the slots."""
        self.check_state(state)
        slots = np.flatnonzero(state.done)
        if len(slots):
            self._deal(state, slots)
        return slots

    def load(self, state: BatchedState, slot: int, scalar_state: Any) -> None:
        """Put a copy of the scalar game's ``scalar_state`` in ``slot`` (its generator stays)."""
        self.check_state(state)
        slot = int(slot_indices("slot", [slot], state.num_envs)[0])
        self.twin.load(self.game, self.cfg, state.arrays, slot, scalar_state)

    def reset_slots(self, state: BatchedState, slots: Any) -> None:
        """Deal new games in ``slots`` (a (B,) bool mask or slot numbers), whatever their
        state; ValueError, before anything changes, for anything else."""
        self._deal(state, slot_indices("slots", slots, state.num_envs))

    def results(self, state: BatchedState) -> tuple[np.ndarray, np.ndarray]:
        """(payoffs, scores), each (B, players) float64: ``Game.payoffs`` (0 until a game
        ends by its rules) and ``Game.scores`` of every game."""
        self.check_state(state)
        b = state.num_envs
        payoffs = np.zeros((b, self.num_players))
        scores = np.zeros((b, self.num_players))
        self.loops.result_slots(state.arrays, self.cfg, payoffs, scores)
        return payoffs, scores

    def places(self, state: BatchedState) -> np.ndarray | None:
        """(B, players) int64: each seat's place in every game (1 = first; 0 while
        undecided) for a game that ranks its players (Palace), else None."""
        self.check_state(state)
        if self.twin.places is None:
            return None
        out = np.zeros((state.num_envs, self.num_players), np.int64)
        self.twin.places(state.arrays, self.cfg, self._everything(state.num_envs), out)
        return out

    def payoffs(self, state: BatchedState) -> np.ndarray:
        """(B, players) float64: each game's ``Game.payoffs``."""
        return self.results(state)[0]

    def scores(self, state: BatchedState) -> np.ndarray:
        """(B, players) float64: each game's ``Game.scores``."""
        return self.results(state)[1]

    # --- checks -------------------------------------------------------------------------------
    def check_actions(self, state: BatchedState, actions: Any, live: np.ndarray) -> np.ndarray:
        """``actions`` as (B,) int64; ValueError for another shape, non-integers, or an action
        out of range or illegal in a game of ``live`` ((B,) bool), naming the first such slot,
        the action and what was legal there."""
        self.check_state(state)
        actions = np.asarray(actions)
        b = state.num_envs
        if actions.shape != (b,):
            raise ValueError(
                f"actions must have shape ({b},), one per game; got shape {actions.shape}"
            )
        if actions.dtype == bool or not np.issubdtype(actions.dtype, np.integer):
            if actions.dtype.kind == "f" and np.array_equal(actions, np.floor(actions)):
                actions = actions.astype(np.int64)
            else:
                raise ValueError(f"actions must be integers; got dtype {actions.dtype}")
        actions = actions.astype(np.int64, copy=False)
        i = self.checks.first_illegal(state.mask, live, actions)
        if i >= 0:
            self._illegal(state, actions, live, int(i))
        return actions

    def _illegal(self, state: BatchedState, actions: np.ndarray, live: np.ndarray,
                 i: int) -> None:
        a = self.num_actions
        in_range = (actions >= 0) & (actions < a)
        ok = in_range & (state.mask[np.arange(state.num_envs), np.where(in_range, actions, 0)]
                         != 0)
        count = int((live & ~ok).sum())
        action = int(actions[i])
        legal = np.flatnonzero(state.mask[i]).tolist()
        what = (f"out of range (actions are 0..{a - 1})" if not in_range[i]
                else f"illegal ({self.game.action_name(action)})")
        more = f" ({count} illegal actions in all)" if count > 1 else ""
        raise ValueError(
            f"{self.name}: action {action} in slot {i} is {what} for player "
            f"{int(state.current_player[i])}; legal there: {legal}{more}"
        )


# --- the Gymnasium view's turn --------------------------------------------------------------------
# Deals in which the learner never gets to act are dealt again; this bounds the deals.
MAX_DEALS = 100


class TurnArrays(NamedTuple):
    """The per-game bookkeeping of one learning seat per game (the Gymnasium view's turn), each
    a (B,) array (``final_obs`` (B, observation size)), as the compiled turn reads it.

    ``seat`` the learner's seat in each game; ``reward`` what the learner's last move earned
    up to its next decision; ``pending`` what a new game paid the learner before its first
    move (paid with that move, as gym_env does); ``earned`` what its seat earned from the
    other seats' moves since; ``fresh`` whether the game was dealt in this turn; ``deals``
    the deals of this turn; ``waiting`` whether an EXTERNAL seat is to act; ``ended``
    whether the learner's game ended in this turn, its last observation in ``final_obs``,
    its payoff and score in ``final_payoff`` / ``final_score``, and ``final_truncated``
    whether the step cap ended it; ``acting`` the seat the learner is to act in (its own,
    or a teammate's that it plays too).
    """

    seat: np.ndarray
    reward: np.ndarray
    pending: np.ndarray
    earned: np.ndarray
    fresh: np.ndarray
    deals: np.ndarray
    waiting: np.ndarray
    ended: np.ndarray
    final_obs: np.ndarray
    final_payoff: np.ndarray
    final_score: np.ndarray
    final_truncated: np.ndarray
    acting: np.ndarray


class Turns:
    """The bookkeeping of the learners' turns in B games: ``arrays`` (``TurnArrays``), each
    also an attribute (``turns.seat``, ``turns.ended``, ...)."""

    def __init__(self, num_envs: int, obs_size: int):
        b = num_envs
        self.arrays = TurnArrays(
            seat=np.zeros(b, np.int64), reward=np.zeros(b), pending=np.zeros(b),
            earned=np.zeros(b), fresh=np.zeros(b, bool), deals=np.zeros(b, np.int64),
            waiting=np.zeros(b, bool), ended=np.zeros(b, bool),
            final_obs=np.zeros((b, obs_size), np.float32), final_payoff=np.zeros(b),
            final_score=np.zeros(b), final_truncated=np.zeros(b, bool),
            acting=np.zeros(b, np.int64))

    def __getattr__(self, name: str) -> Any:
        arrays = self.__dict__.get("arrays")
        if arrays is not None and name in arrays._fields:
            return getattr(arrays, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")


def play_turns(engine: BatchedGame, state: BatchedState, turns: Turns, kind: int,
               rows: np.ndarray, actions: np.ndarray, opponents: np.ndarray,
               learner_seat: int | None, encoding: str) -> None:
    """One part of the learners' turn in games ``rows``, in one compiled call: ``kind``
    NEW_GAME (deal, as gym_env's reset), LEARNER_MOVE (the learners' moves) or EXTERNAL_MOVE
    (the EXTERNAL seats' moves), ``actions[r]`` the move in game rows[r]; then the other
    seats play up to each learner's next decision (``opponents``: each other seat's agent
    number, relative to the learner; ``EXTERNAL_AGENT`` for a seat whose moves come from
    outside, ``LEARNER_AGENT`` for a teammate the learner plays)."""
    engine.check_state(state)
    bad = engine.loops.turn_moves(
        state.arrays, engine.cfg, rows, actions, kind, state.rngs, state.rng_of,
        -1 if learner_seat is None else learner_seat, opponents,
        engine.encoding_index(encoding), turns.arrays, MAX_DEALS)
    if bad >= 0:
        raise RuntimeError(f"slot {bad}: the learner never got to act in {MAX_DEALS} deals")
