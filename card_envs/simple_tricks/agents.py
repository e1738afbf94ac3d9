"""Agents for simple tricks: rule agents, the exact solver, and its PIMC form."""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.core.game import check_int
from card_envs.simple_tricks.rules import HAND, OPPONENT_HAND, SimpleTricks, TricksView
from card_envs.simple_tricks.solver import TrickSolver


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


def view_position(view: TricksView) -> tuple[list[int], list[int], int]:
    """(my hand, the opponent's hand, the card led or -1) as the seat knows them.

    Both hands come from the view's card planes: the opponent's cards are known by
    elimination (every card is dealt); their order is not, and the rules never need it.
    """
    mine = np.flatnonzero(view.plane(HAND)).tolist()
    theirs = np.flatnonzero(view.plane(OPPONENT_HAND)).tolist()
    return mine, theirs, int(view.lead)


class SolverAgent(BaseAgent):
    """Perfect play: a card of the highest solved value (the lowest such card on ties).

    Values are tricks taken from here on with both sides playing perfectly (see
    ``card_envs.simple_tricks.solver``); the agent reads only its view.
    """

    name = "solver"

    def __init__(self, game: SimpleTricks | None = None):
        super().__init__(game)
        self._solver: TrickSolver | None = None

    def solver(self, num_values: int) -> TrickSolver:
        """The agent's solver for ``num_values`` (kept between moves and games)."""
        if self._solver is None or self._solver.num_values != num_values:
            self._solver = TrickSolver(num_values)
        return self._solver

    def act(self, view: TricksView, rng: np.random.Generator) -> int:
        return self.solver(view.num_values).best_moves(*view_position(view))[0]


class PimcAgent(SolverAgent):
    """Perfect-information Monte Carlo with the solver as leaf evaluator (name ``ismcts``).

    It samples ``budget`` worlds consistent with its view (here: a random order of the
    opponent's known cards, the only thing the seat cannot see), solves each with all cards
    open, and plays the card with the highest total value (the lowest such card on ties).
    The hidden order never changes what the rules allow, so every world has the same
    values and this agent plays exactly as ``solver``; it is here because every game has an
    ``ismcts`` search agent, and it shows the determinization step on the simplest game.
    Budget: worlds per move (default 8).
    """

    name = "ismcts"
    takes_budget = True
    ladder_budgets = (1, 8)

    def __init__(self, game: SimpleTricks | None = None, budget: int = 8):
        super().__init__(game)
        self.budget = check_int("budget", budget, 1)

    def act(self, view: TricksView, rng: np.random.Generator) -> int:
        mine, theirs, lead = view_position(view)
        solver = self.solver(view.num_values)
        totals: dict[int, int] = {}
        for _ in range(self.budget):
            world = [theirs[i] for i in rng.permutation(len(theirs))]  # one dealt order
            for card, value in solver.move_values(mine, world, lead).items():
                totals[card] = totals.get(card, 0) + value
        top = max(totals.values())
        return min(card for card, total in totals.items() if total == top)

    def __repr__(self) -> str:
        return f"PimcAgent(budget={self.budget})"


AGENTS = {
    "first_play": FirstPlayAgent,
    "heuristic": HeuristicAgent,
    "solver": SolverAgent,
    "ismcts": PimcAgent,
}
