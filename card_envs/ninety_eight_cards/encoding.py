"""Observation encoders for 98 Cards."""

from __future__ import annotations

import struct

import numpy as np

from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.ninety_eight_cards.rules import (
    BOARD_HAND,
    BOARD_JUMPS,
    BOARD_PILES,
    BOARD_SIZE,
    DRAW_CODE,
    FEATURES,
    HAND_SIZE,
    HIGHEST,
    LOWEST,
    MIN_CODE,
    NUM_CARDS,
    NUM_PILES,
    PLAYED_CODE,
    TURN_CODE,
    CardsView,
    NinetyEightCards,
    board_codes,
)


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
        # The first three pieces are the state's board vector; the rest sit at fixed offsets.
        starts = [self.layout.start(p.name) for p in self.layout.pieces]
        assert starts == [BOARD_PILES, BOARD_HAND, BOARD_JUMPS, 44, 45, 46, 47, 48], starts
        # encode_state's scratch: the FEATURES codes of one observation, written as bytes
        self._codes = np.zeros(self.size, dtype=np.int64)
        self._code_bytes = memoryview(self._codes).cast("B")

    def __reduce__(self):
        # the scratch (a memoryview) does not pickle; a new encoder makes its own
        return type(self), (self.game,)

    def encode(self, v: CardsView) -> np.ndarray:
        obs = np.empty(self.size, FLOAT32)
        obs[:BOARD_SIZE] = v.board
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
        self._code_bytes[:] = b"".join(
            (
                board_codes(s),
                DRAW_CODE[game.draw_pile_size(s)],
                PLAYED_CODE[s.played],
                TURN_CODE[s.turn_played],
                MIN_CODE[game.min_play(s) if game.standard else 0],
                s.in_draw_codes,
            )
        )
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
