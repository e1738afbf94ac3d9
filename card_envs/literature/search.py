"""The Literature search agent: determinized search (PIMC) over worlds sampled from its tables.

**Hands.** A world gives every other seat a hand that agrees with everything the view's tables
say: the cards the seat is known to hold, none it is known to lack, at least its least count of
every half-suit, and exactly its hand size. ``Deals`` finds one by a randomized greedy fill
(the least counts first, then the most constrained card first, each to a seat that may hold it
with a chance in proportion to the room it has left), falling back to a feasible flow (which
always finds one, in polynomial time) if the fill keeps failing, then shuffles it by random
swaps that keep every fact true (a Markov chain whose steps are symmetric, so it drifts
towards every consistent deal alike).

**Knowledge.** The world also needs every player's tables (the rule agents that play the other
seats read them, and under ``rules="original"`` they make the automatic claims). The view does
not hold the public history, so the other players' tables are rebuilt from what the view does
hold: the searching seat's tables are its own, exactly; each other player knows its own
(sampled) hand and what the searching seat knows about the seats other than the two of them,
except that those seats lack a card the searching seat holds (which only the searching seat
can tell); all closed under the knowledge engine's rules. Every fact is true of the sampled
hands, so the tables stay sound; the other players know a little more about third seats and
less about the searching seat than they really do.

The search compares the likeliest asks (by the ``heuristic``'s beliefs; all legal asks when
none can succeed) and, where declarations are played, the claims likeliest to be named right; a
claim's naming steps name a teammate not known to lack the card. A half-suit the view proves is
claimed at once, a card whose holder the view proves is named at once, and a card an opponent is
known to hold is asked for at once, without search (what the ``heuristic`` does). Playouts use
the ``heuristic`` for every seat to the end of the game, valued half by the result and half by
the half-suit margin (less noisy, and it goes with the result); the ``heuristic``'s move is kept
unless another beats it by more than two standard errors on the same worlds.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from card_envs.core.agents import Agent
from card_envs.core.search import SearchAgent
from card_envs.literature.agents import Beliefs, HeuristicAgent
from card_envs.literature.deck import HALF_SUIT_SIZE, NUM_HALF_SUITS
from card_envs.literature.knowledge import ALL_PENDING
from card_envs.literature.rules import (
    Literature,
    LiteratureState,
    LiteratureView,
    proven_in_team,
)

GREEDY_TRIES = 50  # randomized fills before the exhaustive search
ASKS = 4  # the likeliest asks the search compares
CLAIMS = 2  # and the claims likeliest to be named right,
CLAIM_FLOOR = 0.2  # if at least this likely
MARGIN_WEIGHT = 0.5  # a playout's value: this much half-suit margin (/ 8), the rest the result


class Deals:
    """Random hands for the other seats, consistent with one view's tables (see the module
    docstring). Build once per view; ``sample(rng)`` gives the hands in slot form."""

    def __init__(self, view: LiteratureView):
        n, me = view.num_players, view.player
        tables = view.tables
        self.view = view
        self.n, self.me = n, me
        self.others = [q for q in range(n) if q != me]
        live = [h for h in range(NUM_HALF_SUITS) if view.live >> h & 1]
        holds, lacks, least = tables[0], tables[1], tables[2]
        self.known = [0] * n  # per seat, the cards it is known to hold (slot form)
        for q in range(n):
            for h in live:
                self.known[q] |= int(holds[q, h]) << (8 * h)
        self.known[me] = view.hand
        placed = 0
        for q in range(n):
            placed |= self.known[q]
        # the cards to deal: live, in no known place
        self.cards = [6 * h + pos for h in live for pos in range(HALF_SUIT_SIZE)
                      if not placed >> (8 * h + pos) & 1]
        self.room = {q: view.sizes[q] - self.known[q].bit_count() for q in self.others}
        if sum(self.room.values()) != len(self.cards):
            raise AssertionError("the hand sizes do not add up to the cards left to deal")
        # seats that may hold each card, and what each seat must still get per half-suit
        self.may = {c: [q for q in self.others
                        if not lacks[q, c // HALF_SUIT_SIZE] >> (c % HALF_SUIT_SIZE) & 1]
                    for c in self.cards}
        self.least = {(q, h): int(least[q, h]) for q in self.others for h in live}
        self.deficit = {(q, h): self.least[q, h] - (int(holds[q, h])).bit_count()
                        for q in self.others for h in live}
        self.deficit = {qh: d for qh, d in self.deficit.items() if d > 0}

    def sample(self, rng: np.random.Generator) -> list[int]:
        """Every seat's hand (slot form) in one random deal consistent with the view."""
        owner = None
        for _ in range(GREEDY_TRIES):
            owner = self._fill(rng)
            if owner is not None:
                break
        if owner is None:
            owner = self._by_flow(rng)
        self._shuffle(owner, rng)
        hands = list(self.known)
        for c, q in owner.items():
            hands[q] |= 1 << (8 * (c // HALF_SUIT_SIZE) + c % HALF_SUIT_SIZE)
        return hands

    def _counts(self) -> dict[tuple[int, int], int]:
        return {(q, h): ((self.known[q] >> (8 * h)) & 0x3F).bit_count()
                for q in self.others for h in range(NUM_HALF_SUITS)}

    def _fill(self, rng: np.random.Generator) -> dict[int, int] | None:
        """One randomized greedy deal (card -> seat), or None if it got stuck."""
        room = dict(self.room)
        owner: dict[int, int] = {}
        pairs = list(self.deficit.items())
        for i in rng.permutation(len(pairs)):
            (q, h), need = pairs[i]
            pool = [c for c in range(6 * h, 6 * h + 6)
                    if c in self.may and c not in owner and q in self.may[c]]
            if len(pool) < need or room[q] < need:
                return None
            for j in rng.choice(len(pool), size=need, replace=False):
                owner[pool[j]] = q
            room[q] -= need
        left = [c for c in self.cards if c not in owner]
        order = rng.permutation(len(left))
        left = [left[i] for i in order]
        while left:
            best, best_seats = -1, None
            for i, c in enumerate(left):
                seats = [q for q in self.may[c] if room[q] > 0]
                if best_seats is None or len(seats) < len(best_seats):
                    best, best_seats = i, seats
                    if len(seats) <= 1:
                        break
            if not best_seats:
                return None
            c = left.pop(best)
            weights = np.array([room[q] for q in best_seats], dtype=float)
            q = best_seats[int(rng.choice(len(best_seats), p=weights / weights.sum()))]
            owner[c] = q
            room[q] -= 1
        return owner

    def _by_flow(self, rng: np.random.Generator) -> dict[int, int]:
        """A deal found as a feasible flow (polynomial, never fails on a consistent view).

        Each card sends one unit to (seat, its half-suit) if the seat may hold it; each
        (seat, half-suit) passes at least the seat's missing least count on to the seat; each
        seat passes exactly its room to the sink. Lower bounds are met the usual way (a
        circulation with a super source and sink); the edges are visited in random order, so
        different generators give different deals (the shuffle mixes further)."""
        flow = _Flow()
        source, sink = flow.node(), flow.node()
        seat = {q: flow.node() for q in self.others}
        group: dict[tuple[int, int], int] = {}
        card_edges: list[tuple[int, int, int]] = []  # (card, seat, edge id)
        for i in rng.permutation(len(self.cards)):
            c = self.cards[i]
            h = c // HALF_SUIT_SIZE
            node = flow.node()
            flow.demand(source, node, 1)  # S -> card, lower = capacity = 1
            may = self.may[c]
            for j in rng.permutation(len(may)):
                q = may[j]
                if (q, h) not in group:
                    group[q, h] = flow.node()
                    need = self.deficit.get((q, h), 0)
                    flow.demand(group[q, h], seat[q], need)
                    flow.edge(group[q, h], seat[q], HALF_SUIT_SIZE - need)
                card_edges.append((c, q, flow.edge(node, group[q, h], 1)))
        for q in self.others:
            flow.demand(seat[q], sink, self.room[q])  # lower = capacity = room
        if any(qh not in group for qh in self.deficit):  # q must get cards it may not hold
            raise AssertionError("no deal agrees with the view: its tables are inconsistent")
        flow.edge(sink, source, len(self.cards))
        if not flow.feasible():
            raise AssertionError("no deal agrees with the view: its tables are inconsistent")
        return {c: q for c, q, e in card_edges if flow.used(e)}

    def _shuffle(self, owner: dict[int, int], rng: np.random.Generator) -> None:
        """Random swaps of two cards between two seats that keep every fact true."""
        cards = list(owner)
        if len(cards) < 2:
            return
        counts = self._counts()
        for c, q in owner.items():
            counts[q, c // HALF_SUIT_SIZE] += 1
        least = self.least
        picks = rng.integers(len(cards), size=(3 * len(cards), 2))
        for i, j in picks.tolist():
            a, b = cards[i], cards[j]
            qa, qb = owner[a], owner[b]
            if qa == qb or qb not in self.may[a] or qa not in self.may[b]:
                continue
            ha, hb = a // HALF_SUIT_SIZE, b // HALF_SUIT_SIZE
            if ha != hb:
                if counts[qa, ha] <= least[qa, ha] or counts[qb, hb] <= least[qb, hb]:
                    continue
                counts[qa, ha] -= 1
                counts[qb, ha] += 1
                counts[qb, hb] -= 1
                counts[qa, hb] += 1
            owner[a], owner[b] = qb, qa


def sample_world(game: Literature, view: LiteratureView, rng: np.random.Generator,
                 deals: Deals | None = None) -> LiteratureState:
    """A state consistent with ``view``: hands from ``Deals`` (built here unless given) and
    every player's tables as the module docstring says. Reads nothing but the view."""
    if deals is None:
        deals = Deals(view)
    hands = deals.sample(rng)
    s = LiteratureState(view.turn)
    s.terminal = s.truncated = False
    s.steps = 0
    s.hands = hands
    s.sizes = list(view.sizes)
    s.live = view.live
    s.outcome = list(view.outcome)
    s.declarer = list(view.declarer)
    s.score = list(view.score)
    s.claim_half = view.claim_half
    s.claim_names = list(view.claim_names)
    s.last_asks = view.last_asks
    s.log = []  # the public history is not in the view
    s.know = _knowledge(game, view, hands)
    if not s.live or (game.original and not (game.team_cards(s, 0) and game.team_cards(s, 1))):
        s.terminal = True
    return s


def _blocks(tables: np.ndarray, h: int) -> tuple[int, int, int]:
    """One observer's (holds, lacks, least) bytes of half-suit h, seat s in byte s."""
    return tuple(int.from_bytes(tables[kind, :, h].tobytes(), "little") for kind in range(3))


def _knowledge(game: Literature, view: LiteratureView, hands: list[int]):
    """Every observer's tables in a world with ``hands`` (see the module docstring)."""
    eng, n, me = game.engine, game.num_players, view.player
    k = eng.start(view.sizes)
    k.live = view.live
    live = [h for h in range(NUM_HALF_SUITS) if view.live >> h & 1]
    mine = view.tables
    # what I know about seats other than me, as every other player may learn it: my bytes
    # for the other seats, without "lacks" of the cards I hold
    my_hand = hands[me]
    blocks = {}
    for h in live:
        holds, lacks, least = _blocks(mine, h)
        hand_byte = (my_hand >> (8 * h)) & 0x3F
        seat_me = 0xFF << (8 * me)
        lacks &= ~(hand_byte * sum(1 << (8 * q) for q in range(n)))
        blocks[h] = (holds & ~seat_me, lacks & ~seat_me, least & ~seat_me)
    observers = []
    for o in range(eng.num_observers):
        owner, about = divmod(o, n) if game.original else (o, o)
        if owner == me:
            tables = mine if about == me else view.believed_tables(about)
            observers.append((o, {h: _blocks(tables, h) for h in live}))
        elif owner == about:
            facts = {}
            seat_k = 0xFF << (8 * owner)
            for h in live:
                holds, lacks, least = blocks[h]
                own = (hands[owner] >> (8 * h)) & 0x3F
                holds = (holds & ~seat_k) | own << (8 * owner)
                lacks = (lacks & ~seat_k) | (0x3F & ~own) << (8 * owner)
                least = (least & ~seat_k) | own.bit_count() << (8 * owner)
                facts[h] = (holds, lacks, least)
            observers.append((o, facts))
        # "what k can tell that i knows" for another player k: the engine's rule 8 fills it
    for h in range(NUM_HALF_SUITS):
        k.holds[h] = k.lacks[h] = k.least[h] = 0
    for o, facts in observers:
        for h, (holds, lacks, least) in facts.items():
            k.holds[h] = eng.with_block(k.holds[h], o, holds)
            k.lacks[h] = eng.with_block(k.lacks[h], o, lacks)
            k.least[h] = eng.with_block(k.least[h], o, least)
    eng.refresh(k)
    eng.close(k, ALL_PENDING)
    return k


class LiteratureSearchAgent(SearchAgent):
    """Determinized search (``PIMC`` of ``card_envs.core.search``) over worlds sampled from the
    knowledge tables; budget: playouts per decision (one candidate move on one sampled world,
    then the ``heuristic`` for every seat to the end of the game, valued half by the result and
    half by the half-suit margin). It keeps the ``heuristic``'s move unless another beats it by
    more than two standard errors on the same worlds."""

    default_budget = 48
    method = "pimc"
    margin = 2.0

    def __init__(self, game: Literature, budget: int | None = None,
                 rollout: Agent | None = None, opponents: Agent | None = None,
                 guide: Agent | None = None):
        super().__init__(game, budget, rollout, opponents, guide)
        self._deals: Deals | None = None

    def default_rollout(self) -> Agent:
        return HeuristicAgent(self.game)

    def sample_world(self, view: LiteratureView, rng: np.random.Generator) -> LiteratureState:
        if self._deals is None or self._deals.view is not view:
            self._deals = Deals(view)  # kept for the simulations of this one view
        return sample_world(self.game, view, rng, self._deals)

    def shortcut(self, view: LiteratureView) -> int | None:
        game = self.game
        if view.claim_half >= 0:
            card = view.claim_half * HALF_SUIT_SIZE + len(view.claim_names)
            holds, lacks = view.holds(), view.lacks()
            mates = view.teammates()
            for t, q in enumerate(mates):
                if holds[q, card]:
                    return game.name_base + t
            maybe = [t for t, q in enumerate(mates) if not lacks[q, card]]
            return game.name_base + maybe[0] if len(maybe) == 1 else None
        if not game.original:
            rows = view.tables[0].T
            proven = proven_in_team(
                [int.from_bytes(rows[h].tobytes(), "little") for h in range(NUM_HALF_SUITS)],
                view.player, view.num_players, view.live)
            if proven:
                return game.declare_base + proven[0][0]
        # an ask for a card the asked player is known to hold cannot fail (the heuristic makes
        # such an ask first too)
        asks = view.legal[:game.num_asks]
        sure = np.flatnonzero(view.holds()[view.opponents()].ravel() * asks)
        if len(sure):
            return int(sure[0])
        return None

    def candidates(self, view: LiteratureView) -> list[int]:
        game, legal = self.game, view.legal
        if view.claim_half >= 0:
            card = view.claim_half * HALF_SUIT_SIZE + len(view.claim_names)
            lacks = view.lacks()
            names = [game.name_base + t for t, q in enumerate(view.teammates())
                     if not lacks[q, card]]
            return names or np.flatnonzero(legal).tolist()
        beliefs = Beliefs(view)
        asks = legal[:game.num_asks]
        chance = (beliefs.chance[view.opponents()].ravel() * asks)
        order = np.argsort(-chance, kind="stable")
        hopeful = [int(a) for a in order[:ASKS] if chance[a] > 0]
        if not hopeful:
            hopeful = np.flatnonzero(asks).tolist()[:ASKS]
        if game.original:  # no declarations: the claims make themselves
            return hopeful
        live = [h for h in range(NUM_HALF_SUITS)
                if view.live >> h & 1 and legal[game.declare_base + h]]
        claims = sorted(live, key=beliefs.claim_chance, reverse=True)[:CLAIMS]
        return hopeful + [game.declare_base + h for h in claims
                          if beliefs.claim_chance(h) >= CLAIM_FLOOR]

    def leaf_value(self, s: LiteratureState, root: LiteratureView) -> np.ndarray | None:
        if not s.done:
            return None
        # the result, blended with the half-suit margin (far less noisy, and it goes with it)
        margin = np.array([s.score[p % 2] - s.score[1 - p % 2]
                           for p in range(self.game.num_players)]) / NUM_HALF_SUITS
        return (1.0 - MARGIN_WEIGHT) * self.game.payoffs(s) + MARGIN_WEIGHT * margin

    def key(self, view: LiteratureView) -> Hashable:
        return (view.raw, view.hand, view.sizes, view.claim_half, view.claim_names, view.turn,
                view.outcome)


class _Flow:
    """Maximum flow (shortest augmenting paths) with lower bounds met by ``demand`` edges:
    just enough for ``Deals._by_flow``, a few hundred edges."""

    def __init__(self):
        self.head: list[list[int]] = []  # per node, its edge ids
        self.to: list[int] = []
        self.cap: list[int] = []
        self.excess: list[int] = []

    def node(self) -> int:
        self.head.append([])
        self.excess.append(0)
        return len(self.head) - 1

    def edge(self, u: int, v: int, cap: int) -> int:
        """An edge u -> v of this capacity (and its residual twin); gives its id."""
        for a, b, c in ((u, v, cap), (v, u, 0)):
            self.head[a].append(len(self.to))
            self.to.append(b)
            self.cap.append(c)
        return len(self.to) - 2

    def demand(self, u: int, v: int, amount: int) -> None:
        """At least ``amount`` must flow u -> v (beyond it only through ``edge``s)."""
        self.excess[v] += amount
        self.excess[u] -= amount

    def used(self, e: int) -> bool:
        """Whether edge ``e`` carries flow (its residual twin has capacity)."""
        return self.cap[e ^ 1] > 0

    def feasible(self) -> bool:
        """Whether every demand can be met; leaves such a flow on the edges."""
        top, bottom = self.node(), self.node()
        need = 0
        for x, ex in enumerate(self.excess[:top]):
            if ex > 0:
                self.edge(top, x, ex)
                need += ex
            elif ex < 0:
                self.edge(x, bottom, -ex)
        while need:
            parent = [-1] * len(self.head)
            parent[top] = -2
            queue = [top]
            for x in queue:
                for e in self.head[x]:
                    y = self.to[e]
                    if self.cap[e] > 0 and parent[y] == -1:
                        parent[y] = e
                        queue.append(y)
                if parent[bottom] != -1:
                    break
            if parent[bottom] == -1:
                return False
            push, y = need, bottom
            while y != top:
                e = parent[y]
                push = min(push, self.cap[e])
                y = self.to[e ^ 1]
            y = bottom
            while y != top:
                e = parent[y]
                self.cap[e] -= push
                self.cap[e ^ 1] += push
                y = self.to[e ^ 1]
            need -= push
        return True
