"""98 Cards expert and search agents: costs, the turn planner, the endgame, no leaks."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import play_game
from card_envs.core.make import make_batched
from card_envs.ninety_eight_cards.expert import (
    HOME_COST,
    HOME_WEIGHTS,
    ExpertAgent,
    TurnPlanner,
    home_masks,
    longest_run,
    play_cost,
)
from card_envs.ninety_eight_cards.rules import END_TURN, NinetyEightCards
from card_envs.registry import load_spec
from tests.conftest import play_states

ALL = sum(1 << c for c in range(2, 100))


def cards(*values: int) -> int:
    return sum(1 << v for v in values)


def test_a_jump_costs_only_the_cards_still_to_come():
    alive = cards(11, 12, 15, 16)  # 13 and 14 were played
    assert play_cost(0, 10, 15, alive & ~cards(15)) == 2  # jumps 11, 12
    assert play_cost(2, 17, 13, alive) == 2  # descending: jumps 15, 16
    assert play_cost(0, 10, 11, alive) == 0


def test_the_tens_trick_earns_back_the_cards_it_reopens():
    alive = cards(21, 25, 29, 40)
    assert play_cost(0, 30, 20, alive) == -3  # ascending pile back from 30 to 20
    assert play_cost(3, 20, 30, alive) == -3  # descending pile back up from 20 to 30


def test_a_cards_cost_by_its_homes_is_what_taking_them_one_by_one_costs():
    # the expert's numbers, written once: the planner weighs each home taken by HOME_WEIGHTS
    # (its last home first), and HOME_COST is a card's cost with h homes left
    assert TurnPlanner().loss == (0.0, *HOME_WEIGHTS)
    assert HOME_COST == (5.5, 2.5, 1.0, 0.3, 0.0)
    for h in range(4):
        assert HOME_COST[h] - HOME_COST[h + 1] == pytest.approx(HOME_WEIGHTS[h])


def test_home_masks_count_the_piles_that_take_each_card():
    rng = np.random.default_rng(0)
    for _ in range(100):
        tops = (int(rng.integers(1, 100)), int(rng.integers(1, 100)),
                int(rng.integers(2, 101)), int(rng.integers(2, 101)))
        masks = home_masks(tops)
        for x in range(2, 100):
            homes = (x > tops[0]) + (x > tops[1]) + (x < tops[2]) + (x < tops[3])
            assert [m >> x & 1 for m in masks] == [int(h == homes) for h in range(5)]


def test_the_planner_sets_up_a_tens_trick_within_the_turn():
    """Ascending piles at 55, descending ones at 20: playing 60 and then 50 (60 - 10) moves
    a pile back to 50 for two cards; no other pair is as cheap."""
    hand = [50, 60, 70, 80, 90, 95, 97, 99]
    _, plays = TurnPlanner().plan(hand, [55, 55, 20, 20], ALL, need=2)
    assert plays[:2] == [(60, 0), (50, 0)]


def test_the_planner_meets_the_minimum_or_says_it_cannot():
    # only one card fits anywhere: no plan of two plays exists
    cost, plays = TurnPlanner().plan([40, 60], [75, 98, 41, 3], ALL, need=2)
    assert len(plays) < 2 and cost >= 10_000


def test_the_endgame_finds_the_order_that_plays_everything():
    """Only pile 0 (at 35) takes anything: 40 first, then 30 as its tens trick."""
    assert longest_run([30, 40], [35, 98, 2, 2]) == [(40, 0), (30, 0)]
    assert len(longest_run([30, 40, 36], [35, 98, 2, 2])) == 3  # 36, 40, then 30
    assert longest_run([55], [60, 60, 40, 40]) == []


def test_extra_plays_are_made_only_when_cheap():
    """After the minimum, a free play (the next card up) is made; a costly one is not."""
    planner = TurnPlanner()
    _, plays = planner.plan([10, 11, 12, 70], [9, 9, 100, 100], ALL, need=2)
    assert [card for card, _ in plays] == [10, 11, 12]


@pytest.mark.parametrize("rules", ["standard", "original"])
@pytest.mark.parametrize("name", ["expert", "ismcts:2"])
def test_agents_play_legal_games_and_beat_greedy(rules, name):
    spec = load_spec("ninety_eight_cards")
    game = spec.make_game(rules=rules)
    agent, greedy = make_agent(spec, name, game), make_agent(spec, "greedy", game)
    mine = theirs = 0.0
    for g in range(12):
        rec = play_game(game, [agent], np.random.default_rng([g, 0]), np.random.default_rng(g))
        mine += rec.scores[0]
        rec = play_game(game, [greedy], np.random.default_rng([g, 0]), np.random.default_rng(g))
        theirs += rec.scores[0]
    assert mine > theirs


@pytest.mark.parametrize("rules", ["standard", "original"])
@pytest.mark.parametrize("name", ["expert", "ismcts:3"])
def test_search_agents_never_read_the_draw_order(rules, name):
    """Twin worlds (the draw pile in another order) give the same move, same rng."""
    spec = load_spec("ninety_eight_cards")
    game = spec.make_game(rules=rules)
    rng = np.random.default_rng(5)
    changed = 0
    for seed in range(3):
        for s in play_states(game, seed, every=4):
            if s.done:
                continue
            twin = game.randomize_hidden(s, 0, rng)
            changed += twin.deck != s.deck
            moves = []
            for world in (s, twin):
                agent = make_agent(spec, name, game)
                moves.append(agent.act(game.view(world), np.random.default_rng(seed)))
            assert moves[0] == moves[1]
    assert changed > 0


def test_the_kept_plan_is_what_a_fresh_search_would_play():
    """The expert keeps the rest of its turn's plan; replanning from scratch agrees."""
    game = NinetyEightCards()
    kept = ExpertAgent(game)
    rng = np.random.default_rng(0)
    s = game.init(np.random.default_rng(1))
    while not s.done:
        action = kept.act(game.view(s), rng)
        assert action == ExpertAgent(game).act(game.view(s), rng)
        game.apply(s, action, rng)
    assert s.played > 60


