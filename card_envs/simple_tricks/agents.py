"""Rule agents for simple tricks (the solver's agents are in ``solver.py``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.simple_tricks.rules import OPPONENT_HAND, TricksView


class FirstPlayAgent(BaseAgent):
    """Source 003's baseline: the first legal card in the hand's dealt order.

    Deterministic given the deal; the source calls it its "random strategy"
    because the deal is shuffled.
    """

    name = "first_play"

    def act(self, view: TricksView, rng: np.random.Generator) -> int:
        legal = view.legal
        for card in view.hand:
            if legal[card]:
                return card
        raise RuntimeError("first_play: no legal card in hand")


class HeuristicAgent(BaseAgent):
    """Plays to win tricks cheaply, using the opponent's hand (known by elimination).

    Following: win with the lowest card that beats the lead, else play the lowest
    card of the led colour, else throw the lowest card. Leading: lead the lowest
    card that no opponent card can beat (its colour is void in their hand or all
    their cards of it are lower); with none, lead the lowest card.
    """

    name = "heuristic"

    def act(self, view: TricksView, rng: np.random.Generator) -> int:
        n = view.num_values
        legal = np.flatnonzero(view.legal)
        values = legal % n
        if view.lead >= 0:
            lead_colour, lead_value = divmod(view.lead, n)
            same = legal[legal // n == lead_colour]
            if len(same):
                beating = same[same % n > lead_value]
                pool = beating if len(beating) else same
                return int(pool[np.argmin(pool % n)])
            return int(legal[np.argmin(values)])
        opponent = np.flatnonzero(view.plane(OPPONENT_HAND))
        best_opp = [-1, -1]
        for card in opponent:
            colour, value = divmod(int(card), n)
            best_opp[colour] = max(best_opp[colour], value)
        sure = [int(c) for c in legal if c % n > best_opp[c // n]]
        if sure:
            return min(sure, key=lambda c: c % n)
        return int(legal[np.argmin(values)])
