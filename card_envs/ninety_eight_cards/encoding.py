"""Observation encoders for 98 Cards."""

from __future__ import annotations

import struct

import numpy as np

from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.ninety_eight_cards.rules import (
    _PILE_INDEX,
    HAND_SIZE,
    HIGHEST,
    JUMPS,
    LOWEST,
    NUM_CARDS,
    NUM_PILES,
    CardsView,
    NinetyEightCards,
)

# The jump of each move on a log scale in [-1, 1], sign * ln(1 + |jump|) / ln(101), which
# spreads the small jumps that matter (JUMP_FEATURES[pile, top, card]; 0 for an empty slot);
# PER_100[v] = v / 100 as float32 (pile tops, hand slots).
JUMP_FEATURES = (np.sign(JUMPS) * np.log1p(np.abs(JUMPS)) / np.log(101)).astype(np.float32)
PER_100 = (np.arange(101) / 100.0).astype(np.float32)

# --- the default encoding as one table lookup -----------------------------------------------
# encode_state writes the observation as int64 codes, 256 * segment + low byte, into a buffer
# of 8 little-endian bytes per value, and FEATURES[codes] is the observation. Segments:
#   0: value / 100 for 0..100 (pile tops and hand slots: the card value is the low byte)
#   JUMP_SEGMENT: the jump j's JUMP_FEATURES at low byte _JUMP_LOW + j (29..227)
#   DRAW..MIN_SEGMENT: draw pile / 90, played / 98, turn_played / 8, min_play / 2
#   IN_DRAW_SEGMENT: 0.0 or 1.0 (low byte: the state's in_draw byte)
# JUMP_LOWS[pile][top] maps a slot byte to its jump's low byte, an empty slot (byte 0) to
# jump 0's (0.0), so the high bytes of the jumps, like those of every piece but the counts,
# never change.
JUMP_SEGMENT, DRAW_SEGMENT, PLAYED_SEGMENT, TURN_SEGMENT, MIN_SEGMENT, IN_DRAW_SEGMENT = range(1, 7)
_JUMP_LOW = 128
FEATURES = np.zeros(256 * (IN_DRAW_SEGMENT + 1), dtype=np.float32)
FEATURES[:101] = PER_100
FEATURES[256 * IN_DRAW_SEGMENT + 1] = 1.0
JUMP_LOWS: list[list[bytes]] = [[] for _pile in range(NUM_PILES)]
for _pile in range(NUM_PILES):
    for _top in range(101):
        _low = _JUMP_LOW + JUMPS[_pile, _top, LOWEST : HIGHEST + 1]  # 29..227
        FEATURES[256 * JUMP_SEGMENT + _low] = JUMP_FEATURES[_pile, _top, LOWEST : HIGHEST + 1]
        _table = bytearray(256)
        _table[0] = _JUMP_LOW  # an empty slot: jump 0
        _table[LOWEST : HIGHEST + 1] = _low.tolist()
        JUMP_LOWS[_pile].append(bytes(_table))
FEATURES[256 * JUMP_SEGMENT + _JUMP_LOW] = 0.0
for _segment, _count, _scale in (
    (DRAW_SEGMENT, NUM_CARDS - HAND_SIZE, NUM_CARDS - HAND_SIZE),
    (PLAYED_SEGMENT, NUM_CARDS, NUM_CARDS),
    (TURN_SEGMENT, HAND_SIZE, HAND_SIZE),
    (MIN_SEGMENT, 2, 2.0),
):
    # the same float64 division as writing count / scale into a float32 array
    FEATURES[256 * _segment : 256 * _segment + _count + 1] = [
        _k / _scale for _k in range(_count + 1)
    ]


def _codes(segment: int, count: int) -> list[bytes]:
    """The int64 FEATURES codes 256 * segment + 0..count-1, as bytes."""
    return [(256 * segment + _k).to_bytes(8, "little") for _k in range(count)]


DRAW_CODE = _codes(DRAW_SEGMENT, NUM_CARDS - HAND_SIZE + 1)
PLAYED_CODE = _codes(PLAYED_SEGMENT, NUM_CARDS + 1)
TURN_CODE = _codes(TURN_SEGMENT, HAND_SIZE + 1)
MIN_CODE = _codes(MIN_SEGMENT, 3)


