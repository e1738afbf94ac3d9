"""The batched Gymnasium VectorEnv and the engine's functional core: registration, the games of
gym_env() slot by slot, Player opponents, and bad input."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import card_envs  # noqa: F401  (registers the games)
from card_envs import vector
from card_envs.core.make import make_batched
from card_envs.registry import env_names, load_spec

pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")

from card_envs.vector.gym_env import CardVectorEnv  # noqa: E402
from card_envs.vector.selfplay import Player  # noqa: E402
from tests.vector_checks import play_beside_gym_env  # noqa: E402

GAMES = vector.names()
IDS = {name: load_spec(name).gymnasium_id for name in GAMES}


def test_the_spec_is_the_one_place_that_names_a_twin():
    with_twin = [load_spec(e).name for e in env_names() if load_spec(e).batched is not None]
    assert GAMES == with_twin
    for e in env_names():
        spec = load_spec(e)
        entry = gymnasium.spec(spec.gymnasium_id).vector_entry_point
        assert (entry is not None) == (spec.batched is not None), e


@pytest.mark.parametrize("name", GAMES)
def test_make_vec_gives_the_batched_env(name):
    env = gymnasium.make_vec(IDS[name], num_envs=16, vectorization_mode="vector_entry_point")
    assert isinstance(env, CardVectorEnv)
    assert isinstance(gymnasium.make_vec(IDS[name], num_envs=2), CardVectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=0)
    assert obs.shape == (16, *env.single_observation_space.shape)
    assert env.observation_space.contains(obs)
    masks = env.action_masks()
    assert masks.shape == (16, env.single_action_space.n) and masks.any(axis=1).all()
    rng = np.random.default_rng(0)
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
        obs, reward, terminated, truncated, info = env.step(actions)
        assert obs.shape == (16, *env.single_observation_space.shape)
        assert reward.shape == terminated.shape == (16,)
        assert env.action_masks().any(axis=1).all()  # same-step reset: always a live game
        if terminated.any():
            assert np.array_equal(info["_final_obs"], terminated | truncated)


def exact_cases() -> list[tuple[str, dict]]:
    """(game, gym_env arguments): every game against each of its batched agents (random
    included: it draws from the slot's generator as the scalar RandomAgent draws from the
    env's), and some rules variants, encodings and fixed seats."""
    cases = []
    for name in GAMES:
        spec = load_spec(name)
        engine = make_batched(spec, **spec.gym_defaults)
        for agent in engine.agents:
            cases.append((name, {"opponent": agent}))
        cases.append((name, {"obs_encoding": "original", "learner_seat": 0}))
        for variant in spec.variants[1:]:
            cases.append((name, dict(variant)))
        for rules in [spec.gym_defaults, *spec.variants[1:]]:  # the learner plays its team
            rules = {**spec.gym_defaults, **rules}
            game = spec.make_game(**rules)
            if game.teams():
                n, agent = game.num_players, engine.agents[-1]
                cases.append((name, {**rules, "opponent": [
                    "learner" if (k + 1) % len(game.teams()) == 0 else agent
                    for k in range(n - 1)]}))
    return cases


EXACT = exact_cases()


@pytest.mark.parametrize("name,kwargs", EXACT, ids=[f"{n}-{k}" for n, k in EXACT])
def test_seeded_slots_play_the_games_of_gym_env(name, kwargs):
    play_beside_gym_env(name, kwargs, batch=24, most_steps=3000, first_seed=7)


@pytest.mark.parametrize("name", GAMES)
def test_a_player_opponent_plays_between_the_compiled_calls(name):
    # a Player that asks the engine for its rule agent's moves must give the very games of
    # that rule agent playing inside the compiled call
    spec = load_spec(name)
    agent = make_batched(spec, **spec.gym_defaults).agents[-1]
    compiled = CardVectorEnv(name, num_envs=32, opponent=agent)
    calls = []

    def policy(obs, mask, rows, state):
        calls.append(len(rows))
        assert obs.shape == (len(rows), compiled.single_observation_space.shape[0])
        return outside.engine.act(state, agent, rows)

    outside = CardVectorEnv(name, num_envs=32, opponent=Player(policy, name=agent))
    seeds = np.arange(32) + 3
    for a, b in zip(compiled.reset(seed=seeds), outside.reset(seed=seeds), strict=True):
        assert np.array_equal(a if isinstance(a, np.ndarray) else a["seat"],
                              b if isinstance(b, np.ndarray) else b["seat"])
    rng = np.random.default_rng(0)
    for _ in range(100):
        masks = compiled.action_masks()
        assert np.array_equal(masks, outside.action_masks())
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for x, y in zip(compiled.step(actions)[:4], outside.step(actions)[:4], strict=True):
            assert np.array_equal(x, y)
    if spec.make_game(**spec.gym_defaults).num_players > 1:
        assert calls and max(calls) > 1  # one call for all the games where its seat acts


def test_opponents_are_batched_rule_agents_and_win_against_random():
    env = CardVectorEnv("simple_tricks", num_envs=512, opponent="heuristic", learner_seat=0)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    total, games = 0.0, 0
    while games < 2000:
        masks = env.action_masks()
        counts = masks.sum(axis=1)
        pick = (rng.random(len(counts)) * counts).astype(int)
        _, reward, terminated, truncated, _ = env.step((masks.cumsum(1) > pick[:, None]).argmax(1))
        total += reward.sum()
        games += int((terminated | truncated).sum())
    assert total / games < -0.3  # a random learner loses to the heuristic


def test_one_seed_plays_the_same_games_again():
    runs = []
    for _ in range(2):
        env = CardVectorEnv("thirty_one", num_envs=64, opponent="random")
        obs, _ = env.reset(seed=11)
        trace = [obs]
        for _ in range(50):
            obs, reward, *_ = env.step(env.action_masks().argmax(axis=1))
            trace += [obs, reward]
        runs.append(trace)
    assert all(np.array_equal(a, b) for a, b in zip(*runs, strict=True))


# --- bad input ------------------------------------------------------------------------------
def test_an_illegal_action_names_the_slot_the_action_and_the_legal_ones():
    env = CardVectorEnv("simple_tricks", num_envs=4, learner_seat=0)
    env.reset(seed=0)
    before = env.state.copy()
    actions = np.array([np.flatnonzero(m)[0] for m in env.action_masks()])
    bad = int(np.flatnonzero(~env.action_masks()[2])[0])
    actions[2] = bad
    legal = np.flatnonzero(env.action_masks()[2]).tolist()
    with pytest.raises(ValueError, match=rf"action {bad} in slot 2 is illegal") as err:
        env.step(actions)
    assert str(legal) in str(err.value)
    actions[2] = 99
    with pytest.raises(ValueError, match="slot 2 is out of range"):
        env.step(actions)
    for x, y in zip(before.arrays, env.state.arrays, strict=True):
        assert np.array_equal(x, y)  # a step that raises changes nothing


def test_bad_batches_and_arguments_raise_clear_errors():
    env = CardVectorEnv("thirty_one", num_envs=4)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="integers"):
        env.step(np.full(4, 0.5))
    for bad in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="num_envs"):
            CardVectorEnv("thirty_one", num_envs=bad)
        with pytest.raises(ValueError, match="num_envs"):
            vector.make("thirty_one").init(bad)
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*random, greedy"):
        CardVectorEnv("thirty_one", num_envs=4, opponent="nobody")
    with pytest.raises(ValueError, match="only for the learner's teammates"):
        CardVectorEnv("literature", num_envs=2, num_players=4,
                      opponent=["learner", "heuristic", "heuristic"])
    with pytest.raises(ValueError, match="unknown argument 'colour'"):
        gymnasium.make_vec(IDS["simple_tricks"], num_envs=2,
                           vectorization_mode="vector_entry_point", colour=3)
    with pytest.raises(ValueError, match="num_players=9"):
        vector.make("thirty_one", num_players=9)
    with pytest.raises(ValueError, match="seeds must be 3 integers"):
        vector.make("simple_tricks").init(3, seeds=[1, 2])
    with pytest.raises(ValueError, match="obs_encoding"):
        CardVectorEnv("simple_tricks", obs_encoding="pixels")
    with pytest.raises(ValueError, match="encoding='pixels'"):
        vector.make("simple_tricks").observe(vector.make("simple_tricks").init(2), "pixels")
    with pytest.raises(ValueError, match="learner_seat"):
        CardVectorEnv("simple_tricks", learner_seat=2)
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        vector.make("poker")


