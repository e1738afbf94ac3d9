"""Observation encoders for Thirty-One.

Seats are given relative to the observer: place 0 is the observer, place k the k-th next
player still in the match in turn order (players who are out take no place; the places
past the last player still in stay 0).
"""

from __future__ import annotations

import array
import functools
import struct

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_SUITS
from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.thirty_one.rules import (
    CARD_PACK,
    HAND_SIZE,
    NO_CARD,
    SCORE_CODES,
    SUIT,
    SUIT_MASK,
    SUIT_TOTAL,
    VALUE,
    ThirtyOne,
    ThirtyOneState,
    ThirtyOneView,
    pile_chunks,
)

C = DECK_SIZE
_INV_C = 1.0 / C
_INV_31 = 1.0 / 31.0
_INV_11 = 1.0 / 11.0
_INV_SUIT = 1.0 / SUIT_TOTAL

# --- tables for the per-step code ------------------------------------------------------------
# An observation is assembled as float32 bytes (precomputed pieces and struct packs, joined
# once): far cheaper than writing numpy items or converting Python lists.


def _f32(values) -> bytes:
    """``values`` as float32 bytes (rounded like numpy's float32 assignment)."""
    return np.asarray(values, dtype=np.float32).tobytes()


def _card_vectors(place: list[int], scale: float) -> list[list[float]]:
    """Per card its 4 suit values: value * scale at ``place[card]``, 0 elsewhere; one more
    all-0 vector at the end, so that index -1 (no card) reads as all 0."""
    vectors = []
    for card in range(C):
        vector = [0.0] * NUM_SUITS
        vector[place[card]] = VALUE[card] * scale
        vectors.append(vector)
    return [*vectors, [0.0] * NUM_SUITS]


def _suit_sum_table() -> list[float]:
    """SUIT_SUMS[code]: the sum of value / 31 over up to 4 cards of one suit, rounded to float32
    after each card in order (the same bits as adding them one by one into a float32 vector),
    where code holds the values in base SUM_BASE, the first card in the highest digit used."""
    codes = np.arange(SUM_BASE**4)
    sums = np.zeros(len(codes), dtype=np.float32)
    for digit in range(3, -1, -1):
        value = codes // SUM_BASE**digit % SUM_BASE
        sums = np.where(value > 0, sums + (value * _INV_31).astype(np.float32), sums)
    return sums.tolist()


_PACK2 = struct.Struct("2f").pack  # native float32, as numpy's
_PACK4 = struct.Struct("4f").pack
# writers of float32 numbers or byte pieces into a bytearray at an offset: much cheaper than
# assigning a bytearray slice
_PUT_3F = struct.Struct("3f").pack_into
_PUT_4F = struct.Struct("4f").pack_into
_PUT_CARD = struct.Struct("16s").pack_into
_PUT_2CARDS = struct.Struct("16s16s").pack_into
_PUT_UNSEEN = struct.Struct("8s8s").pack_into
ZERO = bytes(4)  # a float32 0; ZERO * k: k of them
NO_SUITS = ZERO * NUM_SUITS
NO_SHOWN = (NO_CARD,) * HAND_SIZE  # a row of shown (a tuple, as the rules keep them)
SUM_BASE = 12  # above every card value, so a code is a suit's values in order
SUIT_SUMS = _suit_sum_table()
CARD_BYTES = [_f32(vector) for vector in _card_vectors(SUIT, _INV_11)]  # [-1]: no card
# byte offsets in the default observation of what a placing seat's one patches (see _placing);
# DefaultEncoder.__init__ checks them against the layout (and finds the flags', which follow
# the places)
_TOP_AT, _DRAWN_AT, _OPTIONS_AT, _PILE_AT, _UNSEEN_AT = 48, 64, 100, 112, 320
PUT_F32 = struct.Struct("f").pack_into  # PUT_F32(obs, at, 1.0): one float32 of a bytearray

