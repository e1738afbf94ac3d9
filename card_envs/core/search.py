"""Search agents: determinized search over worlds sampled from one seat's view.

A search agent never reads the real state. It asks its game for *worlds*: full states
consistent with everything the searching seat's view says, every card it cannot see redrawn
(the game's ``sample_world(view, rng)``), and plays moves out in them through the ``Game``
protocol (``legal_mask``, ``apply``, ``payoffs``, ``copy``). Every other seat, and the searching
seat after the move searched, is played by a *rollout policy*: any Agent, acting on its own
view of the sampled world (a rule agent, or a trained model). A playout stops when the game
ends, when the game's ``leaf_value`` gives per-seat values (e.g. at the end of a round), or
after ``max_rollout_steps``. Values are per seat, so any number of players works, and teams
need nothing more (each seat's payoff already is its team's result).

Two algorithms, both budgeted in playouts per decision:

``PIMC`` (perfect-information Monte Carlo, what the games' agents use): the candidate moves
are played out on the *same* worlds with the *same* playout randomness (common random
numbers, so that moves are compared pair by pair), with sequential halving dropping the worse
half after each round. Given a *base* policy (a sound rule agent) it keeps the base's move
unless the best other move beats it on the same worlds by more than ``margin`` standard errors
of the mean paired difference: sampled worlds and modelled opponents are only approximations,
so the search departs from a sound move only where the evidence is clear.

``ISMCTS`` (information-set MCTS): a tree of the searching seat's decisions (in the spirit of
POMCP, and of single-observer IS-MCTS with the other seats' moves left to a model), a world
sampled per simulation. A node is one of its decisions, identified by the actions it took and
by ``key(view)``, a summary of what it saw by then (its hand, the card it drew, ...), so a
decision is never shared between worlds the seat can tell apart, and two decisions in a row
by the same seat (a draw then a placement, a claim named card by card) are simply consecutive
nodes. Selection is UCB1 on the searching seat's mean payoff scaled to [0, 1], with
*availability* counts (how often the action was legal when its node was visited); one node is
added per simulation, then the rollout policy plays on. With ``tree="all"`` every seat's
decisions are nodes (each seat maximising its own payoff). The move chosen is the root action
visited most.

A decision with a single legal action, or one the game's agent answers by rule
(``SearchAgent.shortcut``), takes no search.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from card_envs.core.agents import Agent, BaseAgent
from card_envs.core.game import Game, State, View, check_choice

# (world, root view) -> per-seat values to stop the playout with, or None to go on; it is also
# asked at the game's end (None there: the game's payoffs)
LeafValue = Callable[[State, View], "np.ndarray | None"]


def _stop_value(game: Game, leaf_value: LeafValue | None, s: State,
                view: View) -> np.ndarray | None:
    """The per-seat values to stop with in world ``s``: ``leaf_value``'s, else the payoffs once
    the game is over, else None."""
    if leaf_value is not None:
        values = leaf_value(s, view)
        if values is not None:
            return values
    if s.terminal or s.truncated:
        return game.payoffs(s)
    return None


def clearly_better(gain: np.ndarray, margin: float) -> bool:
    """Whether the paired gains of a move over the base move (one per world) beat it by more
    than ``margin`` standard errors of their mean (never, with one world)."""
    n = len(gain)
    spread = gain.std(ddof=1) / math.sqrt(n) if n > 1 else math.inf
    return bool(gain.mean() > margin * spread)


class _Edge:
    """An action of a node: visits, availability, summed payoffs per seat, the nodes after it."""

    __slots__ = ("visits", "avail", "total", "after")

    def __init__(self, num_players: int):
        self.visits = 0
        self.avail = 0
        self.total = np.zeros(num_players)
        self.after: dict[Hashable, _Node] = {}


class _Node:
    """One decision of the tree: the seat to act and its actions tried so far."""

    __slots__ = ("player", "edges")

    def __init__(self, player: int):
        self.player = player
        self.edges: dict[int, _Edge] = {}


class SearchResult:
    """The root's statistics after a search: per action its visits and mean payoff per seat."""

    def __init__(self, player: int, edges: dict[int, _Edge], chosen: int | None = None):
        self.player = player
        self.visits = {a: e.visits for a, e in edges.items()}
        self.means = {a: e.total / max(e.visits, 1) for a, e in edges.items()}
        self.chosen = chosen

    def best(self) -> int:
        """The search's choice: unless it named one, the action visited most (ties: the higher
        mean payoff of the searching seat, then the lower action)."""
        if self.chosen is not None:
            return self.chosen
        return max(self.visits, key=lambda a: (self.visits[a], self.means[a][self.player], -a))


