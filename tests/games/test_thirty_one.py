"""Thirty-One rules scenario by scenario (docs/games/thirty_one.md), options, leaks, agents."""

from __future__ import annotations

import itertools
import pickle

import gymnasium
import numpy as np
import pytest

from card_envs.core.cards import parse_card
from card_envs.thirty_one.agents import ExpectedValueAgent, GreedyAgent
from card_envs.thirty_one.encoding import (
    _C1,
    _C2,
    CARD_PACK,
    SUIT_SUMS,
    SUM_BASE,
    TRIPLE_0,
    DefaultEncoder,
    OriginalEncoder,
    _suit_sums,
    expected_values,
    triple_tables,
)
from card_envs.thirty_one.env import render
from card_envs.thirty_one.rules import (
    DRAW,
    KNOCK,
    PLACE,
    SCORE_CODES,
    SCORE_TABLES,
    TAKE,
    THROW,
    VALUES,
    ThirtyOne,
    ThirtyOneState,
    hand_score,
    suit_values,
)

RNG = np.random.default_rng(0)


def cards(text: str) -> list[int]:
    return [parse_card(t) for t in text.split()]


def play(game: ThirtyOne, s, *actions: int) -> list:
    """Play legal actions in order; the rewards of each."""
    out = []
    for a in actions:
        game.check_action(s, a)
        out.append(game.apply(s, a, RNG))
        game.check_invariants(s)
    return out


def legal(game, s) -> list[int]:
    return game.legal_actions(s)


# hands with known scores: 18 (K♠ 8♠), 22 (Q♦ J♦ 2♦), 25 (A♣ 10♣ 4♣), 31 (A♥ K♥ Q♥), 20 (Q♠ J♠)
H18, H22, H25, H31, H20 = (cards("KS 8S 2H"), cards("QD JD 2D"), cards("AC 10C 4C"),
                           cards("AH KH QH"), cards("QS JS 3H"))


def knock_round(game, hands, knocker, lives=None):
    """Deal ``hands``, let seats before ``knocker`` discard what they draw, knock, and let the
    others discard what they draw, up to the showdown; the state after it."""
    s = game.deal(hands, lives=lives)
    for _ in range(knocker):
        play(game, s, DRAW, THROW)
    assert s.player == knocker
    play(game, s, KNOCK)
    while s.rounds == 0:
        play(game, s, DRAW, THROW)
    return s


# --- scenario 1: the two-phase turn ---------------------------------------------------------
def test_after_taking_the_discard_it_cannot_be_discarded_again():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25])
    assert legal(game, s) == [DRAW, TAKE, KNOCK]
    top = s.discard[-1]
    play(game, s, TAKE)
    assert legal(game, s) == [PLACE, PLACE + 1, PLACE + 2]
    assert s.player == 0 and s.drawn == top and not s.in_discard[top]


def test_after_drawing_any_slot_or_the_discard():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25])
    play(game, s, DRAW)
    assert legal(game, s) == [PLACE, PLACE + 1, PLACE + 2, THROW]


# --- scenario 2: under the gun --------------------------------------------------------------
def test_knocking_under_the_gun_ends_the_round_at_once():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25])
    play(game, s, KNOCK)
    sd = s.showdown
    assert sd.round == 1 and sd.knocker == 0 and sd.scores == (18.0, 22.0, 25.0)
    assert sd.lost == (2, 0, 0) and s.lives == (1, 3, 3)
    assert s.rounds == 1 and s.steps == 1  # nobody else acted
    assert s.player == 1 and s.first_turn and s.knocker == -1  # round 2 is dealt


# --- scenario 3: one more turn each after a knock ------------------------------------------
def test_after_a_knock_every_other_player_has_one_turn_without_knocking():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25])
    play(game, s, DRAW, THROW, KNOCK)
    assert s.knocker == 1 and s.player == 2
    assert legal(game, s) == [DRAW, TAKE]
    play(game, s, DRAW, THROW)
    assert s.player == 0 and legal(game, s) == [DRAW, TAKE]
    play(game, s, DRAW, THROW)
    assert s.rounds == 1 and s.showdown.knocker == 1  # the turn came back to the knocker


