"""Observation encoders for Palace: "default" (everything a careful player knows) and "original"."""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_RANKS
from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.palace.rules import (
    BURN_RUN,
    DEAL_EACH,
    FACE_DOWN_AT,
    FACE_UP_AT,
    FROM_HAND,
    HAND_SIZE_AT,
    KNOWN_AT,
    NUM_PLAY_ACTIONS,
    OUT_AT,
    PLACED,
    ROW_BURNED,
    ROW_KIND,
    ROW_PLACED,
    ROW_RANK,
    ROW_SEAT,
    ROW_TAKEN,
    Palace,
    PalaceView,
)

_PLAY_ROW = ("seat one-hot (me, then the seats after me in order), kind one-hot (hand, face-up, "
             "blind, failed blind, pick-up), rank one-hot 2..A (the revealed card for a failed "
             "blind play; none for a pick-up), cards placed / 4, cards taken into the hand / 52, "
             "1 if it burned the pile")

# Normalisers of the default encoding.
HAND_SCALE = 1.0 / DECK_SIZE
COUNT_SCALE = 0.25  # at most 4 cards of a rank
FACE_DOWN_SCALE = 1.0 / DEAL_EACH
RUN_SCALE = 1.0 / (BURN_RUN - 1)  # the longest run that stays on the pile
_VALUES = DECK_SIZE + 1  # a fact is a count of 0..52 cards (or a flag, or a rank + 1)


class DefaultEncoder(Encoder):
    """Everything a careful player knows: own cards, every opponent's public cards and counts
    (seats in order after me), the pile, cards out of the game, the draw pile and recent plays.

    The state's facts (``FactIndex``: counts by absolute seat) are gathered in observation
    order for the observer's seat and turned into numbers by one table per observer: entry i
    of the observation is ``table[i, fact]`` (a count / 4, a one-hot bit, ...). Face-down ranks
    never appear, not even the player's own.
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
        width = cls.row_width(game)
        pieces.append(Piece("last_play_1", width, 0, 1,
                            f"the newest play or pick-up: {_PLAY_ROW} (all 0: none yet)"))
        for age in range(1, rows):
            pieces.append(Piece(f"last_play_{age + 1}", width, 0, 1,
                                f"the one {age} before the newest, laid out as `last_play_1`"))
        return pieces

    @staticmethod
    def row_width(game: Palace) -> int:
        return game.num_players + 5 + 13 + 3

    def __init__(self, game: Palace):
        super().__init__(game)
        n, ix = game.num_players, game.index
        # per observer: the facts read by each entry, and the table of each entry's numbers
        where = [self._where(game, p) for p in range(n)]
        self._tables = [self._table(game, p, [w[1] for w in where[p]]) for p in range(n)]
        rows = ix.history_rows
        # the facts' positions per (observer, head), in the public facts followed by the
        # observer's own hand
        self._gather = [[self._positions(where[p], head, ix.hand(p)) for head in range(rows)]
                        for p in range(n)]
        self._base = np.arange(self.size, dtype=np.intp) * _VALUES

    def _where(self, game: Palace, p: int) -> list[tuple]:
        """Per observation entry: (fact position, or ("hand", r) / ("row", age, cell), and the
        entry's kind of number: ("count"), ("scale", k), ("is", value), ...)."""
        n, ix = game.num_players, game.index
        me = ix.seat(p)
        others = [ix.seat((p + i) % n) for i in range(1, n)]
        quarter, hand_size = ("scale", COUNT_SCALE), ("scale", HAND_SCALE)
        out = [(("hand", r), quarter) for r in range(NUM_RANKS)]
        out += [(me + FACE_UP_AT + r, quarter) for r in range(NUM_RANKS)]
        out.append((me + FACE_DOWN_AT, ("scale", FACE_DOWN_SCALE)))
        out += [(q + HAND_SIZE_AT, hand_size) for q in others]
        out += [(q + FACE_UP_AT + r, quarter) for q in others for r in range(NUM_RANKS)]
        out += [(q + FACE_DOWN_AT, ("scale", FACE_DOWN_SCALE)) for q in others]
        out += [(q + KNOWN_AT + r, quarter) for q in others for r in range(NUM_RANKS)]
        out += [(q + OUT_AT, ("scale", 1.0)) for q in others]
        out += [(ix.pile + r, quarter) for r in range(NUM_RANKS)]
        out.append((ix.pile_size, hand_size))
        out += [(ix.top, ("is", r + 1)) for r in range(NUM_RANKS)]
        out.append((ix.run, ("scale", RUN_SCALE)))
        out += [(ix.out_cards + r, quarter) for r in range(NUM_RANKS)]
        out.append((ix.draw, ("divide", game.draw_at_deal)))
        out.append((ix.swapping, ("scale", 1.0)))
        for age in range(ix.history_rows):
            out += [(("row", age, ROW_SEAT), ("is", (p + j) % n + 1)) for j in range(n)]
            out += [(("row", age, ROW_KIND), ("is", k + 1)) for k in range(5)]
            out += [(("row", age, ROW_RANK), ("is", r + 1)) for r in range(NUM_RANKS)]
            out += [(("row", age, ROW_PLACED), quarter), (("row", age, ROW_TAKEN), hand_size),
                    (("row", age, ROW_BURNED), ("scale", 1.0))]
        assert len(out) == self.size
        return out

    def _table(self, game: Palace, p: int, kinds: list[tuple]) -> np.ndarray:
        """table[i * _VALUES + v]: entry i's number when its fact is v (float32, as the
        arithmetic of the number in float64 rounds)."""
        values = np.arange(_VALUES)
        table = np.zeros((len(kinds), _VALUES), FLOAT32)
        for i, (kind, arg) in enumerate(kinds):
            if kind == "scale":
                table[i] = [v * arg for v in values.tolist()]
            elif kind == "divide":
                table[i] = [v / arg for v in values.tolist()]
            else:  # "is": a one-hot bit
                table[i, arg] = 1.0
        return table.ravel()

    def _positions(self, where: list[tuple], head: int, hand_at: int) -> np.ndarray:
        ix = self.game.index
        out = []
        for fact, _ in where:
            if isinstance(fact, int):
                out.append(fact)
            elif fact[0] == "hand":
                out.append(hand_at + fact[1])
            else:
                _, age, cell = fact
                out.append(ix.history + ((head - age) % ix.history_rows) * ix.row_width + cell)
        return np.array(out, dtype=np.intp)

    def encode(self, v: PalaceView) -> np.ndarray:
        return self._encode(v.public, v.hand, v.player, v.head)

    def encode_state(self, s, seat: int) -> np.ndarray:
        # what encode() reads from the view, read from the state: its public facts and this
        # seat's own hand
        return self._encode(s.facts, s.hand[seat], seat, s.head)

    def _encode(self, public: np.ndarray, hand: np.ndarray, p: int, head: int) -> np.ndarray:
        facts = np.concatenate((public, hand))
        return self._tables[p].take(self._base + facts.take(self._gather[p][head]))


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
