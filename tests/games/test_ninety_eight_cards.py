"""98 Cards rules, scenario by scenario (docs/games/ninety_eight_cards.md)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.ninety_eight_cards import encoding, rules
from card_envs.ninety_eight_cards.agents import GreedyAgent
from card_envs.ninety_eight_cards.encoding import DefaultEncoder, OriginalEncoder
from card_envs.ninety_eight_cards.rules import END_TURN, NinetyEightCards, fits

RNG = np.random.default_rng(0)


def deck_with(hand, rest=None):
    """A full 98-card deck whose first 8 cards are ``hand`` and then ``rest`` (then the others)."""
    rest = list(rest or [])
    others = [c for c in range(2, 100) if c not in hand and c not in rest]
    return list(hand) + rest + others


def legal(game, s):
    return np.flatnonzero(game.legal_mask(s)).tolist()


def test_fresh_board_every_play_is_legal_but_not_ending_the_turn():
    game = NinetyEightCards()
    s = game.init(np.random.default_rng(3))
    assert s.piles.tolist() == [1, 1, 100, 100] and len(s.hand) == 8
    assert legal(game, s) == list(range(32))
    original = NinetyEightCards(rules="original")
    assert original.legal_mask(original.init(np.random.default_rng(3))).tolist() == [1] * 32


@pytest.mark.parametrize("card,ok", [(40, True), (45, False), (51, True), (60, True), (50, False)])
def test_ascending_pile_takes_higher_cards_or_exactly_ten_lower(card, ok):
    assert fits(0, 50, card) is ok


@pytest.mark.parametrize("card,ok", [(60, True), (55, False), (49, True), (40, True), (50, False)])
def test_descending_pile_takes_lower_cards_or_exactly_ten_higher(card, ok):
    assert fits(2, 50, card) is ok


def test_action_index_is_pile_times_eight_plus_slot():
    game = NinetyEightCards()
    assert game.action_name(19) == "slot 3 on pile 2 (down)"
    assert divmod(19, 8) == (2, 3)
    s = game.deal(deck_with([10, 20, 30, 40, 50, 60, 70, 80]))
    game.apply(s, 19, RNG)
    assert s.piles.tolist() == [1, 1, 40, 100] and 40 not in s.hand


def test_original_rules_refill_at_once_and_keep_the_hand_sorted():
    game = NinetyEightCards(rules="original")
    s = game.deal(deck_with([10, 20, 30, 40, 50, 60, 70, 80], rest=[35]))
    pile_before = game.draw_pile_size(s)
    game.apply(s, 2, RNG)  # slot 2 (30) on pile 0
    assert s.hand == [10, 20, 35, 40, 50, 60, 70, 80]
    assert game.draw_pile_size(s) == pile_before - 1
    assert s.slots.tolist() == s.hand


def test_empty_slots_are_never_legal():
    game = NinetyEightCards(rules="original")
    s = game.deal([50, 60], piles=(1, 1, 100, 100))
    mask = game.legal_mask(s).reshape(4, 8)
    assert mask[:, :2].all() and not mask[:, 2:].any()


def test_rewards_default_one_per_card_original_n_minus_one():
    for reward, expected in (("default", [1, 1, 1]), ("original", [0, 1, 2])):
        game = NinetyEightCards(rules="original", reward=reward)
        s = game.deal(deck_with([10, 20, 30, 40, 50, 60, 70, 80]))
        # three plays, each the first legal one (slot 0 stops fitting pile 0 once a low card
        # is drawn into the hand)
        got = [game.apply(s, int(np.flatnonzero(game.view(s, 0).legal)[0]), RNG)[0]
               for _ in range(3)]
        assert got == expected


def test_original_rules_end_when_no_card_fits_and_score_counts_plays():
    game = NinetyEightCards(rules="original", reward="original")
    s = game.deal([30, 40], piles=(90, 95, 10, 15))  # nothing fits anywhere
    assert s.terminal and game.scores(s).tolist() == [0.0]
    s = game.deal(list(range(2, 12)))
    total = 0.0
    while not s.terminal:
        total += game.apply(s, 0, RNG)[0]
    assert s.played == 10 and total == 45.0  # 10 plays: 0 + 1 + ... + 9


def test_playing_all_98_cards_wins_and_pays_4753():
    game = NinetyEightCards(rules="original", reward="original")
    s = game.deal(list(range(2, 100)))
    total = 0.0
    while not s.terminal:
        total += game.apply(s, 0, RNG)[0]
    assert s.played == 98 and total == 4753.0 and game.payoffs(s).tolist() == [1.0]


def test_original_encoding_counter_starts_at_99_and_sorts_everything():
    game = NinetyEightCards(rules="original")
    s = game.deal(deck_with([5, 15, 25, 35, 45, 55, 65, 75]))
    obs = OriginalEncoder(game).encode(game.view(s))
    assert obs.tolist() == [99, 1, 1, 5, 15, 25, 35, 45, 55, 65, 75, 100, 100]
    game.apply(s, 0, RNG)
    assert OriginalEncoder(game).encode(game.view(s))[0] == 98


def test_standard_turn_needs_two_cards_before_it_may_end():
    game = NinetyEightCards()
    s = game.deal(deck_with([10, 20, 30, 40, 50, 60, 70, 80]))
    assert END_TURN not in legal(game, s)
    game.apply(s, 0, RNG)
    assert END_TURN not in legal(game, s) and s.turn_played == 1
    game.apply(s, 0, RNG)
    assert END_TURN in legal(game, s)
    assert len(s.hand) == 6, "no refill before the turn ends"
    game.apply(s, END_TURN, RNG)
    assert len(s.hand) == 8 and s.hand == sorted(s.hand) and s.turn_played == 0


def test_standard_one_card_is_enough_once_the_draw_pile_is_empty():
    game = NinetyEightCards()
    s = game.deal([50, 60, 70])
    assert game.min_play(s) == 1
    game.apply(s, 0, RNG)
    assert END_TURN in legal(game, s)


def test_standard_game_ends_when_the_minimum_cannot_be_met():
    game = NinetyEightCards()
    # Only 95 fits (on either ascending pile); a second card can't follow it.
    s = game.deal(deck_with([30, 40, 50, 60, 70, 84, 86, 95]), piles=(90, 91, 10, 11))
    assert not s.terminal and legal(game, s) == [7, 15]
    game.apply(s, 7, RNG)
    assert s.terminal and s.played == 1


def test_standard_hand_emptied_mid_turn_draws_at_end_of_turn():
    game = NinetyEightCards()
    s = game.deal(deck_with(list(range(2, 10))))
    for _ in range(8):
        game.apply(s, 0, RNG)
    assert s.hand == [] and not s.terminal and legal(game, s) == [END_TURN]
    game.apply(s, END_TURN, RNG)
    assert len(s.hand) == 8


def test_tens_trick_moves_a_pile_back():
    game = NinetyEightCards(rules="original")
    s = game.deal(deck_with([12, 20, 30, 40, 50, 60, 70, 88]), piles=(22, 1, 78, 100))
    game.apply(s, 0, RNG)  # 12 on ascending 22
    assert s.piles[0] == 12
    game.apply(s, 2 * 8 + 7, RNG)  # 88 on descending 78
    assert s.piles[2] == 88


def test_default_encoding_shows_no_draw_pile_order_and_greedy_prefers_the_tens_trick():
    game = NinetyEightCards()
    s = game.deal(deck_with([12, 20, 30, 40, 50, 60, 70, 88]), piles=(22, 1, 78, 100))
    parts = DefaultEncoder(game).layout.split(DefaultEncoder(game).encode(game.view(s)))
    assert parts["in_draw_pile"].sum() == 90
    assert parts["jumps"][0] == pytest.approx(-np.log(11) / np.log(101))
    assert game.jumps(s)[0] == -10 and game.jumps(s)[2 * 8 + 7] == -10
    assert GreedyAgent().act(game.view(s), RNG) in (0, 2 * 8 + 7)


@pytest.mark.parametrize("arg,value", [("rules", "seed"), ("reward", "squared")])
def test_bad_arguments(arg, value):
    with pytest.raises(ValueError, match=f"{arg}='{value}' is not valid; choose one of"):
        NinetyEightCards(**{arg: value})


def test_byte_tables_agree_with_the_numpy_tables():
    # every pile, top and slot value (a card or 0 = empty): the translate tables give FITS
    # and, through FEATURES, the bit-identical JUMP_FEATURES; tops and slots give value / 100
    cards = np.array([0, *range(2, 100)])
    for pile in range(4):
        for top in range(101):
            assert list(rules.FIT_TABLES[pile][top][:101]) == rules.FITS[pile, top].tolist()
            low = np.frombuffer(encoding.JUMP_LOWS[pile][top], np.uint8)[cards].astype(int)
            jumps = encoding.FEATURES[256 * encoding.JUMP_SEGMENT + low]
            assert jumps.tobytes() == encoding.JUMP_FEATURES[pile, top, cards].tobytes()
    assert encoding.FEATURES[:101].tobytes() == encoding.PER_100.tobytes()
    in_draw = encoding.FEATURES[256 * encoding.IN_DRAW_SEGMENT + np.arange(2)]
    assert in_draw.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("config", [{}, {"rules": "original"}])
def test_kept_bytes_match_a_recomputation_over_random_play(config):
    """slot bytes, the legal bytes and the encoding's codes against the plain numpy way."""
    game = NinetyEightCards(**config)
    encoder = DefaultEncoder(game)
    rng = np.random.default_rng(5)
    for _ in range(30):
        s = game.init(rng)
        while not s.terminal:
            game.check_invariants(s)  # slot bytes, legal bytes and in_draw
            jumps = encoding.JUMP_FEATURES[np.arange(4)[:, None], s.piles[:, None], s.slots]
            standard = game.rules == "standard"
            expected = np.concatenate(
                [
                    s.piles / 100,
                    s.slots / 100,
                    jumps.reshape(-1),
                    [game.draw_pile_size(s) / 90, s.played / 98, s.turn_played / 8],
                    [game.min_play(s) / 2.0 if standard else 0.0],
                    [card in s.deck[s.deck_pos :] for card in range(2, 100)],
                ]
            ).astype(np.float32)
            assert encoder.encode_state(s).tobytes() == expected.tobytes()
            assert encoder.encode(game.view(s)).tobytes() == expected.tobytes()
            legal = np.flatnonzero(game.legal_mask(s))
            game.apply(s, int(legal[rng.integers(len(legal))]), rng)
