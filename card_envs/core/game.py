"""The Game protocol: a pure rules object that every environment, agent and tool drives.

A game holds only its configuration. All play lives in a ``State`` (plain data)
and every random event takes an explicit ``numpy.random.Generator``::

    game = SimpleTricks(num_values=10)
    state = game.init(rng)                 # deal
    mask = game.legal_mask(state)          # int8, for state.player
    rewards = game.apply(state, action, rng)   # mutates state; per-seat rewards or None
    state.terminal, state.truncated, game.payoffs(state)

Nothing here knows about PettingZoo or Gymnasium.
"""

from __future__ import annotations

import copy
import operator
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from card_envs.core.dtypes import INT8


class IllegalActionError(ValueError):
    """An action that is out of range or not legal in the current state."""


def check_choice(arg: str, value: Any, choices) -> None:
    """Raise ValueError naming the valid choices when ``value`` is not one of them."""
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{arg}={value!r} is not valid; choose one of {listed}")


def check_int(arg: str, value: Any, low: int, high: int | None = None, choices=None) -> int:
    """Raise ValueError unless ``value`` is an int in [low, high] (or in ``choices``)."""
    ok_type = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if choices is not None:
        if not ok_type or value not in choices:
            listed = ", ".join(str(c) for c in choices)
            raise ValueError(f"{arg}={value!r} is not valid; choose one of {listed}")
        return int(value)
    if not ok_type or value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{arg}={value!r} is not valid; it must be an integer in {bound}")
    return int(value)


class State:
    """Base of every game state: whose turn, whether it ended, how many steps were taken.

    Subclasses add their own fields (numpy arrays, lists, ints) and list in
    ``_deep`` the attributes that ``copy()`` must copy rather than share.
    """

    __slots__ = ("player", "terminal", "truncated", "steps", "mask")
    _deep: ClassVar[tuple[str, ...]] = ()

    def __init__(self, player: int = 0):
        self.player = player
        self.terminal = False
        self.truncated = False
        self.steps = 0
        self.mask: np.ndarray | None = None  # cached legal mask of `player`, None when stale

    @property
    def done(self) -> bool:
        return self.terminal or self.truncated

    def copy(self):
        """An independent copy: changing it never changes this state."""
        new = copy.copy(self)
        for name in self._deep:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                setattr(new, name, value.copy())
            else:
                setattr(new, name, copy.deepcopy(value))
        new.mask = None
        return new


_SCALARS = frozenset({int, float, bool, str, bytes, type(None)})


_NO_ACTIONS: dict[int, np.ndarray] = {}


def no_actions(num_actions: int) -> np.ndarray:
    """The read-only all-zero int8 mask of ``num_actions`` actions (one per size, shared)."""
    mask = _NO_ACTIONS.get(num_actions)
    if mask is None:
        mask = _NO_ACTIONS[num_actions] = np.zeros(num_actions, INT8)
        mask.setflags(write=False)
    return mask


def read_only(array: np.ndarray) -> np.ndarray:
    """A non-writeable view of ``array``'s data (no copy)."""
    array = array.view()
    array.setflags(write=False)
    return array


def frozen(value: Any) -> Any:
    """A read-only version of ``value`` for a view: arrays as non-writeable views of the same
    data (no copy), lists and tuples as tuples of frozen items, sets as frozensets; anything
    else (ints, strings, bytes, None) as it is."""
    kind = type(value)
    if kind is np.ndarray:
        return read_only(value)
    if kind is list or kind is tuple:
        for x in value:
            if type(x) not in _SCALARS:
                break
        else:  # only scalars: the common case, no recursion
            return value if kind is tuple else tuple(value)
        items = [frozen(x) for x in value]
        if kind is tuple and all(a is b for a, b in zip(items, value, strict=True)):
            return value  # a named tuple stays one
        return tuple(items)
    if isinstance(value, np.ndarray):
        return read_only(value)
    if isinstance(value, tuple):  # e.g. a named tuple: kept if nothing in it can change
        items = [frozen(x) for x in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else tuple(items)
    if isinstance(value, list):
        return tuple([frozen(x) for x in value])
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


def slot_names(cls: type) -> tuple[str, ...]:
    """Every ``__slots__`` name of ``cls`` and its bases."""
    return tuple(name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ()))


