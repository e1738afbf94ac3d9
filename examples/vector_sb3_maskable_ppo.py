"""MaskablePPO from the batched twin's SB3 VecEnv, against today's make_vec_env path.

Both runs train the same MaskablePPO (same settings, same number of parallel games) on simple
tricks against the first_play agent: once on ``card_envs.vector.sb3.sb3_vec_env`` (B games in
one batched env, masks read in one call) and once on ``make_vec_env(simple_tricks_v0.gym_env,
n_envs=B)`` (B scalar envs in SB3's DummyVecEnv). It prints the learner steps per second of
``model.learn`` for each, and how fast rollouts alone are collected with a random policy.

    python examples/vector_sb3_maskable_ppo.py [--timesteps 65536] [--envs 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

from card_envs import simple_tricks_v0
from card_envs.vector.sb3 import sb3_vec_env

SETTINGS = {
    "n_steps": 64,  # per env: a rollout of 64 * envs steps
    "batch_size": 512,
    "n_epochs": 4,
    "learning_rate": 1e-3,
    "gamma": 1.0,
    "ent_coef": 0.01,
    "policy_kwargs": {"net_arch": [64, 64]},
    "device": "cpu",
}


def make(kind: str, envs: int, seed: int):
    """The batched SB3 VecEnv or make_vec_env's DummyVecEnv of gym_env, both vs first_play."""
    if kind == "batched":
        return sb3_vec_env("simple_tricks", num_envs=envs, opponent="first_play")
    return make_vec_env(simple_tricks_v0.gym_env, n_envs=envs, seed=seed,
                        env_kwargs={"opponent": "first_play", "illegal_reward": None})


def warm_up(envs: int, seed: int = 0) -> None:
    """One short learn() on each path, outside the timed windows: the twin's kernels are
    compiled (or loaded from numba's cache) and torch makes its first calls here, not in the
    first timed run (which otherwise printed a speed-up of 0.04x on a cold cache)."""
    for kind in ("batched", "make_vec_env"):
        vec_env = make(kind, envs, seed)
        MaskablePPO("MlpPolicy", vec_env, seed=seed, **SETTINGS).learn(SETTINGS["n_steps"] * envs)
        vec_env.close()


def train_rate(kind: str, timesteps: int, envs: int, seed: int = 0) -> float:
    """Learner steps per second of MaskablePPO.learn on ``kind``."""
    vec_env = make(kind, envs, seed)
    model = MaskablePPO("MlpPolicy", vec_env, seed=seed, **SETTINGS)
    start = time.perf_counter()
    model.learn(timesteps)
    rate = model.num_timesteps / (time.perf_counter() - start)
    vec_env.close()
    return rate


def rollout_rate(kind: str, steps: int, envs: int, seed: int = 0) -> float:
    """Learner steps per second of the env alone, random legal actions read from the masks."""
    vec_env = make(kind, envs, seed)
    rng = np.random.default_rng(seed)
    vec_env.reset()
    start = time.perf_counter()
    done = 0
    while done < steps:
        masks = get_action_masks(vec_env)
        counts = masks.sum(axis=1)
        pick = (rng.random(len(counts)) * counts).astype(np.int64)
        vec_env.step((masks.cumsum(axis=1) > pick[:, None]).argmax(axis=1))
        done += envs
    rate = done / (time.perf_counter() - start)
    vec_env.close()
    return rate


def main(timesteps: int = 65_536, envs: int = 64, seed: int = 0) -> dict[str, float]:
    th.set_num_threads(1)
    warm_up(envs, seed)
    rates = {}
    for kind in ("batched", "make_vec_env"):
        rates[f"{kind} learn"] = train_rate(kind, timesteps, envs, seed)
        rates[f"{kind} rollout"] = rollout_rate(kind, timesteps, envs, seed)
    print(f"MaskablePPO on simple tricks vs first_play, {envs} games in parallel, "
          f"{timesteps} timesteps, settings {SETTINGS}")
    print("| path | learn() steps/s | env alone steps/s |")
    print("|---|---:|---:|")
    for kind in ("batched", "make_vec_env"):
        print(f"| {kind} | {rates[f'{kind} learn']:,.0f} | {rates[f'{kind} rollout']:,.0f} |")
    print(f"learn() speed-up: {rates['batched learn'] / rates['make_vec_env learn']:.2f}x")
    return rates


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=65_536)
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.timesteps, args.envs, args.seed)
