"""Simple tricks rules, scenario by scenario (docs/games/simple_tricks.md)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import GameRecord, duplicate_evaluate
from card_envs.simple_tricks.agents import FirstPlayAgent, HeuristicAgent
from card_envs.simple_tricks.encoding import DefaultEncoder, OriginalEncoder
from card_envs.simple_tricks.rules import SimpleTricks

RNG = np.random.default_rng(0)


def card(value: int, colour: int, n: int = 3) -> int:
    """The source's (value, colour) notation as a card index."""
    return colour * n + value


def legal_cards(game, s):
    return sorted(np.flatnonzero(game.legal_mask(s)).tolist())


def test_leader_may_play_any_card():
    game = SimpleTricks(num_values=3)
    s = game.deal([[card(0, 0), card(2, 0), card(1, 1)], [card(1, 0), card(0, 1), card(2, 1)]])
    assert legal_cards(game, s) == sorted([card(0, 0), card(2, 0), card(1, 1)])


def test_follower_must_follow_the_led_colour():
    game = SimpleTricks(num_values=3)
    s = game.deal([[card(2, 0), card(0, 0)], [card(1, 0), card(0, 1)]])
    game.apply(s, card(2, 0), RNG)
    assert s.player == 1
    assert legal_cards(game, s) == [card(1, 0)]


def test_void_follower_may_play_anything_and_the_leader_wins():
    game = SimpleTricks(num_values=3)
    for follow in (card(0, 1), card(2, 1)):
        s = game.deal([[card(0, 0), card(1, 0)], [card(0, 1), card(2, 1)]])
        game.apply(s, card(0, 0), RNG)
        assert legal_cards(game, s) == [card(0, 1), card(2, 1)]
        game.apply(s, follow, RNG)
        assert s.tricks == [1, 0] and s.player == 0, "off-colour never wins, even a higher value"


def test_higher_card_of_the_led_colour_wins_and_leads_next():
    game = SimpleTricks(num_values=3)
    s = game.deal([[card(1, 1), card(0, 0)], [card(2, 1), card(1, 0)]])
    game.apply(s, card(1, 1), RNG)
    game.apply(s, card(2, 1), RNG)
    assert s.tricks == [0, 1]
    assert s.player == 1 and s.lead == -1, "the trick winner leads the next trick"
    assert s.last_trick == (0, card(1, 1), card(2, 1), 1)


def test_the_source_example_game():
    game = SimpleTricks(num_values=3)
    s = game.deal([[card(0, 0), card(2, 0), card(1, 1)], [card(1, 0), card(0, 1), card(2, 1)]])
    leaders = []
    for lead, follow in [((2, 0), (1, 0)), ((0, 0), (0, 1)), ((1, 1), (2, 1))]:
        leaders.append(s.player)
        game.apply(s, card(*lead), RNG)
        rewards = game.apply(s, card(*follow), RNG)
    assert leaders == [0, 0, 0]
    assert s.tricks == [2, 1] and s.last_trick[3] == 1
    assert s.terminal and rewards.tolist() == [1.0, -1.0]
    assert game.payoffs(s).tolist() == [1.0, -1.0] and game.scores(s).tolist() == [2.0, 1.0]


def test_deal_splits_every_card_in_two_hands_of_n():
    game = SimpleTricks(num_values=10)
    s = game.init(np.random.default_rng(4))
    assert [len(h) for h in s.hands] == [10, 10]
    assert sorted(s.hands[0] + s.hands[1]) == list(range(20))
    assert s.player == 0


def test_a_deal_lasts_exactly_n_tricks():
    game = SimpleTricks(num_values=10)
    rng = np.random.default_rng(1)
    s = game.init(rng)
    played = []
    while not s.terminal:
        a = RandomAgent().act(game.view(s, s.player), rng)
        played.append(a)
        game.apply(s, a, rng)
    assert len(played) == 20 and sorted(played) == list(range(20))
    assert sum(s.tricks) == 10 and s.steps == 20 and not s.truncated


def test_equal_tricks_is_a_draw_worth_zero():
    game = SimpleTricks(num_values=2)
    s = game.deal([[card(1, 0, 2), card(0, 1, 2)], [card(0, 0, 2), card(1, 1, 2)]])
    game.apply(s, card(1, 0, 2), RNG)
    game.apply(s, card(0, 0, 2), RNG)  # player 0 wins, leads again
    game.apply(s, card(0, 1, 2), RNG)
    rewards = game.apply(s, card(1, 1, 2), RNG)  # player 1 wins
    assert s.tricks == [1, 1] and rewards.tolist() == [0.0, 0.0]


