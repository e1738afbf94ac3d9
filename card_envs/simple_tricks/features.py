"""Simple tricks' per-action facts for the per-action policies (card_envs.core.action_features)."""

from __future__ import annotations

import torch as th

from card_envs.core.action_features import ActionFeatures
from card_envs.core.encoding import Encoder
from card_envs.core.game import Game


class SimpleTricksFeatures(ActionFeatures):
    """Simple tricks, default encoding. Action c plays card c (colour c // N, value c % N).

    A card's facts: in my hand; its colour; its value / N; a card is led; it follows the
    led colour; it beats the led card; the opponent's cards of its colour, above it and below
    it, / N; my cards of its colour above and below it / N; my cards of its colour / N;
    tricks won by me and the opponent / N (the score so far).
    """

    num_features = 14

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.n = n = game.num_values
        self.register_buffer("colour", th.tensor([c // n for c in range(2 * n)],
                                                 dtype=th.float32), persistent=False)
        self.register_buffer("value", th.tensor([c % n for c in range(2 * n)],
                                                dtype=th.float32), persistent=False)
        above = th.zeros(2 * n, 2 * n)
        for c in range(2 * n):
            for d in range(2 * n):
                if c // n == d // n and d % n > c % n:
                    above[c, d] = 1.0
        same = th.tensor([[1.0 if c // n == d // n else 0.0 for d in range(2 * n)]
                          for c in range(2 * n)])
        self.register_buffer("above", above, persistent=False)
        self.register_buffer("below", same - above - th.eye(2 * n), persistent=False)
        self.register_buffer("same", same, persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        n, b = self.n, obs.shape[0]
        hand = self.piece(obs, "hand", 2 * n)
        theirs = self.piece(obs, "opponent_hand", 2 * n)
        lead = self.piece(obs, "lead", 2 * n)
        led = lead.sum(1, keepdim=True).expand(-1, 2 * n)  # 1 when a card is led
        follows = lead @ self.same  # (B, 2N): 1 for cards of the led colour
        beats = lead @ self.below.T  # cards above the led one, same colour
        tricks = th.cat([self.piece(obs, "my_tricks", 1), self.piece(obs, "opponent_tricks", 1)],
                        dim=1)
        facts = th.stack([
            hand,
            self.colour.expand(b, -1),
            self.value.expand(b, -1) / n,
            led,
            follows,
            beats,
            theirs @ self.above.T / n,
            theirs @ self.below.T / n,
            hand @ self.above.T / n,
            hand @ self.below.T / n,
            hand @ self.same.T / n,
            theirs @ self.same.T / n,
            tricks[:, :1].expand(-1, 2 * n),
            tricks[:, 1:].expand(-1, 2 * n),
        ], dim=2)
        return facts


FACT_SETS = {"basic": SimpleTricksFeatures}