def test_a_game_without_a_twin_is_named_with_the_games_that_have_one():
    spec = load_spec("simple_tricks")
    object.__setattr__(spec, "batched", None)  # the spec is frozen: as if it named none
    try:
        with pytest.raises(ValueError, match="no batched twin for 'simple_tricks'"):
            vector.make("simple_tricks")
    finally:
        object.__setattr__(spec, "batched", "card_envs.simple_tricks.batched")


def _same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a.arrays, b.arrays, strict=True))


def test_reset_slots_takes_a_bool_mask_or_slot_numbers_and_checks_before_it_changes_anything():
    engine = vector.make("thirty_one")
    state = engine.init(6, seed=0)
    for _ in range(40):  # some games over
        live = ~state.done
        engine.step(state, np.where(live, state.mask.argmax(axis=1), 0))
    over = state.terminated | state.truncated
    reference = state.copy()
    for bad in (np.ones(5, bool), np.array([0.0, 2.0]), np.array([-1]), np.array([6]),
                np.zeros((2, 3), np.int64), "0"):
        with pytest.raises(ValueError, match="slots"):
            engine.reset_slots(state, bad)
        assert _same(state, reference)
    by_mask = state.copy()
    by_numbers = state.copy()
    engine.reset_slots(by_mask, over)
    engine.reset_slots(by_numbers, np.flatnonzero(over))
    assert _same(by_mask, by_numbers)
    assert not by_mask.done.any() or not over.any()
    untouched = ~over
    assert np.array_equal(by_mask.steps[untouched], reference.steps[untouched])