class AliasedState:
    """Pickling for a State that keeps ``aliases``: read-only views of its own arrays, made
    once per state by the game's ``view`` (arrays the rules change in place, never replace),
    so that views hand them out at no cost. They are never pickled (nor copied: ``copy``
    must set ``aliases = None``); unpickling starts without them.

    A state may name more ``_derived`` slots (e.g. arrays that are views into another of its
    arrays): they are not pickled either, and ``_relink`` makes them again on unpickling."""

    __slots__ = ()
    _derived: ClassVar[tuple[str, ...]] = ("aliases",)

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        derived = self._derived
        return None, {name: getattr(self, name) for name in slot_names(type(self))
                      if name not in derived and hasattr(self, name)}

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        for name, value in state[1].items():
            setattr(self, name, value)
        self._relink()

    def _relink(self) -> None:
        """Make the ``_derived`` slots again after unpickling."""
        self.aliases = None


class View:
    """What one seat may know. Every game's view holds ``player`` and ``legal``.

    ``legal`` is the int8 mask of legal actions when ``player`` is to act, all
    zeros otherwise. Views are what encoders and rule-based agents read, so
    nothing that seat cannot see may be reachable from a view; and nothing reachable
    from a view can change the game: its arrays are non-writeable and its sequences
    tuples (``frozen``), which a test checks for every game.
    """

    __slots__ = ("player", "legal")


@runtime_checkable
class Agent(Protocol):
    """Anything that plays a seat from its view (``card_envs.core.agents``)."""

    def act(self, view: View, rng: np.random.Generator) -> int: ...


