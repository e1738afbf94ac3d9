"""The simple-tricks solver: brute-force agreement on every small deal, hand-built positions,
and the solver and PIMC agents (perfect play, no hidden card read)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import play_game
from card_envs.registry import load_spec
from card_envs.simple_tricks.rules import SimpleTricks
from card_envs.simple_tricks.solver import TrickSolver, regret
from tests.conftest import play_states


def brute_force(game: SimpleTricks, s) -> int:
    """Tricks the player to act takes from ``s`` on: plain minimax through the rules object."""
    rng = np.random.default_rng(0)
    memo: dict = {}

    def solve(t) -> int:
        key = (frozenset(t.hands[0]), frozenset(t.hands[1]), t.player, t.lead)
        if key in memo:
            return memo[key]
        player = t.player
        best = -1
        for card in game.legal_actions(t):
            u = t.copy()
            before = u.tricks[player]
            game.apply(u, card, rng)
            mine = u.tricks[player] - before
            if not u.terminal:
                nxt, rest = solve(u), len(u.hands[u.player])
                mine += nxt if u.player == player else rest - nxt
            best = max(best, mine)
        memo[key] = best
        return best

    return solve(s)


def every_deal(n: int):
    """Every split of the 2n cards into two hands of n."""
    cards = range(2 * n)
    for hand0 in itertools.combinations(cards, n):
        yield [list(hand0), [c for c in cards if c not in hand0]]


def positions(game: SimpleTricks, s):
    """Every position reachable from ``s`` (copies), the start included."""
    out = [s]
    if not s.terminal:
        for card in game.legal_actions(s):
            u = s.copy()
            game.apply(u, card, np.random.default_rng(0))
            out += positions(game, u)
    return out


def solver_value(solver: TrickSolver, s) -> int:
    p = s.player
    return solver.value(s.hands[p], s.hands[1 - p], s.lead)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_solver_agrees_with_brute_force_on_every_deal(n):
    game = SimpleTricks(num_values=n)
    solver = TrickSolver(n)
    deals = 0
    for hands in every_deal(n):
        for leader in (0, 1):
            s = game.deal(hands, player=leader)
            assert solver_value(solver, s) == brute_force(game, s), (hands, leader)
            deals += 1
    assert deals == 2 * len(list(itertools.combinations(range(2 * n), n)))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_every_move_value_agrees_with_brute_force_in_every_position(n):
    """Every reachable position of a sample of deals, mid-trick ones included, every card."""
    game = SimpleTricks(num_values=n)
    solver = TrickSolver(n)
    rng = np.random.default_rng(n)
    checked = 0
    for _ in range(6):
        for s in positions(game, game.init(rng)):
            if s.terminal:
                continue
            p = s.player
            values = solver.move_values(s.hands[p], s.hands[1 - p], s.lead)
            assert sorted(values) == game.legal_actions(s)
            for card, v in values.items():
                u = s.copy()
                game.apply(u, card, rng)
                won = u.tricks[p] - s.tricks[p]
                if not u.terminal:
                    rest = len(u.hands[u.player])
                    nxt = brute_force(game, u)
                    won += nxt if u.player == p else rest - nxt
                assert v == won, (s.hands, s.lead, card)
                checked += 1
    assert checked > 50


def test_hand_built_leads():
    """N=3. Leading the 2 of colour 0 wins it (the 1 must follow) and then the 0 (the
    opponent is void); leading the 0 loses every trick; the low colour-1 card wins one."""
    solver = TrickSolver(3)
    mine, theirs = [0, 2, 3], [1, 4, 5]
    assert solver.move_values(mine, theirs) == {0: 0, 2: 2, 3: 1}
    assert solver.value(mine, theirs) == 2
    assert solver.best_moves(mine, theirs) == [2]
    assert solver.value(theirs, mine) == 2, "led by the other hand: 4 wins, then 5 wins"


def test_hand_built_top_cards_take_every_trick():
    solver = TrickSolver(3)
    assert solver.value([1, 2, 5], [0, 3, 4]) == 3
    assert solver.best_moves([1, 2, 5], [0, 3, 4]) == [1, 2, 5]


def test_hand_built_follows():
    """N=4 (colour 1 is 4..7), the opponent led the 0 of colour 0 and holds the 1 of colour 1.
    Void, I discard: keeping the 3 of colour 1 wins the last trick, keeping the 0 does not."""
    solver = TrickSolver(4)
    assert solver.move_values([4, 7], [5], lead=0) == {4: 1, 7: 0}
    # Following is forced: the 3 beats the led 2 but then my 0 of colour 1 loses to the 1.
    assert solver.move_values([3, 4], [5], lead=2) == {3: 1}


def test_bad_positions_are_refused():
    solver = TrickSolver(3)
    with pytest.raises(ValueError, match="share a card"):
        solver.value([0, 1], [1, 2])
    with pytest.raises(ValueError, match="hand sizes"):
        solver.value([0, 1], [2])
    with pytest.raises(ValueError, match="0..5"):
        solver.value([0, 9], [2, 3])
    with pytest.raises(ValueError, match="num_values"):
        TrickSolver(1)


def test_larger_deals_agree_with_brute_force():
    """A few random deals of 5 and 6 cards a hand, solved from the first lead."""
    for n in (5, 6):
        game = SimpleTricks(num_values=n)
        solver = TrickSolver(n)
        rng = np.random.default_rng(10 + n)
        for _ in range(4):
            s = game.init(rng)
            assert solver_value(solver, s) == brute_force(game, s)


# --- the agents ---------------------------------------------------------------------------

def test_solver_agents_play_a_best_move_everywhere():
    spec = load_spec("simple_tricks")
    game = spec.make_game()
    solver = TrickSolver(game.num_values)
    agents = [make_agent(spec, "solver", game), make_agent(spec, "ismcts:3", game)]
    assert agents[1].budget == 3
    rng = np.random.default_rng(1)
    for seed in range(5):
        for s in play_states(game, seed):
            if s.terminal:
                continue
            p = s.player
            best = solver.best_moves(s.hands[p], s.hands[1 - p], s.lead)
            for agent in agents:
                assert agent.act(game.view(s, p), rng) in best


@pytest.mark.parametrize("name", ["solver", "ismcts", "ismcts:2"])
def test_search_agents_never_read_the_hidden_order(name):
    """Twin worlds (the opponent's hand in another order) give the same card, same rng."""
    spec = load_spec("simple_tricks")
    game = spec.make_game(num_values=6)
    agent = make_agent(spec, name, game)
    rng = np.random.default_rng(0)
    changed = 0
    for seed in range(4):
        for s in play_states(game, seed, every=2):
            if s.terminal:
                continue
            p = s.player
            twin = game.randomize_hidden(s, p, rng)
            changed += twin.hands[1 - p] != s.hands[1 - p]
            first = agent.act(game.view(s, p), np.random.default_rng(seed))
            second = agent.act(game.view(twin, p), np.random.default_rng(seed))
            assert first == second
    assert changed > 0


def test_regret_is_the_tricks_lost_against_perfect_play():
    """The summed move regrets equal the seat's game value minus the tricks it took."""
    spec = load_spec("simple_tricks")
    game = spec.make_game(num_values=6)
    solver = TrickSolver(6)
    heuristic = make_agent(spec, "heuristic", game)
    perfect = make_agent(spec, "solver", game)
    deals, lost = 15, 0
    for g in range(deals):
        for seat in (0, 1):
            start = game.init(np.random.default_rng([3, g, 0]))
            value = solver.value(start.hands[seat], start.hands[1 - seat])
            if seat == 1:  # seat 1 follows the first trick: its value is what seat 0 leaves
                value = len(start.hands[0]) - solver.value(start.hands[0], start.hands[1])
            lineup = [heuristic, perfect] if seat == 0 else [perfect, heuristic]
            record = play_game(game, lineup, np.random.default_rng(0), np.random.default_rng(0),
                               state=start)
            lost += value - int(record.scores[seat])
    result = regret(game, heuristic, deals, seed=3)
    assert result.games == 2 * deals
    assert result.mean == pytest.approx(lost / (2 * deals))
    assert result.mean > 0, "the heuristic gives tricks away on some of these deals"
    assert regret(game, perfect, deals, seed=3).mean == 0


def test_agents_are_registered_with_their_budget():
    spec = load_spec("simple_tricks")
    assert {"solver", "ismcts"} <= set(spec.agents)
    assert getattr(spec.agents["ismcts"], "takes_budget", False)
    with pytest.raises(ValueError, match="budget"):
        make_agent(spec, "ismcts:0", spec.make_game())
