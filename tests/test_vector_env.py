"""The batched Gymnasium VectorEnv: registration, its games against gym_env(), bad input."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import card_envs  # noqa: F401  (registers the games)
from card_envs import vector
from card_envs.registry import load_spec
from card_envs.vector.base import Dealer, numba_available
from card_envs.vector.gym_env import CardVectorEnv

GAMES = list(vector.ENGINES)
IDS = {name: load_spec(name).gymnasium_id for name in GAMES}


@pytest.mark.parametrize("name", GAMES)
def test_make_vec_gives_the_batched_env(name):
    env = gymnasium.make_vec(IDS[name], num_envs=16, vectorization_mode="vector_entry_point")
    assert isinstance(env, CardVectorEnv)
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


# (game, gym_env arguments) whose opponents draw nothing from the generator, so that a slot
# seeded with s plays exactly the games of gym_env(...).reset(seed=s) and its next resets
EXACT = [
    ("simple_tricks", {"opponent": "first_play"}),
    ("simple_tricks", {"opponent": "heuristic", "learner_seat": 1}),
    ("simple_tricks", {"opponent": "heuristic", "obs_encoding": "original"}),
    ("ninety_eight_cards", {}),
    ("ninety_eight_cards", {"rules": "original", "obs_encoding": "original"}),
    ("thirty_one", {"opponent": "greedy"}),
    ("thirty_one", {"opponent": ["greedy", "expected_value"], "num_players": 3}),
    ("thirty_one", {"opponent": "expected_value", "reward": "original", "lives": 1}),
]


@pytest.mark.parametrize("name,kwargs", EXACT, ids=[f"{n}-{k}" for n, k in EXACT])
def test_seeded_slots_play_the_games_of_gym_env(name, kwargs):
    batch, steps = (16, 200) if kwargs.get("num_players", 2) > 2 else (32, 300)
    seeds = np.arange(batch) + 7
    env = CardVectorEnv(name, num_envs=batch, **kwargs)
    gym_env = load_spec(name).factories()[2]
    scalars = [gym_env(illegal_reward=None, **kwargs) for _ in range(batch)]
    obs, info = env.reset(seed=seeds)
    expected = [e.reset(seed=int(s)) for e, s in zip(scalars, seeds, strict=True)]
    assert np.array_equal(obs, np.stack([o for o, _ in expected]))
    assert info["seat"].tolist() == [e.seat for e in scalars]
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(steps):
        masks = env.action_masks()
        assert np.array_equal(masks, np.stack([e.action_masks() for e in scalars]))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, reward, terminated, truncated, info = env.step(actions)
        for i, e in enumerate(scalars):
            o, r, te, tr, inf = e.step(int(actions[i]))
            assert (r, te, tr) == (reward[i], terminated[i], truncated[i]), i
            if te or tr:
                ended += 1
                assert np.array_equal(info["final_obs"][i], o)
                assert info["final_info"]["payoff"][i] == inf["payoff"]
                o, inf = e.reset()
                assert info["seat"][i] == inf["seat"]
            assert np.array_equal(obs[i], o), i
    assert ended >= batch


class RowShuffleDealer(Dealer):
    """Shuffles as the compiled step of Thirty-One's VectorEnv does (``_kernels._shuffle_rows``),
    in numpy: row by row, Fisher-Yates from the end, one ``rng.random()`` per swap."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.reshuffles = 0

    def _rows(self, lengths: list[int], width: int) -> np.ndarray:
        out = np.tile(np.arange(width, dtype=np.int64), (len(lengths), 1))
        for r, length in enumerate(lengths):
            for j in range(length - 1, 0, -1):
                k = int(self.rng.random() * (j + 1))
                out[r, j], out[r, k] = out[r, k], out[r, j]
        assert (np.sort(out, axis=1) == np.arange(width)).all()
        return out

    def permutations(self, slots, n):
        return self._rows([n] * len(slots), n)

    def ragged_permutations(self, slots, lengths, width):
        self.reshuffles += len(slots)
        return self._rows(lengths.tolist(), width)


# (CardVectorEnv arguments, batch, steps); "short_decks": cut every deck to one card before each
# step (the same in both envs: not a real game), so that rounds reach the reshuffles
COMPILED = [
    ({}, 64, 300),
    ({"short_decks": True}, 64, 100),
    ({"num_players": 3, "learner_seat": 1}, 32, 200),
    ({"num_players": 4, "reward": "original", "instant_31": True, "three_of_a_kind": True}, 32,
     200),
    ({"obs_encoding": "original", "lives": 1, "max_round_turns": 6, "reward": "original"}, 32,
     200),
]


