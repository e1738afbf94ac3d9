"""Literature rules, scenario by scenario (docs/games/literature.md; 4 players, teams
{0, 2} against {1, 3}), plus the original rules, encodings, agents and arguments."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import evaluate
from card_envs.core.game import IllegalActionError
from card_envs.literature import deck
from card_envs.literature.agents import CautiousAgent, HeuristicAgent
from card_envs.literature.encoding import DefaultEncoder, OriginalEncoder
from card_envs.literature.rules import DISCARDED, LIVE, Literature
from tests.games.literature_cards import card, cards, hands_with

RNG = np.random.default_rng(0)
LOW_S, HIGH_S, LOW_H, HIGH_H, LOW_D, HIGH_D, LOW_C, HIGH_C = range(8)


def half(h: int) -> list[int]:
    return list(deck.cards_of_half_suit(h))


def ask(game: Literature, opponent_slot: int, name: str) -> int:
    """The action "ask my opponent number ``opponent_slot`` for ``name``"."""
    return opponent_slot * 48 + card(name)


def declare(game: Literature, h: int) -> int:
    return game.declare_base + h


def name(game: Literature, teammate_slot: int) -> int:
    return game.name_base + teammate_slot


def claim(game: Literature, s, h: int, holders: list[int]) -> np.ndarray | None:
    """Declare h and name the seats ``holders`` (absolute) for its six cards."""
    p = s.player
    play(game, s, declare(game, h))
    rewards = None
    for q in holders:
        action = game.check_action(s, name(game, ((q - p) % game.num_players) // 2))
        rewards = game.apply(s, action, RNG)
    return rewards


def play(game: Literature, s, action: int) -> None:
    """Play ``action``, which must be legal."""
    game.apply(s, game.check_action(s, action), RNG)


def knows(game: Literature, s, observer: int):
    """(holds, lacks, least) of ``observer``'s tables, absolute seats."""
    v = game.view(s, observer)
    return v.holds(), v.lacks(), v.least()


# --- reference scenarios 1-5: what may be asked ------------------------------------------

def test_1_cannot_ask_for_a_card_you_hold():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("3C 4C 5C")))
    assert not game.legal_mask(s)[ask(game, 0, "3C")]
    assert game.legal_mask(s)[ask(game, 0, "AC")]
    with pytest.raises(IllegalActionError, match=r"ask \+1 for 3C\) is illegal"):
        game.check_action(s, ask(game, 0, "3C"))


def test_2_must_hold_a_card_of_the_half_suit():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("3C 8H 9H"), p1=cards("4H")))
    assert not game.legal_mask(s)[ask(game, 0, "4H")], "no low heart in hand"
    assert game.legal_mask(s)[ask(game, 0, "JH")], "holds high hearts"


def test_3_asks_only_ever_address_opponents():
    for n in (4, 6, 8):
        game = Literature(num_players=n)
        for p in range(n):
            asked = {game.opponent(p, a // 48) for a in range(game.num_asks)}
            assert asked == {q for q in range(n) if q % 2 != p % 2}


def test_4_an_opponent_without_cards_cannot_be_asked():
    game = Literature(num_players=4)
    # seat 1 holds exactly the low spades; once they are claimed (by the odd team) it has none
    s = game.deal(hands_with(p1=half(LOW_S) + cards("8H 9H 10H JH QH KH"), p0=cards("AD 2D")),
                  player=1)
    claim(game, s, LOW_S, [1] * 6)
    claim(game, s, HIGH_H, [1] * 6)
    assert s.sizes[1] == 0 and s.player == 3, "turn passes to the teammate with cards"
    s.player = 0  # (a later turn of seat 0)
    mask = game.legal_mask(s)
    assert not mask[0:48].any(), "seat 1 (opponent slot 0) has no cards"
    assert mask[ask(game, 1, "3D")], "seat 3 may still be asked"


def test_5_claimed_half_suits_cannot_be_asked_and_there_are_no_sevens():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=half(LOW_D) + cards("AS")))
    claim(game, s, LOW_D, [0] * 6)
    assert s.outcome[LOW_D] == 0
    assert not game.legal_mask(s)[ask(game, 0, "AD"):ask(game, 0, "6D") + 1].any()
    assert not any(deck.rank_name(c) == "7" for c in range(48))
    with pytest.raises(ValueError):
        card("7S")