class Game(ABC):
    """Rules of one card game. Subclasses set the metadata and implement the abstract methods.

    Metadata (OpenSpiel style): ``name``, ``num_players``, ``num_actions``,
    ``max_steps`` (the step cap: reaching it truncates), ``min_payoff`` and
    ``max_payoff`` (bounds of ``payoffs``), ``score_name`` (what ``scores`` counts, in
    words, for reports: e.g. ``tricks won``) and ``result_note`` (for games whose results
    rank the players: what losing is, in words).
    """

    name: ClassVar[str] = ""
    score_name: ClassVar[str] = "score"
    result_note: ClassVar[str] = ""
    num_players: int
    num_actions: int
    max_steps: int
    min_payoff: float = -1.0
    max_payoff: float = 1.0
    # what the rewards ``apply`` pays over a whole game add up to: "payoffs", "scores" (a
    # reward per point scored), or "shaped" (a source's shaped reward: no fixed total)
    rewards_sum: str = "payoffs"

    # --- to implement -------------------------------------------------------------------
    @abstractmethod
    def init(self, rng: np.random.Generator) -> State:
        """A freshly dealt state."""

    @abstractmethod
    def _legal_mask(self, state: State) -> np.ndarray:
        """A read-only int8 array of the legal actions of ``state.player`` (a new one, or one
        shared between states: it is never written). ``tests/test_read_only.py`` checks it."""

    @abstractmethod
    def _apply(self, state: State, action: int, rng: np.random.Generator) -> np.ndarray | None:
        """Play a legal ``action`` in place; return the per-seat rewards (None if all zero)."""

    @abstractmethod
    def view(self, state: State, player: int) -> View:
        """What ``player`` may know of ``state``."""

    @abstractmethod
    def payoffs(self, state: State) -> np.ndarray:
        """Terminal utilities per seat (zeros unless the game ended by its rules)."""

    @abstractmethod
    def action_name(self, action: int) -> str:
        """A short human name of an action, e.g. ``play 9 9`` or ``pick up``."""

    @abstractmethod
    def action_table(self) -> list[tuple[str, str]]:
        """(action indices, meaning) rows: the action table of the docs page."""

    # --- shared behaviour ---------------------------------------------------------------
    def legal_mask(self, state: State) -> np.ndarray:
        """The int8 legal-action mask of the player to act (all zeros once the game is over).

        The array is cached in the state and read-only. (``CardGameEnv`` reads the
        cache, or calls ``_legal_mask`` for a game in progress, inline.)
        """
        mask = state.mask
        if mask is None:
            if state.terminal or state.truncated:
                mask = no_actions(self.num_actions)
            else:
                mask = self._legal_mask(state)  # read-only (see _legal_mask)
            state.mask = mask
        return mask

    def legal_actions(self, state: State) -> list[int]:
        """The legal actions of the player to act, in increasing order."""
        return np.flatnonzero(self.legal_mask(state)).tolist()

    def action_index(self, action: Any) -> int:
        """``action`` as a Python int in ``0..num_actions - 1``, whatever integer type it came
        as (a numpy integer of any width, a 0-d integer array); IllegalActionError for anything
        else: a bool, a float, a string, an integer out of range."""
        index = action
        if action.__class__ is not int:
            try:  # what numpy lets stand for an index; True is not action 1
                index = None if isinstance(action, (bool, np.bool_)) else operator.index(action)
            except TypeError:
                index = None
        if index is None or not 0 <= index < self.num_actions:
            raise IllegalActionError(
                f"{self.name}: action {action!r} is out of range; "
                f"actions are the integers 0..{self.num_actions - 1}"
            )
        return index

    def check_action(self, state: State, action: Any) -> int:
        """``action`` as an int if legal now; else IllegalActionError naming the legal ones."""
        if state.terminal or state.truncated:
            raise IllegalActionError(f"{self.name}: the game is over; no action is legal")
        a = self.action_index(action)
        if not self.legal_mask(state)[a]:
            legal = ", ".join(f"{i} ({self.action_name(i)})" for i in self.legal_actions(state))
            raise IllegalActionError(
                f"{self.name}: action {a} ({self.action_name(a)}) is illegal for "
                f"player_{state.player} now; legal: {legal}"
            )
        return a

    def apply(self, state: State, action: Any, rng: np.random.Generator) -> np.ndarray | None:
        """Play ``action``, a legal action of the seat to act as any integer type; count the
        step and apply the cap.

        The move happens whole or not at all: an action that is not legal now (a bool, a
        float, out of range, illegal) raises IllegalActionError (``check_action``) before the
        state changes, and the rules see a Python int. Returns the rewards of this transition
        per seat, or None when all are zero. Every step of a game goes through here: the AEC
        env, the Gymnasium view, evaluation and play.
        """
        mask = state.mask  # legal_mask's cache: the seat to act's view has filled it
        if (action.__class__ is not int or mask is None or not 0 <= action < len(mask)
                or not mask[action]):
            action = self.check_action(state, action)
        rewards = self._apply(state, action, rng)
        state.mask = None
        state.steps += 1
        if not state.terminal and state.steps >= self.max_steps:
            state.truncated = True
        return rewards

    def check_invariants(self, state: State) -> None:
        """Raise AssertionError if ``state`` breaks a rule (cards not conserved, ...)."""
        raise NotImplementedError(f"{type(self).__name__} does not check its invariants")

    def randomize_hidden(self, state: State, player: int, rng: np.random.Generator) -> State:
        """A copy of ``state`` with what ``player`` cannot see redrawn (the determinization step).

        The copy agrees with everything ``player`` has seen, so ``player``'s view of it is
        the same; tests use it to show that no hidden card leaks into observations.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot redraw hidden cards")

    def scores(self, state: State) -> np.ndarray | None:
        """A game-specific score per seat (tricks, cards played, ...), or None."""
        return None

    def teams(self) -> list[list[int]] | None:
        """The seats of each team when seats share one result (None: each seat plays alone)."""
        return None

    def result(self, state: State, player: int) -> dict[str, Any]:
        """What ``infos[player]`` says once the game is over (public facts only)."""
        return self.results(state)[player]

    def results(self, state: State) -> list[dict[str, Any]]:
        """``result`` of every seat, computed together (the AEC env's final ``infos``).

        Games add their own facts by extending this method.
        """
        payoffs = self.payoffs(state).tolist()
        scores = self.scores(state)
        scores = None if scores is None else scores.tolist()
        truncated = bool(state.truncated)
        infos: list[dict[str, Any]] = []
        for p in range(self.num_players):
            info: dict[str, Any] = {"payoff": payoffs[p]}
            if scores is not None:
                info["score"] = scores[p]
            info["truncated"] = truncated
            infos.append(info)
        return infos

    _config: dict[str, Any]

    def config(self) -> dict[str, Any]:
        """The constructor arguments that reproduce this game (set by each game's __init__)."""
        return dict(self._config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"