# each score code of rules.SCORE_CODES (twice the score) as score / 31 the way the encoder
# rounds it: a float32 score times 1/31 in float32
SCORE_31 = [float(np.float32(code / 2) * _INV_31) for code in range(2 * 31 + 1)]
# the unseen piece of a suit by the value of its seen cards (0..255: any byte of a pack)
UNSEEN = [max(SUIT_TOTAL - seen, 0) * _INV_SUIT for seen in range(256)]
# the unseen pieces of two suits (8 bytes) by two bytes of a pack (suit values are at most 95:
# other indices hold b"")
UNSEEN_PAIR = [b""] * 0x10000
for _low in range(SUIT_TOTAL + 1):
    for _high in range(SUIT_TOTAL + 1):
        UNSEEN_PAIR[_low | _high << 8] = _PACK2(UNSEEN[_low], UNSEEN[_high])


def _suit_sums(cards) -> tuple[bytes, int]:
    """Value / 31 per suit of ``cards`` (-1: no card) as float32 bytes, and their values as a
    pack (see CARD_PACK)."""
    codes = [0, 0, 0, 0]  # per suit
    pack = 0
    for card in cards:
        if card >= 0:
            suit = SUIT[card]
            codes[suit] = codes[suit] * SUM_BASE + VALUE[card]
            pack += CARD_PACK[card]
    sums = SUIT_SUMS
    return _PACK4(sums[codes[0]], sums[codes[1]], sums[codes[2]], sums[codes[3]]), pack


# Every slot triple (a, b, c) of cards or -1 has the index a * 53**2 + b * 53 + c + TRIPLE_0
# (no card counts as 0) in two tables built on first use: TRIPLE_SUMS, 16 bytes per triple, its
# _suit_sums bytes; TRIPLE_PACK its pack. A hand, or the cards a player is known to hold, is
# then one index instead of a loop over cards.
_C1, _C2 = C + 1, (C + 1) ** 2
TRIPLE_0 = _C2 + _C1 + 1