# --- scenarios 4-6: the showdown ------------------------------------------------------------
def test_a_losing_knocker_loses_two_lives():
    s = knock_round(ThirtyOne(), [H18, H22, H25], knocker=0)
    assert s.showdown.lost == (2, 0, 0)


def test_thirty_one_beats_everyone_and_a_beaten_knocker_loses_two():
    s = knock_round(ThirtyOne(), [H25, H31, H20], knocker=0)
    assert s.showdown.scores == (25.0, 31.0, 20.0)
    assert s.showdown.lost == (2, 0, 1)


def test_everyone_tied_at_the_lowest_loses():
    s = knock_round(ThirtyOne(), [H20, cards("QC JC 2S"), cards("AD KD 5D")], knocker=2)
    assert s.showdown.scores == (20.0, 20.0, 26.0)
    assert s.showdown.lost == (1, 1, 0)


# --- scenario 7: hand scores ------------------------------------------------------------------
@pytest.mark.parametrize("hand,score,with_bonus", [
    ("AS KS 2H", 21, 21), ("7C 7D 7H", 7, 30.5), ("AH KH QH", 31, 31), ("2S 3S 4S", 9, 9),
    ("AS AH AD", 11, 30.5), ("10S JS QS", 30, 30),
])
def test_hand_score_is_the_best_suit_sum(hand, score, with_bonus):
    assert hand_score(cards(hand)) == score
    assert hand_score(cards(hand), three_of_a_kind=True) == with_bonus
    assert ThirtyOne(three_of_a_kind=True).score(cards(hand)) == with_bonus


# --- scenario 8: discarding the drawn card --------------------------------------------------
def test_discarding_the_drawn_card_keeps_the_hand():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25], deck=cards("9H"))
    deck = len(s.deck)
    play(game, s, DRAW, THROW)
    assert s.hands[0] == H18 and s.discard[-1] == parse_card("9H") and len(s.deck) == deck - 1
    assert s.player == 1


def test_placing_a_card_discards_the_replaced_one():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25], deck=cards("9S"))
    play(game, s, DRAW, PLACE + 2)
    assert s.hands[0] == cards("KS 8S 9S") and s.discard[-1] == parse_card("2H")
    assert game.score(s.hands[0]) == 27


# --- scenario 9: reshuffle -----------------------------------------------------------------
def test_an_empty_deck_is_refilled_from_the_discard_pile_but_its_top():
    game = ThirtyOne(num_players=2)
    hands = [H18, H22]
    used = set(H18 + H22)
    last = parse_card("9S")
    pile = [c for c in range(52) if c not in used and c != last]
    s = game.deal(hands, discard=pile, deck=[last])
    old_pile = len(s.discard)
    play(game, s, DRAW, PLACE)
    assert s.discard == [parse_card("KS")]  # the card just discarded stays on top
    assert len(s.deck) == old_pile and sorted(s.deck) == sorted(pile)
    assert s.epoch == 1 and s.player == 1


# --- scenario 10: everyone at zero is revived -----------------------------------------------
def test_all_players_at_zero_return_to_one_life():
    game = ThirtyOne(num_players=2, max_round_turns=2)  # no knock: a showdown after 2 turns
    s = game.deal([H20, cards("QC JC 2S")], lives=[1, 1])
    play(game, s, DRAW, THROW, DRAW, THROW)
    sd = s.showdown
    assert sd.lost == (1, 1) and sd.revived and sd.knocker == -1
    assert s.lives == (1, 1) and not s.terminal and s.seating == (0, 1)


# --- scenario 11: elimination and the winner ------------------------------------------------
def test_a_player_at_zero_is_out_and_the_last_one_in_wins():
    game = ThirtyOne(num_players=3)
    s = knock_round(game, [H18, H22, H25], knocker=0, lives=[2, 3, 3])
    assert s.lives == (0, 3, 3) and s.seating == (1, 2) and s.hands[0] == []
    assert s.opponents[1] == (2,) and s.opponents[0] == (1, 2)
    # seat 0 never acts again
    seen = set()
    while not s.done and s.rounds < 4:
        seen.add(s.player)
        play(game, s, int(game.legal_actions(s)[0]))
    assert 0 not in seen
    game2 = ThirtyOne(num_players=2)
    s = knock_round(game2, [H18, H22], knocker=0, lives=[2, 3])
    assert s.terminal and s.winner == 1
    assert game2.payoffs(s).tolist() == [-1.0, 1.0]
    info = game2.result(s, 1)
    assert info["winner"] == 1 and info["payoff"] == 1.0 and info["lives"] == 3


