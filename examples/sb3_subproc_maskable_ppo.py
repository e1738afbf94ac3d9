"""sb3-contrib's MaskablePPO on the Gymnasium view of simple_tricks_v0, sampled in subprocesses.

The environment goes in unchanged: ``simple_tricks_v0.gym_env`` is the env factory that
``make_vec_env`` calls in each ``SubprocVecEnv`` worker, and MaskablePPO reaches every worker's
``action_masks()`` through ``VecEnv.env_method``. ``illegal_reward=None`` makes the environment
raise on an illegal action, so a finished run proves the mask was applied at every step.
After training, the policy plays duplicate deals against the random agent.

    python examples/sb3_subproc_maskable_ppo.py [--timesteps 30000] [--envs 2] [--pairs 500]
"""

from __future__ import annotations

import argparse

import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import is_masking_supported
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

from card_envs import simple_tricks_v0
from card_envs.core.agents import RandomAgent
from card_envs.core.evaluation import MatchResult, duplicate_evaluate
from card_envs.rl.policy_agent import PolicyAgent

# Small enough for two shared CPU cores; the episode is 10 learner decisions long.
PPO_SETTINGS = {
    "n_steps": 256,
    "batch_size": 128,
    "n_epochs": 4,
    "learning_rate": 1e-3,
    "gamma": 1.0,  # the only reward comes at the end of the deal
    "ent_coef": 0.01,
    "policy_kwargs": {"net_arch": [64, 64]},
    "device": "cpu",
}


def train(timesteps: int, envs: int = 2, seed: int = 0) -> MaskablePPO:
    """MaskablePPO trained against the random agent in ``envs`` subprocesses."""
    # A net this small runs fastest on one thread; more only fight the env workers for cores.
    th.set_num_threads(1)
    vec_env = make_vec_env(
        simple_tricks_v0.gym_env,
        n_envs=envs,
        seed=seed,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={"opponent": "random", "illegal_reward": None},
    )
    try:
        if not is_masking_supported(vec_env):
            raise RuntimeError("the vector env does not expose action_masks()")
        model = MaskablePPO("MlpPolicy", vec_env, seed=seed, **PPO_SETTINGS)
        model.learn(timesteps)
    finally:
        vec_env.close()
    return model


def evaluate_against_random(model: MaskablePPO, pairs: int, seed: int = 1) -> MatchResult:
    """Duplicate deals (seats swapped on the same deal) of the trained policy against random."""
    game = simple_tricks_v0.SimpleTricks()
    encoder = simple_tricks_v0.SPEC.encoders["default"](game)
    learner = PolicyAgent(game, encoder, model.policy, "maskable_ppo", label="maskable_ppo")
    return duplicate_evaluate(game, learner, RandomAgent(game), pairs, seed)


def main(timesteps: int = 30_000, envs: int = 2, pairs: int = 500, seed: int = 0) -> MatchResult:
    model = train(timesteps, envs, seed)
    result = evaluate_against_random(model, pairs)
    print(f"trained {model.num_timesteps} steps in {envs} subprocesses")
    print(result.summary())
    return result


if __name__ == "__main__":  # the guard SubprocVecEnv's forkserver/spawn workers need
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=30_000)
    parser.add_argument("--envs", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.timesteps, args.envs, args.pairs, args.seed)