# --- reference scenarios 6-7: asks and what everyone learns ------------------------------

def test_6_a_successful_ask_moves_the_card_and_keeps_the_turn():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AC 2C"), p1=cards("5C")))
    before = list(s.sizes)
    play(game, s, ask(game, 0, "5C"))
    assert s.player == 0 and card("5C") in deck.cards_in(s.hands[0])
    assert s.sizes == [before[0] + 1, before[1] - 1, *before[2:]]
    for observer in range(4):
        holds, lacks, least = knows(game, s, observer)
        assert holds[0, card("5C")] and lacks[1:, card("5C")].all(), observer
        assert least[0, LOW_C] >= 2, "the asker held another low club before"


def test_7_a_failed_ask_passes_the_turn_and_shows_the_asker_has_the_half_suit():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AC 2C"), p2=cards("5C")))
    play(game, s, ask(game, 0, "5C"))
    assert s.player == 1
    holds, lacks, least = knows(game, s, 3)  # an uninvolved observer
    assert lacks[0, card("5C")] and lacks[1, card("5C")] and not lacks[2, card("5C")]
    assert least[0, LOW_C] == 1
    assert s.log[-1] == ("ask", 0, 1, card("5C"), False)


# --- reference scenarios 8-11: claims ----------------------------------------------------

def test_8_a_correct_claim_of_the_last_cards_passes_to_a_teammate_with_cards():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=half(LOW_D)))
    rewards = claim(game, s, LOW_D, [0] * 6)
    assert rewards is None and s.sizes[0] == 0 and s.player == 2


def test_9_a_correct_claim_scores_and_the_claimer_keeps_the_turn():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AD 2D 3D 9S"), p2=cards("4D 5D 6D")))
    claim(game, s, LOW_D, [0, 0, 0, 2, 2, 2])
    assert s.outcome[LOW_D] == 0 and s.score == [1, 0] and s.declarer[LOW_D] == 0
    assert s.player == 0 and s.sizes[0] == 1 and s.sizes[2] == 0
    assert s.log[-1] == ("claim", 0, LOW_D, (0, 0, 0, 2, 2, 2), (0, 0, 0, 2, 2, 2), 0)


def test_naming_is_one_decision_per_card_by_the_same_player():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AD 2D 3D 9S"), p2=cards("4D 5D 6D")))
    play(game, s, declare(game, LOW_D))
    for k in range(5):
        mask = game.legal_mask(s)
        assert s.player == 0 and s.claim_half == LOW_D and len(s.claim_names) == k
        assert mask.sum() == 2 and mask[game.name_base:].all(), "only naming, any teammate"
        play(game, s, name(game, 0 if k < 3 else 1))
    assert s.claim_half == LOW_D and s.outcome[LOW_D] == LIVE
    play(game, s, name(game, 1))
    assert s.claim_half == -1 and s.outcome[LOW_D] == 0


def test_10_all_six_with_the_team_but_misnamed_is_discarded_and_the_turn_passes():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AD 2D 3D 9S"), p2=cards("4D 5D 6D")))
    claim(game, s, LOW_D, [0, 0, 2, 2, 2, 2])  # 3D is seat 0's, named as seat 2's
    assert s.outcome[LOW_D] == DISCARDED and s.score == [0, 0]
    assert s.player == 1, "the next opponent clockwise with cards"
    assert s.sizes[0] == 1 and s.sizes[2] == 0, "the cards leave the hands all the same"


def test_11_any_card_with_the_opponents_gives_them_the_half_suit():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("8D 9D 10D JD QD AS"), p3=cards("KD")))
    claim(game, s, HIGH_D, [0] * 6)
    assert s.outcome[HIGH_D] == 1 and s.score == [0, 1] and s.declarer[HIGH_D] == 0
    assert s.player == 1
    # the holders are revealed: everyone's tables forget the cards, sizes drop by what each held
    assert s.sizes[0] == 1 and s.sizes[3] == 0
    for observer in range(4):
        holds, lacks, least = knows(game, s, observer)
        assert lacks[:, half(HIGH_D)].all() and not holds[:, half(HIGH_D)].any()


