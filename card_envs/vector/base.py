"""The shared machinery of the batched engines: the batch state, dealing, checks and resets.

A batched engine plays B games of one configuration at once. Its state is plain numpy arrays
with a leading batch axis (``VectorState``); ``VectorGame.step(state, actions)`` changes it in
place. Every random event of a game is a shuffle, and shuffles come from a ``Dealer``:

* ``BatchDealer(rng)`` draws the permutations of many games at once from one numpy Generator
  (the fast default);
* ``SeededDealer(seeds)`` keeps one ``numpy.random.default_rng(seed)`` per game and shuffles
  each game's cards with it exactly as the scalar rules do (``core.cards.shuffled``), so game
  ``i`` is the very game that ``raw_env().reset(seed=seeds[i])`` deals, and its later deals
  (the next game after an auto-reset, Thirty-One's rounds and reshuffles) are those of the
  same env going on with ``reset()`` without a seed.

Shuffling a list with a Generator moves its items by a permutation that does not depend on
the items (``shuffled(items, rng) == [items[j] for j in shuffled(range(len(items)), rng)]``),
so a dealer only hands out permutations of ``range(n)``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from card_envs.core.cards import shuffled
from card_envs.core.game import Game

INT8 = np.dtype(np.int8)


def numba_available() -> bool:
    """Whether numba can be imported (without importing it: ``import card_envs`` never does)."""
    try:
        return importlib.util.find_spec("numba") is not None
    except ValueError:  # sys.modules["numba"] is None: blocked, as if not installed
        return False


def check_batch_size(num_envs: Any) -> int:
    """``num_envs`` as an int; ValueError unless it is a positive integer."""
    ok = isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool)
    if not ok or num_envs <= 0:
        raise ValueError(f"num_envs={num_envs!r} is not valid; it must be an integer >= 1")
    return int(num_envs)


class Dealer:
    """Random permutations for the games of a batch (see the module docstring)."""

    def permutations(self, slots: np.ndarray, n: int) -> np.ndarray:
        """(len(slots), n) int64: a random permutation of range(n) for each of ``slots``."""
        raise NotImplementedError

    def ragged_permutations(self, slots: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        """(len(slots), width) int64: row r starts with a permutation of range(lengths[r])."""
        raise NotImplementedError


class BatchDealer(Dealer):
    """Permutations drawn from one Generator for many games at once (Fisher-Yates per row).

    Fixed-size permutations come from a pool refilled ``pool`` rows at a time, so a step that
    re-deals a few games costs a slice, not a call into the Generator per game.
    """

    def __init__(self, rng: np.random.Generator, pool: int = 4096):
        self.rng = rng
        self.pool_size = pool
        self._pools: dict[int, tuple[np.ndarray, int]] = {}

    def permutations(self, slots: np.ndarray, n: int) -> np.ndarray:
        k = len(slots)
        pool, at = self._pools.get(n, (None, 0))
        if pool is None or at + k > len(pool):
            rows = max(self.pool_size, k)
            pool = self.rng.permuted(np.tile(np.arange(n, dtype=np.int64), (rows, 1)), axis=1)
            at = 0
        self._pools[n] = (pool, at + k)
        return pool[at : at + k]

    def ragged_permutations(self, slots: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        out = np.tile(np.arange(width, dtype=np.int64), (len(slots), 1))
        for length in np.unique(lengths).tolist():  # one call per distinct length, not per game
            rows = np.flatnonzero(lengths == length)
            out[rows, :length] = self.rng.permuted(out[rows, :length], axis=1)
        return out


class SeededDealer(Dealer):
    """One Generator per game, shuffling exactly as the scalar rules do (``shuffled``).

    This loops over the games that need a shuffle (in Python): it is the mode for reproducing
    scalar games seed by seed, not the fast one.
    """

    def __init__(self, seeds: Sequence[int]):
        self.generators = [np.random.default_rng(int(s)) for s in seeds]

    def permutations(self, slots: np.ndarray, n: int) -> np.ndarray:
        gens = self.generators
        rows = [shuffled(range(n), gens[i]) for i in slots.tolist()]
        return np.array(rows, dtype=np.int64).reshape(len(rows), n)

    def ragged_permutations(self, slots: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
        out = np.tile(np.arange(width, dtype=np.int64), (len(slots), 1))
        gens = self.generators
        for r, (i, length) in enumerate(zip(slots.tolist(), lengths.tolist(), strict=True)):
            out[r, :length] = shuffled(range(length), gens[i])
        return out


def make_dealer(num_envs: int, seed: Any = None, seeds: Any = None) -> Dealer:
    """A SeededDealer for ``seeds`` (one per game), else a BatchDealer seeded with ``seed``."""
    if seeds is not None:
        if seed is not None:
            raise ValueError("give seed (one for the batch) or seeds (one per game), not both")
        seeds = np.asarray(seeds)
        if seeds.shape != (num_envs,) or not np.issubdtype(seeds.dtype, np.integer):
            raise ValueError(
                f"seeds must be {num_envs} integers, one per game; got shape {seeds.shape}, "
                f"dtype {seeds.dtype}"
            )
        return SeededDealer(seeds.tolist())
    if isinstance(seed, np.random.Generator):
        return BatchDealer(seed)
    return BatchDealer(np.random.default_rng(seed))


class VectorState:
    """B games in progress, as arrays with a leading batch axis (the engine adds its own).

    Shared fields: ``current_player`` (B,) the seat to act (the winner or last actor once a
    game is over, as in the scalar state); ``terminated`` / ``truncated`` (B,) bool, how the
    game ended (by its rules / at the step cap); ``rewards`` (B, players) float64, what the
    last ``step`` paid each seat (0 for games that did not move); ``steps`` (B,) actions
    taken in the game; ``mask`` (B, actions) int8, the legal actions of the seat to act
    (all 0 for a game that is over); ``dealer``, where the game's shuffles come from.
    """

    num_envs: int
    current_player: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    rewards: np.ndarray
    steps: np.ndarray
    mask: np.ndarray
    dealer: Dealer

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: the game is over (terminated or truncated)."""
        return self.terminated | self.truncated

    def copy(self) -> VectorState:
        """An independent copy of the arrays (the dealer is shared)."""
        new = object.__new__(type(self))
        for name, value in vars(self).items():
            setattr(new, name, value.copy() if isinstance(value, np.ndarray) else value)
        return new


