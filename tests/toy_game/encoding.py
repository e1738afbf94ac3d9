"""The observation of high card: card planes, the lead, whose turn, the rounds won."""

from __future__ import annotations

import numpy as np

from card_envs.core.dtypes import FLOAT32
from card_envs.core.encoding import Encoder, Piece
from tests.toy_game.rules import HighCard, HighCardView


class DefaultEncoder(Encoder):
    """My hand, the cards each seat played, the card led now, my turn and the rounds won."""

    name = "default"

    @classmethod
    def pieces(cls, game: HighCard) -> list[Piece]:
        c, k = game.num_cards, game.hand_size
        return [
            Piece("hand", c, 0, 1, "1 if the card is in my hand"),
            Piece("my_played", c, 0, 1, "1 if I played the card in a completed round"),
            Piece("opponent_played", c, 0, 1, "1 if the opponent played it in a completed round"),
            Piece("lead", c, 0, 1, "one-hot of the card led in this round (all 0 if none)"),
            Piece("my_turn", 1, 0, 1, "1 if I am to act"),
            Piece("my_rounds", 1, 0, 1, f"rounds I have won / {k}"),
            Piece("opponent_rounds", 1, 0, 1, f"rounds the opponent has won / {k}"),
        ]

    def encode(self, v: HighCardView) -> np.ndarray:
        obs = np.zeros(self.size, FLOAT32)
        split = self.layout.split(obs)
        split["hand"][list(v.hand)] = 1
        for seat, card in v.played:
            split["my_played" if seat == v.player else "opponent_played"][card] = 1
        if v.lead >= 0:
            split["lead"][v.lead] = 1
        split["my_turn"][0] = float(v.to_act)
        split["my_rounds"][0] = v.won[v.player] / self.game.hand_size
        split["opponent_rounds"][0] = v.won[1 - v.player] / self.game.hand_size
        return obs


ENCODERS = {"default": DefaultEncoder}