def test_a_failed_claim_skips_opponents_without_cards():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p1=half(LOW_S) + half(HIGH_S), p0=cards("AH")), player=1)
    claim(game, s, LOW_S, [1] * 6)
    claim(game, s, HIGH_S, [1] * 6)
    assert s.sizes[1] == 0 and s.player == 3
    s.player = 0
    claim(game, s, LOW_H, [0] * 6)  # AH is seat 0's, the rest are not
    assert s.outcome[LOW_H] == 1 and s.player == 3, "seat 1 has no cards: seat 3 plays"


# --- reference scenarios 12-14: the end --------------------------------------------------

def test_12_four_half_suits_each_is_a_tie_worth_nothing():
    game = Literature(num_players=4)
    hands = [half(0) + half(2), half(1) + half(3), half(4) + half(6), half(5) + half(7)]
    s = game.deal(hands)
    for h in range(8):
        seat = [0, 1, 0, 1, 2, 3, 2, 3][h]
        s.player = seat
        rewards = claim(game, s, h, [seat] * 6)
    assert s.terminal and s.score == [4, 4]
    assert rewards.tolist() == [0.0] * 4 and game.payoffs(s).tolist() == [0.0] * 4


def test_12_the_team_with_more_half_suits_wins():
    game = Literature(num_players=4)
    s = game.deal([half(0) + half(1), half(2) + half(3), half(4) + half(5), half(6) + half(7)])
    claim(game, s, 0, [0] * 6)
    claim(game, s, 1, [0] * 6)
    assert s.player == 2, "seat 0 is out of cards: its teammate plays"
    claim(game, s, 4, [2] * 6)
    claim(game, s, 5, [2] * 6)
    assert s.player == 3, "team even is out of cards: the opponents play"
    claim(game, s, 6, [3] * 6)
    claim(game, s, 2, [3] * 6)  # seat 1 holds it: misnamed within the team
    assert s.outcome[2] == DISCARDED and s.player == 3, "no opponent has cards: seat 3 goes on"
    claim(game, s, 7, [3] * 6)
    rewards = claim(game, s, 3, [1] * 6)
    assert s.terminal and s.score == [4, 3]
    assert rewards.tolist() == [1.0, -1.0, 1.0, -1.0]
    assert game.result(s, 1) == {"payoff": -1.0, "score": 3.0, "truncated": False,
                                 "opponent_score": 4.0, "discarded": 1}


def test_12_a_team_without_cards_leaves_the_other_team_only_claims():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p1=half(0) + half(1), p3=half(2) + half(3)), player=1)
    for h, seat in ((0, 1), (1, 1), (2, 3), (3, 3)):
        s.player = seat
        claim(game, s, h, [seat] * 6)
    assert s.sizes[1] == s.sizes[3] == 0 and not s.done
    mask = game.legal_mask(s)
    assert s.player in (0, 2) and not mask[: game.num_asks].any()
    assert mask[game.declare_base:game.name_base].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]


def test_12_original_rules_claim_what_knowledge_proves_at_once():
    game = Literature(num_players=4, rules="original")
    # every seat holds two whole half-suits: each proves them at the deal and claims them
    s = game.deal([half(0) + half(1), half(4) + half(5), half(2) + half(3), half(6) + half(7)])
    assert s.terminal and s.score == [4, 4] and [e[1] for e in s.log] == [0, 0, 1, 1, 2, 2, 3, 3]
    # high diamonds are split between seats 1 and 3: only once team even has no cards left
    # can seat 3 prove that seat 1 holds the other three, and claim
    s = game.deal([half(0) + half(1), half(4) + cards("8D 9D 10D"), half(2) + half(3),
                   half(6) + half(7) + cards("JD QD KD")])
    assert s.terminal and s.score == [4, 4]
    assert ("claim", 3, HIGH_D, (1, 1, 1, 3, 3, 3), (1, 1, 1, 3, 3, 3), 1) in s.log