def test_payoffs_split_the_loss_among_the_others():
    game = ThirtyOne(num_players=4, lives=1)
    s = game.deal([H18, H22, H25, H31])
    play(game, s, KNOCK)  # 31 beats everyone: three players out at once
    assert s.terminal and s.winner == 3
    assert game.payoffs(s).tolist() == pytest.approx([-1 / 3, -1 / 3, -1 / 3, 1.0])


# --- scenario 12: the opening seat rotates --------------------------------------------------
def test_the_next_player_still_in_opens_the_next_round():
    game = ThirtyOne()
    s = game.deal([H18, H22, H25])
    play(game, s, KNOCK)
    assert s.opener == 1 and s.player == 1
    play(game, s, KNOCK)
    assert s.opener == 2 and s.player == 2


def test_an_eliminated_next_seat_is_skipped_when_the_opening_seat_moves():
    game = ThirtyOne(num_players=3)
    s = game.deal([H25, H18, H22], lives=[3, 1, 3])
    play(game, s, KNOCK)  # seat 0 knocks with 25; seat 1 (18) loses its last life
    assert s.lives == (3, 0, 3) and s.opener == 2 and s.player == 2


# --- scenario 13 and more: no leaks ----------------------------------------------------------
def test_the_deck_top_never_shows_before_the_draw():
    game = ThirtyOne()
    a = game.deal([H18, H22, H25], deck=cards("9S"))
    b = game.deal([H18, H22, H25], deck=cards("2C"))
    for enc in (DefaultEncoder(game), OriginalEncoder(game)):
        for p in range(3):
            assert np.array_equal(enc.encode(game.view(a, p)), enc.encode(game.view(b, p)))


def test_the_drawn_card_shows_only_to_its_drawer_in_phase_two():
    game = ThirtyOne()
    a = game.deal([H18, H22, H25], deck=cards("9S"))
    b = game.deal([H18, H22, H25], deck=cards("2C"))
    play(game, a, DRAW)
    play(game, b, DRAW)
    enc = DefaultEncoder(game)
    drawn = enc.layout["drawn"]
    assert enc.encode(game.view(a, 0))[drawn].tolist() == pytest.approx([9 / 11, 0, 0, 0])
    for p in (1, 2):
        assert game.view(a, p).drawn == -1
        assert np.array_equal(enc.encode(game.view(a, p)), enc.encode(game.view(b, p)))
    original = OriginalEncoder(game)
    obs = original.encode(game.view(a, 0))
    swap = original.layout["swap_hand"]
    assert obs[0] == 1.0 and obs[swap][12:16].tolist() == [9, 0, 0, 0]  # 9♠ in the spades place


def test_a_card_taken_from_the_discard_is_known_until_it_is_discarded():
    game = ThirtyOne(num_players=2)
    s = game.deal([H18, H22], discard=cards("9S"), deck=cards("2C 3C 4C"))
    enc = DefaultEncoder(game)
    known = enc.layout["opponent_known"]
    play(game, s, TAKE)
    # taken, not yet placed: 9 in the spades place of seat 0's block
    assert enc.encode(game.view(s, 1))[known].tolist() == pytest.approx([9 / 31, 0, 0, 0])
    play(game, s, PLACE + 2)
    assert s.shown[0] == (-1, -1, parse_card("9S"))
    assert enc.encode(game.view(s, 1))[known].tolist() == pytest.approx([9 / 31, 0, 0, 0])
    play(game, s, DRAW, THROW, DRAW, PLACE + 2)  # seat 0 now discards the 9♠ again
    assert s.shown[0] == (-1, -1, -1)
    assert not enc.encode(game.view(s, 1))[known].any()


