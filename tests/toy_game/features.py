"""High card's per-action facts for the per-action policies (card_envs.core.action_features).

Action c plays card c. Its facts: it is in my hand; its value / (cards - 1); a card is led; it
beats the card led; the cards not yet seen (neither in my hand nor played) above it and below
it, / cards.
"""

from __future__ import annotations

import torch as th

from card_envs.core.action_features import ActionFeatures
from card_envs.core.encoding import Encoder
from tests.toy_game.rules import HighCard


class HighCardFeatures(ActionFeatures):
    """High card's facts (see the module docstring), from the default encoding."""

    num_features = 6

    def __init__(self, game: HighCard, encoder: Encoder):
        super().__init__(game, encoder)
        c = game.num_cards
        self.register_buffer("value", th.arange(c, dtype=th.float32), persistent=False)
        # above[c, d]: card d is above card c
        self.register_buffer("above", (self.value[None, :] > self.value[:, None]).float(),
                             persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        c = self.num_actions
        hand = self.piece(obs, "hand", c)
        lead = self.piece(obs, "lead", c)
        seen = hand + self.piece(obs, "my_played", c) + self.piece(obs, "opponent_played", c)
        unseen = 1.0 - seen - lead
        led = lead.sum(1, keepdim=True).expand(-1, c)
        beats = (lead @ self.above).clamp(max=1.0)  # the cards above the one led
        return th.stack([
            hand,
            (self.value / max(c - 1, 1)).expand(obs.shape[0], -1),
            led,
            beats,
            unseen @ self.above.T / c,
            unseen @ (1.0 - self.above - th.eye(c)).T / c,
        ], dim=2)


FACT_SETS = {"basic": HighCardFeatures}
