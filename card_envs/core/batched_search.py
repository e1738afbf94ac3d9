"""Batched PIMC: the game's search, its worlds played out on the batched twin, many positions at
once.

A search agent (``card_envs.core.search``) plays each candidate move out on worlds sampled from
the searching seat's view, one scalar game at a time: milliseconds a move in Python (tens at
the budgets the ladder plays). Expert iteration (``python -m baselines.expert_iteration``)
asks such a teacher for a label at every position the network reaches, thousands per round.
``BatchedPIMC`` labels them together: for
each of ``n`` views it samples ``worlds`` worlds with the game's own ``sample_world`` (the
``ismcts`` agent's, which reads nothing but the view), loads every (view, world, candidate)
into one row of the game's batched twin (``card_envs.core.batched``), plays each row's
candidate, then lets the twin's rule agent play every seat of every row until all are over:
per move one compiled ``act`` and one compiled ``step`` over all the rows still going, so that
Python's cost is paid once per move for thousands of playouts.

What it keeps of the scalar ``PIMC``:

- the candidates: the search agent's ``candidates(view)`` where it has one, else every legal
  action;
- common random numbers: every candidate of a view is played out on the *same* worlds (the
  rows of one world are copies of one loaded slot), so that candidates are compared pair by
  pair. The playouts' own chance (a blind card drawn, a reshuffle, a random agent) comes from
  one generator for the whole batch, seeded from ``rng``, so it is not common to the
  candidates: only the worlds are;
- the margin: given ``base`` moves (a rule agent's, or a trained guide's), the base stays
  unless the best candidate beats it on the same worlds by more than ``margin`` standard errors
  of the mean paired difference.

Where the search agent can deal its worlds inside the twin (``redeal_hidden(state, slots,
rng)``: in those slots every card the seat to act cannot see dealt again, as its
``sample_world`` deals them; Palace's is compiled), a view's first world is sampled and loaded
and the others are copies of it dealt again there: a scalar world and its load (some 0.1 ms in
Palace) cost several times what all of that world's playouts cost on the twin, so this is most
of the gain (``twin_worlds=False`` samples and loads every world; benchmarks/label_speed.py
measures both).

What differs: every candidate is played out on every world (no sequential halving: a batch has
room for all of them), and a playout runs to the end of the game, valued by the twin's payoffs
(the scalar search may stop earlier with the game's ``leaf_value``, e.g. at the end of a round).
A playout still going after ``max_rollout_steps`` moves counts the twin's payoffs as they stand,
which are 0 for a game that is not over (``BatchedGame.payoffs`` pays only at the end); the twin
also truncates every game at the game's own ``max_steps``.

``BatchedPIMCAgent`` is the scalar face (``act(view, rng)``: one search of one view), the agent
named ``batched-pimc:WORLDS`` wherever an agent name goes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from card_envs.core.agents import Agent, BaseAgent
from card_envs.core.batched import BatchedGame, BatchedState, make_generators
from card_envs.core.game import Game, View
from card_envs.core.search import clearly_better

if TYPE_CHECKING:
    from card_envs.core.spec import GameSpec

NAME = "batched-pimc"  # the agent's name, before ``:WORLDS``
SEARCH_AGENT = "ismcts"  # the spec's agent whose world sampler, candidates and base are used
TAIL_ROWS = 64  # the smallest twin batch; playouts still going move to a smaller one
TAIL_SHARE = 8  # once they are fewer than one in this many of the batch
VALUES = ("payoff", "score")  # what a playout may be worth: the game's payoffs or its score


class BatchedPIMC:
    """PIMC over many views at once on the game's batched twin (see the module docstring).

    Args:
        spec: the game's spec; it must have a batched twin and an ``ismcts`` search agent
            with ``sample_world(view, rng)`` (``card_envs.core.search.SearchAgent``).
        game: the rules (the configuration the twin is built for).
        worlds: worlds sampled per view; every candidate is played out on each.
        rollout: the twin's rule agent that plays every seat after the candidate move;
            default: the search agent's rollout policy, if the twin has an agent of its name.
        candidates: ``view -> actions`` to compare; default the search agent's
            ``candidates`` where it has one, else every legal action.
        margin: standard errors by which the best candidate must beat a ``base`` move to
            replace it; default the search agent's ``margin`` (0 where it has none).
        max_rollout_steps: moves after the candidate before a playout is cut (its value then
            is the twin's payoff as it stands: 0 unless the game is over); default the
            game's ``max_steps``.
        twin_worlds: where the search agent has ``redeal_hidden(state, slots, rng)`` (every
            card the seat to act cannot see in those twin slots dealt again, as its
            ``sample_world`` deals them), sample and load one world per view and deal the
            others from it inside the twin (compiled); False: every world by
            ``sample_world`` and a load.
        value: what a playout is worth to the searching seat: ``"payoff"`` (the game's
            payoffs) or ``"score"`` (its score, e.g. 98 Cards' cards played, where wins are
            too rare to compare moves by); default the search agent's ``playout_value``,
            else ``"payoff"``.
    """

    def __init__(self, spec: GameSpec, game: Game, worlds: int = 25, rollout: str | None = None,
                 candidates: Callable[[View], Sequence[int]] | None = None,
                 margin: float | None = None, max_rollout_steps: int | None = None,
                 twin_worlds: bool = True, value: str | None = None):
        if not isinstance(worlds, (int, np.integer)) or isinstance(worlds, bool) or worlds < 1:
            raise ValueError(f"worlds={worlds!r} is not valid; it must be an integer >= 1")
        cls = spec.agents.get(SEARCH_AGENT)
        if cls is None or not callable(getattr(cls, "sample_world", None)):
            raise ValueError(f"{spec.env_name} has no {SEARCH_AGENT!r} search agent with a "
                             "sample_world(view, rng): batched PIMC has no worlds to sample")
        self.engine = BatchedGame(spec, game)  # ValueError if the game has no twin
        self.spec = spec
        self.game = game
        self.worlds = int(worlds)
        self.searcher = cls(game)
        self.sample_world = self.searcher.sample_world
        if rollout is None:
            rollout = getattr(self.searcher.rollout, "name", "")
            if rollout not in self.engine.agents:
                raise ValueError(
                    f"the batched {spec.name} has no agent {rollout!r} (the search agent's "
                    f"rollout policy) to play out with; give rollout, one of "
                    + ", ".join(self.engine.agents))
        self.engine.agent_index(rollout)  # ValueError naming the twin's agents
        self.rollout = rollout
        own = getattr(self.searcher, "candidates", None)
        self.candidates = candidates if candidates is not None else own
        searcher_margin = getattr(self.searcher, "margin", None)
        self.margin = float(searcher_margin or 0.0) if margin is None else float(margin)
        if not self.margin >= 0:
            raise ValueError(f"margin={margin!r} is not valid; it must be a number >= 0")
        steps = game.max_steps if max_rollout_steps is None else max_rollout_steps
        if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 1:
            raise ValueError(f"max_rollout_steps={max_rollout_steps!r} is not valid; it must "
                             "be an integer >= 1")
        self.max_rollout_steps = int(steps)
        self.value = getattr(self.searcher, "playout_value", "payoff") if value is None else value
        if self.value not in VALUES:
            raise ValueError(f"value={value!r} is not valid; choose one of {', '.join(VALUES)}")
        # the search agent's move to keep unless clearly beaten (PIMC with a margin), if any
        self.base_policy: Agent | None = (self.searcher.base_policy()
                                          if searcher_margin is not None else None)
        # the search agent's worlds dealt again inside the twin, where it has that
        self._redeal: Callable[[BatchedState, np.ndarray, np.random.Generator], None] | None = (
            getattr(self.searcher, "redeal_hidden", None) if twin_worlds else None)
        self._states: dict[int, BatchedState] = {}  # the twin batches, by size

    def __repr__(self) -> str:
        return (f"BatchedPIMC({self.spec.env_name}, worlds={self.worlds}, "
                f"rollout={self.rollout!r}, margin={self.margin}, value={self.value!r}, "
                f"twin_worlds={self._redeal is not None})")

    # --- the search ---------------------------------------------------------------------------
    def search(self, views: Sequence[View], rng: np.random.Generator,
               base: Sequence[int] | np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Search every view (each of a seat to act) together.

        Returns ``actions`` (n,) int64, the move chosen for each view, and ``values`` (n,
        actions) float64, the mean payoff (or score: ``value``) of the view's seat over the
        worlds for each candidate (NaN where not a candidate). With ``base`` ((n,) legal
        moves), view i keeps base[i] unless the best candidate beats it by more than
        ``margin`` standard errors of the paired difference on the same worlds (base[i] is
        played out too, as a candidate).
        A view with a single candidate is not played out (its move is that one; its values
        row stays NaN), as in the scalar ``PIMC``. Reads nothing but the views.
        """
        views = list(views)
        n, w = len(views), self.worlds
        num_actions = self.game.num_actions
        if base is not None:
            base = np.asarray(base)
            if base.shape != (n,) or not np.issubdtype(base.dtype, np.integer):
                raise ValueError(f"base must be {n} integer actions, one per view; got "
                                 f"{base.dtype} of shape {base.shape}")
        cands = self._candidates(views, base)
        values = np.full((n, num_actions), np.nan)
        chosen = np.array([c[0] for c in cands], np.int64)
        todo = [i for i in range(n) if len(cands[i]) > 1]  # one candidate: nothing to compare
        if not todo:
            return chosen, values
        sizes = np.array([len(cands[i]) for i in todo])
        starts = np.concatenate(([0], np.cumsum(sizes * w)))  # todo[j]: rows starts[j]...
        rows = int(starts[-1])
        state = self._state_for(rows)
        engine = self.engine
        # a slot per (view, world): its first candidate's row, copied to the others' rows
        first = (starts[:-1, None] + np.arange(w)[None, :] * sizes[:, None]).ravel()
        if self._redeal is None:  # each world sampled and loaded
            for j, i in enumerate(todo):
                for k in range(w):
                    engine.load(state, int(first[j * w + k]), self.sample_world(views[i], rng))
        else:  # a view's first world sampled and loaded, the others dealt again from it
            for j, i in enumerate(todo):
                engine.load(state, int(starts[j]), self.sample_world(views[i], rng))
            later = np.arange(len(first)) % w != 0
            _copy_rows(state, first[later], np.repeat(starts[:-1], w)[later])
            self._redeal(state, first[later], rng)
        everything = np.arange(rows)
        src = np.repeat(first, np.repeat(sizes, w))  # every row's world slot
        copies = everything[src != everything]
        _copy_rows(state, copies, src[copies])
        moves = np.zeros(state.num_envs, np.int64)
        moves[:rows] = np.concatenate([np.tile(cands[i], w) for i in todo])
        seats = np.repeat([views[i].player for i in todo], sizes * w)
        state.rngs, state.rng_of = make_generators(
            state.num_envs, seed=np.random.default_rng(int(rng.integers(2**63))))
        engine.step(state, moves)
        self._play_out(state, rows, moves)
        payoffs = np.empty((rows, self.game.num_players))
        scores = np.empty_like(payoffs)
        engine.twin.result(state.arrays, engine.cfg, everything, payoffs, scores)
        mine = (scores if self.value == "score" else payoffs)[everything, seats]
        for j, i in enumerate(todo):
            table = mine[starts[j]:starts[j + 1]].reshape(w, sizes[j])  # (worlds, candidates)
            means = table.mean(0)
            values[i, cands[i]] = means
            best = int(np.argmax(means))  # ties: the first candidate
            if base is not None and cands[i][best] != int(base[i]):
                at = cands[i].index(int(base[i]))
                if not clearly_better(table[:, best] - table[:, at], self.margin):
                    best = at
            chosen[i] = cands[i][best]
        return chosen, values

    def _candidates(self, views: list[View], base: np.ndarray | None) -> list[list[int]]:
        """Each view's candidates (the search agent's ``candidates``, else its legal moves),
        with base[i] added where not among them; ValueError for a view whose seat is not to
        act or a candidate that is not legal."""
        num_actions = self.game.num_actions
        cands = []
        for i, view in enumerate(views):
            if not view.legal.any():
                raise ValueError(f"views[{i}]: seat {view.player} is not to act in this view: "
                                 "nothing to search")
            actions = (list(self.candidates(view)) if self.candidates is not None
                       else np.flatnonzero(view.legal).tolist())
            if base is not None and int(base[i]) not in actions:
                actions.append(int(base[i]))
            bad = [a for a in actions if not (0 <= a < num_actions and view.legal[a])]
            if bad or not actions:
                raise ValueError(f"views[{i}]: the candidate {bad[0] if bad else None} is not a "
                                 f"legal action; legal: {np.flatnonzero(view.legal).tolist()}")
            cands.append(actions)
        return cands

    def decide(self, views: Sequence[View], rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
        """Each view's move as the search agent would make it, searching all that need it in
        one ``search``: a single legal action, or the search agent's ``shortcut``, is played
        without search (its values row stays NaN); the others keep the search agent's base
        move (``base_policy``, where it has a margin) unless clearly beaten."""
        views = list(views)
        n = len(views)
        actions = np.empty(n, np.int64)
        values = np.full((n, self.game.num_actions), np.nan)
        todo: list[int] = []
        for i, view in enumerate(views):
            legal = np.flatnonzero(view.legal)
            if len(legal) == 0:
                raise ValueError(f"views[{i}]: seat {view.player} is not to act in this view")
            move = int(legal[0]) if len(legal) == 1 else self.searcher.shortcut(view)
            if move is None:
                todo.append(i)
            else:
                actions[i] = move
        if todo:
            searched = [views[i] for i in todo]
            base = None
            if self.base_policy is not None:
                base = np.array([self.base_policy.act(
                    v, np.random.default_rng(int(rng.integers(2**63)))) for v in searched])
            actions[todo], values[todo] = self.search(searched, rng, base)
        return actions, values

    # --- the twin batch -----------------------------------------------------------------------
    def _state_for(self, rows: int) -> BatchedState:
        """A twin batch for ``rows`` rows: one per power of two (at least ``TAIL_ROWS``),
        allocated once and reused, so that a move's cost follows the rows in play rather than
        the largest search so far; every slot from ``rows`` on is marked over, so that no move
        touches it."""
        size = max(TAIL_ROWS, 1 << max(rows - 1, 1).bit_length())
        state = self._states.get(size)
        if state is None:
            state = self._states[size] = self.engine.new_state(size, seed=0)
        state.terminated[rows:] = True
        state.mask[rows:] = 0
        return state

    def _play_out(self, state: BatchedState, rows: int, moves: np.ndarray,
                  steps: int = 0) -> None:
        """The rollout agent plays every seat of rows 0..rows-1 until each game is over or
        ``max_rollout_steps`` moves were played (``steps`` of them already): one ``act`` and
        one ``step`` per move over the rows still going. A ``step`` reads the whole batch, so
        once few rows are left (the long playouts: a game that loops until the twin's step
        cap) they move to a batch of their size, and back when done."""
        engine, agent = self.engine, self.rollout
        live = np.flatnonzero(~state.done[:rows])
        while len(live) and steps < self.max_rollout_steps:
            if len(live) * TAIL_SHARE < state.num_envs and state.num_envs > TAIL_ROWS:
                m = len(live)
                small = self._state_for(m)
                for mine, theirs in zip(small.arrays, state.arrays, strict=True):
                    mine[:m] = theirs[live]
                small.rngs = state.rngs  # the same generator draws on
                self._play_out(small, m, np.zeros(small.num_envs, np.int64), steps)
                for mine, theirs in zip(small.arrays, state.arrays, strict=True):
                    theirs[live] = mine[:m]
                return
            moves[live] = engine.act(state, agent, live)
            engine.step(state, moves)
            steps += 1
            live = live[~state.done[live]]


def _copy_rows(state: BatchedState, rows: np.ndarray, sources: np.ndarray) -> None:
    """Slot rows[r] of every array of ``state`` as slot sources[r]."""
    if len(rows):
        for array in state.arrays:
            array[rows] = array[sources]


class BatchedPIMCAgent(BaseAgent):
    """``BatchedPIMC`` as a scalar agent: each ``act`` searches its one view (``decide``), so
    that ``batched-pimc:WORLDS`` plays wherever an agent name goes; batch many views through
    ``act_many`` instead where they are at hand (expert iteration's labels)."""

    def __init__(self, spec: GameSpec, game: Game, worlds: int = 25, **options: Any):
        super().__init__(game)
        self.pimc = BatchedPIMC(spec, game, worlds, **options)
        self.name = f"{NAME}:{self.pimc.worlds}"

    def act(self, view: View, rng: np.random.Generator) -> int:
        return int(self.pimc.decide([view], rng)[0][0])

    def act_many(self, views: Sequence[View], rng: np.random.Generator) -> np.ndarray:
        """(n,) the move for each of ``views``, all searched together (``decide``)."""
        return self.pimc.decide(views, rng)[0]

    def __repr__(self) -> str:
        return f"BatchedPIMCAgent(worlds={self.pimc.worlds})"


def make_batched_pimc_agent(spec: GameSpec, name: str, game: Game) -> BatchedPIMCAgent:
    """The agent named ``batched-pimc:WORLDS`` (the agent plug-in's factory); ValueError for
    another name or a count of worlds that is not a positive integer."""
    kind, sep, worlds = name.partition(":")
    if kind != NAME or not sep or not (worlds.isdecimal() and worlds.isascii()) or int(worlds) < 1:
        raise ValueError(f"agent {name!r}: give {NAME}:WORLDS, the worlds sampled per move as "
                         f"a positive integer (e.g. {NAME}:25)")
    return BatchedPIMCAgent(spec, game, int(worlds))