def _reshuffled():
    """Two players; seat 0 draws the deck's last card (9♠) into slot 2, discarding 2♥, and
    the deck is refilled from the discard pile."""
    game = ThirtyOne(num_players=2)
    used = set(H18 + H22)
    nine = parse_card("9S")
    pile = [c for c in range(52) if c not in used and c != nine]
    s = game.deal([H18, H22], discard=pile, deck=[nine])
    play(game, s, DRAW, PLACE + 2)
    return game, s


def test_a_reshuffled_card_is_not_known_in_the_hand_that_draws_it():
    game, s = _reshuffled()
    assert s.epoch == 1 and s.discard == [parse_card("2H")]
    # seat 1 takes the 2♥ (now known) and seat 0 later discards 9♠; then the deck deals cards
    # that everyone saw in the old discard pile: none of them becomes "known in a hand"
    play(game, s, TAKE, PLACE)
    assert s.shown[1] == (parse_card("2H"), -1, -1)
    for _ in range(3):
        play(game, s, DRAW, PLACE + 1)
    enc = DefaultEncoder(game)
    known = enc.layout["opponent_known"]
    hearts = 1  # suits S H D C
    assert np.flatnonzero(enc.encode(game.view(s, 0))[known]).tolist() == [hearts]
    assert enc.encode(game.view(s, 0))[known][hearts] == pytest.approx(2 / 31)
    assert np.flatnonzero(enc.encode(game.view(s, 1))[known]).tolist() == []


def test_redrawn_hidden_cards_respect_the_reshuffle():
    game, s = _reshuffled()
    rng = np.random.default_rng(1)
    for _ in range(20):
        other = game.randomize_hidden(s, 1, rng)
        game.check_invariants(other)
        # the deck holds exactly the reshuffled cards; seat 0's dealt slots keep unseen cards
        assert sorted(other.deck) == sorted(s.deck)
        assert sorted(other.hands[0]) == sorted(s.hands[0])
    assert any(game.randomize_hidden(s, 1, rng).deck != s.deck for _ in range(3))


def test_a_slot_filled_after_the_reshuffle_is_redrawn_only_from_the_new_deck():
    game, s = _reshuffled()
    play(game, s, DRAW, PLACE)  # seat 1 puts a card of the new deck, unseen, into slot 0
    assert s.epochs[1] == [1, 0, 0] and s.epochs[0] == [0, 0, 0]
    rng = np.random.default_rng(2)
    moved = False
    for _ in range(20):
        other = game.randomize_hidden(s, 0, rng)
        game.check_invariants(other)
        # slot 0 swaps with the deck; the dealt slots 1 and 2 only among themselves
        assert sorted(other.deck + other.hands[1][:1]) == sorted(s.deck + s.hands[1][:1])
        assert sorted(other.hands[1][1:]) == sorted(s.hands[1][1:])
        moved |= other.hands[1][0] != s.hands[1][0]
    assert moved


# --- options --------------------------------------------------------------------------------
def test_lives_option_sets_the_starting_lives():
    game = ThirtyOne(num_players=3, lives=1)
    s = game.init(np.random.default_rng(0))
    assert s.lives == (1, 1, 1)
    s = game.deal([H18, H22, H25])
    play(game, s, DRAW, THROW, KNOCK, DRAW, THROW, DRAW, THROW)
    assert s.lives == (0, 1, 1) and s.seating == (1, 2)


def test_three_of_a_kind_scores_thirty_and_a_half():
    hands = [cards("7C 7D 7H"), cards("10S JS QS")]
    plain = ThirtyOne(num_players=2)
    s = plain.deal(hands)
    play(plain, s, KNOCK)
    assert s.showdown.scores == (7.0, 30.0) and s.showdown.lost == (2, 0)
    bonus = ThirtyOne(num_players=2, three_of_a_kind=True)
    s = bonus.deal(hands)
    play(bonus, s, KNOCK)
    assert s.showdown.scores == (30.5, 30.0) and s.showdown.lost == (0, 1)


def test_instant_31_ends_the_round_when_a_player_makes_31():
    hands = [cards("AH KH 2C"), H18, H25]
    for instant, rounds in ((False, 0), (True, 1)):
        game = ThirtyOne(instant_31=instant)
        s = game.deal(hands, deck=cards("QH"))
        play(game, s, DRAW, PLACE + 2)
        assert s.rounds == rounds
    assert s.showdown.scores == (31.0, 18.0, 25.0) and s.showdown.lost == (0, 1, 1)
    assert s.showdown.knocker == -1