def test_first_play_takes_the_first_legal_card_in_hand_order():
    game = SimpleTricks(num_values=6)
    n = 6
    s = game.deal([[card(0, 0, n)], [card(3, 1, n), card(5, 0, n), card(1, 0, n)]])
    game.apply(s, card(0, 0, n), RNG)
    assert FirstPlayAgent().act(game.view(s, 1), RNG) == card(5, 0, n)


def test_duplicate_first_play_against_itself_draws_every_pair():
    result = duplicate_evaluate(SimpleTricks(), FirstPlayAgent(), FirstPlayAgent(), 200, seed=3)
    assert result.tallies[0].draws == 200


def test_duplicate_pair_goes_to_more_tricks_with_the_same_hand(monkeypatch):
    # Game A: A (seat 0, hand 0) takes 6 tricks. Game B: B (seat 0, hand 0) takes 5.
    records = iter(
        [
            GameRecord(np.zeros(2), np.array([6.0, 4.0]), 20, False),
            GameRecord(np.zeros(2), np.array([5.0, 5.0]), 20, False),
        ]
    )
    monkeypatch.setattr("card_envs.core.evaluation.play_game", lambda *a, **k: next(records))
    result = duplicate_evaluate(SimpleTricks(), FirstPlayAgent(), FirstPlayAgent(), 1)
    assert (result.tallies[0].wins, result.tallies[1].losses) == (1, 1)


def test_heuristic_wins_the_trick_cheaply():
    n = 10
    game = SimpleTricks(num_values=n)
    s = game.deal([[card(4, 0, n), card(0, 1, n)], [card(9, 0, n), card(6, 0, n), card(2, 0, n)]])
    game.apply(s, card(4, 0, n), RNG)
    assert HeuristicAgent().act(game.view(s, 1), RNG) == card(6, 0, n)


def test_heuristic_leads_a_card_that_cannot_be_beaten():
    n = 4
    game = SimpleTricks(num_values=n)
    # The opponent holds 0S 2S 0H 1H: 3S, 2H and 3H are sure winners, 1S is not; lead the lowest.
    s = game.deal(
        [
            [card(1, 0, n), card(3, 0, n), card(2, 1, n), card(3, 1, n)],
            [card(0, 0, n), card(2, 0, n), card(0, 1, n), card(1, 1, n)],
        ]
    )
    assert HeuristicAgent().act(game.view(s, 0), RNG) == card(2, 1, n)


def test_heuristic_beats_random_in_duplicate():
    result = duplicate_evaluate(SimpleTricks(), HeuristicAgent(), RandomAgent(), 400, seed=1)
    _, low, _ = result.tallies[0].decided()
    assert low > 0.5


def test_original_encoding_is_the_source_60_bits():
    game = SimpleTricks(num_values=10)
    enc = OriginalEncoder(game)
    assert enc.size == 60
    s = game.deal([list(range(0, 20, 2)), list(range(1, 20, 2))])
    game.apply(s, 4, RNG)  # player 0 leads card 4
    lead_for_follower = enc.encode(game.view(s, 1))
    assert lead_for_follower[40 + 4] == 1 and lead_for_follower[40:].sum() == 1
    assert enc.encode(game.view(s, 0))[40:].sum() == 0, "the leader's own card is not shown to it"
    game.apply(s, 5, RNG)  # follows with 5 and wins
    obs = enc.encode(game.view(s, 0))
    assert obs[4] == obs[5] == 1 and obs[:20].sum() == 2, "completed tricks, both players"
    assert obs[20:40].tolist() == [1.0 if c % 2 == 0 and c != 4 else 0.0 for c in range(20)]


def test_default_encoding_names_the_opponents_remaining_cards():
    game = SimpleTricks(num_values=3)
    enc = DefaultEncoder(game)
    s = game.deal([[0, 1, 2], [3, 4, 5]])
    game.apply(s, 0, RNG)
    parts = enc.layout.split(enc.encode(game.view(s, 1)))
    assert parts["opponent_hand"].tolist() == [0, 1, 1, 0, 0, 0]
    assert parts["lead"].tolist() == [1, 0, 0, 0, 0, 0] and parts["my_turn"][0] == 1


@pytest.mark.parametrize("bad", [1, 27, "10", 3.0])
def test_num_values_range(bad):
    with pytest.raises(ValueError, match="num_values=.* must be an integer in 2..26"):
        SimpleTricks(num_values=bad)