class ISMCTS:
    """Information-set MCTS for any ``Game`` (see the module docstring).

    Args:
        game: the rules.
        sample_world: ``(view, rng) -> State``, a world consistent with the view.
        rollout: the policy of every seat after the tree (an Agent, e.g. the game's fast rule
            agent, or a trained model).
        opponents: the model of the other seats inside the tree (default: ``rollout``).
        simulations: simulations per move.
        exploration: UCB1's constant, for payoffs scaled to [0, 1].
        tree: ``"self"`` (only the searching seat's decisions are nodes) or ``"all"``.
        key: ``view -> hashable``, what tells two of the searching seat's decisions apart
            beyond the actions that led there; None: nothing (actions only).
        leaf_value: stops a playout early with its per-seat values (see ``LeafValue``).
        candidates: ``view -> actions`` to consider at a tree node (a subset of the legal
            ones; default: all legal actions).
        max_rollout_steps: playouts longer than this stop with the payoffs so far (usually 0).
    """

    def __init__(
        self,
        game: Game,
        sample_world: Callable[[View, np.random.Generator], State],
        rollout: Agent,
        simulations: int,
        opponents: Agent | None = None,
        exploration: float = 0.7,
        tree: str = "self",
        key: Callable[[View], Hashable] | None = None,
        leaf_value: LeafValue | None = None,
        candidates: Callable[[View], list[int]] | None = None,
        max_rollout_steps: int = 10_000,
    ):
        check_choice("tree", tree, ("self", "all"))
        if simulations < 1:
            raise ValueError(f"simulations={simulations!r} is not valid; it must be >= 1")
        self.game = game
        self.sample_world = sample_world
        self.rollout = rollout
        self.opponents = rollout if opponents is None else opponents
        self.simulations = simulations
        self.exploration = exploration
        self.all_seats = tree == "all"
        self.key = key
        self.leaf_value = leaf_value
        self.candidates = candidates
        self.max_rollout_steps = max_rollout_steps
        self._low = float(game.min_payoff)
        self._scale = 1.0 / max(float(game.max_payoff) - self._low, 1e-9)

    def search(self, view: View, rng: np.random.Generator) -> SearchResult:
        """Run the simulations from ``view`` (its seat must be to act); the root's statistics."""
        if not view.legal.any():
            raise ValueError(f"seat {view.player} is not to act in this view: nothing to search")
        root = _Node(view.player)
        for _ in range(self.simulations):
            self._simulate(root, view, rng)
        return SearchResult(view.player, root.edges)

    # --- one simulation -----------------------------------------------------------------
    def _simulate(self, root: _Node, view: View, rng: np.random.Generator) -> None:
        game, me = self.game, view.player
        s = self.sample_world(view, rng)
        node: _Node | None = root
        path: list[_Edge] = []
        values = None
        first = True
        while node is not None:
            action, edge, fresh = self._select(node, s, view if first else None, rng)
            first = False
            path.append(edge)
            game.apply(s, action, rng)
            values = self._leaf(s, view)
            if values is None and not self.all_seats:
                values = self._advance(s, me, view, rng)  # the model plays the other seats
            if values is not None:
                break
            if fresh:
                node = None  # expanded: play out from here
                break
            k = self.key(game.view(s, me)) if self.key is not None else None
            nxt = edge.after.get(k)
            if nxt is None:
                edge.after[k] = _Node(s.player)
                node = None
            else:
                node = nxt
        if values is None:
            values = self._playout(s, view, rng)
        for edge in path:
            edge.visits += 1
            edge.total += values

    def _select(self, node: _Node, s: State, view: View | None,
                rng: np.random.Generator) -> tuple[int, _Edge, bool]:
        """The action to play at ``node`` in world ``s``: an untried one if any, else UCB1.

        Returns (action, its edge, whether the edge is new). ``view`` is the real view at the
        root (None below it), where ``candidates`` apply; below the root they get the view of
        the sampled world.
        """
        game = self.game
        if self.candidates is not None:
            actions = self.candidates(view if view is not None else game.view(s, s.player))
        else:
            actions = np.flatnonzero(game.legal_mask(s)).tolist()
        edges = node.edges
        untried = [a for a in actions if a not in edges]
        for a in actions:
            edge = edges.get(a)
            if edge is not None:
                edge.avail += 1
        if untried:
            action = untried[int(rng.random() * len(untried))]
            edge = edges[action] = _Edge(game.num_players)
            edge.avail = 1
            return action, edge, True
        p, c, low, scale = node.player, self.exploration, self._low, self._scale
        best, best_score = actions[0], -math.inf
        for a in actions:
            edge = edges[a]
            score = (edge.total[p] / edge.visits - low) * scale + c * math.sqrt(
                math.log(edge.avail) / edge.visits)
            if score > best_score:
                best, best_score = a, score
        return best, edges[best], False

    def _leaf(self, s: State, view: View) -> np.ndarray | None:
        """The values to stop with in world ``s`` (see ``_stop_value``)."""
        return _stop_value(self.game, self.leaf_value, s, view)

    def _advance(self, s: State, me: int, view: View, rng: np.random.Generator) -> Any:
        """Let the opponent model play until ``me`` is to act; values if the playout ended."""
        game, model = self.game, self.opponents
        while s.player != me:
            game.apply(s, model.act(game.view(s, s.player), rng), rng)
            values = self._leaf(s, view)
            if values is not None:
                return values
        return None

    def _playout(self, s: State, view: View, rng: np.random.Generator) -> np.ndarray:
        """Play ``s`` out with the rollout policy; the per-seat values where it stops."""
        game, policy = self.game, self.rollout
        for _ in range(self.max_rollout_steps):
            game.apply(s, policy.act(game.view(s, s.player), rng), rng)
            values = self._leaf(s, view)
            if values is not None:
                return values
        return game.payoffs(s)