def test_original_rules_never_claim_from_the_true_hands():
    game = Literature(num_players=4, rules="original")
    # team even holds all of low spades and high hearts, but no one can prove who holds which
    s = game.deal(hands_with(p0=cards("AS 2S 3S AH 2H 3H 4H 5H 6H 8H 9H 10H"),
                             p2=cards("4S 5S 6S JH QH KH AD 2D 3D 4D 5D 6D")))
    assert s.outcome[LOW_S] == LIVE and s.outcome[HIGH_H] == LIVE and not s.done
    assert s.outcome[LOW_H] == 0 and s.outcome[LOW_D] == 0, "whole half-suits in one hand"


def test_original_rules_have_asks_only():
    game = Literature(num_players=4, rules="original")
    assert game.num_actions == 96 and len(game.action_table()) == 1
    assert Literature(rules="original").num_players == 4, "4 players by default"
    assert Literature().num_players == 6
    with pytest.raises(ValueError, match="num_players=6 is not valid with rules='original'"):
        Literature(num_players=6, rules="original")


def test_13_the_step_cap_truncates_and_pays_nothing():
    game = Literature(num_players=4, max_steps=5)
    s = game.init(np.random.default_rng(3))
    rng = np.random.default_rng(0)
    while not s.done:
        legal = np.flatnonzero(game.legal_mask(s))
        game.apply(s, int(legal[rng.integers(len(legal))]) if s.claim_half >= 0
                   else int(legal[0]), rng)
    assert s.truncated and not s.terminal and s.steps == 5
    assert game.payoffs(s).tolist() == [0.0] * 4
    assert Literature().max_steps == 400


