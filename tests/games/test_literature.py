"""Literature rules, scenario by scenario (RULES.md; reference section 3.5, 4 players, teams
{0, 2} against {1, 3}), plus the original rules, encodings, agents and arguments."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import evaluate
from card_envs.core.game import IllegalActionError
from card_envs.literature import deck
from card_envs.literature.agents import CautiousAgent, HeuristicAgent
from card_envs.literature.encoding import DefaultEncoder, OriginalEncoder
from card_envs.literature.rules import DISCARDED, LIVE, Literature

RNG = np.random.default_rng(0)
LOW_S, HIGH_S, LOW_H, HIGH_H, LOW_D, HIGH_D, LOW_C, HIGH_C = range(8)


def card(name: str) -> int:
    """A card from its name: '5C' (5 of clubs, low), 'QH', '10D', 'AS'."""
    rank, suit = name[:-1], "SHDC".index(name[-1])
    if rank in deck.LOW_RANKS:
        return (2 * suit) * 6 + deck.LOW_RANKS.index(rank)
    return (2 * suit + 1) * 6 + deck.HIGH_RANKS.index(rank)


def cards(names: str) -> list[int]:
    return [card(x) for x in names.split()]


def half(h: int) -> list[int]:
    return list(deck.cards_of_half_suit(h))


def hands_with(n: int = 4, **given: list[int]) -> list[list[int]]:
    """Hands for n seats: ``p0=[...]`` etc. as given, the other cards dealt round the rest."""
    hands = [list(given.get(f"p{q}", [])) for q in range(n)]
    free = [c for c in range(48) if not any(c in h for h in hands)]
    open_seats = [q for q in range(n) if f"p{q}" not in given]
    for i, c in enumerate(free):
        hands[open_seats[i % len(open_seats)]].append(c)
    return hands


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
    game.apply(s, declare(game, h), RNG)
    rewards = None
    for q in holders:
        rewards = game.apply(s, name(game, ((q - p) % game.num_players) // 2), RNG)
    return rewards


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
    game.apply(s, ask(game, 0, "5C"), RNG)
    assert s.player == 0 and card("5C") in deck.cards_in(s.hands[0])
    assert s.sizes == [before[0] + 1, before[1] - 1, *before[2:]]
    for observer in range(4):
        holds, lacks, least = knows(game, s, observer)
        assert holds[0, card("5C")] and lacks[1:, card("5C")].all(), observer
        assert least[0, LOW_C] >= 2, "the asker held another low club before"


def test_7_a_failed_ask_passes_the_turn_and_shows_the_asker_has_the_half_suit():
    game = Literature(num_players=4)
    s = game.deal(hands_with(p0=cards("AC 2C"), p2=cards("5C")))
    game.apply(s, ask(game, 0, "5C"), RNG)
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
    game.apply(s, declare(game, LOW_D), RNG)
    for k in range(5):
        mask = game.legal_mask(s)
        assert s.player == 0 and s.claim_half == LOW_D and len(s.claim_names) == k
        assert mask.sum() == 2 and mask[game.name_base:].all(), "only naming, any teammate"
        game.apply(s, name(game, 0 if k < 3 else 1), RNG)
    assert s.claim_half == LOW_D and s.outcome[LOW_D] == LIVE
    game.apply(s, name(game, 1), RNG)
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
    with pytest.raises(ValueError, match="num_players=6 is not valid with rules='original'"):
        Literature(rules="original")


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
    game.apply(s, ask(game, 1, "3S"), RNG)  # seat 3 asks seat 0, 3 seats to its left
    assert card("3S") in deck.cards_in(s.hands[3])
    assert game.teammate(3, 1) == 5 and game.teammate(3, 2) == 1
