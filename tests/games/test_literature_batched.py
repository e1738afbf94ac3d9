"""Literature's batched twin (``card_envs/literature/batched.py``): hand-built scenarios through
the twin, its knowledge tables against the scalar engine's at every step, the step cap, and its
Gymnasium VectorEnv against gym_env() with the rule agents as opponents.

The spec-driven differential tests (tests/test_batched_twins.py) compare observations, masks,
rewards and ends over random games of every variant; these add what random games of the
spec's variants never reach (the step cap: no game of 400 steps ends truncated) or reach only
through the observations (every observer's tables)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.make import make_batched
from card_envs.literature import deck
from card_envs.literature.encoding import DefaultEncoder
from card_envs.literature.rules import DISCARDED, LIVE, Literature
from card_envs.registry import load_spec
from tests.games.literature_cards import card, cards, hands_with

pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")

from tests.test_batched_twins import differential  # noqa: E402  (after the numba check)
from tests.vector_checks import play_beside_gym_env  # noqa: E402

SPEC = load_spec("literature")
LOW_S, HIGH_S, LOW_H = 0, 1, 2


def twin_of(game_state, **rules):
    """(engine, batched state) with ``game_state`` loaded in slot 0 of a batch of one."""
    engine = make_batched(SPEC, **rules)
    state = engine.init(1, seed=0)
    engine.load(state, 0, game_state)
    return engine, state


def play(engine, state, *actions: int) -> None:
    for a in actions:
        engine.step(state, np.array([a]))


def held(engine, state, observer: int, seat: int) -> list[int]:
    """The cards ``observer``'s tables (slot 0) say ``seat`` holds."""
    words = state.know[0, 0, observer]
    return [6 * h + k for h in range(8) for k in range(6) if int(words[h]) >> (8 * seat + k) & 1]


def lacked(engine, state, observer: int, seat: int) -> list[int]:
    words = state.know[0, 1, observer]
    return [6 * h + k for h in range(8) for k in range(6) if int(words[h]) >> (8 * seat + k) & 1]


# --- scenarios (6 players: teams {0, 2, 4} against {1, 3, 5}) --------------------------------
def test_a_granted_ask_moves_the_card_keeps_the_turn_and_everyone_knows_where_it_went():
    game = Literature(6)
    s = game.deal(hands_with(6, p0=cards("AS 3S"), p1=cards("2S 8H")))
    engine, state = twin_of(s, num_players=6)
    play(engine, state, 0 * 48 + card("2S"))  # seat 0 asks seat 1 (opponent 0) for 2S
    assert state.current_player[0] == 0
    assert int(state.hands[0, 0]) == deck.slot_bits(cards("AS 2S 3S"))
    assert state.sizes[0].tolist()[:2] == [3, 1]
    for observer in range(6):  # a public event: every table has it
        assert card("2S") in held(engine, state, observer, 0)
        assert card("2S") in lacked(engine, state, observer, 1)
    assert state.asks[0, 0].tolist() == [0, 1, card("2S"), 1] and state.num_asks[0] == 1


def test_a_refused_ask_passes_the_turn_to_the_asked_player():
    game = Literature(6)
    s = game.deal(hands_with(6, p0=cards("AS 3S"), p1=cards("8H 9H"), p3=cards("2S")))
    engine, state = twin_of(s, num_players=6)
    play(engine, state, 0 * 48 + card("2S"))
    assert state.current_player[0] == 1
    for observer in range(6):
        assert card("2S") in lacked(engine, state, observer, 0)
        assert card("2S") in lacked(engine, state, observer, 1)
    assert engine.legal_action_mask(state)[0].any()


def test_a_claim_named_right_scores_and_the_claimer_keeps_the_turn():
    game = Literature(6)
    s = game.deal(hands_with(6, p0=cards("AS 2S 3S 8H"), p2=cards("4S 5S 6S")))
    engine, state = twin_of(s, num_players=6)
    mine, mate = game.name_base, game.name_base + 1  # name myself, name seat 2
    play(engine, state, game.declare_base + LOW_S, mine, mine, mine, mate, mate, mate)
    assert state.outcome[0, LOW_S] == 0 and state.score[0].tolist() == [1, 0]
    assert not state.live[0] >> LOW_S & 1 and state.declarer[0, LOW_S] == 0
    assert state.current_player[0] == 0 and state.claim_half[0] == -1
    assert (state.know[0, 1, :, LOW_S] == int(engine.cfg.cards)).all()  # out of play: lacked


def test_a_misnamed_claim_is_discarded_and_the_turn_passes_to_the_next_opponent():
    game = Literature(6)
    s = game.deal(hands_with(6, p0=cards("AS 2S 3S"), p2=cards("4S 5S 6S")))
    engine, state = twin_of(s, num_players=6)
    play(engine, state, game.declare_base + LOW_S, *[game.name_base] * 6)  # all on myself
    assert state.outcome[0, LOW_S] == DISCARDED and state.score[0].tolist() == [0, 0]
    assert state.current_player[0] == 1