class DefaultEncoder(Encoder):
    """Pile tops, hand slots, the jump each move would make, counts, and the unseen cards."""

    name = "default"

    @classmethod
    def pieces(cls, game: NinetyEightCards) -> list[Piece]:
        return [
            Piece(
                "piles",
                NUM_PILES,
                0,
                1,
                "top card of piles 0..3 / 100 (piles 0, 1 ascend; 2, 3 descend)",
            ),
            Piece(
                "hand", HAND_SIZE, 0, 1, "hand slots 0..7 (sorted ascending) / 100; 0 = empty slot"
            ),
            Piece(
                "jumps",
                NUM_PILES * HAND_SIZE,
                -1,
                1,
                "for action pile*8+slot, the jump j the pile would make (card - top on an "
                "ascending pile, top - card on a descending one; -10 = the tens trick) on a log "
                "scale: sign(j) ln(1 + |j|) / ln(101); 0 for an empty slot",
            ),
            Piece("draw_pile", 1, 0, 1, f"cards left in the draw pile / {NUM_CARDS - HAND_SIZE}"),
            Piece("played", 1, 0, 1, f"cards played so far / {NUM_CARDS}"),
            Piece(
                "turn_played",
                1,
                0,
                1,
                f"cards played this turn / {HAND_SIZE} (0 under original rules)",
            ),
            Piece(
                "min_play",
                1,
                0,
                1,
                "cards still required before the turn may end / 2 (standard rules)",
            ),
            Piece(
                "in_draw_pile",
                NUM_CARDS,
                0,
                1,
                f"for card {LOWEST}..{HIGHEST}: 1 if it is still in the draw pile (known by "
                "elimination; the order never shows)",
            ),
        ]

    def __init__(self, game: NinetyEightCards):
        super().__init__(game)
        starts = [self.layout.start(p.name) for p in self.layout.pieces]
        assert starts == [0, 4, 12, 44, 45, 46, 47, 48], starts
        # encode_state's scratch: the int64 FEATURES codes of one observation as bytes (only
        # the counts' codes and the other pieces' low bytes change; their segment bytes do not)
        self._buffer = bytearray(8 * self.size)
        self._buffer[8 * 12 + 1 : 8 * 44 : 8] = bytes([JUMP_SEGMENT]) * (NUM_PILES * HAND_SIZE)
        self._buffer[8 * 48 + 1 :: 8] = bytes([IN_DRAW_SEGMENT]) * NUM_CARDS
        self._codes = np.frombuffer(self._buffer, np.int64)
        self._in_draw = bytes(NUM_CARDS)  # the in_draw bytes now in the buffer

    def __reduce__(self):
        # a new encoder makes its own scratch
        return type(self), (self.game,)

    def encode(self, v: CardsView) -> np.ndarray:
        obs = np.empty(self.size, FLOAT32)
        piles, slots = v.piles, v.slots
        obs[:4] = piles / 100
        obs[4:12] = slots / 100
        obs[12:44] = JUMP_FEATURES[_PILE_INDEX, piles[:, None], slots].reshape(-1)
        obs[44] = v.draw_pile / (NUM_CARDS - HAND_SIZE)
        obs[45] = v.played / NUM_CARDS
        obs[46] = v.turn_played / HAND_SIZE
        obs[47] = v.min_play / 2.0
        obs[48:] = v.in_draw
        return obs

    def encode_state(self, s, seat: int = 0) -> np.ndarray:
        # the same numbers as encode(view), read straight from the state (nothing is hidden
        # from the player here but the draw pile's order, which neither reads): FEATURES at
        # the codes of the whole observation
        game = self.game
        buffer = self._buffer
        slots = s.slot_bytes
        top0, top1, top2, top3 = tops = s.tops
        buffer[0:352:8] = b"".join(  # the low bytes of the tops, the slots and the jumps
            (
                bytes(tops),
                slots,
                slots.translate(JUMP_LOWS[0][top0]),
                slots.translate(JUMP_LOWS[1][top1]),
                slots.translate(JUMP_LOWS[2][top2]),
                slots.translate(JUMP_LOWS[3][top3]),
            )
        )
        buffer[352:384] = b"".join(
            (
                DRAW_CODE[game.draw_pile_size(s)],
                PLAYED_CODE[s.played],
                TURN_CODE[s.turn_played],
                MIN_CODE[game.min_play(s) if game.standard else 0],
            )
        )
        in_draw = s.in_draw
        if in_draw != self._in_draw:  # it changes only when cards are drawn
            buffer[384::8] = in_draw
            self._in_draw = bytes(in_draw)
        return FEATURES[self._codes]


class OriginalEncoder(Encoder):
    """Source 004's 13 values: a card counter, then pile tops and hand slots sorted together.

    The counter starts at 99 (the source's off-by-one: there are 98 cards) and
    drops by one per card played. Sorting mixes pile tops with hand cards, so this
    input cannot tell which slot holds which card; it is kept only to reproduce
    the source.
    """

    name = "original"

    @classmethod
    def pieces(cls, game: NinetyEightCards) -> list[Piece]:
        return [
            Piece(
                "cards_remaining",
                1,
                0,
                99,
                "99 minus the cards played (the source's counter, off by one)",
            ),
            Piece(
                "sorted_board",
                NUM_PILES + HAND_SIZE,
                0,
                100,
                "the 4 pile tops and the 8 hand slots (0 = empty), sorted together ascending",
            ),
        ]

    def encode(self, v: CardsView) -> np.ndarray:
        obs = np.empty(self.size, FLOAT32)
        obs[0] = 99 - v.played
        board = obs[1:]
        board[:NUM_PILES] = v.piles
        board[NUM_PILES:] = v.slots
        board.sort()
        return obs

    def encode_state(self, s, seat: int = 0) -> np.ndarray:
        # the same numbers straight from the state, packed as float32 (exact for these
        # small integers): the counter, a 0.0 per empty slot, then tops and cards sorted
        hand = s.hand
        packed = ORIGINAL_PACK[len(hand)](99 - s.played, *sorted(s.tops + hand))
        return np.frombuffer(bytearray(packed), FLOAT32)


# ORIGINAL_PACK[n]: the original encoding's float32 bytes for a hand of n cards (struct's
# "x" pad bytes are the zeros of the 8 - n empty slots, which sort first)
ORIGINAL_PACK = [
    struct.Struct(f"<f{4 * (HAND_SIZE - _n)}x{NUM_PILES + _n}f").pack for _n in range(HAND_SIZE + 1)
]

ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
