"""Rule-based Literature agents. They read only their view: their hand, public facts and their
own knowledge tables (what they can prove about every hand)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.literature.deck import HALF_SUIT_SIZE, NUM_CARDS, NUM_HALF_SUITS
from card_envs.literature.rules import LiteratureView, proven_in_team


class Beliefs:
    """What a view proves, and a guess of how likely each seat holds each card.

    ``holds`` / ``lacks``: int8 (n, 48) proven facts; ``chance`` (computed when first read):
    float (n, 48), 1 for a proven holder, 0 for a proven non-holder, otherwise the seat's
    share of the card among the seats that may hold it, weighted by how many unplaced cards
    each seat has (and at least the fraction its least count forces in that half-suit).
    """

    def __init__(self, v: LiteratureView):
        self.view = v
        self.holds = v.holds()
        self.lacks = v.lacks()

    @cached_property
    def chance(self) -> np.ndarray:
        """float (n, 48): how likely each seat holds each card (see the class docstring)."""
        v, holds = self.view, self.holds
        n = v.num_players
        unknown = (holds == 0) & (self.lacks == 0)
        unplaced = np.asarray(v.sizes, dtype=float) - holds.sum(axis=1)
        open_cards = unknown.sum(axis=1)
        share = np.where(open_cards > 0, unplaced / np.maximum(open_cards, 1), 0.0)
        open_in_half = unknown.reshape(n, NUM_HALF_SUITS, HALF_SUIT_SIZE).sum(axis=2)
        held_in_half = holds.reshape(n, NUM_HALF_SUITS, HALF_SUIT_SIZE).sum(axis=2)
        forced = (v.least() - held_in_half) / np.maximum(open_in_half, 1)
        weight = np.maximum(share[:, None], forced)  # (n, 8)
        weight = np.repeat(weight, HALF_SUIT_SIZE, axis=1) * unknown
        total = weight.sum(axis=0)
        chance = np.divide(weight, total, out=np.zeros_like(weight), where=total > 0)
        return np.where(holds == 1, 1.0, chance)

    def proven_claims(self) -> list[tuple[int, tuple[int, ...]]]:
        """(half-suit, holders) of every half-suit whose holders this seat can name for sure."""
        v = self.view
        by_half = v.tables[0].T  # (8, n): the cards each seat is known to hold, per half-suit
        rows = [int.from_bytes(by_half[h].tobytes(), "little") for h in range(NUM_HALF_SUITS)]
        return proven_in_team(rows, v.player, v.num_players, v.live)

    def with_my_team(self, h: int) -> bool:
        """Whether every card of half-suit h is proven to be out of the opponents' hands."""
        cards = slice(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE)
        return bool(self.lacks[self.view.opponents(), cards].all())

    def best_holder(self, card: int) -> tuple[int, float]:
        """(teammate slot, chance) of the teammate most likely to hold ``card``."""
        chances = self.chance[self.view.teammates(), card]
        t = int(np.argmax(chances))
        return t, float(chances[t])

    def claim_chance(self, h: int) -> float:
        """The chance that naming the likeliest teammate for each card of h is all right."""
        return float(np.prod([self.best_holder(c)[1]
                              for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE)]))


class _LiteratureAgent(BaseAgent):
    """Shared structure: finish a claim being named, claim what is proven, else ask.

    Where an agent picks at random among equally good actions, ``pick(pool)`` picks: ``act``
    draws one from its generator; ``best_moves`` keeps them all."""

    def act(self, v: LiteratureView, rng: np.random.Generator) -> int:
        return int(self._decide(v, lambda pool: pool[int(rng.integers(len(pool)))]))

    def best_moves(self, v: LiteratureView) -> list[int]:
        """Every action this agent may play in ``v`` (those ``act`` picks among at random;
        one action where it has no choice), for labels that count every tie as right."""
        return sorted(int(a) for a in np.atleast_1d(self._decide(v, np.asarray)))

    def _decide(self, v: LiteratureView, pick: Callable[[np.ndarray], Any]) -> Any:
        game_asks = len(v.opponents()) * NUM_CARDS
        beliefs = Beliefs(v)
        if v.claim_half >= 0:
            c = v.claim_half * HALF_SUIT_SIZE + len(v.claim_names)
            return game_asks + NUM_HALF_SUITS + self.name_holder(beliefs, c, pick)
        legal = v.legal
        can_declare = len(legal) > game_asks
        if can_declare:
            proven = beliefs.proven_claims()
            if proven:
                return game_asks + proven[0][0]
        asks = legal[:game_asks].reshape(-1, NUM_CARDS)
        if asks.any():
            return self.ask(beliefs, asks, pick)
        return game_asks + self.forced_claim(beliefs, pick)

    def name_holder(self, b: Beliefs, card: int, pick: Callable[[np.ndarray], Any]) -> Any:
        """The teammate slot (0 = myself) to name as the holder of ``card``."""
        raise NotImplementedError

    def ask(self, b: Beliefs, asks: np.ndarray, pick: Callable[[np.ndarray], Any]) -> Any:
        """An action among the legal asks ``asks`` (int8, opponents x 48), or a declaration."""
        raise NotImplementedError

    def forced_claim(self, b: Beliefs, pick: Callable[[np.ndarray], Any]) -> int:
        """A half-suit to declare when no ask is legal: the likeliest to be named right."""
        live = [h for h in range(NUM_HALF_SUITS) if b.view.live >> h & 1]
        return max(live, key=b.claim_chance)