class VectorGame:
    """A batched engine for one configuration of a game (subclasses implement the rules).

    ``init(num_envs, seed=None, seeds=None)`` deals B games; ``step(state, actions)`` plays
    one action in every game that is not over, in place, and returns the state;
    ``legal_action_mask(state)``, ``observe(state, encoding, seats)``, and ``autoreset(state)``
    (re-deal the games that are over) complete the functional core.
    """

    name: ClassVar[str]
    encodings: ClassVar[tuple[str, ...]] = ("default", "original")
    game: Game
    num_players: int
    num_actions: int
    max_steps: int

    # the compiled kernels of this game (card_envs.vector._numba), when it has them
    numba_kernels: ClassVar[str | None] = None

    def __init__(self, game: Game):
        self.game = game
        self.num_players = game.num_players
        self.num_actions = game.num_actions
        self.max_steps = game.max_steps
        self.backend = "numpy"
        if self.numba_kernels is not None and numba_available():
            self.set_backend("numba")

    def set_backend(self, backend: str) -> None:
        """Run the rules with ``"numpy"`` (always there) or ``"numba"`` (the numba extra:
        compiled loops over the games; the same results, checked by the same tests)."""
        if backend not in ("numpy", "numba"):
            raise ValueError(f"backend={backend!r} is not valid; choose one of 'numpy', 'numba'")
        if backend == "numba":
            if self.numba_kernels is None:
                raise ValueError(f"{self.name} has no numba kernels; use backend='numpy'")
            if not numba_available():
                raise ValueError(
                    "backend='numba' needs numba: pip install 'card-envs[numba]'"
                )
        self.backend = backend

    def config(self) -> dict[str, Any]:
        """The rules arguments of this engine (those of the scalar game)."""
        return self.game.config()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"

    # --- to implement ---------------------------------------------------------------------
    def _new_state(self, num_envs: int, dealer: Dealer) -> VectorState:
        raise NotImplementedError

    def _deal(self, state: VectorState, slots: np.ndarray) -> None:
        """Deal new games in ``slots`` (an int array), drawing from ``state.dealer``."""
        raise NotImplementedError

    def _apply(self, state: VectorState, live: np.ndarray, actions: np.ndarray) -> None:
        """Play the legal ``actions`` of the games ``live`` (int array): set their rewards,
        ``terminated`` and new masks (all 0 for a game that ended)."""
        raise NotImplementedError

    def observation_size(self, encoding: str = "default") -> int:
        raise NotImplementedError

    def _observe(self, state: VectorState, encoding: str, seats: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # --- the functional core ---------------------------------------------------------------
    def init(self, num_envs: int, seed: Any = None, seeds: Any = None) -> VectorState:
        """B freshly dealt games: from one ``seed`` (an int, None or a Generator: fast) or
        ``seeds``, one int per game (each game as ``raw_env().reset(seed=seeds[i])``)."""
        num_envs = check_batch_size(num_envs)
        state = self._new_state(num_envs, make_dealer(num_envs, seed, seeds))
        state.num_envs = num_envs
        self._deal(state, np.arange(num_envs))
        return state

    def step(self, state: VectorState, actions: Any, active: Any = None) -> VectorState:
        """Play ``actions`` (B,) in every game not over, in place; return ``state``.

        ``state.rewards`` then holds what this step paid each seat. Games already over are
        left as they are (their action is ignored; see ``autoreset``), and so are the games
        outside ``active`` ((B,) bool), when given. An action that is not an integer of the
        batch's shape, or illegal in its game, raises ValueError naming the slot.
        """
        moving = ~(state.terminated | state.truncated)
        if active is not None:
            moving &= np.asarray(active, bool)
        actions = self._as_actions(state, actions)
        live = np.flatnonzero(moving)
        if self.backend == "numba":
            if self.kernels.first_illegal(state.mask, live, actions) >= 0:
                self._check_legal(state, actions, moving)  # raises, naming the slot
            state.rewards[:] = 0.0
            if len(live):
                self._apply_compiled(state, live, actions)
            return state
        self._check_legal(state, actions, moving)
        state.rewards[:] = 0.0
        if len(live):
            act = actions[live]
            self._apply(state, live, act)
            state.steps[live] += 1
            capped = live[(state.steps[live] >= self.max_steps) & ~state.terminated[live]]
            if len(capped):  # the step cap, as Game.apply: truncated unless the rules ended it
                state.truncated[capped] = True
                state.mask[capped] = 0
        return state

    def legal_action_mask(self, state: VectorState) -> np.ndarray:
        """(B, actions) int8: the legal actions of each game's seat to act (0s once over).

        The state's own array: read it, copy it to keep it."""
        return state.mask

    def observe(
        self, state: VectorState, encoding: str = "default", seats: Any = None,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, size) float32: each game's observation for ``seats`` ((B,) ints; default the
        seat to act), exactly the AEC env's ``observe`` for that seat, in ``encoding``.

        With ``rows`` (an int array of slots) only those games', in that order."""
        if encoding not in self.encodings:
            raise ValueError(
                f"encoding={encoding!r} is not valid; choose one of "
                + ", ".join(repr(e) for e in self.encodings)
            )
        if seats is None:
            seats = state.current_player
        else:
            seats = np.asarray(seats)
            if seats.shape == ():
                seats = np.full(state.num_envs, int(seats))
            if seats.shape != (state.num_envs,) or not np.issubdtype(seats.dtype, np.integer):
                raise ValueError(f"seats must be {state.num_envs} integers, got {seats!r}")
            if ((seats < 0) | (seats >= self.num_players)).any():
                raise ValueError(f"seats must be in 0..{self.num_players - 1}")
        seats = seats.astype(np.int64, copy=False)
        if rows is None:
            rows = np.arange(state.num_envs)
        else:
            rows = np.asarray(rows, np.int64)
            seats = seats[rows]
        if self.backend == "numba":
            return self._observe_compiled(state, encoding, rows, seats)
        if len(rows) == state.num_envs and (rows == np.arange(state.num_envs)).all():
            return self._observe(state, encoding, seats)
        full = np.zeros(state.num_envs, np.int64)
        full[rows] = seats
        return self._observe(state, encoding, full)[rows]

    def _observe_compiled(self, state: VectorState, encoding: str, rows: np.ndarray,
                          seats: np.ndarray) -> np.ndarray:
        """The observations of games ``rows`` for ``seats`` (one per row), by the kernels."""
        raise NotImplementedError

    def autoreset(self, state: VectorState) -> np.ndarray:
        """Deal a new game in every slot whose game is over, in place; the slots (int array)."""
        slots = np.flatnonzero(state.terminated | state.truncated)
        if len(slots):
            self.reset_slots(state, slots)
        return slots

    def reset_slots(self, state: VectorState, slots: np.ndarray) -> None:
        """Deal new games in ``slots`` (an int array), whatever their state."""
        state.terminated[slots] = False
        state.truncated[slots] = False
        state.steps[slots] = 0
        self._deal(state, slots)

    def payoffs(self, state: VectorState) -> np.ndarray:
        """(B, players) float64: each game's terminal utilities (0 until it ends by its rules),
        as ``Game.payoffs``."""
        raise NotImplementedError

    def scores(self, state: VectorState) -> np.ndarray:
        """(B, players) float64: the game's score per seat, as ``Game.scores``."""
        raise NotImplementedError

    # --- checks ---------------------------------------------------------------------------
    @property
    def kernels(self):
        """The compiled kernels' module (numba backend only)."""
        import card_envs.vector._kernels as kernels

        return kernels

    def _apply_compiled(self, state: VectorState, live: np.ndarray, actions: np.ndarray) -> None:
        """``_apply`` and the step count of the games ``live``, by the numba kernels."""
        raise NotImplementedError

    def _as_actions(self, state: VectorState, actions: Any) -> np.ndarray:
        """``actions`` as a (B,) int64 array; ValueError for another shape or non-integers."""
        actions = np.asarray(actions)
        b = state.num_envs
        if actions.shape != (b,):
            raise ValueError(
                f"actions must have shape ({b},), one per game; got shape {actions.shape}"
            )
        if not np.issubdtype(actions.dtype, np.integer):
            if actions.dtype.kind == "f" and np.array_equal(actions, np.floor(actions)):
                actions = actions.astype(np.int64)
            else:
                raise ValueError(f"actions must be integers; got dtype {actions.dtype}")
        return actions.astype(np.int64, copy=False)

    def _check_legal(self, state: VectorState, actions: np.ndarray, live: np.ndarray) -> None:
        """Raise ValueError naming the first slot of ``live`` (B,) bool whose action is out of
        range or illegal, the action and what was legal there."""
        a = self.num_actions
        in_range = (actions >= 0) & (actions < a)
        ok = in_range & (
            state.mask[np.arange(state.num_envs), np.where(in_range, actions, 0)] != 0
        )
        bad = np.flatnonzero(live & ~ok)
        if len(bad):
            i = int(bad[0])
            action = actions[i].item()
            legal = np.flatnonzero(state.mask[i]).tolist()
            what = (
                f"out of range (actions are 0..{a - 1})"
                if not in_range[i]
                else f"illegal ({self.game.action_name(int(action))})"
            )
            more = f" ({len(bad)} illegal actions in all)" if len(bad) > 1 else ""
            raise ValueError(
                f"{self.name}: action {action!r} in slot {i} is {what} for player "
                f"{int(state.current_player[i])}; legal there: {legal}{more}"
            )


def random_actions(engine: VectorGame, state: VectorState, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action in every game (0 where a game is over)."""
    return random_legal_actions(engine, state.mask, rng)


def random_legal_actions(engine: VectorGame, mask: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
    """(k,) int64: a uniformly random legal action of each row of ``mask`` (k, actions), 0 for
    a row with none; one ``rng.random()`` per row, in order."""
    if engine.backend == "numba":
        out = np.empty(len(mask), np.int64)
        return engine.kernels.random_legal(mask, rng.random(len(mask)), out)
    counts = mask.sum(axis=1, dtype=np.int64)
    pick = (rng.random(len(counts)) * counts).astype(np.int64)
    return (mask.cumsum(axis=1, dtype=np.int64) > pick[:, None]).argmax(axis=1)
