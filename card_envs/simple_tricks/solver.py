"""Exact solver for simple tricks: the game-theoretic value of any position and its best moves.

Every card is dealt, so both players know both hands (the order of the opponent's hand is
hidden but the rules never look at it): the game is one of perfect information and can be
solved exactly.

**Value.** ``value(...)`` is the number of the remaining tricks (the one in progress
included) that the player to act takes when both sides play perfectly, each maximizing its
own tricks. The remaining tricks are shared, so this is zero-sum in tricks, and the trick
difference is ``2 * value - remaining``. The deal's payoff (the sign of the final trick
difference) is a non-decreasing function of the trick count, and in a perfect-information
game such a function commutes with minimax: a trick-optimal move is also payoff-optimal
(the reverse need not hold: a move that wins the deal by one trick less is payoff-optimal
but not trick-optimal).

**How.** Only the order of the remaining cards within each colour matters (cards of
different colours are never compared, and the leader wins off-colour), so a position is,
per colour, the sequence of owners of its remaining cards from low to high. The solver
keys its transposition table on these two sequences seen from the leader (which also makes
the position the same whichever player leads and whichever colour is which), and it plays
only one card of each run of cards that are adjacent in that order and held by one player
(they are equivalent). Memoized minimax over trick boundaries, with a cut-off of a lead
as soon as one reply shows it is no better than a lead already found.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from card_envs.core.agents import Agent, BaseAgent
from card_envs.core.evaluation import Z95, agent_view
from card_envs.core.game import check_int
from card_envs.simple_tricks.rules import HAND, OPPONENT_HAND, SimpleTricks, TricksView


class TrickSolver:
    """Perfect play for simple tricks with ``num_values`` values per colour.

    Hands are given as iterables of card indices (``colour * num_values + value``). The
    transposition table is kept between calls (it depends only on the canonical position),
    so solving many positions of one deal, or many deals, gets cheaper as it fills; it starts
    over once it holds more than ``max_table`` positions.

    Cost (one core of our machines): a whole deal from its first lead, every card valued,
    takes 5-15 ms at N=10 (60 ms at most over 200 deals, on a loaded machine), about 1.5 s
    at N=16 and 20 s at N=26 (``python -m card_envs.simple_tricks.solver N DEALS``).
    """

    def __init__(self, num_values: int = 10, max_table: int = 2_000_000):
        self.num_values = check_int("num_values", num_values, 2, 26)
        self.max_table = check_int("max_table", max_table, 1)
        self._table: dict[int, tuple[int, int]] = {}

    # --- public API ---------------------------------------------------------------------
    def value(self, hand: Iterable[int], other: Iterable[int], lead: int = -1) -> int:
        """Tricks the player to act (holding ``hand``) takes from the remaining ones.

        ``other`` is the opponent's hand. With ``lead >= 0`` the opponent led that card in
        the current trick (it is in neither hand) and the player to act follows; the
        current trick counts among the remaining ones.
        """
        values = self.move_values(hand, other, lead)
        return max(values.values())

    def move_values(
        self, hand: Iterable[int], other: Iterable[int], lead: int = -1
    ) -> dict[int, int]:
        """For each legal card of the player to act: its tricks from here if it plays it.

        The value counts the current trick and assumes perfect play by both sides after the
        card (see ``value``).
        """
        mine, theirs = self._check(hand, other, lead)
        if len(self._table) > self.max_table:  # bound the memory of a long-lived solver
            self._table.clear()
        legal = self._legal(mine, lead)
        if lead >= 0:
            return {card: self._after_follow(mine, theirs, lead, card) for card in legal}
        out = {}
        for card in legal:
            rest = mine - {card}
            # the opponent follows to maximize its tricks; the leader gets the others
            replies = self._legal(theirs, card)
            best = max(self._after_follow(theirs, rest, card, reply) for reply in replies)
            out[card] = len(mine) - best
        return out

    def best_moves(self, hand: Iterable[int], other: Iterable[int], lead: int = -1) -> list[int]:
        """The legal cards that reach ``value``, in increasing order."""
        values = self.move_values(hand, other, lead)
        top = max(values.values())
        return sorted(card for card, v in values.items() if v == top)

    @property
    def table_size(self) -> int:
        """Positions in the transposition table (trick boundaries, canonical form)."""
        return len(self._table)

    # --- positions in card terms ----------------------------------------------------------
    def _check(self, hand, other, lead) -> tuple[frozenset[int], frozenset[int]]:
        mine, theirs = frozenset(int(c) for c in hand), frozenset(int(c) for c in other)
        cards = 2 * self.num_values
        lead = int(lead)
        if not mine:
            raise ValueError("hand: the player to act holds no card; the deal is over")
        every = [*mine, *theirs, *([lead] if lead >= 0 else [])]
        if any(not 0 <= c < cards for c in every):
            raise ValueError(f"cards must be in 0..{cards - 1} for num_values={self.num_values}")
        if len(set(every)) != len(every):
            raise ValueError("hand, other and lead must not share a card")
        if len(theirs) != len(mine) - (1 if lead >= 0 else 0):
            raise ValueError(
                f"hand sizes {len(mine)} and {len(theirs)} do not fit "
                + ("a trick in progress" if lead >= 0 else "a trick boundary")
            )
        return mine, theirs

    def _legal(self, hand: frozenset[int], lead: int) -> list[int]:
        if lead < 0:
            return sorted(hand)
        n = self.num_values
        same = [c for c in hand if c // n == lead // n]
        return sorted(same) if same else sorted(hand)

    def _after_follow(self, follower: frozenset[int], leader: frozenset[int], lead: int,
                      card: int) -> int:
        """The follower's tricks from here (this trick included) after it plays ``card``."""
        n = self.num_values
        wins = card // n == lead // n and card % n > lead % n
        rest = follower - {card}
        if not rest:
            return int(wins)
        if wins:
            return 1 + self._solve(*self._codes(rest, leader))
        return len(rest) - self._solve(*self._codes(leader, rest))

    def _codes(self, leader: Iterable[int], follower: Iterable[int]) -> tuple[int, int]:
        """Per colour: the owners of the remaining cards, low to high, seen from the leader.

        Bit i is 1 when the i-th lowest remaining card of the colour is the leader's; a
        sentinel bit above them gives the length.
        """
        n = self.num_values
        owner = {c: 1 for c in leader}
        owner.update((c, 0) for c in follower)
        codes = []
        for colour in range(2):
            code, length = 0, 0
            for c in range(colour * n, colour * n + n):
                if c in owner:
                    code |= owner[c] << length
                    length += 1
            codes.append(code | 1 << length)
        return codes[0], codes[1]

    # --- the search on canonical positions ----------------------------------------------
    def _solve(self, a: int, b: int) -> int:
        """Tricks the leader takes from the position with colour codes ``a`` and ``b``."""
        tricks = (a.bit_length() + b.bit_length() - 2) >> 1
        return self._search(a, b, -1, tricks + 1)

    def _search(self, a: int, b: int, alpha: int, beta: int) -> int:
        """The leader's tricks from colour codes ``a``, ``b``, searched in (alpha, beta).

        Fail-soft alpha-beta: a result <= alpha is an upper bound of the value, one >= beta
        a lower bound, one in between exact. The table keeps both bounds per position.
        """
        la, lb = a.bit_length() - 1, b.bit_length() - 1
        tricks = (la + lb) >> 1
        if tricks == 0:
            return 0
        key = (a << 32 | b) if a <= b else (b << 32 | a)
        table = self._table
        low, high = table.get(key, (0, tricks))
        if low == high or low >= beta:
            return low
        if high <= alpha:
            return high
        if low > alpha:
            alpha = low
        if high < beta:
            beta = high
        start_alpha = alpha
        search = self._search
        best = -1
        for led, other, length, other_length in ((a, b, la, lb), (b, a, lb, la)):
            full = (1 << length) - 1
            follows = led & full != full  # the follower holds a card of this colour
            # high leads first: they win tricks and give early cut-offs
            for i in reversed(_run_starts(led, length, 1)):
                floor = alpha if alpha > best else best
                worst = tricks + 1
                if follows:
                    # the follower's winning replies (over the lead) first: they refute most
                    for j in reversed(_run_starts(led, length, 0)):
                        ceiling = beta if beta < worst else worst
                        if j < i:  # the follower plays under: the leader wins and leads
                            rest = _remove(_remove(led, i), j)
                            v = 1 + search(rest, other, floor - 1, ceiling - 1)
                        else:  # the follower plays over and leads next
                            rest = _remove(_remove(led, j), i)
                            left = tricks - 1
                            v = left - search(_flip(rest), _flip(other), left - ceiling,
                                              left - floor)
                        if v < worst:
                            worst = v
                            if worst <= floor:
                                break
                else:  # void: the follower discards from the other colour; the leader wins
                    rest = _remove(led, i)
                    for j in _run_starts(other, other_length, 0):
                        ceiling = beta if beta < worst else worst
                        v = 1 + search(rest, _remove(other, j), floor - 1, ceiling - 1)
                        if v < worst:
                            worst = v
                            if worst <= floor:
                                break
                if worst > best:
                    best = worst
                    if best >= beta:
                        break
            if best >= beta:
                break
        if best <= start_alpha:
            table[key] = (low, best)
        elif best >= beta:
            table[key] = (best, high)
        else:
            table[key] = (best, best)
        return best