def test_search_agent_budget_and_names():
    spec = load_spec("ninety_eight_cards")
    game = spec.make_game()
    assert make_agent(spec, "ismcts:5", game).budget == 5
    assert {"expert", "ismcts"} <= set(spec.agents)
    with pytest.raises(ValueError, match="budget"):
        make_agent(spec, "ismcts:0", game)
    state = game.init(np.random.default_rng(0))
    assert make_agent(spec, "expert", game).act(game.view(state), np.random.default_rng(0)) \
        != END_TURN


@pytest.mark.parametrize("deck,piles,expected", [
    # the tens trick set up within the turn: 60 and then 50 on an ascending pile at 55
    ([50, 60, 70, 80, 90, 95, 97, 99, 3, 4, 5], (55, 55, 20, 20), (60, 0)),
    # the endgame's exact search: 40 first, then 30 as its tens trick
    ([30, 40], (35, 98, 2, 2), (40, 0)),
    # only one card fits and the minimum is two: no plan, so the first legal move
    ([40, 42, 43, 44, 45, 46, 47, 48, 60, 61], (75, 98, 41, 3), None),
])
def test_the_batched_expert_plays_the_scalar_experts_move(deck, piles, expected):
    pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")
    spec = load_spec("ninety_eight_cards")
    game = spec.make_game()
    engine = make_batched(spec)
    s = game.deal(deck, piles=piles, played=98 - len(deck))
    state = engine.init(1, seed=0)
    engine.load(state, 0, s)
    scalar = ExpertAgent(game).act(game.view(s), np.random.default_rng(0))
    batched = int(engine.act(state, "expert")[0])
    assert batched == scalar
    if expected is None:
        assert batched == int(np.flatnonzero(game.legal_mask(s))[0])
    else:
        card, pile = expected
        assert batched == pile * 8 + s.hand.index(card)
