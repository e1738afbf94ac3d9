"""Rule-based agents for Thirty-One.

``random`` (uniform among the legal actions, from the core) is exactly the source's Random in
distribution: in phase 1 uniform over draw / take / knock (knock only while nobody has
knocked, so it can knock under the gun), in phase 2 uniform over the 4 placements after a draw
and the 3 slots after a take.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.core.cards import DECK_SIZE
from card_envs.thirty_one.rules import (
    DRAW,
    HAND_SIZE,
    KNOCK,
    PLACE,
    SCORE_TABLES,
    TAKE,
    THIRTY_ONE,
    THROW,
    VALUE,
    ThirtyOneView,
    hand_score,
)


def best_placement(hand, card: int, three_of_a_kind: bool) -> tuple[int, float]:
    """(slot, score) of the first slot whose swap gives the strictly best score above the hand's.

    Slot -1 when no swap beats the current score (the source's "slot 3").
    """
    a, b, c = hand
    best_slot, best = -1, hand_score(hand, three_of_a_kind)
    for k, trial in enumerate(((card, b, c), (a, card, c), (a, b, card))):
        score = hand_score(trial, three_of_a_kind)
        if score > best:
            best_slot, best = k, score
    return best_slot, best


class GreedyAgent(BaseAgent):
    """Source 001's Greedy exactly as its repository plays, bugs included.

    Phase 1: knock with 31 while nobody has knocked (under the gun too), otherwise always
    draw from the deck. Phase 2: the first slot whose swap gives the strictly highest score
    above the current one, else discard the drawn card. Its docstring meant it to take the
    discard when that is better and to weigh a draw by expected value, but two bugs make that
    code dead (the discard branch also chooses the draw; the expected-value test card is built
    with swapped arguments and never matches a suit), so it never takes the discard.
    """

    name = "greedy"

    def act(self, view: ThirtyOneView, rng: np.random.Generator) -> int:
        if view.drawn < 0:
            if view.score() == THIRTY_ONE and view.legal[KNOCK]:
                return KNOCK
            return DRAW
        slot, _ = best_placement(view.hand, view.drawn, view.three_of_a_kind)
        if slot < 0:
            # Greedy never takes the discard, so THROW is legal here; a take (only when driven
            # by hand) keeps the best slot instead
            return THROW if view.legal[THROW] else PLACE + self._least_bad(view)
        return PLACE + slot

    def _least_bad(self, view: ThirtyOneView) -> int:
        scores = []
        for k in range(HAND_SIZE):
            trial = list(view.hand)
            trial[k] = view.drawn
            scores.append(hand_score(trial, view.three_of_a_kind))
        return int(np.argmax(scores))


def unseen_cards(view: ThirtyOneView) -> np.ndarray:
    """The cards this seat has not seen where they are now: in the deck or hidden in a hand."""
    unseen = np.ones(DECK_SIZE, dtype=bool)
    unseen[view.in_discard.astype(bool)] = False
    unseen[list(view.hand)] = False
    for q in view.opponents:
        unseen[view.known_cards(q)] = False
    if view.drawn >= 0:
        unseen[view.drawn] = False
    return np.flatnonzero(unseen)


class ExpectedValueAgent(BaseAgent):
    """The greedy the source intended: takes the discard or draws by expected score, knocks on a
    strong hand.

    Phase 1: knock while nobody has knocked when the hand scores at least ``knock_at``, raised
    by one for every ``knock_every`` turns already played this round (the other hands improve as
    the round goes on), at most 31. Otherwise take
    the top discard when the best hand it makes scores at least the expected best hand after a
    draw (the average over the cards it has not seen, keeping the hand when no swap helps); else
    draw. Phase 2: the placement with the highest score; ties keep the hand whose other suits
    are worth most (the higher off-suit cards), then the lower slot.
    """

    name = "expected_value"
    knock_at = 25
    knock_every = 4

    def act(self, view: ThirtyOneView, rng: np.random.Generator) -> int:
        if view.drawn >= 0:
            return self._place(view)
        hand = list(view.hand)
        toak = view.three_of_a_kind
        now = hand_score(hand, toak)
        if view.legal[KNOCK] and now >= self._knock_level(view):
            return KNOCK
        table = SCORE_TABLES[toak]
        taken = max(self._key(hand, k, view.top, toak) for k in range(HAND_SIZE))[0]
        cards = unseen_cards(view)
        if len(cards) == 0:
            return TAKE
        h0, h1, h2 = hand
        best = np.maximum(np.maximum(table[cards, h1, h2], table[h0, cards, h2]),
                          np.maximum(table[h0, h1, cards], now))
        return TAKE if taken >= float(best.mean()) else DRAW

    def _knock_level(self, view: ThirtyOneView) -> float:
        return min(THIRTY_ONE, self.knock_at + view.round_turns // self.knock_every)

    def _key(self, hand: list[int], slot: int, card: int, toak: bool) -> tuple[float, int, int]:
        """(score, value of the other cards, -slot) of the hand with ``card`` in ``slot``."""
        trial = hand[:]
        if slot >= 0:
            trial[slot] = card
        score = hand_score(trial, toak)
        return score, sum(VALUE[c] for c in trial), -slot

    def _place(self, view: ThirtyOneView) -> int:
        hand = list(view.hand)
        toak = view.three_of_a_kind
        options = [k for k in range(HAND_SIZE) if view.legal[PLACE + k]]
        if view.legal[THROW]:
            options.append(-1)
        best = max(options, key=lambda k: self._key(hand, k, view.drawn, toak))
        return THROW if best < 0 else PLACE + best