def test_step_active_must_be_a_bool_mask_of_the_batch():
    engine = vector.make("simple_tricks")
    state = engine.init(3, seed=0)
    reference = state.copy()
    actions = state.mask.argmax(axis=1)
    for bad in (np.arange(3), np.ones(2, bool), np.ones((3, 1), bool), [1, 0, 1]):
        with pytest.raises(ValueError, match="active"):
            engine.step(state, actions, active=bad)
        assert _same(state, reference)
    engine.step(state, actions, active=np.array([False, True, False]))
    assert state.steps.tolist() == [0, 1, 0]


def test_observe_rows_take_a_bool_mask_or_slot_numbers_in_range():
    engine = vector.make("simple_tricks")
    state = engine.init(4, seed=0)
    everything = engine.observe(state)
    mask = np.array([False, True, False, True])
    assert np.array_equal(engine.observe(state, rows=mask), everything[[1, 3]])
    assert np.array_equal(engine.observe(state, rows=[3, 0]), everything[[3, 0]])
    for bad, what in ((np.array([0.5, 1.0]), "rows must be"), (np.array([-1]), "slot -1"),
                      (np.array([4]), "slot 4"), (np.ones(3, bool), "shape \\(4,\\)")):
        with pytest.raises(ValueError, match=what):
            engine.observe(state, rows=bad)
    for bad in (np.array([0, 1, 2, 5]), np.full(4, 0.5), np.array([True] * 4)):
        with pytest.raises(ValueError, match="seats"):
            engine.observe(state, seats=bad)


def test_importing_card_envs_imports_no_optional_extra():
    code = ("import sys, card_envs; card_envs.list_envs(); "
            "print(sorted(m for m in ('torch', 'numba', 'stable_baselines3', 'sb3_contrib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_numba_the_twins_name_the_extra_and_the_scalar_envs_work():
    code = ("import sys; sys.modules['numba'] = None; import card_envs, gymnasium; "
            "gymnasium.make('card_envs/ThirtyOne-v0').reset(seed=0)\n"
            "try:\n    gymnasium.make_vec('card_envs/ThirtyOne-v0', num_envs=4)\n"
            "except ValueError as err:\n    print(err)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'card-envs[numba]'" in out.stdout
