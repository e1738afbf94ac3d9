"""Palace rules scenario by scenario (docs/games/palace.md), encodings and agents."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import evaluate
from card_envs.palace.agents import HeuristicAgent, LowestFirstAgent
from card_envs.palace.encoding import DefaultEncoder, OriginalEncoder
from card_envs.palace.env import raw_env, render
from card_envs.palace.rules import (
    BLIND,
    BLIND_FAIL,
    BLIND_PLAY,
    FACE_UP_BASE,
    PICK_UP,
    PICKED_UP,
    SWAP_BASE,
    SWAP_DONE,
    Palace,
    ranks,
)

RNG = np.random.default_rng(0)


def r(name: str) -> int:
    """A rank index from its name."""
    return ranks(name)[0]


def play(count: int, rank: str) -> int:
    """The action that plays ``count`` cards of ``rank`` from the hand."""
    return 13 * (count - 1) + r(rank)


def legal_names(game, s) -> list[str]:
    return [game.action_name(a) for a in game.legal_actions(s)]


def three_seats(hand, pile="", face_up="", face_down="", draw="", **kw):
    """A 3-player state, seat 0 to act with the given cards; seats 1 and 2 get 3 cards in hand
    and 1 face-down each from what is left (highest ranks first); the rest is out of the game."""
    game = Palace(**kw)
    used = np.bincount(ranks(" ".join([hand, pile, face_up, face_down, draw])), minlength=13)
    left = [rank for rank in reversed(range(13)) for _ in range(4 - used[rank])]
    s = game.deal(hands=[ranks(hand), left[0:3], left[3:6]], face_up=[ranks(face_up), [], []],
                  face_down=[ranks(face_down), left[6:7], left[7:8]], draw=ranks(draw),
                  pile=ranks(pile))
    return game, s


# --- 1-5: what may be played on what ---------------------------------------------------
def test_on_a_three_only_threes_may_follow():
    game, s = three_seats("4 9 9 K", pile="6 3")
    assert legal_names(game, s) == ["pick up the pile"]
    game, s = three_seats("3 3 K", pile="6 3")
    assert legal_names(game, s) == ["play 3", "play 3 3", "pick up the pile"]


def test_on_a_seven_only_seven_or_lower_or_wilds():
    game, s = three_seats("2 4 7 10 A", pile="7")
    assert legal_names(game, s) == ["play 2", "play 4", "play 7", "play 10", "pick up the pile"]


def test_on_a_two_anything_goes():
    game, s = three_seats("4 J A", pile="K 2")
    assert legal_names(game, s) == ["play 4", "play J", "play A", "pick up the pile"]


def test_on_an_empty_pile_anything_goes_and_there_is_nothing_to_pick_up():
    game, s = three_seats("5 5 Q")
    assert legal_names(game, s) == ["play 5", "play Q", "play 5 5"]


def test_otherwise_equal_or_higher_or_a_wild():
    game, s = three_seats("2 3 7 10 Q K A", pile="K")
    assert legal_names(game, s) == ["play 2", "play 3", "play 7", "play 10", "play K", "play A",
                                    "pick up the pile"]


# --- 6-7: burns -------------------------------------------------------------------------
def test_a_ten_burns_the_pile_and_its_player_goes_again():
    game, s = three_seats("10 4 4", pile="4 5 6 8 9 J", face_down="10")
    out_before = s.out_cards.sum()
    game.apply(s, play(1, "10"), RNG)
    assert s.pile_size == 0 and s.top == -1 and s.player == 0
    assert s.out_cards.sum() == out_before + 7, "the 6 pile cards and the 10 leave the game"
    assert s.history[-1].burned
    game.check_invariants(s)


def test_four_of_a_kind_over_two_plays_burns_and_the_burner_goes_again():
    game = Palace()
    s = game.deal(hands=[ranks("9 9 4"), ranks("9 9 5"), ranks("6 6 6")],
                  face_up=[[], [], []], face_down=[[], [], ranks("7")])
    game.apply(s, play(2, "9"), RNG)
    assert (s.top, s.run, s.player) == (r("9"), 2, 1)
    game.apply(s, play(2, "9"), RNG)
    assert s.pile_size == 0 and s.player == 1, "burned; player 1 plays again"
    assert s.out_cards[r("9")] == 4


@pytest.mark.parametrize("plays", [[1, 2, 1], [1, 1, 1, 1]])
def test_four_in_a_row_over_any_number_of_plays_burns(plays):
    game = Palace(num_players=4)
    fillers = [ranks("4 4"), ranks("5 5"), ranks("6 6"), ranks("8 8")]
    hands = [[r("9")] * k + fillers[i] for i, k in enumerate(plays)] + fillers[len(plays):]
    s = game.deal(hands=hands, face_up=[[]] * 4, face_down=[ranks("K")] * 4)
    for k in plays[:-1]:
        game.apply(s, play(k, "9"), RNG)
        assert s.pile_size > 0
    last = s.player
    game.apply(s, play(plays[-1], "9"), RNG)
    assert s.pile_size == 0 and s.player == last


def test_a_run_counts_only_cards_in_a_row():
    game = Palace()
    s = game.deal(hands=[ranks("9 9 4"), ranks("J 5 5"), ranks("9 9 6")],
                  face_up=[[], [], []], face_down=[ranks("7")] * 3)
    game.apply(s, play(2, "9"), RNG)
    game.apply(s, play(1, "J"), RNG)
    assert s.run == 1
    assert game.legal_actions(s) == [PICK_UP], "9 9 under a J: no four in a row to finish"


# --- 8-9: where cards come from; blind play -------------------------------------------
def test_face_up_cards_only_once_the_hand_is_empty():
    game, s = three_seats("", pile="5", face_up="6 J")
    assert legal_names(game, s) == ["play face-up 6", "play face-up J", "pick up the pile"]
    game, s = three_seats("", pile="Q", face_up="6 J")
    assert legal_names(game, s) == ["pick up the pile"]
    game, s = three_seats("4", face_up="6 J")
    assert legal_names(game, s) == ["play 4"]


def test_blind_play_is_one_action_never_limited_by_the_top_card():
    game, s = three_seats("", pile="A", face_down="4 5 6")
    assert game.legal_actions(s) == [BLIND, PICK_UP]
    game, s = three_seats("", face_down="4 5 6")
    assert game.legal_actions(s) == [BLIND]


def test_a_failed_blind_card_goes_to_the_hand_with_the_pile():
    game, s = three_seats("", pile="8 Q", face_down="5")
    game.apply(s, BLIND, RNG)
    assert s.hand[0].tolist() == (ranks_count("5 8 Q")).tolist()
    assert s.pile_size == 0 and s.player == 1 and s.face_down_size[0] == 0
    assert s.history[-1] == (0, BLIND_FAIL, r("5"), 3, False), "recorded by the revealed card"
    assert s.known[0].tolist() == ranks_count("5 8 Q").tolist(), "everyone saw what was taken"
    game.check_invariants(s)


def test_a_good_blind_card_is_played():
    game, s = three_seats("", pile="8 Q", face_down="2 2")
    game.apply(s, BLIND, RNG)
    assert (s.top, s.pile_size, s.player) == (r("2"), 3, 1)
    assert s.history[-1] == (0, BLIND_PLAY, r("2"), 1, False)


def test_a_blind_ten_burns_and_replays():
    game, s = three_seats("", pile="8 Q", face_down="10 10")
    game.apply(s, BLIND, RNG)
    assert s.pile_size == 0 and s.player == 0 and s.history[-1].burned


def test_a_failed_blind_card_takes_the_threes_too():
    # docs/games/palace.md: on a failed blind play the card and the *whole* pile go to the hand.
    game, s = three_seats("", pile="8 3", face_down="5")
    game.apply(s, BLIND, RNG)
    assert s.hand[0].tolist() == ranks_count("3 5 8").tolist()


# --- 10-11: refill, pick-up --------------------------------------------------------------
def test_refill_to_three_while_the_draw_pile_lasts():
    game = Palace()
    s = game.deal(hands=[ranks("4 4 K"), ranks("8 8 8"), ranks("9 9 9")], face_up=[[], [], []],
                  face_down=[[], ranks("5"), ranks("6")], draw=ranks("J A"))
    game.apply(s, play(2, "4"), RNG)
    assert s.hand[0].tolist() == ranks_count("J K A").tolist() and not s.draw
    game.apply(s, play(3, "8"), RNG)
    assert s.hand_size[1] == 0, "the draw pile is empty: no refill"


def test_picking_up_leaves_the_top_threes_out_of_the_game():
    game, s = three_seats("4 9 K", pile="3 8 8 3 3")
    out_threes = s.out_cards[r("3")]
    game.apply(s, PICK_UP, RNG)
    assert s.hand[0].tolist() == ranks_count("3 4 8 8 9 K").tolist(), "the buried 3 is taken"
    assert s.out_cards[r("3")] - out_threes == 2, "the two 3s on top leave the game"
    assert s.pile_size == 0 and s.player == 1
    assert s.history[-1] == (0, PICKED_UP, -1, 3, False)
    assert s.known[0].tolist() == ranks_count("3 8 8").tolist()
    game.check_invariants(s)


# --- 12: going out, the loser, the cap -----------------------------------------------------
def test_the_last_player_holding_cards_loses():
    game = Palace()
    s = game.deal(hands=[ranks("K"), [], ranks("4 5")], face_up=[[], [], []],
                  face_down=[[], [], []])
    assert s.is_out == [False, True, False]
    rewards = game.apply(s, play(1, "K"), RNG)
    assert s.terminal and s.loser == 2 and s.finished == [1, 0]
    assert rewards.tolist() == [0.5, 0.5, -1.0] == game.payoffs(s).tolist()
    assert game.result(s, 2) == {"payoff": -1.0, "truncated": False, "place": 3}
    assert game.result(s, 0)["place"] == 2


def test_players_who_are_out_are_skipped():
    game = Palace()
    s = game.deal(hands=[ranks("4 4"), [], ranks("5 5")], face_up=[[], [], []],
                  face_down=[ranks("9"), [], []])
    game.apply(s, play(1, "4"), RNG)
    assert s.player == 2


def test_a_replay_owed_to_a_player_who_went_out_passes_on():
    game = Palace()
    s = game.deal(hands=[ranks("10"), ranks("4"), ranks("5")], face_up=[[], [], []],
                  face_down=[[], [], []])
    game.apply(s, play(1, "10"), RNG)
    assert s.is_out[0] and s.player == 1 and not s.terminal


def _near_the_cap(game, hands, face_up=None, face_down=None):
    n = len(hands)
    s = game.deal(hands=[ranks(h) for h in hands], face_up=face_up or [[]] * n,
                  face_down=face_down or [[]] * n)
    s.steps = game.max_steps - 1
    return s


def test_at_the_step_cap_players_out_keep_their_result_and_the_most_cards_lose():
    game = Palace()
    s = _near_the_cap(game, ["4 4", "", "6 6"], face_down=[[], [], ranks("9")])
    assert s.is_out == [False, True, False]
    rewards = game.apply(s, play(1, "4"), RNG)
    assert s.truncated and not s.terminal
    # seat 1 is out (a winner); seat 2 holds 3 cards, seat 0 one: seat 2 loses
    assert rewards.tolist() == [0.5, 0.5, -1.0] == game.payoffs(s).tolist()
    assert [game.place(s, q) for q in range(3)] == [2, 1, 3]
    assert game.result(s, 2) == {"payoff": -1.0, "truncated": True, "place": 3}


def test_at_the_step_cap_players_tied_for_the_most_cards_share_the_loss():
    game = Palace()
    s = _near_the_cap(game, ["4 4 4", "5 5", "6 6"])
    rewards = game.apply(s, play(1, "4"), RNG)  # seat 0 keeps 2 cards: three-way tie
    assert s.truncated
    # each of k=3 tied players: a fair draw for the loss, -1/3 + (2/3) * 1/2 = 0
    assert rewards.tolist() == pytest.approx([0.0, 0.0, 0.0])
    s = _near_the_cap(game, ["4 4", "5 5", "6 6"])
    rewards = game.apply(s, play(2, "4"), RNG)  # seat 0 is out; 1 and 2 tie at 2 cards
    assert s.truncated and s.is_out[0]
    assert rewards.tolist() == pytest.approx([0.5, -0.25, -0.25])
    assert sum(rewards) == pytest.approx(0.0)
    assert [game.place(s, q) for q in range(3)] == [1, 2, 2]


def test_picking_up_at_the_step_cap_does_not_turn_a_loss_into_a_draw():
    game = Palace()
    s = _near_the_cap(game, ["4", "K K", "A A"])
    s.pile[r("Q")], s.pile_size, s.top, s.run = 3, 3, r("Q"), 3
    rewards = game.apply(s, PICK_UP, RNG)  # seat 0 stalls by picking the pile up
    assert s.truncated
    assert rewards[0] == -1.0, "the staller now holds the most cards"


def test_the_step_cap_with_original_rewards_adds_the_sources_stalemate_penalty():
    game = Palace(reward="original")
    s = _near_the_cap(game, ["4 4", "5 5", "6 6"])
    rewards = game.apply(s, play(1, "4"), RNG)
    assert s.truncated and not s.terminal
    # seats 1 and 2 tie for the most cards (2): -1/2 + 1/2 * 1/2 = -0.25 each, seat 0 +0.5
    assert rewards.tolist() == pytest.approx([0.5 + 0.25 - 10.0, -0.25 - 10.0, -0.25 - 10.0])
    assert game.payoffs(s).tolist() == pytest.approx([0.5, -0.25, -0.25])


# --- 13: no leaks -------------------------------------------------------------------------
@pytest.mark.parametrize("encoder", [DefaultEncoder, OriginalEncoder])
def test_face_down_ranks_never_reach_observations_or_masks(encoder):
    game = Palace()
    downs = [("4 5 6", "A A K"), ("A A K", "4 5 6"), ("A 5 K", "4 A 6")]
    views = []
    for mine, theirs in downs:
        s = game.deal(hands=[[], ranks("8 8 8"), ranks("J J J")], face_up=[[], [], []],
                      face_down=[ranks(mine), ranks(theirs), ranks("Q Q Q")], pile=ranks("Q"))
        views.append([(encoder(game).encode(game.view(s, p)), game.view(s, p).legal.copy())
                      for p in range(3)])
    for other in views[1:]:
        for (obs_a, mask_a), (obs_b, mask_b) in zip(views[0], other, strict=True):
            assert np.array_equal(obs_a, obs_b) and np.array_equal(mask_a, mask_b)


def test_the_history_shows_a_blind_card_only_once_revealed():
    env = raw_env()
    game = env.game
    s = game.deal(hands=[[], ranks("8 8 8"), ranks("J J J")], face_up=[[], [], []],
                  face_down=[ranks("4"), ranks("5 5 5"), ranks("6 6 6")])
    env.reset(options={"state": s})
    env.step(BLIND)
    obs = game.view(env.game_state, 1)
    parts = DefaultEncoder(game).layout.split(DefaultEncoder(game).encode(obs))
    row = parts["last_play_1"]  # seat (me, next, next-next), kind, rank, placed, picked, burned
    assert row[2] == 1, "player 0 sits two seats after player 1"
    assert row[3 + BLIND_PLAY] == 1 and row[3 + 5 + r("4")] == 1


# --- swap phase ---------------------------------------------------------------------------
def test_swap_phase_every_seat_swaps_in_turn_then_seat_zero_plays():
    game = Palace(swap_phase=True)
    s = game.deal(hands=[ranks("4 K A"), ranks("5 6 6"), ranks("8 9 J")],
                  face_up=[ranks("5 10 2"), ranks("7 7 Q"), ranks("3 4 4")],
                  face_down=[ranks("8")] * 3)
    legal = game.legal_actions(s)
    assert SWAP_BASE + 13 * r("A") + r("5") in legal and legal[-1] == SWAP_DONE
    assert all(a >= SWAP_BASE for a in legal), "no card play before the swaps are done"
    game.apply(s, SWAP_BASE + 13 * r("A") + r("5"), RNG)
    assert s.hand[0].tolist() == ranks_count("4 5 K").tolist()
    assert s.face_up[0].tolist() == ranks_count("2 10 A").tolist()
    assert s.known[0, r("5")] == 1, "the table saw the 5 go into the hand"
    for seat in (0, 1, 2):
        assert s.swapping and s.player == seat
        game.apply(s, SWAP_DONE, RNG)
    assert not s.swapping and s.player == 0
    assert SWAP_DONE not in game.legal_actions(s)
    game.check_invariants(s)


def test_swapping_a_rank_for_itself_is_not_offered():
    game = Palace(swap_phase=True)
    s = game.deal(hands=[ranks("4 4 4"), ranks("5 5 5"), ranks("6 6 6")],
                  face_up=[ranks("4 7 7"), ranks("7 8 8"), ranks("8 9 9")],
                  face_down=[ranks("10")] * 3)
    assert game.legal_actions(s) == [SWAP_BASE + 13 * r("4") + r("7"), SWAP_DONE]


def test_without_swap_phase_there_are_79_actions():
    assert Palace().num_actions == 79 and Palace(swap_phase=True).num_actions == 249


@pytest.mark.parametrize("bad", [2, "yes", 0.5, None])
def test_swap_phase_takes_true_or_false(bad):
    with pytest.raises(ValueError, match="swap_phase=.* is not valid; choose one of False, True"):
        Palace(swap_phase=bad)


@pytest.mark.parametrize("bad", [1, 6, "3"])
def test_two_to_five_players(bad):
    with pytest.raises(ValueError, match="num_players=.* must be an integer in 2..5"):
        Palace(num_players=bad)


# --- rewards ------------------------------------------------------------------------------
@pytest.mark.parametrize("count,expected", [(1, 0.25), (2, 0.5), (3, 0.75), (4, 2.0)])
def test_original_reward_for_hand_plays(count, expected):
    game = Palace(reward="original")
    s = game.deal(hands=[ranks("6 6 6 6 K"), ranks("5 5 5"), ranks("8 8 8")],
                  face_up=[[], [], []], face_down=[ranks("9")] * 3)
    rewards = game.apply(s, play(count, "6"), RNG)
    assert rewards.tolist() == [expected, 0.0, 0.0]


def test_original_reward_for_pick_up_follows_the_source():
    game = Palace(reward="original")
    game_plain, s_plain = three_seats("4", pile="2 A")
    s = game.deal(hands=[ranks("4 5 6"), ranks("8 8 8"), ranks("9 9 9")], face_up=[[], [], []],
                  face_down=[ranks("J")] * 3, pile=ranks("2 A 7"))
    rewards = game.apply(s, PICK_UP, RNG)
    # 3 cards taken; the 7 is not weighed; 2 weighs 13, A weighs 1: 3/13 * (13 + 1) / 2
    assert rewards[0] == pytest.approx(-3 / 13 * 7)
    assert game_plain.apply(s_plain, PICK_UP, RNG) is None, "default reward: only the end pays"
    s = game.deal(hands=[ranks("4 5 6"), ranks("8 8 8"), ranks("9 9 9")], face_up=[[], [], []],
                  face_down=[ranks("J")] * 3, pile=ranks("7 3"))
    assert game.apply(s, PICK_UP, RNG)[0] == pytest.approx(-0.5), "only 3s and 7s: -0.5"


def test_original_reward_for_face_up_blind_and_going_out():
    game = Palace(reward="original")
    s = game.deal(hands=[[], ranks("8 8 8"), ranks("9 9 9")], face_up=[ranks("4 4"), [], []],
                  face_down=[[], ranks("J"), ranks("Q")])
    assert game.apply(s, FACE_UP_BASE + r("4"), RNG)[0] == 5.0
    s = game.deal(hands=[[], ranks("8 8 8"), ranks("9 9 9")], face_up=[[], [], []],
                  face_down=[ranks("5"), ranks("J"), ranks("Q")], pile=ranks("K"))
    assert game.apply(s, BLIND, RNG)[0] == -5.0
    s = game.deal(hands=[[], ranks("8 8 8"), ranks("9 9 9")], face_up=[[], [], []],
                  face_down=[ranks("A"), ranks("J"), ranks("Q")], pile=ranks("K"))
    assert game.apply(s, BLIND, RNG)[0] == 10.0 + 20.0, "a good blind card, and first out"


# --- encodings ----------------------------------------------------------------------------
def test_original_encoding_is_the_source_131_values():
    game = Palace()
    enc = OriginalEncoder(game)
    assert enc.size == 131
    s = game.deal(hands=[ranks("4 4 K"), ranks("5 8 8"), ranks("2 9 9")], face_up=[[], [], []],
                  face_down=[ranks("J")] * 3)
    game.apply(s, play(2, "4"), RNG)
    game.apply(s, play(2, "8"), RNG)
    game.apply(s, PICK_UP, RNG)  # player 2 picks up of its own will
    obs = enc.encode(game.view(s, 0))
    assert obs[r("4")] == 2 and obs[13 + r("8")] == 2, "oldest first"
    assert (obs[26:39] == -1).all(), "the newest play, a pick-up, is last"
    assert obs[39:52].tolist() == ranks_count("K").tolist()
    assert obs[52:].tolist() == game.legal_mask(s).tolist()


def test_default_encoding_rotates_seats_to_the_observer():
    game = Palace()
    enc = DefaultEncoder(game)
    s = game.deal(hands=[ranks("4 4 4"), ranks("5 5 5"), ranks("6 6 6")],
                  face_up=[ranks("K"), ranks("Q"), ranks("J")], face_down=[ranks("9")] * 3)
    parts = enc.layout.split(enc.encode(game.view(s, 1)))
    assert parts["hand"][r("5")] == 0.75 and parts["face_up"][r("Q")] == 0.25
    assert parts["opponent_face_up"][r("J")] == 0.25, "seat 2 comes first for seat 1"
    assert parts["opponent_face_up"][13 + r("K")] == 0.25
    assert parts["opponent_hand_size"].tolist() == pytest.approx([3 / 52, 3 / 52])


# --- agents -------------------------------------------------------------------------------
def test_lowest_first_plays_its_lowest_non_wild_rank_all_copies():
    game, s = three_seats("2 5 5 9 10", pile="4")
    assert LowestFirstAgent(game).act(game.view(s, 0), RNG) == play(2, "5")
    game, s = three_seats("2 3 10", pile="A")
    assert LowestFirstAgent(game).act(game.view(s, 0), RNG) == play(1, "2")
    game, s = three_seats("4 5", pile="A")
    assert LowestFirstAgent(game).act(game.view(s, 0), RNG) == PICK_UP


def test_heuristic_finishes_a_four_of_a_kind():
    game, s = three_seats("4 7 7", pile="7 7", draw="5 5 5")
    assert LowestFirstAgent(game).act(game.view(s, 0), RNG) == play(1, "4")
    assert HeuristicAgent(game).act(game.view(s, 0), RNG) == play(2, "7")


def test_heuristic_shows_its_strong_cards_in_the_swap_phase():
    game = Palace(swap_phase=True)
    s = game.deal(hands=[ranks("4 10 A"), ranks("5 5 5"), ranks("6 6 6")],
                  face_up=[ranks("5 6 K"), ranks("7 8 8"), ranks("8 9 9")],
                  face_down=[ranks("J")] * 3)
    agent = HeuristicAgent(game)
    chosen = []
    while s.player == 0:
        a = agent.act(game.view(s, 0), RNG)
        chosen.append(game.action_name(a))
        game.apply(s, a, RNG)
    assert chosen == ["swap hand 10 for face-up 5", "swap hand A for face-up 6", "done swapping"]


def test_heuristic_searches_the_endgame():
    # lowest_first plays the 4 and the opponent goes out with its 5; the ace wins instead:
    # the opponent cannot beat it, must pick it up, and the 4 then goes out.
    game = Palace(num_players=2)
    s = game.deal(hands=[ranks("4 A"), ranks("5")], face_up=[[], []], face_down=[[], []])
    view = game.view(s, 0)
    assert LowestFirstAgent(game).act(view, RNG) == play(1, "4")
    assert HeuristicAgent(game).act(view, RNG) == play(1, "A")


def test_heuristic_imagines_only_deals_that_match_its_view():
    game = Palace()
    rng = np.random.default_rng(3)
    s = game.init(rng)
    for _ in range(60):
        game.apply(s, LowestFirstAgent(game).act(game.view(s, s.player), rng), rng)
    view = game.view(s, s.player)
    dream = HeuristicAgent(game).imagine(view, rng)
    game.check_invariants(dream)
    for name in ("face_up", "known", "pile", "out_cards"):
        assert np.array_equal(getattr(dream, name), getattr(s, name)), name
    assert (dream.top, dream.run, dream.pile_size, len(dream.draw)) == (
        s.top, s.run, s.pile_size, len(s.draw))
    assert dream.hand_size == s.hand_size and dream.face_down_size == s.face_down_size
    assert np.array_equal(dream.hand[s.player], s.hand[s.player])


def test_heuristic_beats_random_players():
    game = Palace()
    agents = [HeuristicAgent(game), RandomAgent(game), RandomAgent(game)]
    result = evaluate(game, agents, 30, seed=5)
    assert result.tallies[0].losses == 0


@pytest.mark.slow
def test_heuristic_beats_lowest_first():
    game = Palace()
    agents = [HeuristicAgent(game), LowestFirstAgent(game), LowestFirstAgent(game)]
    _, _, high = evaluate(game, agents, 300, seed=9).tallies[0].rate("losses")
    assert high < 1 / 3


def test_a_pickled_game_leaves_its_mask_cache_behind():
    game, s = three_seats("4 5 6", pile="5")
    game.legal_mask(s)
    assert game._masks and game._plays is not None
    data = pickle.dumps(game)
    assert len(data) < 5_000  # not the memoised masks and plays
    twin = pickle.loads(data)
    # an unpickled game shares this process's caches, like every game of its shape
    assert twin._masks is game._masks and twin._plays is game._plays
    assert twin.legal_actions(s.copy()) == game.legal_actions(s)
    assert Palace(num_players=4)._plays is not game._plays  # one cache per number of players


@pytest.mark.parametrize("kw", [{}, {"num_players": 2}, {"num_players": 5, "swap_phase": True}])
def test_memoised_masks_and_the_facts_match_the_rules_over_random_play(kw):
    """The masks memoised by key (built by int arithmetic) and the numbers copied into the facts
    move by move agree with the rules computed from the state, through hand, face-up and blind
    play."""
    game = Palace(**kw)
    rng = np.random.default_rng(11)
    seen = set()
    for _ in range(12):
        s = game.init(rng)
        while not s.done:
            mask = game.legal_mask(s)
            if not s.swapping:
                p, top = s.player, s.top
                want = np.zeros(game.num_actions, dtype=np.int8)
                if s.hand_size[p]:
                    seen.add("hand")
                    for a in range(FACE_UP_BASE):
                        rank, count = a % 13, a // 13 + 1
                        want[a] = s.hand[p][rank] >= count and game.playable(top, rank)
                elif s.face_up_size[p]:
                    seen.add("face-up")
                    for rank in range(13):
                        up = s.face_up[p][rank] > 0
                        want[FACE_UP_BASE + rank] = up and game.playable(top, rank)
                else:
                    seen.add("blind")
                    want[BLIND] = 1
                want[PICK_UP] = top >= 0
                assert np.array_equal(mask, want) and not mask.flags.writeable
            game.check_invariants(s)  # the facts hold the numbers copied from scratch
            legal = np.flatnonzero(mask)
            game.apply(s, int(legal[int(rng.random() * len(legal))]), rng)
    assert seen == {"hand", "face-up", "blind"}


# --- rendering ----------------------------------------------------------------------------
def test_render_shows_a_seat_only_what_it_may_see():
    game = Palace()
    s = game.deal(hands=[ranks("4 4 K"), ranks("5 8 8"), ranks("2 9 9")],
                  face_up=[ranks("A"), ranks("Q"), ranks("J")],
                  face_down=[ranks("3 6 7"), ranks("3 6 7"), ranks("10 10 10")], pile=ranks("6"))
    game.apply(s, play(1, "K"), RNG)
    mine = render(game, s, 1)
    assert "player_1 (you): hand 5 8 8 | face-up Q | face-down 3" in mine
    assert "player_0: hand 2 cards | face-up A | face-down 3" in mine
    assert "10" not in mine and "last play: player_0 played K" in mine
    everything = render(game, s, None)
    assert "face-down 3 [10 10 10]" in everything and "player_1 to play" in everything


def ranks_count(text: str) -> np.ndarray:
    return np.bincount(ranks(text), minlength=13).astype(np.int8)