class CautiousAgent(_LiteratureAgent):
    """Asks only for cards that the asked opponent may hold (uniformly among them), claims only
    what its knowledge proves, never guesses: with no hopeful ask it makes any legal ask. Only
    when no ask is legal at all does it declare, naming teammates that may hold each card."""

    name = "cautious"

    def name_holder(self, b: Beliefs, card: int, pick: Callable[[np.ndarray], Any]) -> Any:
        mates = b.view.teammates()
        known = [t for t, q in enumerate(mates) if b.holds[q, card]]
        if known:
            return known[0]
        maybe = [t for t, q in enumerate(mates) if not b.lacks[q, card]] or list(range(len(mates)))
        return pick(np.asarray(maybe))

    def ask(self, b: Beliefs, asks: np.ndarray, pick: Callable[[np.ndarray], Any]) -> Any:
        hopeful = asks * (1 - b.lacks[b.view.opponents()])
        return pick(np.flatnonzero(hopeful if hopeful.any() else asks))


class HeuristicAgent(_LiteratureAgent):
    """Asks for cards known to be held first, then the likeliest ask, preferring the opponent
    that just showed a half-suit and half-suits its team mostly holds; claims as soon as its
    knowledge proves a half-suit. It guesses a claim only when its team is otherwise lost:
    when no ask can succeed (or none is legal), it claims the half-suit that is proven to be
    all in its team (or failing that, any) whose likeliest naming is most likely right."""

    name = "heuristic"

    def name_holder(self, b: Beliefs, card: int, pick: Callable[[np.ndarray], Any]) -> int:
        return b.best_holder(card)[0]

    def ask(self, b: Beliefs, asks: np.ndarray, pick: Callable[[np.ndarray], Any]) -> Any:
        v = b.view
        opponents = v.opponents()
        chance = b.chance[opponents] * asks  # (opponents, 48)
        if not chance.any():
            return self._out_of_hope(b, asks, pick)
        score = chance.copy()
        score += 0.15 * (chance == 1.0)  # a sure card first
        team_cards = b.holds[v.teammates()].sum(axis=0)
        team = team_cards.reshape(NUM_HALF_SUITS, HALF_SUIT_SIZE).sum(axis=1)
        score += 0.01 * np.repeat(team, HALF_SUIT_SIZE)[None, :] * (chance > 0)
        for j, h in self._showed(v, opponents):
            row = score[j, h * HALF_SUIT_SIZE:(h + 1) * HALF_SUIT_SIZE]
            row += 0.1 * (row > 0)
        return pick(np.flatnonzero(score.ravel() >= score.max() - 1e-9))

    @staticmethod
    def _showed(v: LiteratureView, opponents: list[int]) -> list[tuple[int, int]]:
        """(opponent slot, half-suit) of the latest asks showing an opponent has cards there."""
        out = []
        for asker, asked, card, success in v.last_asks[-2:]:
            h = card // HALF_SUIT_SIZE
            if asker in opponents:
                out.append((opponents.index(asker), h))
            elif success and asked in opponents and asker == v.player:
                out.append((opponents.index(asked), h))
        return out

    def _out_of_hope(self, b: Beliefs, asks: np.ndarray, pick: Callable[[np.ndarray], Any]
                     ) -> Any:
        """No ask can succeed: guess a claim that cannot help the opponents, else pass the turn."""
        v = b.view
        if len(v.legal) > asks.size:
            ours = [h for h in range(NUM_HALF_SUITS) if v.live >> h & 1 and b.with_my_team(h)]
            if ours:
                return asks.size + max(ours, key=b.claim_chance)
        return pick(np.flatnonzero(asks))

    def forced_claim(self, b: Beliefs, pick: Callable[[np.ndarray], Any]) -> int:
        live = [h for h in range(NUM_HALF_SUITS) if b.view.live >> h & 1]
        ours = [h for h in live if b.with_my_team(h)] or live
        return max(ours, key=b.claim_chance)

