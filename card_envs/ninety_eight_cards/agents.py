"""The greedy rule agent for 98 Cards (the expert planner and its search are in ``expert.py``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.ninety_eight_cards.rules import _PILE_INDEX, END_TURN, JUMPS, CardsView


def jump_costs(v: CardsView) -> np.ndarray:
    """How far each pile*8+slot play moves its pile (negative for the tens trick), as (32,)."""
    return JUMPS[_PILE_INDEX, v.piles[:, None], v.slots].reshape(-1)


class GreedyAgent(BaseAgent):
    """Plays the legal card that moves a pile the least (the tens trick first).

    Under standard rules it plays the required minimum, then keeps playing only
    while a move costs at most ``free_jump`` (the tens trick always qualifies),
    and otherwise ends the turn.
    """

    name = "greedy"
    free_jump = 0

    def act(self, view: CardsView, rng: np.random.Generator) -> int:
        legal = view.legal
        plays = np.flatnonzero(legal[:END_TURN])
        if view.standard and legal[END_TURN]:
            if len(plays) == 0:
                return END_TURN
            costs = jump_costs(view)[plays]
            best = int(np.argmin(costs))
            return int(plays[best]) if costs[best] <= self.free_jump else END_TURN
        costs = jump_costs(view)[plays]
        return int(plays[int(np.argmin(costs))])

