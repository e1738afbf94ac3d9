"""Evaluation helpers: Wilson intervals, seat rotation, reproducibility."""

from __future__ import annotations

import pytest

from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import Tally, evaluate, wilson
from card_envs.literature.agents import CautiousAgent
from card_envs.literature.rules import Literature
from card_envs.ninety_eight_cards.agents import GreedyAgent
from card_envs.ninety_eight_cards.rules import NinetyEightCards
from card_envs.palace.agents import LowestFirstAgent
from card_envs.palace.rules import Palace
from card_envs.simple_tricks.agents import HeuristicAgent
from card_envs.simple_tricks.rules import SimpleTricks


@pytest.mark.parametrize(
    "k,n,low,high",
    [(0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (80, 100, 0.7112, 0.8666), (0, 0, 0.0, 1.0)],
)
def test_wilson_interval(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_rotation_puts_every_contestant_in_every_seat():
    result = evaluate(SimpleTricks(), [HeuristicAgent(), RandomAgent()], 200, seed=2)
    heuristic, rnd = result.tallies
    assert heuristic.games == rnd.games == 200
    assert heuristic.wins == rnd.losses and heuristic.losses == rnd.wins
    assert heuristic.rate("wins")[0] > 0.5
    # seat 0 leads first; rotation means each contestant led in half the games
    fixed = evaluate(SimpleTricks(), [HeuristicAgent(), RandomAgent()], 200, seed=2, rotate=False)
    assert fixed.tallies[0].games == 200


def test_same_seed_same_result():
    a = evaluate(SimpleTricks(), [RandomAgent(), RandomAgent()], 100, seed=9).summary()
    b = evaluate(SimpleTricks(), [RandomAgent(), RandomAgent()], 100, seed=9).summary()
    c = evaluate(SimpleTricks(), [RandomAgent(), RandomAgent()], 100, seed=10).summary()
    assert a == b != c


def test_greedy_plays_far_more_cards_than_random():
    game = NinetyEightCards()
    greedy = evaluate(game, [GreedyAgent()], 100, seed=0).tallies[0].mean_score
    rnd = evaluate(game, [RandomAgent()], 100, seed=0).tallies[0].mean_score
    assert greedy > rnd + 40


def test_wrong_number_of_agents():
    with pytest.raises(ValueError, match="has 2 seats; give 2 agents, got 1"):
        evaluate(SimpleTricks(), [RandomAgent()], 1)


def test_score_interval_stays_within_the_scores_seen():
    tally = Tally("x")
    for score in [0.0] * 97 + [1.0] * 3:
        tally.add(-1.0, score)
    mean = tally.mean_score
    low, high = tally.score_interval()
    assert low == 0.0 < mean < high < 1.0  # the plain normal interval reaches below 0
    one = Tally("y")
    one.add(1.0, 5.0)
    assert one.score_interval() == (5.0, 5.0)


def test_teams_are_reported_as_teams_whatever_the_rotation():
    game = Literature(num_players=6)
    agents = [CautiousAgent(game), RandomAgent(game)]
    for rotate in (True, False):
        result = evaluate(game, agents * 3, 6, seed=1, rotate=rotate)
        assert result.teams == [[0, 2, 4], [1, 3, 5]]
        lines = result.summary().splitlines()
        assert sum(line.startswith("team ") for line in lines) == 2
        team_a = result.team_tallies()[0]
        assert team_a.name.startswith("team A (") and team_a.wins == result.tallies[0].wins
    # a two-seat rotation of a six-seat game splits no team either; players alone: no teams
    assert evaluate(SimpleTricks(), [RandomAgent(), RandomAgent()], 2).teams is None


def test_palace_counts_one_loser_a_game_and_every_place():
    game = Palace(num_players=3)
    result = evaluate(game, [LowestFirstAgent(game) for _ in range(3)], 12, seed=3)
    assert result.truncated == 0  # every game played out: one loser, each place once
    assert sum(t.losses for t in result.tallies) == 12
    assert all(len(t.place_counts) == 3 for t in result.tallies)
    for k in range(3):
        assert sum(t.place_counts[k] for t in result.tallies) == 12
    assert all(t.place_counts[2] == t.losses for t in result.tallies)
    assert "lost" in result.tallies[0].summary() and " win " not in result.summary()
    assert "the last player left holding cards" in result.summary()
    # random players reach the step cap now and then: those holding the most cards share
    # the loss, so a capped game may have two losers, but every game is ranked
    agents = [LowestFirstAgent(game), RandomAgent(game), RandomAgent(game)]
    result = evaluate(game, agents, 40, seed=0)
    losses = sum(t.losses for t in result.tallies)
    assert 40 <= losses <= 40 + result.truncated
    assert all(t.placed == 40 for t in result.tallies)
