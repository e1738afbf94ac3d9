"""Observation encoders for simple tricks (N values per colour, 2N cards)."""

from __future__ import annotations

import numpy as np

from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from card_envs.simple_tricks.rules import (
    HELD,
    PLANE_ROWS,
    PLAYED,
    SimpleTricks,
    TricksState,
    TricksView,
)


class DefaultEncoder(Encoder):
    """Everything the seat knows, as card planes of length 2N plus the trick counts."""

    name = "default"

    @classmethod
    def pieces(cls, game: SimpleTricks) -> list[Piece]:
        c, n = game.num_cards, game.num_values
        return [
            Piece("hand", c, 0, 1, "1 if the card is in my hand"),
            Piece(
                "opponent_hand",
                c,
                0,
                1,
                "1 if the opponent still holds the card "
                "(known by elimination: every card is dealt)",
            ),
            Piece("my_played", c, 0, 1, "1 if I played the card in a completed trick"),
            Piece(
                "opponent_played", c, 0, 1, "1 if the opponent played the card in a completed trick"
            ),
            Piece(
                "lead", c, 0, 1, "one-hot of the card led in the current trick (all 0 if none yet)"
            ),
            Piece("my_turn", 1, 0, 1, "1 if I am to act"),
            Piece("my_tricks", 1, 0, 1, f"tricks I have won / {n}"),
            Piece("opponent_tricks", 1, 0, 1, f"tricks the opponent has won / {n}"),
        ]

    def __init__(self, game: SimpleTricks):
        super().__init__(game)
        c = game.num_cards
        self._planes_end = 4 * c  # the four card planes: the state's cards read from a seat
        # per seat: the flat positions in TricksState.cards of its four planes, in order
        self._planes = [np.array([row * c + card for row in PLANE_ROWS[seat] for card in range(c)],
                                 dtype=np.intp) for seat in range(2)]
        self._tail = self.layout.start("my_turn")
        self._num_values = game.num_values

    def encode(self, v: TricksView) -> np.ndarray:
        return self._encode(v.cards, v.player, v.lead, v.to_act, v.tricks[0], v.tricks[1])

    def encode_state(self, s: TricksState, seat: int) -> np.ndarray:
        to_act = s.player == seat and not (s.terminal or s.truncated)
        return self._encode(s.cards, seat, s.lead, to_act, s.tricks[seat], s.tricks[1 - seat])

    def _encode(self, cards, seat: int, lead: int, to_act: bool, mine: int,
                theirs: int) -> np.ndarray:
        obs = np.zeros(self.size, FLOAT32)
        end = self._planes_end
        obs[:end] = cards.take(self._planes[seat])
        if lead >= 0:
            obs[end + lead] = 1.0
        tail, n = self._tail, self._num_values
        obs[tail] = to_act
        obs[tail + 1] = mine / n
        obs[tail + 2] = theirs / n
        return obs


class OriginalEncoder(Encoder):
    """Source 003's 6N binary input (60 values for N = 10)."""

    name = "original"

    @classmethod
    def pieces(cls, game: SimpleTricks) -> list[Piece]:
        c = game.num_cards
        return [
            Piece(
                "played",
                c,
                0,
                1,
                "1 if the card was played in a completed trick (by either player)",
            ),
            Piece("hand", c, 0, 1, "1 if the card is in my hand"),
            Piece(
                "lead",
                c,
                0,
                1,
                "one-hot of the opponent's led card when I am to follow; all 0 when I lead",
            ),
        ]

    def encode(self, v: TricksView) -> np.ndarray:
        return self._encode(v.cards, v.player, v.lead >= 0 and v.leader != v.player, v.lead)

    def encode_state(self, s: TricksState, seat: int) -> np.ndarray:
        return self._encode(s.cards, seat, s.lead >= 0 and s.leader != seat, s.lead)

    def _encode(self, cards, seat: int, following: bool, lead: int) -> np.ndarray:
        c = self.game.num_cards
        obs = np.zeros(self.size, FLOAT32)
        np.add(cards[PLAYED], cards[PLAYED + 1], out=obs[:c], casting="unsafe")
        obs[c : 2 * c] = cards[HELD + seat]
        if following:
            obs[2 * c + lead] = 1.0
        return obs


ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