@functools.cache
def triple_tables() -> tuple[bytes, array.array]:
    """(TRIPLE_SUMS, TRIPLE_PACK), see above; about 3 MB, built once per process."""
    values = np.array([0, *VALUE], dtype=np.int64)  # by card + 1
    suits = np.array([0, *SUIT], dtype=np.int64)
    packs = np.array([0, *CARD_PACK[:C]], dtype=np.int64)
    a, b, c = (axis.ravel() for axis in np.indices((C + 1,) * 3))
    codes = np.zeros((NUM_SUITS, len(a)), dtype=np.int64)
    for cards in (a, b, c):  # the slots in order: codes hold the first card highest
        for suit in range(NUM_SUITS):
            hit = (cards > 0) & (suits[cards] == suit)
            codes[suit] = np.where(hit, codes[suit] * SUM_BASE + values[cards], codes[suit])
    sums = np.asarray(SUIT_SUMS, dtype=np.float32)[codes.T]
    pack = packs[a] + packs[b] + packs[c]
    return sums.tobytes(), array.array("I", pack.astype(np.uint32).tobytes())


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
        names = [p.name for p in self.layout.pieces]
        assert names[6:9] == ["discard_pile", "unseen", "opponent_known"], names  # see _encode
        n = game.num_players
        self._lives = [_f32(lives / game.lives) for lives in range(game.lives + 1)]
        # one-hot of each place; index -1 (no place) reads as all 0
        self._one_hot = [_f32(np.eye(n)[k]) for k in range(n)] + [_f32(np.zeros(n))]
        # round_turns / max_round_turns by turns played, at most 1: after a knock the last
        # turns may go up to num_players - 1 past the cap
        inv_turns = 1.0 / game.max_round_turns
        self._turns = [min(k * inv_turns, 1.0) for k in range(game.max_round_turns + n)]
        self._score_codes = SCORE_CODES[game.three_of_a_kind]
        self._n = n
        self._seat_blocks: dict[tuple[int, ...], bytes] = {}
        # (state, steps, seat, observation bytes, seen) of the last encode_state
        self._turn: tuple = (None, -1, -1, b"", 0)
        self._seen = 0
        start = self.layout.start
        assert (start("top_discard"), start("drawn"), start("options"), start("discard_pile"),
                start("unseen")) == (12, 16, 25, 28, 80), "see _placing"
        assert names[-5:-1] == ["phase", "from_discard", "first_turn", "deck_size"], names
        self._flags_at = 4 * start("phase")  # phase, from_discard, first_turn, deck_size
        self._link_tables()

    def _link_tables(self) -> None:
        """Attach the process-wide tables (not pickled: rebuilt or shared on unpickling)."""
        n = self._n
        self._triple_sums, self._triple_packs = triple_tables()
        self._pile_chunks = pile_chunks()
        # the whole observation in one pack: float32 numbers as "f", precomputed pieces as "s"
        self._pack = struct.Struct(
            f"=16s16s16s16s16s16s4f{'52s' * NUM_SUITS}8s8s{'16s' * (n - 1)}{16 * n}s5f"
        ).pack

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for name in ("_triple_sums", "_triple_packs", "_pile_chunks", "_pack"):
            del state[name]
        state["_turn"] = (None, -1, -1, b"", 0)  # not the state it was made from
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link_tables()

    def encode(self, v: ThirtyOneView) -> np.ndarray:
        obs = self._encode(
            v.player, v.hand, v.drawn, v.taken, v.top, v.discard_bits, v.discard_pack,
            v.deck_size, v.shown, v.lives, v.opponents, v.places, v.acting, v.knocker, v.opener,
            v.first_turn, v.phase, v.round_turns)
        return np.ndarray(self.size, FLOAT32, bytearray(obs))  # writable, its own buffer

    def encode_state(self, s: ThirtyOneState, seat: int) -> np.ndarray:
        """``encode(view(s, seat))``; a placing seat's observation is patched from its own one
        of the same state object a step before, so between these calls a state must change
        only through ``Game.apply`` (as in the envs): encode a copy of a state edited by hand."""
        obs = self._state_bytes(s, seat)
        if obs.__class__ is not bytearray:  # a patched one is a new bytearray already
            obs = bytearray(obs)
        return np.ndarray(self.size, FLOAT32, obs)  # writable, its own buffer

    def encode_state_read_only(self, s: ThirtyOneState, seat: int) -> np.ndarray:
        # the observation's bytes, read-only without a copy (what the AEC env keeps)
        obs = self._state_bytes(s, seat)
        if obs.__class__ is bytearray:
            obs = bytes(obs)
        return np.frombuffer(obs, FLOAT32)

    def _state_bytes(self, s: ThirtyOneState, seat: int) -> bytes | bytearray:
        """The bytes of ``encode_state``'s observation (see there)."""
        if s.phase and seat == s.player:
            turn = self._turn
            if turn[0] is s and turn[1] == s.steps - 1 and turn[2] == seat and not s.truncated:
                return self._placing(s, turn[3], turn[4])
        if s.phase:
            drawn, taken, top = self.game.open_cards(s, seat)
        else:  # open_cards inline: no card to place
            drawn = taken = NO_CARD
            top = s.discard[-1] if s.discard else NO_CARD
        obs = self._encode(seat, s.hands[seat], drawn, taken, top, s.discard_bits,
                           s.discard_pack, len(s.deck), s.shown, s.lives, s.opponents[seat],
                           s.places[seat], s.player, s.knocker, s.opener, s.first_turn, s.phase,
                           s.round_turns)
        self._turn = (s, s.steps, seat, obs, self._seen)
        return obs

    def _placing(self, s: ThirtyOneState, before: bytes, seen: int) -> bytearray:
        """The placing seat's observation from its own one a step before (the draw or take):
        only the card to place, the options, the deck or the discard pile and the flags
        changed. (``encode_state`` checks that ``before`` is of this state one step ago.)"""
        obs = bytearray(before)
        card = s.drawn
        a, b, c = s.hands[s.player]
        scores, ab = self._score_codes, (a * C + b) * C
        _PUT_3F(obs, _OPTIONS_AT, SCORE_31[scores[(card * C + b) * C + c]],
                SCORE_31[scores[(a * C + card) * C + c]], SCORE_31[scores[ab + card]])
        if s.from_discard:  # the card left the pile: a new top; what I have seen is the same
            discard = s.discard
            _PUT_2CARDS(obs, _TOP_AT, CARD_BYTES[discard[-1] if discard else NO_CARD],
                        CARD_BYTES[card])
            PUT_F32(obs, _PILE_AT + 4 * card, 0.0)
            # phase, from_discard, first_turn; the deck size is as before
            _PUT_3F(obs, self._flags_at, 1.0, 1.0, 0.0)
        else:  # drawn from the deck: seen now, the deck one smaller
            _PUT_CARD(obs, _DRAWN_AT, CARD_BYTES[card])
            seen += CARD_PACK[card]
            _PUT_UNSEEN(obs, _UNSEEN_AT, UNSEEN_PAIR[seen & 0xFFFF], UNSEEN_PAIR[seen >> 16])
            _PUT_4F(obs, self._flags_at, 1.0, 0.0, 0.0, len(s.deck) * _INV_C)
        return obs

    def _encode(self, me, hand, drawn, taken, top, bits, discard_pack, deck_size, shown,
                lives, opponents, places, acting, knocker, opener, first_turn, phase,
                round_turns) -> bytes:
        """The observation's bytes from the view's fields (``encode`` and ``encode_state``
        share it): ``bits`` is the discard pile's membership (bit c: card c), ``discard_pack``
        its values per suit as a pack (see CARD_PACK). Keeps in ``_seen`` the pack of the values
        per suit seen by ``me``."""
        sums, packs, chunks = self._triple_sums, self._triple_packs, self._pile_chunks
        # the pack of the values per suit I have seen: the discard pile, the card I must place
        # (in my hands now, wherever it came from), my hand and the cards known in other hands
        seen = discard_pack + CARD_PACK[drawn]
        if hand:
            a, b, c = hand
            t = a * _C2 + b * _C1 + c + TRIPLE_0
            seen += packs[t]
            totals = sums[t << 4 : (t << 4) + 16]
            scores, ab = self._score_codes, (a * C + b) * C
            score = SCORE_31[scores[ab + c]]
            card = drawn if drawn >= 0 else top
            if card >= 0:
                option_a = SCORE_31[scores[(card * C + b) * C + c]]
                option_b = SCORE_31[scores[(a * C + card) * C + c]]
                option_c = SCORE_31[scores[ab + card]]
            else:
                option_a = option_b = option_c = 0.0
        else:
            a = b = c = NO_CARD
            totals, score, option_a, option_b, option_c = NO_SUITS, 0.0, 0.0, 0.0, 0.0
        known = []  # opponent_known, block by block
        for q in opponents:
            cards = shown[q]
            if q == acting and taken >= 0:
                block, pack = _suit_sums((*cards, taken))
            elif cards == NO_SHOWN:  # the common case: nothing known
                known.append(NO_SUITS)
                continue
            else:
                x, y, z = cards
                t = x * _C2 + y * _C1 + z + TRIPLE_0
                block, pack = sums[t << 4 : (t << 4) + 16], packs[t]
            known.append(block)
            seen += pack
        if len(known) < self._n - 1:  # places past the last player in
            known += [NO_SUITS] * (self._n - 1 - len(known))
        # lives, knocker, acting and opener by place, one block: the seats still in follow
        # from the lives, so these key it
        key = (me, knocker, acting, opener, *lives)
        seats_block = self._seat_blocks.get(key) or self._seats_block(key, places)
        self._seen = seen
        # the flags as ints and bools, which pack as 0.0 and 1.0
        return self._pack(
            CARD_BYTES[a], CARD_BYTES[b], CARD_BYTES[c], CARD_BYTES[top], CARD_BYTES[drawn],
            totals, score, option_a, option_b, option_c,
            chunks[bits & SUIT_MASK], chunks[bits >> 13 & SUIT_MASK],
            chunks[bits >> 26 & SUIT_MASK], chunks[bits >> 39],
            UNSEEN_PAIR[seen & 0xFFFF], UNSEEN_PAIR[seen >> 16], *known, seats_block,
            phase, phase and taken >= 0, first_turn, deck_size * _INV_C,
            0.0 if first_turn else self._turns[round_turns])

    def _seats_block(self, key: tuple[int, ...], places) -> bytes:
        """The lives, knocker, acting and opener pieces for ``key`` = (me, knocker, acting,
        opener, *lives), where ``places`` are every seat's place from me; cached."""
        if len(self._seat_blocks) >= 4096:  # bounded: drop everything now and then
            self._seat_blocks.clear()
        me, knocker, acting, opener = key[:4]
        lives = key[4:]
        life, one_hot = self._lives, self._one_hot  # one_hot[-1]: no place (all 0)
        by_place = [q for q in sorted(range(self._n), key=places.__getitem__) if places[q] >= 0]
        block = b"".join([life[lives[q]] for q in by_place])
        block += ZERO * (self._n - len(by_place))
        block += one_hot[places[knocker]] + one_hot[places[acting]] + one_hot[places[opener]]
        self._seat_blocks[key] = block
        return block