class PIMC:
    """Perfect-information Monte Carlo at the root: every candidate action is played out on the
    same sampled worlds with the same playout randomness (common random numbers), and
    sequential halving keeps the better half of the actions after each round.

    With a ``base`` policy (an Agent) its move stays in every round and is kept unless the best
    other move beats it on the same worlds by more than ``margin`` standard errors of the mean
    paired difference: the search departs from a sound policy only where it is sure to gain.

    Takes the arguments of ``ISMCTS`` that apply (no tree: ``tree``, ``key``, ``exploration``
    and ``opponents`` are not used); ``simulations`` counts playouts (one action on one world).
    """

    def __init__(
        self,
        game: Game,
        sample_world: Callable[[View, np.random.Generator], State],
        rollout: Agent,
        simulations: int,
        leaf_value: LeafValue | None = None,
        candidates: Callable[[View], list[int]] | None = None,
        base: Agent | None = None,
        margin: float = 0.0,
        max_rollout_steps: int = 10_000,
    ):
        if simulations < 1:
            raise ValueError(f"simulations={simulations!r} is not valid; it must be >= 1")
        self.game = game
        self.sample_world = sample_world
        self.rollout = rollout
        self.simulations = simulations
        self.leaf_value = leaf_value
        self.candidates = candidates
        self.base = base
        self.margin = margin
        self.max_rollout_steps = max_rollout_steps

    def search(self, view: View, rng: np.random.Generator) -> SearchResult:
        """Play the candidate actions out from ``view``; the root's statistics."""
        if not view.legal.any():
            raise ValueError(f"seat {view.player} is not to act in this view: nothing to search")
        game, me = self.game, view.player
        actions = (self.candidates(view) if self.candidates is not None
                   else np.flatnonzero(view.legal).tolist())
        base = None
        if self.base is not None:
            base = self.base.act(view, np.random.default_rng(int(rng.integers(2**63))))
            if base not in actions:
                actions = [*actions, base]
        edges = {a: _Edge(game.num_players) for a in actions}
        mine: dict[int, list[float]] = {a: [] for a in actions}  # my value on each world
        left = list(actions)
        rounds = max(1, math.ceil(math.log2(len(left))))
        budget = self.simulations
        for r in range(rounds):
            if len(left) == 1:
                break
            worlds = max(1, budget // (len(left) * (rounds - r)))
            for _ in range(worlds):
                world = self.sample_world(view, rng)
                seed = int(rng.integers(2**63))
                for a in left:
                    values = self._play(world.copy(), a, view, np.random.default_rng(seed))
                    edge = edges[a]
                    edge.visits += 1
                    edge.total += values
                    mine[a].append(float(values[me]))
                budget -= len(left)
            left.sort(key=lambda a: -edges[a].total[me] / max(edges[a].visits, 1))
            keep = max(1, len(left) // 2) if r < rounds - 1 else 1
            left = left[:keep] + ([base] if base in left[keep:] else [])
        chosen = left[0]
        if base is not None and chosen != base:
            # every world of the base's rounds was also one of the chosen move's, in order
            n = len(mine[base])
            if not clearly_better(np.array(mine[chosen][:n]) - np.array(mine[base]),
                                  self.margin):
                chosen = base
        return SearchResult(me, edges, chosen=chosen)

    def _play(self, s: State, action: int, view: View, rng: np.random.Generator) -> np.ndarray:
        """Play ``action`` then the rollout policy in world ``s``; the values where it stops."""
        game, policy = self.game, self.rollout
        game.apply(s, action, rng)
        for _ in range(self.max_rollout_steps):
            values = _stop_value(game, self.leaf_value, s, view)
            if values is not None:
                return values
            game.apply(s, policy.act(game.view(s, s.player), rng), rng)
        return game.payoffs(s)


class SearchAgent(BaseAgent):
    """An agent that picks each move by ``PIMC`` or ``ISMCTS`` (``method``); games subclass it
    with their world sampler.

    Subclasses implement ``sample_world(view, rng)`` and ``default_rollout()`` (the rollout
    policy unless one is given) and set ``default_budget`` (playouts per decision) and
    ``method``; with ``method = "pimc"``, a ``margin`` keeps ``base_policy()``'s move (default:
    the rollout policy's) unless clearly beaten (None: no base). They may override ``key``,
    ``leaf_value`` and ``candidates`` (see ``ISMCTS``) and ``shortcut`` (a move that needs no
    search, or None). ``rollout`` and ``opponents`` (ISMCTS's model of the other seats) take
    any Agent, a trained policy say, instead of the defaults.

    ``guide`` (PIMC only): an Agent, a trained policy say, whose move the search keeps unless
    another beats it by ``margin`` standard errors, in place of ``base_policy()``: search
    guided by a learned policy. It acts on the seat's own view like any agent.
    """

    name = "ismcts"
    takes_budget = True
    default_budget = 100
    tree = "self"
    exploration = 0.7
    method = "ismcts"
    margin: float | None = None  # PIMC: keep the base policy's move unless beaten by this

    def __init__(self, game: Game, budget: int | None = None, rollout: Agent | None = None,
                 opponents: Agent | None = None, guide: Agent | None = None):
        super().__init__(game)
        self.budget = self.default_budget if budget is None else int(budget)
        if self.budget < 1:
            raise ValueError(f"budget={budget!r} is not valid; it must be a positive integer")
        if guide is not None and not self.takes_guide():
            raise ValueError(f"guide: {type(self).__name__} searches by {self.method} without a "
                             "base move to keep; only PIMC with a margin takes a guide")
        self.guide = guide
        if guide is not None:
            self.name = f"{guide.name}+{self.name}:{self.budget}"
        self.rollout = rollout if rollout is not None else self.default_rollout()
        if self.method == "pimc":
            base = guide if guide is not None else (
                self.base_policy() if self.margin is not None else None)
            self.searcher = PIMC(game, self.sample_world, self.rollout, self.budget,
                                 leaf_value=self.leaf_value, candidates=self.candidates,
                                 base=base, margin=self.margin or 0.0)
        else:
            self.searcher = ISMCTS(
                game, self.sample_world, self.rollout, self.budget, opponents=opponents,
                exploration=self.exploration, tree=self.tree, key=self.key,
                leaf_value=self.leaf_value, candidates=self.candidates,
            )

    @classmethod
    def takes_guide(cls) -> bool:
        """Whether the search keeps a guide's move unless beaten (PIMC with a margin)."""
        return cls.method == "pimc" and cls.margin is not None

    def sample_world(self, view: View, rng: np.random.Generator) -> State:
        """A full state consistent with ``view`` (every card the seat cannot see redrawn)."""
        raise NotImplementedError

    def default_rollout(self) -> Agent:
        """The rollout policy when none is given (the game's fast rule agent)."""
        raise NotImplementedError

    def base_policy(self) -> Agent:
        """PIMC's move to keep unless clearly beaten (default: the rollout policy)."""
        return self.rollout

    def shortcut(self, view: View) -> int | None:
        """A move to make without searching, or None."""
        return None

    key: Callable[[View], Hashable] | None = None
    leaf_value: LeafValue | None = None
    candidates: Callable[[View], list[int]] | None = None

    def act(self, view: View, rng: np.random.Generator) -> int:
        legal = np.flatnonzero(view.legal)
        if len(legal) == 1:
            return int(legal[0])
        move = self.shortcut(view)
        if move is not None:
            return move
        return self.searcher.search(view, rng).best()

    def reset(self) -> None:
        for agent in (self.rollout, getattr(self.searcher, "opponents", None), self.guide):
            if agent is not None and hasattr(agent, "reset"):
                agent.reset()

    def __repr__(self) -> str:
        guide = "" if self.guide is None else f", guide={self.guide!r}"
        return f"{type(self).__name__}(budget={self.budget}{guide})"