@pytest.mark.skipif(not numba_available(), reason="the compiled step needs numba")
@pytest.mark.parametrize("kwargs,batch,steps", COMPILED, ids=[str(k) for k, *_ in COMPILED])
def test_compiled_random_opponent_step_plays_the_python_loop(kwargs, batch, steps):
    # Thirty-One against random opponents steps in one compiled call; with a dealer that
    # shuffles as that call does, the Python loop must give everything bit for bit the same
    kwargs = dict(kwargs)
    short = kwargs.pop("short_decks", False)
    fused = CardVectorEnv("thirty_one", num_envs=batch, opponent="random", **kwargs)
    loop = CardVectorEnv("thirty_one", num_envs=batch, opponent="random", **kwargs)
    for a, b in zip(fused.reset(seed=5), loop.reset(seed=5), strict=True):
        assert np.array_equal(a if isinstance(a, np.ndarray) else a["seat"],
                              b if isinstance(b, np.ndarray) else b["seat"])
    loop.state.dealer = RowShuffleDealer(loop.state.dealer.rng)
    assert fused._compiled_step() and not loop._compiled_step()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(steps):
        if short:
            for env in (fused, loop):
                np.minimum(env.state.deck_size, 1, out=env.state.deck_size)
        masks = fused.action_masks()
        assert np.array_equal(masks, loop.action_masks())
        pick = (rng.random(batch) * masks.sum(axis=1)).astype(int)
        actions = (masks.cumsum(axis=1) > pick[:, None]).argmax(axis=1)
        *got, info = fused.step(actions)
        *expected, expected_info = loop.step(actions)
        for x, y in zip(got, expected, strict=True):
            assert np.array_equal(x, y)
        assert info.keys() == expected_info.keys()
        assert np.array_equal(info["seat"], expected_info["seat"])
        if "final_obs" in expected_info:
            ended += expected_info["_final_obs"].sum()
            for key in ("final_obs", "_final_obs"):
                assert np.array_equal(info[key], expected_info[key]), key
            for key, value in expected_info["final_info"].items():
                assert np.array_equal(info["final_info"][key], value), key
        for name, value in vars(loop.state).items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(value, getattr(fused.state, name)), name
        assert np.array_equal(fused._pending, loop._pending)
    assert fused._rng.random() == loop._rng.random()
    assert fused.state.dealer.rng.random() == loop.state.dealer.rng.random()
    assert ended >= batch
    assert (loop.state.dealer.reshuffles > batch) == short


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


# --- bad input ------------------------------------------------------------------------------
def test_an_illegal_action_names_the_slot_the_action_and_the_legal_ones():
    env = CardVectorEnv("simple_tricks", num_envs=4, learner_seat=0)
    env.reset(seed=0)
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
    with pytest.raises(ValueError, match="unknown opponent 'nobody'.*random, greedy"):
        CardVectorEnv("thirty_one", num_envs=4, opponent="nobody")
    with pytest.raises(ValueError, match="unknown argument 'colour'"):
        gymnasium.make_vec(IDS["simple_tricks"], num_envs=2,
                           vectorization_mode="vector_entry_point", colour=3)
    with pytest.raises(ValueError, match="no batched engine for 'palace'"):
        vector.make("palace")
    with pytest.raises(ValueError, match="num_players=9"):
        vector.make("thirty_one", num_players=9)
    with pytest.raises(ValueError, match="seeds must be 3 integers"):
        vector.make("simple_tricks").init(3, seeds=[1, 2])
    with pytest.raises(ValueError, match="obs_encoding"):
        CardVectorEnv("simple_tricks", obs_encoding="pixels")


def test_importing_card_envs_imports_no_optional_extra():
    code = ("import sys, card_envs; card_envs.list_envs(); "
            "print(sorted(m for m in ('torch', 'numba', 'stable_baselines3', 'sb3_contrib') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_engines_run_without_numba():
    code = ("import sys; sys.modules['numba'] = None; import card_envs, gymnasium, numpy; "
            "env = gymnasium.make_vec('card_envs/ThirtyOne-v0', num_envs=4, "
            "vectorization_mode='vector_entry_point'); env.reset(seed=0); "
            "env.step(env.action_masks().argmax(axis=1)); print(env.engine.backend)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "numpy"
