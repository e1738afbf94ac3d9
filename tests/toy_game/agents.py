"""A rule agent for high card."""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from tests.toy_game.rules import HighCardView


class CheapestWinAgent(BaseAgent):
    """Leads its highest card; answers with the lowest card that wins, else its lowest."""

    name = "cheapest_win"

    def act(self, view: HighCardView, rng: np.random.Generator) -> int:
        hand = sorted(view.hand)
        if view.lead < 0:
            return hand[-1]
        winners = [c for c in hand if c > view.lead]
        return winners[0] if winners else hand[0]


AGENTS = {"cheapest_win": CheapestWinAgent}