def test_a_claim_of_a_half_suit_with_an_opponent_card_scores_for_the_opponents():
    game = Literature(6)
    s = game.deal(hands_with(6, p0=cards("AS 2S 3S"), p2=cards("4S 5S"), p5=cards("6S")))
    engine, state = twin_of(s, num_players=6)
    play(engine, state, game.declare_base + LOW_S, *[game.name_base] * 6)
    assert state.outcome[0, LOW_S] == 1 and state.score[0].tolist() == [0, 1]
    obs = engine.observe(state, seats=1)[0]
    halves = DefaultEncoder(game).layout.start("half_suits")
    assert obs[halves + 3 * LOW_S] == 1.0  # scored by my team, for seat 1


def test_the_last_claim_ends_the_game_and_pays_each_team():
    game = Literature(4)
    s = game.deal([half(0) + half(1), half(2) + half(3), half(4) + half(5), half(6) + half(7)])
    engine, state = twin_of(s, num_players=4)
    for _ in range(8):  # whoever is to act claims its next half-suit, named right
        p = int(state.current_player[0])
        h = 2 * p if state.live[0] >> (2 * p) & 1 else 2 * p + 1
        play(engine, state, game.declare_base + h, *[game.name_base] * 6)
    assert state.terminated[0] and state.score[0].tolist() == [4, 4]
    assert state.declarer[0].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert state.rewards[0].tolist() == [0.0] * 4 and not engine.legal_action_mask(state).any()
    assert engine.payoffs(state)[0].tolist() == [0.0] * 4


def half(h: int) -> list[int]:
    return list(deck.cards_of_half_suit(h))


def test_original_rules_claim_a_half_suit_dealt_whole_at_the_deal():
    game = Literature(rules="original")
    hands = hands_with(4, p2=half(LOW_H) + cards("AS 8S 8C 9C 10C JC"))
    s = game.deal(hands)
    assert s.outcome[LOW_H] == 0  # the scalar rules claim it for seat 2
    engine = make_batched(SPEC, rules="original")
    state = engine.init(1, seed=0)
    engine.load(state, 0, game.deal(hands))
    assert state.outcome[0, LOW_H] == 0 and state.declarer[0, LOW_H] == 2
    assert state.outcome[0].tolist().count(LIVE) == 7


# --- every observer's tables, every step -------------------------------------------------------
def engine_words(game: Literature, s) -> np.ndarray:
    """The scalar engine's tables as the twin keeps them: (3, observers, 8) uint64."""
    eng, k = game.engine, s.know
    out = np.zeros((3, eng.num_observers, 8), np.uint64)
    for o in range(eng.num_observers):
        for h in range(8):
            if s.live >> h & 1:
                for kind, x in enumerate((k.holds, k.lacks, k.least)):
                    out[kind, o, h] = eng.block(x[h], o)
            else:
                out[1, o, h] = int.from_bytes(b"\x3f" * game.num_players, "little")
    return out


@pytest.mark.parametrize("rules", [{"num_players": 4}, {}, {"num_players": 8},
                                   {"rules": "original"}], ids=str)
def test_every_observers_tables_equal_the_scalar_engines_every_step(rules):
    game = SPEC.make_game(**rules)
    engine = make_batched(SPEC, **rules)
    batch = 20
    seeds = np.arange(batch) + 31
    state = engine.init(batch, seeds=seeds)
    rngs = [np.random.default_rng(int(x)) for x in seeds]  # slot i's deals, drawn alike
    scalar = [game.init(rng) for rng in rngs]
    games = 0
    pick = np.random.default_rng(5)
    while games < 60:
        for i, s in enumerate(scalar):
            assert np.array_equal(state.know[i], engine_words(game, s)), (i, s.steps)
            assert state.sizes[i].tolist() == s.sizes and state.live[i] == s.live
        actions = np.array([pick.choice(np.flatnonzero(game.legal_mask(s))) if not s.done
                            else 0 for s in scalar])
        engine.step(state, actions)
        for i, s in enumerate(scalar):
            game.apply(s, int(actions[i]), rngs[i])
            if s.done:
                games += 1
                scalar[i] = game.init(rngs[i])
        engine.autoreset(state)


# --- the step cap -----------------------------------------------------------------------------
@pytest.mark.parametrize("rules", [{"max_steps": 7}, {"max_steps": 40, "num_players": 8},
                                   {"max_steps": 25, "rules": "original"}], ids=str)
@pytest.mark.parametrize("agent", ["random", "heuristic"])
def test_games_cut_by_the_step_cap_match_the_scalar_game(rules, agent):
    # (mid-claim too: the claim pieces of the last observation, my_turn off once truncated)
    differential("literature", rules, games=150, batch=50, agent=agent, seed=7, every_seat=True)


# --- the Gymnasium view against the rule agents ----------------------------------------------
GYM = [
    {"opponent": "heuristic"},
    {"opponent": "cautious", "num_players": 4},
    {"opponent": ["heuristic", "cautious", "random"] * 2 + ["heuristic"], "num_players": 8,
     "obs_encoding": "original"},
    {"opponent": "heuristic", "rules": "original", "learner_seat": 1},
]


@pytest.mark.parametrize("kwargs", GYM, ids=str)
def test_the_vector_env_plays_the_games_of_gym_env(kwargs):
    play_beside_gym_env("literature", kwargs, batch=12, most_steps=150, first_seed=11, games=1)