def test_instant_31_settles_a_dealt_31_at_the_deal():
    game = ThirtyOne(num_players=2, instant_31=True)
    dealt_31 = 0
    for seed in range(3000):
        s = game.init(np.random.default_rng(seed))
        game.check_invariants(s)
        if s.rounds:
            dealt_31 += 1
            assert 31.0 in s.showdown.scores and s.steps == 0
    assert dealt_31 > 0


def test_original_reward_is_paid_at_every_rounds_end():
    game = ThirtyOne(reward="original")
    s = game.deal([H18, H22, H25])
    (rewards,) = play(game, s, KNOCK)
    # knocker 18 (lowest): 0 - 5, then 2 lives lost: -0.6, still in: +0.5
    # 22: 0.5 * 4 = 2, + 0.5; 25: 0.5 * 7 = 3.5, + 0.5
    assert rewards.tolist() == pytest.approx([-5.1, 2.5, 4.0])
    s = game.deal([H25, H31, H20], lives=[1, 3, 1])
    (rewards,) = play(game, s, KNOCK)
    # 25 knocked and lost to the 31, yet the source pays a knocker above the lowest its bonus:
    # 0.5 * 5 + 0.3 * 5 - 0.3 * 3 - 2 = 1.1; 31: 0.5 * 11 + 10 + 0.5 = 16;
    # 20 (lowest): -2 - 0.3 * 3 - 2 = -4.9
    assert rewards.tolist() == pytest.approx([1.1, 16.0, -4.9])
    assert s.terminal and s.winner == 1  # no extra terminal reward with reward="original"
    assert game.payoffs(s).tolist() == [-0.5, 1.0, -0.5]


def test_original_reward_of_a_revival_round_counts_the_revived_life():
    # source 001's engine pays the round reward after reviving everyone to 1 life
    game = ThirtyOne(num_players=2, reward="original")
    s = game.deal([[0, 1, 2], [13, 14, 15]], lives=[1, 1])
    (rewards,) = play(game, s, KNOCK)
    assert s.showdown.revived and s.lives == (1, 1)
    # both hold 9 (tied lowest): knocker -5, the other -2; then -0.3 * (3 - 1) and +0.5
    assert rewards.tolist() == pytest.approx([-5.1, -2.1])


def test_default_reward_is_paid_only_at_the_end():
    game = ThirtyOne(num_players=2)
    s = game.deal([H18, H22], lives=[3, 3])
    assert play(game, s, KNOCK) == [None]
    s = game.deal([H18, H22], lives=[1, 3])
    (rewards,) = play(game, s, KNOCK)
    assert rewards.tolist() == [-1.0, 1.0]


def test_a_round_without_a_knock_ends_at_the_turn_cap():
    game = ThirtyOne(max_round_turns=4)
    s = game.deal([H18, H22, H25])
    play(game, s, DRAW, THROW, DRAW, THROW, DRAW, THROW)
    assert s.rounds == 0
    play(game, s, DRAW, THROW)
    assert s.rounds == 1 and s.showdown.knocker == -1 and s.showdown.lost == (1, 0, 0)


