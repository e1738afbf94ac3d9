"""Observation encoders for Thirty-One.

Seats are given relative to the observer: place 0 is the observer, place k the k-th next
player still in the match in turn order (players who are out take no place; the places
past the last player still in stay 0).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_SUITS
from card_envs.core.encoding import Encoder, Piece
from card_envs.thirty_one.rules import (
    HAND_SIZE,
    SUIT,
    SUIT_TOTAL,
    VALUE,
    VALUES,
    ThirtyOne,
    ThirtyOneView,
)

C = DECK_SIZE
_INV_C = 1.0 / C
_INV_31 = 1.0 / 31.0


_SUIT_VALUES = np.zeros((NUM_SUITS, C))
_SUIT_VALUES[np.array(SUIT), np.arange(C)] = VALUES
_INV_11 = 1.0 / 11.0
_INV_SUIT = 1.0 / SUIT_TOTAL


class DefaultEncoder(Encoder):
    """Everything the seat knows, with cards the way a player adds them up: a card is 4 values,
    one per suit (S H D C), its value / 11 in its suit's place. Seats are relative to the
    observer: place 0 is me, place k the k-th next player still in the match in turn order.
    """

    name = "default"

    @classmethod
    def pieces(cls, game: ThirtyOne) -> list[Piece]:
        n = game.num_players
        card = "as a card vector (value / 11 in its suit's place, suits S H D C)"
        return [
            Piece("hand", HAND_SIZE * NUM_SUITS, 0, 1,
                  f"my cards in slots 0, 1, 2, each {card} (all 0 once out)"),
            Piece("top_discard", NUM_SUITS, 0, 1, f"the top discard {card} (0 if none)"),
            Piece("drawn", NUM_SUITS, 0, 1,
                  f"the card I drew or took and must place now (my phase 2 only), {card}"),
            Piece("suit_totals", NUM_SUITS, 0, 1,
                  "value of my cards in each suit (S H D C) / 31: what a player adds up"),
            Piece("hand_score", 1, 0, 1, "my hand's score / 31"),
            Piece("options", HAND_SIZE, 0, 1,
                  "my hand's score / 31 if the card I must place (else the top discard) "
                  "replaced slot 0, 1, 2; all 0 when there is no such card"),
            Piece("discard_pile", C, 0, 1,
                  "1 for every card in the discard pile, top included (card = suit * 13 + "
                  "rank, ranks 2..A)"),
            Piece("unseen", NUM_SUITS, 0, 1,
                  "value of the cards I have not seen, per suit / 95 (not in the discard pile, "
                  "my hand or known in other hands: what the deck and hidden cards hold)"),
            Piece("opponent_known", (n - 1) * NUM_SUITS, 0, 1,
                  "block k-1 for place k: value per suit / 31 of the cards that player took "
                  "from the discard pile and still holds"),
            Piece("lives", n, 0, 1, f"lives / {game.lives} by place (0 for empty places)"),
            Piece("knocker", n, 0, 1, "one-hot of the knocker's place (all 0: nobody knocked)"),
            Piece("acting", n, 0, 1, "one-hot of the place of the player to act"),
            Piece("opener", n, 0, 1, "one-hot of the place of the player who opened this round"),
            Piece("phase", 1, 0, 1, "1 when the player to act is placing a card (phase 2)"),
            Piece("from_discard", 1, 0, 1, "1 when the card being placed came from the discard"),
            Piece("first_turn", 1, 0, 1, "1 before the round's first action (a knock ends it now)"),
            Piece("deck_size", 1, 0, 1, f"cards in the deck / {C}"),
            Piece("round_turns", 1, 0, 1,
                  f"turns played this round / {game.max_round_turns} (the turn cap), at most 1"),
        ]

    def __init__(self, game: ThirtyOne):
        super().__init__(game)
        lay = self.layout
        self._top = lay.start("top_discard")
        self._drawn = lay.start("drawn")
        self._suits = lay.start("suit_totals")
        self._score = lay.start("hand_score")
        self._options = lay.start("options")
        self._pile = lay["discard_pile"]
        self._unseen = lay.start("unseen")
        self._known = lay.start("opponent_known")
        self._lives = lay.start("lives")
        self._knocker = lay.start("knocker")
        self._acting = lay.start("acting")
        self._opener = lay.start("opener")
        self._tail = lay.start("phase")
        tail = ["phase", "from_discard", "first_turn", "deck_size", "round_turns"]
        assert [lay.start(name) - self._tail for name in tail] == [0, 1, 2, 3, 4]
        self._inv_lives = 1.0 / game.lives
        self._inv_turns = 1.0 / game.max_round_turns
        self._score_table = game.score_table

    def encode(self, v: ThirtyOneView) -> np.ndarray:
        obs = np.zeros(self.size, dtype=np.float32)
        obs[self._pile] = v.in_discard
        unseen = (_SUIT_VALUES @ v.in_discard).tolist()  # seen value per suit, for now
        me, hand, lives, inv, t = v.player, v.hand, v.lives, self._inv_lives, self._tail
        obs[self._lives] = lives[me] * inv
        obs[t + 3] = v.deck_size * _INV_C
        if v.first_turn:
            obs[t + 2] = 1.0
        elif v.round_turns:
            # the last turns after a knock may go past the cap
            obs[t + 4] = min(v.round_turns * self._inv_turns, 1.0)
        if hand:
            table = self._score_table
            a, b, c = hand
            suits = self._suits
            for slot, card in enumerate(hand):
                suit, value = SUIT[card], VALUE[card]
                obs[slot * NUM_SUITS + suit] = value * _INV_11
                obs[suits + suit] += value * _INV_31
                unseen[suit] += value
            obs[self._score] = table[a, b, c] * _INV_31
            card = v.drawn if v.drawn >= 0 else v.top
            if card >= 0:
                o = self._options
                obs[o] = table[card, b, c] * _INV_31
                obs[o + 1] = table[a, card, c] * _INV_31
                obs[o + 2] = table[a, b, card] * _INV_31
        if v.top >= 0:
            obs[self._top + SUIT[v.top]] = VALUE[v.top] * _INV_11
        if v.drawn >= 0:
            obs[self._drawn + SUIT[v.drawn]] = VALUE[v.drawn] * _INV_11
            unseen[SUIT[v.drawn]] += VALUE[v.drawn]  # in my hands now, wherever it came from
        if v.phase:
            obs[t] = 1.0
            if v.taken >= 0:
                obs[t + 1] = 1.0
        shown, acting, taken = v.shown, v.acting, v.taken
        base, life = self._known, self._lives + 1
        for q in v.opponents:
            obs[life] = lives[q] * inv
            for card in shown[q]:
                if card >= 0:
                    obs[base + SUIT[card]] += VALUE[card] * _INV_31
                    unseen[SUIT[card]] += VALUE[card]
            if q == acting and taken >= 0:
                obs[base + SUIT[taken]] += VALUE[taken] * _INV_31
                unseen[SUIT[taken]] += VALUE[taken]
            base += NUM_SUITS
            life += 1
        for suit in range(NUM_SUITS):
            obs[self._unseen + suit] = max(SUIT_TOTAL - unseen[suit], 0) * _INV_SUIT
        # place -1: nobody knocked, or at the match's end a seat that is out
        places = v.places
        for start, seat in ((self._knocker, v.knocker), (self._opener, v.opener),
                            (self._acting, acting)):
            place = places[seat]
            if place >= 0:
                obs[start + place] = 1.0
        return obs


# The source's card vector: the card's value in its suit's place, suits in the source's
# order spades, clubs, diamonds, hearts (our suit indices are S H D C).
SOURCE_SUIT_PLACE = (0, 3, 2, 1)
CARD_PLACE = [SOURCE_SUIT_PLACE[s] for s in SUIT]


def expected_values(v: ThirtyOneView) -> list[float]:
    """Source 001's 'expected value' per suit (S, C, D, H) of a card from the deck.

    (95 - value of the seen cards of the suit) / (52 - seen cards), 0 when all are seen; seen =
    the discard pile, my hand and the cards known in other hands. Like the source, a card just
    drawn from the deck is not counted (the source reads it before the draw).
    """
    sums = (_SUIT_VALUES @ v.in_discard).tolist()
    seen = v.discard_size
    extra = list(v.hand)
    for q in v.opponents:
        extra += v.known_cards(q)
    if v.player == v.acting and v.taken >= 0:
        extra.append(v.taken)
    for card in extra:
        sums[SUIT[card]] += VALUE[card]
    seen += len(extra)
    unseen = C - seen
    if unseen <= 0:
        return [0.0] * NUM_SUITS
    by_place = [0.0] * NUM_SUITS
    for suit in range(NUM_SUITS):
        by_place[SOURCE_SUIT_PLACE[suit]] = (SUIT_TOTAL - sums[suit]) / unseen
    return by_place


class OriginalEncoder(Encoder):
    """Source 001's two network inputs in one vector: a phase flag, ActionNN's 46 values (filled
    when I am not placing a card) and SwapNN's 32 (filled when I am), cards as 4 values.

    A card is 4 values, one per suit in the source's order S, C, D, H: the card's value (2-11)
    in its suit's place, 0 elsewhere; an unknown card is all 0.
    """

    name = "original"

    @classmethod
    def pieces(cls, game: ThirtyOne) -> list[Piece]:
        n = game.num_players
        return [
            Piece("swap_phase", 1, 0, 1,
                  "1 when I am placing a card (the SwapNN decision), 0 otherwise (ActionNN)"),
            Piece("hand", 12, 0, 11, "ActionNN 0-11: my slots 0, 1, 2 as card vectors"),
            Piece("top_discard", 4, 0, 11, "ActionNN 12-15: the top discard"),
            Piece("expected_value", 4, 0, 11,
                  "ActionNN 16-19: per suit (S, C, D, H), (95 - seen value of the suit) / "
                  "(52 - seen cards); seen: discard pile, my hand, cards known in other hands"),
            Piece("first_turn", 1, 0, 1, "ActionNN 20: 1 before the round's first action"),
            Piece("called", 1, -1, n - 1,
                  "ActionNN 21: the knocker's place in this round's turn order (0 = the "
                  "opener), -1 if nobody has knocked"),
            Piece("left_known", 12, 0, 11,
                  "ActionNN 22-33: the next player's slots, only cards taken from the discard"),
            Piece("right_known", 12, 0, 11,
                  "ActionNN 34-45: the previous player's slots, likewise (with 2 players the "
                  "same opponent as left)"),
            Piece("swap_hand", 16, 0, 11,
                  "SwapNN 0-15: my slots 0, 1, 2, then the card to place"),
            Piece("swap_expected_value", 4, 0, 11, "SwapNN 16-19: as expected_value"),
            Piece("swap_left_known", 12, 0, 11, "SwapNN 20-31: as left_known"),
        ]

    def __init__(self, game: ThirtyOne):
        super().__init__(game)
        lay = self.layout
        self._action = lay.start("hand")
        self._swap = lay.start("swap_hand")

    def _cards(self, obs: np.ndarray, start: int, cards) -> None:
        for i, card in enumerate(cards):
            if card >= 0:
                obs[start + 4 * i + CARD_PLACE[card]] = VALUE[card]

    def encode(self, v: ThirtyOneView) -> np.ndarray:
        obs = np.zeros(self.size, dtype=np.float32)
        left = v.opponents[0] if v.opponents else -1
        left_cards = v.shown[left] if left >= 0 else ()
        if v.drawn >= 0:
            obs[0] = 1.0
            t = self._swap
            self._cards(obs, t, [*v.hand, v.drawn])
            obs[t + 16 : t + 20] = expected_values(v)
            self._cards(obs, t + 20, left_cards)
            return obs
        t = self._action
        self._cards(obs, t, v.hand)
        self._cards(obs, t + 12, [v.top])
        obs[t + 16 : t + 20] = expected_values(v)
        obs[t + 20] = v.first_turn
        obs[t + 21] = self._called(v)
        self._cards(obs, t + 22, left_cards)
        if v.opponents:
            self._cards(obs, t + 34, v.shown[v.opponents[-1]])
        return obs

    def _called(self, v: ThirtyOneView) -> int:
        """The knocker's place in the round's turn order from the opener, or -1."""
        if v.knocker < 0:
            return -1
        seating = v.seating
        return (seating.index(v.knocker) - seating.index(v.opener)) % len(seating)


ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
