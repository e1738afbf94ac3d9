"""Observation encoders for Palace: "default" (everything a careful player knows) and "original"."""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import NUM_RANKS
from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.palace.rules import (
    FACE_DOWN_AT,
    FACE_UP_AT,
    FROM_HAND,
    HAND_SIZE_AT,
    KNOWN_AT,
    NUM_PLAY_ACTIONS,
    OUT_AT,
    PLACED,
    QUARTERS,
    Palace,
    PalaceView,
)

_PLAY_ROW = ("seat one-hot (me, then the seats after me in order), kind one-hot (hand, face-up, "
             "blind, failed blind, pick-up), rank one-hot 2..A (the revealed card for a failed "
             "blind play; none for a pick-up), cards placed / 4, cards taken into the hand / 52, "
             "1 if it burned the pile")


class DefaultEncoder(Encoder):
    """Everything a careful player knows: own cards, every opponent's public cards and counts
    (seats in order after me), the pile, cards out of the game, the draw pile and recent plays.

    Built by one gather from the state's public board (rotated to the observer's seat)
    plus the observer's own hand; face-down ranks never appear, not even the player's own.
    """

    name = "default"

    @classmethod
    def pieces(cls, game: Palace) -> list[Piece]:
        o = game.num_players - 1
        rows = game.index.history_rows
        pieces = [
            Piece("hand", 13, 0, 1, "my hand: cards of rank 2..A / 4"),
            Piece("face_up", 13, 0, 1, "my face-up cards of rank 2..A / 4"),
            Piece("face_down", 1, 0, 1, "my face-down cards / 3 (their ranks are unknown to me)"),
            Piece("opponent_hand_size", o, 0, 1,
                  "each opponent's hand size / 52 (seats after me, in order)"),
            Piece("opponent_face_up", 13 * o, 0, 1,
                  "each opponent's face-up cards of rank 2..A / 4"),
            Piece("opponent_face_down", o, 0, 1, "each opponent's face-down cards / 3"),
            Piece("opponent_known", 13 * o, 0, 1,
                  "cards of rank 2..A each opponent is known to hold in hand / 4 (picked up in "
                  "view of the table or taken from face-up in the swap phase, not yet played)"),
            Piece("opponent_out", o, 0, 1, "1 if that opponent is out (has no cards left)"),
            Piece("pile", 13, 0, 1, "cards of rank 2..A in the pile / 4"),
            Piece("pile_size", 1, 0, 1, "cards in the pile / 52"),
            Piece("top", 13, 0, 1, "one-hot rank of the pile's top card (all 0: empty pile)"),
            Piece("run", 1, 0, 1, "cards of the top rank in a row on top / 3 (a 4th burns)"),
            Piece("out_of_game", 13, 0, 1, "cards of rank 2..A out of the game (burned) / 4"),
            Piece("draw_pile", 1, 0, 1, f"cards in the draw pile / {game.draw_at_deal}"),
            Piece("swap_phase", 1, 0, 1, "1 during the swap phase (swap_phase=True only)"),
        ]
        width = game.index.row_width
        pieces.append(Piece("last_play_1", width, 0, 1,
                            f"the newest play or pick-up: {_PLAY_ROW} (all 0: none yet)"))
        for age in range(1, rows):
            pieces.append(Piece(f"last_play_{age + 1}", width, 0, 1,
                                f"the one {age} before the newest, laid out as `last_play_1`"))
        return pieces

    def __init__(self, game: Palace):
        super().__init__(game)
        rows = game.index.history_rows
        self._gather = [[self._gather_index(game, p, head) for head in range(rows)]
                        for p in range(game.num_players)]

    def _gather_index(self, game: Palace, p: int, head: int) -> np.ndarray:
        """Board positions of every observation entry for observer ``p`` (hand slots: 0)."""
        n, ix = game.num_players, game.index
        me = ix.seat(p)
        others = [ix.seat((p + i) % n) for i in range(1, n)]
        index = [0] * NUM_RANKS  # the observer's hand is not on the board; filled in by encode
        index += [me + FACE_UP_AT + r for r in range(NUM_RANKS)]
        index.append(me + FACE_DOWN_AT)
        index += [q + HAND_SIZE_AT for q in others]
        index += [q + FACE_UP_AT + r for q in others for r in range(NUM_RANKS)]
        index += [q + FACE_DOWN_AT for q in others]
        index += [q + KNOWN_AT + r for q in others for r in range(NUM_RANKS)]
        index += [q + OUT_AT for q in others]
        index += list(range(ix.pile, ix.history))  # pile .. swap flag, seat-independent
        rows = ix.history_rows
        for age in range(rows):
            at = ix.history + ((head - age) % rows) * ix.row_width
            index += [at + (p + j) % n for j in range(n)]
            index += list(range(at + n, at + ix.row_width))
        assert len(index) == self.size
        return np.array(index, dtype=np.intp)

    def encode(self, v: PalaceView) -> np.ndarray:
        obs = v.board.take(self._gather[v.player][v.head])
        obs[:NUM_RANKS] = QUARTERS.take(v.hand)
        return obs

    def encode_state(self, s, seat: int) -> np.ndarray:
        # what encode() reads from the view, read from the state: the public board and
        # this seat's own hand (kept / 4 in the state's hand quarters)
        obs = s.board.take(self._gather[seat][s.head])
        obs[:NUM_RANKS] = s.hand_quarters[seat]
        return obs


class OriginalEncoder(Encoder):
    """Source 000's 131-value input: the last three plays, my hand, and the legal mask of the
    79 play actions (leak-free: blind play is the single action 65).

    As in the source's code the newest play comes last (indices 26-38; the blog says
    first). A play stores the number of cards of its rank (1 for face-up and blind
    cards; a blind card by the rank it revealed); a pick-up or failed blind play stores
    -1 in all 13 entries. Swap-phase decisions are not plays and are not recorded.
    """

    name = "original"

    @classmethod
    def pieces(cls, game: Palace) -> list[Piece]:
        return [
            Piece("play_3", 13, -1, 4,
                  "the third-newest play: cards per rank 2..A (-1 everywhere: a pick-up)"),
            Piece("play_2", 13, -1, 4, "the second-newest play, as above"),
            Piece("play_1", 13, -1, 4, "the newest play, as above"),
            Piece("hand", 13, 0, 4, "my hand: cards of rank 2..A"),
            Piece("legal", NUM_PLAY_ACTIONS, 0, 1,
                  "the legal mask of actions 0-78 (0 during the swap phase)"),
        ]

    def encode(self, v: PalaceView) -> np.ndarray:
        return self._encode(v.history, v.hand, v.legal)

    def encode_state(self, s, seat: int) -> np.ndarray:
        # what encode() reads from the view, read from the state: the public history, this
        # seat's own hand, and its legal mask (zeros unless it is to act)
        to_act = s.player == seat and not (s.terminal or s.truncated)
        legal = self.game.legal_mask(s) if to_act else self.game._zero_mask
        return self._encode(s.history, s.hand[seat], legal)

    def _encode(self, history, hand, legal) -> np.ndarray:
        obs = np.zeros(self.size, FLOAT32)
        recent = history[-3:]
        at = 13 * (3 - len(recent))
        for play in recent:
            if play.kind in PLACED:
                obs[at + play.rank] = play.count if play.kind == FROM_HAND else 1.0
            else:
                obs[at : at + 13] = -1.0
            at += 13
        obs[39:52] = hand
        obs[52:] = legal[:NUM_PLAY_ACTIONS]
        return obs


ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