def _run_starts(code: int, length: int, bit: int) -> list[int]:
    """Positions where a run of cards held by ``bit``'s owner starts (one card per run)."""
    starts = []
    previous = -1
    for i in range(length):
        owner = (code >> i) & 1
        if owner == bit and previous != bit:
            starts.append(i)
        previous = owner
    return starts


def _remove(code: int, i: int) -> int:
    """The colour code with its i-th lowest card taken out."""
    return ((code >> (i + 1)) << i) | (code & ((1 << i) - 1))


def _flip(code: int) -> int:
    """The colour code seen from the other player (the sentinel bit stays)."""
    return code ^ ((1 << (code.bit_length() - 1)) - 1)


def tricks_difference(value: int, remaining: int) -> int:
    """The trick difference (player to act minus opponent) over the remaining tricks."""
    return 2 * value - remaining


@dataclass
class Regret:
    """How many tricks an agent gives away against perfect play, per game (see ``regret``)."""

    agent: str
    games: int  # deals x 2 seats
    mean: float  # tricks lost per game
    low: float  # 95% interval of the mean (normal approximation)
    high: float
    perfect_games: int  # games with no trick lost
    moves: int
    mistakes: int  # moves that lost at least one trick

    def summary(self) -> str:
        return (
            f"{self.agent}: regret {self.mean:.3f} tricks per game [{self.low:.3f}, "
            f"{self.high:.3f}] over {self.games} games; {self.perfect_games / self.games:.1%} "
            f"played perfectly; {self.mistakes} of {self.moves} moves lost a trick or more"
        )


