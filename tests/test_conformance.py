"""PettingZoo and Gymnasium conformance for every registered environment and variant."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import card_envs
from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ALL_CONFIGS, CONFIG_IDS, ENV_NAMES, random_legal

GYM_IDS = sorted(i for i in gymnasium.registry if i.startswith("card_envs/"))
PZ_IDS = sorted(i for i in pettingzoo.aec_registry if i.startswith("card_envs/"))


def test_every_game_is_registered_with_both_libraries():
    specs = [load_spec(n) for n in ENV_NAMES]
    assert sorted(s.gymnasium_id for s in specs) == GYM_IDS
    assert sorted(s.pettingzoo_id for s in specs) == PZ_IDS
    assert len(ENV_NAMES) >= 2


@pytest.mark.parametrize("env_id", PZ_IDS)
def test_pettingzoo_make(env_id):
    env = pettingzoo.make("aec", env_id)
    env.reset(seed=0)
    assert env.metadata["name"] == env_id.split("/")[1].replace("-v", "_v")
    assert not env.metadata["is_parallelizable"]


@pytest.mark.parametrize("name,config", ALL_CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("factory", ["env", "raw_env"])
def test_pettingzoo_api(name, config, factory):
    make = getattr(factories(load_spec(name)), factory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dict observations: PettingZoo warns for non-classic names
        api_test(make(**config), num_cycles=300)


@pytest.mark.parametrize("name,config", ALL_CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_seed(name, config):
    env = factories(load_spec(name)).env
    seed_test(lambda: env(**config), num_cycles=300)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_pickle_mid_game_continues_identically(name):
    env_fn = factories(load_spec(name)).env
    env = env_fn()
    env.reset(seed=7)
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, *_ = env.last()
        env.step(random_legal(obs["action_mask"], rng))
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(200):
        if not env.agents:
            break
        obs, rew, term, trunc, info = env.last()
        obs2, rew2, term2, trunc2, info2 = twin.last()
        assert gymnasium.utils.env_checker.data_equivalence(obs, obs2)
        assert (rew, term, trunc, info) == (rew2, term2, trunc2, info2)
        action = None if term or trunc else random_legal(obs["action_mask"], rng)
        env.step(action)
        twin.step(action)


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_check_env(env_id):
    env = gymnasium.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    env.close()


@pytest.mark.parametrize("name,config", ALL_CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("dict_obs", [False, True])
def test_gymnasium_check_env_variants(name, config, dict_obs):
    gym_env = factories(load_spec(name)).gym
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym_env(**config, dict_obs=dict_obs), skip_render_check=True)


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_episode_rewards_belong_to_the_learner(env_id):
    env = gymnasium.make(env_id)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        assert env.observation_space.contains(obs)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            assert mask.any() and np.array_equal(mask, info["action_mask"].astype(bool))
            obs, reward, term, trunc, info = env.step(
                random_legal(mask, np.random.default_rng(seed))
            )
            assert env.observation_space.contains(obs)
            done = term or trunc
        assert "payoff" in info and info["seat"] == env.unwrapped.seat


def test_list_envs_covers_the_registry():
    rows = card_envs.list_envs()
    assert [r.env_name for r in rows] == ENV_NAMES
    for r in rows:
        env = factories(load_spec(r.env_name)).raw_env()
        assert env.action_space("player_0").n == r.num_actions
        assert env.observation_space("player_0")["observation"].shape == r.obs_shape


def test_import_does_not_import_torch():
    code = "import sys, card_envs; card_envs.list_envs(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_last_then_step_encodes_once(name, monkeypatch):
    env = factories(load_spec(name)).env()
    env.reset(seed=0)
    calls = []
    encode = env.encoder.encode_state_read_only  # what the AEC env calls
    monkeypatch.setattr(
        env.encoder, "encode_state_read_only", lambda *a: calls.append(1) or encode(*a),
        raising=True,
    )
    rng = np.random.default_rng(0)
    for _ in range(30):
        if not env.agents:
            break
        before = len(calls)
        obs, _, term, trunc, _ = env.last()
        env.last()
        env.observe(env.agent_selection)
        assert len(calls) - before == 1  # one encoding for the three reads
        env.step(None if term or trunc else random_legal(obs["action_mask"], rng))
        assert len(calls) - before == 1  # step itself encodes nothing