# The source's card vector: the card's value in its suit's place, suits in the source's
# order spades, clubs, diamonds, hearts (our suit indices are S H D C).
SOURCE_SUIT_PLACE = (0, 3, 2, 1)
CARD_PLACE = [SOURCE_SUIT_PLACE[s] for s in SUIT]
SOURCE_BYTES = [_f32(vector) for vector in _card_vectors(CARD_PLACE, 1.0)]  # [-1]: no card


def expected_values(v: ThirtyOneView) -> list[float]:
    """Source 001's 'expected value' per suit (S, C, D, H) of a card from the deck.

    (95 - value of the seen cards of the suit) / (52 - seen cards), 0 when all are seen; seen =
    the discard pile, my hand and the cards known in other hands. Like the source, a card just
    drawn from the deck is not counted (the source reads it before the draw).
    """
    return _expected_values(v.player, v.hand, v.taken, v.discard_values, v.discard_size, v.shown,
                            v.opponents, v.acting)


def _expected_values(me, hand, taken, discard_values, discard_size, shown, opponents,
                     acting) -> list[float]:
    """``expected_values`` from the view's fields."""
    sums = discard_values[:]
    seen = discard_size + len(hand)
    for card in hand:
        sums[SUIT[card]] += VALUE[card]
    for q in opponents:
        for card in shown[q]:
            if card >= 0:
                sums[SUIT[card]] += VALUE[card]
                seen += 1
    if taken >= 0 and (acting == me or acting in opponents):
        sums[SUIT[taken]] += VALUE[taken]
        seen += 1
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
        # _encode writes the flag, ActionNN's 46 values and SwapNN's 32 in one go
        assert self.layout.start("swap_hand") == 1 + 46 and self.size == 1 + 46 + 32

    def encode(self, v: ThirtyOneView) -> np.ndarray:
        return self._encode(v.player, v.hand, v.drawn, v.taken, v.top, v.discard_values,
                            v.discard_size, v.shown, v.opponents, v.acting, v.first_turn,
                            v.knocker, v.seating, v.opener)

    def encode_state(self, s: ThirtyOneState, seat: int) -> np.ndarray:
        drawn, taken, top = self.game.open_cards(s, seat)
        return self._encode(seat, s.hands[seat], drawn, taken, top, s.discard_values,
                            len(s.discard), s.shown, s.opponents[seat], s.player, s.first_turn,
                            s.knocker, s.seating, s.opener)

    def _encode(self, me, hand, drawn, taken, top, discard_values, discard_size, shown,
                opponents, acting, first_turn, knocker, seating, opener) -> np.ndarray:
        """The observation from the view's fields (``encode`` and ``encode_state`` share it)."""
        ev = _PACK4(*_expected_values(me, hand, taken, discard_values, discard_size, shown,
                                      opponents, acting))
        cards = SOURCE_BYTES
        left = shown[opponents[0]] if opponents else NO_SHOWN
        if drawn >= 0:  # swap_phase, ActionNN all 0, SwapNN
            parts = [_f32(1.0), ZERO * 46, cards[hand[0]], cards[hand[1]], cards[hand[2]],
                     cards[drawn], ev, cards[left[0]], cards[left[1]], cards[left[2]]]
        else:  # swap_phase, ActionNN, SwapNN all 0
            right = shown[opponents[-1]] if opponents else NO_SHOWN
            # called: the knocker's place in the round's turn order from the opener, or -1
            called = ((seating.index(knocker) - seating.index(opener)) % len(seating)
                      if knocker >= 0 else -1)
            parts = [ZERO, *[cards[card] for card in hand or NO_SHOWN], cards[top], ev,
                     _PACK2(1.0 if first_turn else 0.0, called),
                     cards[left[0]], cards[left[1]], cards[left[2]],
                     cards[right[0]], cards[right[1]], cards[right[2]], ZERO * 32]
        return np.frombuffer(bytearray().join(parts), FLOAT32)  # writable, its own buffer


ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