def test_14_the_deck():
    assert deck.NUM_CARDS == 48 and len({deck.card_label(c, False) for c in range(48)}) == 48
    assert deck.half_suit_of(card("AS")) == LOW_S and deck.half_suit_of(card("6S")) == LOW_S
    assert deck.half_suit_of(card("8S")) == HIGH_S and deck.half_suit_of(card("KC")) == HIGH_C
    assert deck.half_suit_label(LOW_H, False) == "low H"
    for n in (4, 6, 8):
        s = Literature(num_players=n).init(np.random.default_rng(n))
        assert s.sizes == [48 // n] * n and s.player == 0
        assert sorted(c for h in s.hands for c in deck.cards_in(h)) == list(range(48))


# --- turns -------------------------------------------------------------------------------

def test_a_player_without_cards_passes_to_the_next_teammate_with_cards():
    game = Literature(num_players=6)
    s = game.deal(hands_with(n=6, p0=half(LOW_S), p2=[]))
    claim(game, s, LOW_S, [0] * 6)
    assert s.sizes[0] == s.sizes[2] == 0 and s.player == 4


def test_seat_numbers_in_actions_are_relative_to_the_actor():
    game = Literature(num_players=6)
    s = game.deal(hands_with(n=6, p3=cards("AS 2S"), p0=cards("3S")), player=3)
    assert game.opponent(3, 1) == 0 and game.action_name(ask(game, 1, "3S")) == "ask +3 for 3S"
    play(game, s, ask(game, 1, "3S"))  # seat 3 asks seat 0, 3 seats to its left
    assert card("3S") in deck.cards_in(s.hands[3])
    assert game.teammate(3, 1) == 5 and game.teammate(3, 2) == 1


# --- encodings ---------------------------------------------------------------------------

def test_default_encoding_is_relative_to_the_observer():
    game = Literature(num_players=6)
    enc = DefaultEncoder(game)
    s = game.deal(full_hands(n=6, p0=cards("AC 2C 8S 9S 8H 9H 8D 9D"), p1=cards("5C"),
                             p2=cards("3C")))
    play(game, s, ask(game, 0, "5C"))  # seat 0 takes 5C from seat 1
    play(game, s, ask(game, 0, "3C"))  # and fails: seat 1 to act
    for p in (0, 4):
        parts = enc.layout.split(enc.encode(game.view(s, p)))
        holds = parts["holds"].reshape(6, 48)
        assert holds[(0 - p) % 6, card("5C")] == 1, "row r is the seat r places to my left"
        assert parts["lacks"].reshape(6, 48)[(1 - p) % 6, card("3C")] == 1
        # seat 0 knows it has three low clubs; the others know of two (5C and the one it asked with)
        least = parts["least"].reshape(6, 8)[(0 - p) % 6, LOW_C]
        assert least == pytest.approx((3 if p == 0 else 2) / 6)
        newest = parts["last_asks"][: 2 * 6 + 49]
        assert newest[(0 - p) % 6] == 1 and newest[6 + (1 - p) % 6] == 1
        assert newest[12 + card("3C")] == 1 and newest[12 + 48] == 0, "failed"
        assert parts["my_turn"][0] == 0
    mine = enc.layout.split(enc.encode(game.view(s, 1)))
    assert mine["my_turn"][0] == 1 and mine["hand_sizes"][0] == pytest.approx(s.sizes[1] / 48)


def test_default_encoding_shows_outcomes_and_the_claim_being_named():
    game = Literature(num_players=4)
    enc = DefaultEncoder(game)
    s = game.deal(hands_with(p0=cards("AD 2D 3D 9S"), p2=cards("4D 5D 6D"), p3=half(HIGH_D)))
    claim(game, s, LOW_D, [0, 0, 0, 2, 2, 2])
    play(game, s, declare(game, HIGH_D))
    play(game, s, name(game, 1))
    for p in range(4):
        parts = enc.layout.split(enc.encode(game.view(s, p)))
        mine = p % 2 == 0
        outcome = parts["half_suits"].reshape(8, 3)[LOW_D].tolist()
        assert outcome == ([1, 0, 0] if mine else [0, 1, 0])
        assert parts["claim_half"][HIGH_D] == 1 and parts["claimer"][(0 - p) % 4] == 1
        assert parts["claim_names"].reshape(6, 4)[0, (2 - p) % 4] == 1
        assert parts["claim_names"].reshape(6, 4)[1:].sum() == 0
        lacks = parts["lacks"].reshape(4, 48)
        assert lacks[:, half(LOW_D)].all(), "cards out of play are lacked by everyone"


def test_original_encoding_is_the_source_state():
    game = Literature(num_players=4, rules="original")
    enc = OriginalEncoder(game)
    assert enc.size == 1145 + 8
    s = game.deal(HANDS)  # seat 0: AC 5C 3S 4H 5H 6H JD QD KD 8C 9C 10C
    obs = enc.encode(game.view(s, 0))
    seat0 = obs[1:58]
    # the source orders cards rank-major (A, 2..6, 8..K) by suits C, D, H, S: 5C is rank 4, suit 0
    assert seat0[4 * 4 + 0] == 3 and seat0[0] == 3, "5C and AC: held"
    assert seat0[4 * 4 + 1] == 1 and seat0[1 * 4 + 0] == 1, "5D and 2C: not mine"
    assert obs[58 + 4 * 4] == 1, "seat 1 does not hold my 5C"
    assert set(obs[58:58 + 48]) <= {1.0, 2.0}
    assert seat0[48:56].tolist() == [2, 0, 3, 1, 3, 3, 0, 0], "least counts: low C, D, H, S, high"
    assert seat0[56] == 12
    assert obs[0] == 0 and obs[229] == 0 and obs[229 + 229] == 1, "first-order blocks start with k"
    assert np.array_equal(obs[230:230 + 57], seat0), "what I can tell I know is what I know"
    assert obs[-8:].sum() == 0


def test_original_encoding_under_standard_rules_has_the_claim_and_no_first_order_blocks():
    game = Literature(num_players=6)
    enc = OriginalEncoder(game)
    assert enc.size == 1 + 6 * 57 + 8 + 7
    s = game.deal(hands_with(n=6, p0=cards("AD 2D 9S")))
    play(game, s, declare(game, LOW_D))
    play(game, s, name(game, 2))  # the player four seats to the left: seat 4
    obs = enc.encode(game.view(s, 3))
    assert obs[0] == 3 and obs[-7] == 1 + 1 and obs[-6] == 1 + 4, "low D is the source's second"


def full_hands(n: int = 4, **given: list[int]) -> list[list[int]]:
    """Hands of 48/n cards with the given cards, the rest dealt one at a time round the seats."""
    hands = [list(given.get(f"p{q}", [])) for q in range(n)]
    q = 0
    for c in range(48):
        if any(c in h for h in hands):
            continue
        while len(hands[q % n]) >= 48 // n:
            q += 1
        hands[q % n].append(c)
        q += 1
    return hands


# --- agents ------------------------------------------------------------------------------

def _act(agent, game, s, player=None):
    return agent.act(game.view(s, s.player if player is None else player), np.random.default_rng(1))


def test_agents_claim_what_they_can_prove():
    game = Literature(num_players=4)
    s = game.deal(full_hands(p0=cards("AD 2D 3D 4D 5D 6D")))
    for agent in (CautiousAgent(game), HeuristicAgent(game)):
        assert _act(agent, game, s) == declare(game, LOW_D)
    play(game, s, declare(game, LOW_D))
    for agent in (CautiousAgent(game), HeuristicAgent(game)):
        assert _act(agent, game, s) == name(game, 0), "naming the proven holder: myself"


HANDS = [cards("AC 5C 3S 4H 5H 6H JD QD KD 8C 9C 10C"),
         cards("2C 8H 9S 10S AS 2S AD 2D 3D JC QC KC"),
         cards("3C 4C 6C AH 2H 3H 8D 9D 10D JS QS KS"),
         cards("4S 5S 6S 8S 9H 10H JH QH KH 4D 5D 6D")]


def _taken_back_position(game):
    """Seat 1 took 5C from seat 0, then failed: seat 0 to act, knowing where 5C is."""
    s = game.deal(HANDS)
    play(game, s, ask(game, 0, "4S"))  # seat 0 asks seat 1: no
    play(game, s, ask(game, 1, "5C"))  # seat 1 asks seat 0 (its opponent 1): yes
    play(game, s, ask(game, 1, "9H"))  # no: seat 0 to act
    assert s.player == 0
    return s


def test_heuristic_asks_for_a_card_it_knows_is_held():
    game = Literature(num_players=4)
    s = _taken_back_position(game)
    assert _act(HeuristicAgent(game), game, s) == ask(game, 0, "5C")


def test_best_moves_are_every_action_an_agent_picks_among():
    game = Literature(num_players=4)
    # a sure card: the heuristic has one move, and the cautious agent picks among its
    # hopeful asks, each of which it plays with some seed
    s = _taken_back_position(game)
    v = game.view(s, 0)
    assert HeuristicAgent(game).best_moves(v) == [ask(game, 0, "5C")]
    cautious = CautiousAgent(game)
    chosen = {cautious.act(v, np.random.default_rng(i)) for i in range(400)}
    assert chosen == set(cautious.best_moves(v))
    # the opening: equally likely asks tie, and the heuristic draws among exactly those
    s = game.deal(HANDS)
    v = game.view(s, 0)
    heuristic = HeuristicAgent(game)
    ties = heuristic.best_moves(v)
    assert len(ties) > 1 and all(game.legal_mask(s)[a] for a in ties)
    assert {heuristic.act(v, np.random.default_rng(i)) for i in range(400)} == set(ties)
    # a declaration and its namings are single moves
    s = game.deal(full_hands(p0=cards("AD 2D 3D 4D 5D 6D")))
    assert heuristic.best_moves(game.view(s, 0)) == [declare(game, LOW_D)]


def test_cautious_asks_only_for_cards_the_opponent_may_hold():
    game = Literature(num_players=4)
    s = _taken_back_position(game)
    v = game.view(s, 0)
    lacks = v.lacks()
    agent = CautiousAgent(game)
    chosen = {agent.act(v, np.random.default_rng(i)) for i in range(200)}
    assert len(chosen) > 5 and all(a < game.num_asks for a in chosen)
    for a in chosen:
        j, c = divmod(a, 48)
        assert not lacks[game.opponent(0, j), c], game.action_name(a)


def _no_hope_position(game):
    """Six players. The opponents hold one high spade each and showed it by asking; seat 0
    holds AD 2D 3D, its teammates share the other cards, so its only asks cannot succeed."""
    shown = cards("AD 2D 3D 8S JS KS 4D 5D 6D")
    rest = [c for c in range(48) if c not in shown]
    s = game.deal([cards("AD 2D 3D"), cards("8S"), cards("4D 5D") + rest[::2], cards("JS"),
                   cards("6D") + rest[1::2], cards("KS")], player=1)
    play(game, s, ask(game, 2, "9S"))  # seat 1 asks seat 0 for 9S: no
    play(game, s, ask(game, 1, "4D"))  # seat 0 asks seat 3 for 4D: no
    play(game, s, ask(game, 1, "9S"))  # seat 3 asks seat 0 for 9S: no
    play(game, s, ask(game, 2, "4D"))  # seat 0 asks seat 5 for 4D: no
    play(game, s, ask(game, 0, "9S"))  # seat 5 asks seat 0 for 9S: no
    assert s.player == 0
    return s


def test_heuristic_guesses_a_claim_only_when_no_ask_can_succeed():
    game = Literature(num_players=6)
    s = _no_hope_position(game)
    v = game.view(s, 0)
    assert v.lacks()[[1, 3, 5]][:, half(LOW_D)].all(), "the opponents lack low diamonds"
    assert not v.holds()[[2, 4]][:, cards("4D 5D 6D")].any(), "but not which teammate holds them"
    assert not HeuristicAgent(game).act(v, RNG) < game.num_asks
    assert _act(HeuristicAgent(game), game, s) == declare(game, LOW_D)
    assert _act(CautiousAgent(game), game, s) < game.num_asks, "cautious never guesses"
    play(game, s, declare(game, LOW_D))
    names = []
    for _ in range(6):
        names.append(_act(HeuristicAgent(game), game, s) - game.name_base)
        game.apply(s, game.name_base + names[-1], RNG)
    assert names[:3] == [0, 0, 0] and set(names[3:]) <= {1, 2}
    assert s.outcome[LOW_D] in (0, DISCARDED), "a guess within the team never gives it away"


def test_heuristic_asks_first_when_an_ask_may_succeed():
    game = Literature(num_players=4)
    s = game.deal(HANDS)
    assert _act(HeuristicAgent(game), game, s) < game.num_asks


def test_agents_must_claim_when_the_opponents_have_no_cards():
    game = Literature(num_players=4)
    s = game.deal([cards("AD 2D"), [], [c for c in range(48) if c not in cards("AD 2D")], []])
    for agent in (CautiousAgent(game), HeuristicAgent(game)):
        state = s.copy()
        h = _act(agent, game, state) - game.declare_base
        assert 0 <= h < 8
        for _ in range(7):
            game.apply(state, _act(agent, game, state), RNG)
        assert state.outcome[h] == 0, "with one teammate, the holders are proven"


def test_heuristic_beats_cautious_and_cautious_beats_random():
    game = Literature(num_players=6)
    for strong, weak in ((HeuristicAgent(game), CautiousAgent(game)),
                         (CautiousAgent(game), RandomAgent(game))):
        result = evaluate(game, [strong, weak] * 3, 60, seed=1)
        assert result.tallies[0].decided()[1] > 0.5, (strong.name, result.summary())


def test_agents_play_the_original_rules():
    game = Literature(num_players=4, rules="original")
    result = evaluate(game, [HeuristicAgent(game), CautiousAgent(game)] * 2, 40, seed=2)
    assert result.games == 40 and result.tallies[0].wins > result.tallies[0].losses


# --- arguments, the Gymnasium view, rendering --------------------------------------------

@pytest.mark.parametrize("bad,match", [
    ({"num_players": 5}, "num_players=5 is not valid; choose one of 4, 6, 8"),
    ({"num_players": 6, "rules": "original"}, "num_players=6 is not valid with rules='original'"),
    ({"rules": "seed"}, "rules='seed' is not valid"),
    ({"max_steps": 0}, "max_steps=0 is not valid"),
])
def test_bad_arguments_name_the_valid_choices(bad, match):
    with pytest.raises(ValueError, match=match):
        Literature(**bad)


def test_gymnasium_view_plays_teammates_and_opponents_with_heuristic_by_default():
    import gymnasium

    env = gymnasium.make("card_envs/Literature-v0", learner_seat=3)
    assert all(isinstance(a, HeuristicAgent) for a in env.unwrapped.opponents)
    obs, info = env.reset(seed=0)
    assert obs.shape == (DefaultEncoder(Literature()).size,) and info["seat"] == 3
    rng = np.random.default_rng(0)
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, term, trunc, info = env.step(int(legal[rng.integers(len(legal))]))
        done = term or trunc
    assert info["payoff"] == reward


def test_rendering_shows_a_seat_only_its_own_cards(monkeypatch):
    from card_envs.literature.env import render

    monkeypatch.setenv("CARD_ENVS_ASCII", "1")
    game = Literature(num_players=4)
    s = _taken_back_position(game)
    everything = render(game, s, None)
    mine = render(game, s, 0)
    assert "player_1 [odd, 13 cards]: AS 2S 9S" in everything and "3C 4C 6C" in everything
    assert "player_0 (you) [even, 11 cards]: 3S 4H" in mine and "2S" not in mine
    assert "player_1 [odd, 13 cards]: known to hold 5C" in mine
    assert "player_1 asked player_0 for 5C: got it" in mine and "player_0 to act" in mine


def test_play_describes_asks_with_absolute_seats_and_their_answers():
    from card_envs.literature.env import move_text, outcome_text

    game = Literature(num_players=4)
    # seat 0 holds 13 (so it may ask for 12, same half-suit); player_1 holds 12
    hands = [[*range(0, 11), 13], [11, 12, *range(14, 24)], list(range(24, 36)),
             list(range(36, 48))]
    s = game.deal(hands)
    before = s.copy()
    ask = 0 * deck.NUM_CARDS + 12  # opponent 0 of seat 0 is player_1
    assert game.legal_mask(s)[ask]
    game.apply(s, ask, np.random.default_rng(0))
    text = outcome_text(game, before, 0, ask, s)
    assert text.startswith("ask player_1 for ") and text.endswith(": given")
    assert move_text(game, before, 0, ask).startswith("ask player_1 for ")


@pytest.mark.parametrize("n", [4, 6, 8])
def test_encode_state_reuses_a_seats_observation_only_while_its_sources_are_unchanged(n):
    """The default encoder keeps each seat's observation (but the claim and my_turn) until the
    knowledge bytes, asks or outcomes change (e.g. across the steps of naming a claim): every
    seat, every step, an old state revisited after newer ones and both pickled together must
    still encode as its view does."""
    game = Literature(num_players=n)
    enc, rng = DefaultEncoder(game), np.random.default_rng(n)
    for _ in range(3):
        s, history = game.init(rng), []
        while not s.done:
            history.append(s.copy())
            if len(history) % 25 == 0:  # its caches survive a round trip with the state
                enc, s = pickle.loads(pickle.dumps((enc, s)))
            for seat in (s.player, *range(n)):
                assert np.array_equal(enc.encode_state(s, seat), enc.encode(game.view(s, seat)))
            legal = np.flatnonzero(game.legal_mask(s))
            game.apply(s, int(rng.choice(legal)), rng)
        for old in history[::7]:
            for seat in range(n):
                assert np.array_equal(enc.encode_state(old, seat),
                                      enc.encode(game.view(old, seat)))


def test_the_outcome_pattern_memo_stays_bounded():
    from card_envs.literature.encoding import OUTCOME_CACHE

    enc = DefaultEncoder(Literature(num_players=4))
    patterns = itertools.islice(itertools.product((LIVE, 0, 1, DISCARDED), repeat=8),
                                OUTCOME_CACHE + 10)
    for outcome in patterns:
        ones = enc._outcome_ones(outcome, 0)
        assert len(ones) == sum(o != LIVE for o in outcome)
    assert 0 < len(enc._outcomes) <= OUTCOME_CACHE