def regret(
    game: SimpleTricks, agent: Agent, deals: int, seed: int = 0, name: str | None = None
) -> Regret:
    """The tricks ``agent`` loses against perfect play, per game, on open deals.

    Each of ``deals`` deals (deal g from ``default_rng([seed, g, 0])``, as in
    ``card_envs.core.evaluation``) is played twice, with the agent in seat 0 and then in
    seat 1, against the ``solver`` agent. At each of the agent's moves the solver values
    every legal card (tricks from here with perfect play after it); the move's regret is
    the best value minus the chosen card's value, and a game's regret is the sum over the
    agent's moves. Against a perfect opponent this equals the game value of the agent's
    seat minus the tricks it took (the opponent's moves never change the value), so a
    perfect agent scores 0 and every trick of regret is a trick given away.
    """
    solver = TrickSolver(game.num_values)
    opponent = SolverAgent(game)
    per_game: list[int] = []
    moves = mistakes = 0
    for g in range(deals):
        for seat in (0, 1):
            s = game.init(np.random.default_rng([seed, g, 0]))
            agent_rng = np.random.default_rng([seed, g, 1 + seat])
            if hasattr(agent, "reset"):
                agent.reset()
            lost = 0
            while not s.terminal:
                view = game.view(s, s.player)
                if s.player == seat:  # the view the play loop would give it (text for some)
                    action = int(agent.act(agent_view(game, s, seat, agent), agent_rng))
                    game.check_action(s, action)
                    values = solver.move_values(*view_position(view))
                    loss = max(values.values()) - values[action]
                    lost += loss
                    moves += 1
                    mistakes += loss > 0
                else:
                    action = opponent.act(view, agent_rng)
                game.apply(s, action, agent_rng)
            per_game.append(lost)
    arr = np.array(per_game, dtype=np.float64)
    mean = float(arr.mean()) if len(arr) else 0.0
    half = Z95 * float(arr.std(ddof=1)) / math.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return Regret(
        agent=name or getattr(agent, "name", type(agent).__name__),
        games=len(arr),
        mean=mean,
        low=mean - half,
        high=mean + half,
        perfect_games=int((arr == 0).sum()),
        moves=moves,
        mistakes=mistakes,
    )


def time_solves(num_values: int = 10, deals: int = 200, seed: int = 0) -> tuple[float, float]:
    """(mean, max) seconds to value every first lead of ``deals`` deals with a fresh solver."""
    import time

    game = SimpleTricks(num_values)
    times = []
    for g in range(deals):
        s = game.init(np.random.default_rng([seed, g, 0]))
        start = time.perf_counter()
        TrickSolver(num_values).move_values(s.hands[0], s.hands[1])
        times.append(time.perf_counter() - start)
    return float(np.mean(times)), float(np.max(times))


# --- agents of the solver ---------------------------------------------------------------
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
        return self.best_moves(view)[0]

    def best_moves(self, view: TricksView) -> list[int]:
        """Every card of the highest solved value (ties are common: equal cards in effect)."""
        return self.solver(view.num_values).best_moves(*view_position(view))


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



if __name__ == "__main__":  # python -m card_envs.simple_tricks.solver [N] [DEALS]
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    mean, worst = time_solves(n, count)
    print(f"N={n}: {count} deals solved from the first lead, every card valued: "
          f"mean {mean * 1000:.1f} ms, max {worst * 1000:.1f} ms")