def test_the_step_cap_truncates_the_match_and_pays_nothing():
    game = ThirtyOne(max_steps=5)
    s = game.deal([H18, H22, H25])
    play(game, s, DRAW, THROW, DRAW, THROW, DRAW)
    assert s.truncated and not s.terminal and game.legal_actions(s) == []
    assert game.payoffs(s).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("kwargs,match", [
    ({"num_players": 8}, "num_players=8 is not valid; it must be an integer in 2..7"),
    ({"lives": 0}, "lives=0 is not valid"),
    ({"three_of_a_kind": "yes"}, "three_of_a_kind='yes' is not valid; choose one of False, True"),
    ({"instant_31": 2}, "instant_31=2 is not valid; choose one of False, True"),
    ({"reward": "shaped"}, "reward='shaped' is not valid; choose one of 'default', 'original'"),
    ({"max_round_turns": 0}, "max_round_turns=0 is not valid"),
])
def test_bad_arguments_name_the_valid_choices(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ThirtyOne(**kwargs)


def test_deal_rejects_a_card_given_twice():
    with pytest.raises(ValueError, match="2H is given twice"):
        ThirtyOne(num_players=2).deal([cards("AC 10C 2H"), H18])


def test_flags_accept_booleans_and_zero_or_one():
    assert ThirtyOne(three_of_a_kind=1, instant_31=True).config()["three_of_a_kind"] is True
    assert repr(ThirtyOne(num_players=2)).startswith("ThirtyOne(num_players=2, lives=3,")


# --- encodings --------------------------------------------------------------------------------
def test_default_encoding_orders_seats_from_the_observer():
    game = ThirtyOne(num_players=4)
    s = game.deal([H18, [], H25, H20], lives=[3, 0, 2, 1])
    enc = DefaultEncoder(game)
    obs = enc.layout.split(enc.encode(game.view(s, 2)))
    assert obs["lives"].tolist() == pytest.approx([2 / 3, 1 / 3, 1.0, 0.0])  # me, 3, 0, -
    assert obs["opener"].tolist() == [0, 0, 1, 0]  # seat 0 opened: two places after me
    assert obs["acting"].tolist() == [0, 0, 1, 0]
    assert obs["hand_score"][0] == pytest.approx(25 / 31)
    assert obs["first_turn"][0] == 1.0


def test_original_encoding_matches_the_source_layout():
    game = ThirtyOne(num_players=3)
    s = game.deal([cards("2S 8C AH"), H22, H25], discard=cards("10D"))
    enc = OriginalEncoder(game)
    assert enc.size == 1 + 46 + 32
    obs = enc.layout.split(enc.encode(game.view(s, 0)))
    # suits in the source's order S, C, D, H
    assert obs["hand"].tolist() == [2, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 11]
    assert obs["top_discard"].tolist() == [0, 0, 10, 0]
    assert obs["called"][0] == -1 and obs["first_turn"][0] == 1
    seen = 3 + 1  # my hand and the discard
    assert obs["expected_value"].tolist() == pytest.approx(
        [(95 - 2) / (52 - seen), (95 - 8) / (52 - seen), (95 - 10) / (52 - seen),
         (95 - 11) / (52 - seen)])
    assert not obs["swap_hand"].any() and obs["swap_phase"][0] == 0
    play(game, s, DRAW, THROW, KNOCK)
    assert enc.layout.split(enc.encode(game.view(s, 2)))["called"][0] == 1


def test_original_expected_values_count_known_cards_in_other_hands():
    game = ThirtyOne(num_players=2)
    s = game.deal([H18, H22], discard=cards("9S"), deck=cards("2C"))
    play(game, s, TAKE, PLACE)  # seat 0 holds the 9♠ in view of all
    v = game.view(s, 1)
    ev = expected_values(v)
    # seen: my Q♦ J♦ 2♦, the discard K♠, seat 0's 9♠
    assert ev[0] == pytest.approx((95 - 10 - 9) / (52 - 5))
    assert ev[2] == pytest.approx((95 - 22) / (52 - 5))
    left = OriginalEncoder(game).layout.split(OriginalEncoder(game).encode(v))["left_known"]
    assert left.tolist() == [9, 0, 0, 0] + [0] * 8


def test_encoder_tables_equal_what_they_stand_for():
    # SUIT_SUMS: float32 item by item, like `obs[i] += value / 31` over a float32 vector
    for k in range(1, 5):
        for values in itertools.product(range(2, 12), repeat=k):
            total = np.zeros(1, dtype=np.float32)
            code = 0
            for value in values:
                total[0] += value * (1.0 / 31.0)
                code = code * SUM_BASE + value
            assert SUIT_SUMS[code] == total[0], values
    for toak, table in enumerate(SCORE_TABLES):
        codes = np.frombuffer(SCORE_CODES[toak], dtype=np.uint8).reshape(table.shape)
        assert np.array_equal(codes, 2 * table)
    # the triple tables: _suit_sums and the pack of every slot triple (cards or -1), sampled
    sums, packs = triple_tables()
    rng = np.random.default_rng(0)
    triples = [(-1, -1, -1), (51, 51, 51), *rng.integers(-1, 52, (3000, 3)).tolist()]
    for x, y, z in triples:
        t = x * _C2 + y * _C1 + z + TRIPLE_0
        assert (sums[16 * t : 16 * t + 16], packs[t]) == _suit_sums((x, y, z))
        values = [0] * 4
        for card in (x, y, z):
            if card >= 0:
                values[card // 13] += VALUES[card]
        assert [packs[t] >> 8 * suit & 255 for suit in range(4)] == values
    assert CARD_PACK[-1] == 0


def test_discard_values_follow_the_discard_pile_through_play_and_reshuffles():
    game = ThirtyOne(num_players=2, max_round_turns=10_000)
    rng = np.random.default_rng(3)
    s = game.init(rng)
    reshuffled = 0
    while not s.terminal and s.steps < 3000:
        epoch = s.epoch
        game.apply(s, int(rng.choice([a for a in legal(game, s) if a != KNOCK])), rng)
        reshuffled += s.epoch > epoch
        assert s.discard_values == suit_values(s.discard)
        assert s.copy().discard_values is not s.discard_values
    assert reshuffled


@pytest.mark.parametrize("clone", [ThirtyOneState.copy, lambda s: pickle.loads(pickle.dumps(s))])
def test_a_copied_or_unpickled_state_keeps_its_discard_table_its_own(clone):
    # a clone's discard pile (its list and its bits) changes on its own
    game = ThirtyOne(num_players=2, max_round_turns=10_000)
    rng = np.random.default_rng(4)
    s = game.init(rng)
    for _ in range(5):
        game.apply(s, int(rng.choice([a for a in legal(game, s) if a != KNOCK])), rng)
    before = s.in_discard.copy()
    t = clone(s)
    assert t.discard is not s.discard and np.array_equal(t.in_discard, before)
    for _ in range(200):  # through a reshuffle: every discard change lands in t's own table
        game.apply(t, int(rng.choice([a for a in legal(game, t) if a != KNOCK])), rng)
        game.check_invariants(t)
    assert t.epoch >= 1 and np.array_equal(s.in_discard, before)


@pytest.mark.parametrize("kwargs", [{}, {"num_players": 2, "max_round_turns": 10_000},
                                    {"num_players": 5, "lives": 1, "three_of_a_kind": True}])
def test_a_placing_seats_observation_patched_from_its_last_one_equals_a_fresh_one(kwargs):
    # encode_state keeps the actor's observation and patches it one step later, in its phase 2
    game = ThirtyOne(**kwargs)
    enc = DefaultEncoder(game)
    rng = np.random.default_rng(5)
    patched = 0
    for _ in range(30):
        s = game.init(rng)
        while not s.done:
            obs = enc.encode_state(s, s.player)
            patched += s.phase == 1 and enc._turn[1] != s.steps  # not kept: patched
            assert np.array_equal(obs, DefaultEncoder(game).encode(game.view(s, s.player)))
            game.apply(s, int(rng.choice(legal(game, s))), rng)
    assert patched > 100
    # the patch is only ever made from this very state one step earlier: a copy is encoded afresh
    s = game.init(rng)
    enc.encode_state(s, s.player)
    copied = s.copy()
    game.apply(copied, DRAW, rng)
    enc.encode_state(copied, copied.player)
    assert enc._turn[0] is copied


# --- agents ---------------------------------------------------------------------------------------
def test_greedy_knocks_only_with_31_and_otherwise_always_draws():
    game = ThirtyOne(num_players=2)
    greedy = GreedyAgent(game)
    s = game.deal([H31, H18], discard=cards("AC"))
    assert greedy.act(game.view(s, 0), RNG) == KNOCK  # under the gun too
    s = game.deal([H25, H18], discard=cards("9C"))  # the 9♣ would make 30: greedy still draws
    assert greedy.act(game.view(s, 0), RNG) == DRAW


def test_greedy_places_in_the_first_strictly_best_slot_or_discards():
    game = ThirtyOne(num_players=2)
    greedy = GreedyAgent(game)
    s = game.deal([cards("QS 4C 2C"), H18], deck=cards("6S"))
    play(game, s, DRAW)
    # 6♠ in slot 1 or slot 2 both make 16: the first one (the source's strict >)
    assert greedy.act(game.view(s, 0), RNG) == PLACE + 1
    s = game.deal([H25, H18], deck=cards("3H"))
    play(game, s, DRAW)
    assert greedy.act(game.view(s, 0), RNG) == THROW


def test_expected_value_takes_a_discard_that_completes_the_hand_and_knocks_strong_hands():
    game = ThirtyOne(num_players=2)
    ev = ExpectedValueAgent(game)
    s = game.deal([cards("AC 10C 2H"), H22], discard=cards("KC"))
    assert ev.act(game.view(s, 0), RNG) == TAKE
    play(game, s, TAKE)
    assert ev.act(game.view(s, 0), RNG) == PLACE + 2
    s = game.deal([cards("AC 10C 5C"), H18], discard=cards("2D"))
    assert ev.act(game.view(s, 0), RNG) == KNOCK  # 26 at the start of a round
    s = game.deal([cards("2C 4H 6D"), H18], discard=cards("3S"))
    assert ev.act(game.view(s, 0), RNG) == DRAW  # a weak card on top: draw instead


def test_expected_value_keeps_the_higher_off_suit_card():
    game = ThirtyOne(num_players=2)
    ev = ExpectedValueAgent(game)
    s = game.deal([cards("QS 2C 4C"), H18], deck=cards("6S"))
    play(game, s, DRAW)
    assert ev.act(game.view(s, 0), RNG) == PLACE + 1  # replace the 2♣, keep the 4♣


# --- environment ------------------------------------------------------------------------------
def test_gymnasium_view_defaults_to_two_players_against_greedy():
    env = gymnasium.make("card_envs/ThirtyOne-v0")
    env.reset(seed=0)
    inner = env.unwrapped
    assert inner.game.num_players == 2
    assert type(inner.opponents[0]).__name__ == "GreedyAgent"
    assert inner.observation_space.shape == (DefaultEncoder(ThirtyOne(num_players=2)).size,)


def test_render_hides_other_hands_and_the_drawn_card():
    game = ThirtyOne(num_players=2)
    s = game.deal([H18, H22], discard=cards("9S"), deck=cards("3D"))
    play(game, s, TAKE, PLACE + 2, DRAW)
    mine = render(game, s, 1)
    theirs = render(game, s, 0)
    assert "Q\u2666" in mine or "QD" in mine
    assert "QD" not in theirs and "Q\u2666" not in theirs
    assert "?? ?? 9" in mine  # seat 0's 9♠, taken from the discard pile
    assert "drew a card" in theirs and "drew 3" in mine
    full = render(game, s, None)
    assert "K" in full and "score 22" in full


def test_rewards_of_a_round_settled_at_the_deal_come_with_the_first_step():
    game = ThirtyOne(num_players=2, instant_31=True, reward="original")
    seed = next(seed for seed in range(5000) if game.init(np.random.default_rng(seed)).rounds)
    rng = np.random.default_rng(seed)
    s = game.init(rng)
    dealt = s.pending.copy()
    assert dealt.max() > 10  # the 31: 0.5 * (31 - low) + 10 + 0.5
    rewards = game.apply(s, DRAW, rng)
    assert rewards.tolist() == dealt.tolist() and s.pending is None
    assert game.apply(s, THROW, rng) is None or s.rounds > 1


def test_default_encoding_unseen_values_count_every_card_i_have_seen():
    game = ThirtyOne(num_players=2)
    s = game.deal([H18, H22], discard=cards("9S"), deck=cards("2C 3C 4C"))
    enc = DefaultEncoder(game)

    def unseen(seat):
        return enc.layout.split(enc.encode(game.view(s, seat)))["unseen"] * 95

    seen = {0: list(H18) + [parse_card("9S")], 1: list(H22) + [parse_card("9S")]}
    for seat, known in seen.items():
        expected = [95.0] * 4
        for card in known:
            expected[card // 13] -= VALUES[card]
        assert unseen(seat).tolist() == pytest.approx(expected)
    play(game, s, TAKE)  # seat 0 holds the 9S to place: seen by both, still counted once
    assert unseen(0).tolist() == pytest.approx(
        [95 - sum(VALUES[c] for c in seen[0] if c // 13 == suit) for suit in range(4)])
