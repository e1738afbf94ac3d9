"""Ray RLlib multi-agent PPO on thirty_one_v0: one policy shared by every seat, with action masking.

The PettingZoo environment goes through RLlib's own ``PettingZooEnv`` wrapper. RLlib's
action-masking PPO module (``ActionMaskingTorchRLModule``) reads the observation under the key
``"observations"`` where PettingZoo puts it under ``"observation"``, so ``RLlibObservationKeys``
renames that one key; nothing else changes. The environment is ``raw_env()``, which raises on
an illegal action, so an iteration that finishes proves the mask held for every sampled action.

On one machine (a small local Ray, sampling in this process):

    python examples/rllib_multiagent_ppo.py --iterations 5

On a Ray cluster, the one line that changes is the ``ray.init`` call: ``connect("auto")`` runs
``ray.init(address="auto")`` instead of starting a local Ray. To spread sampling over the
cluster's CPUs, also raise the number of env runners (a setting, not code):

    python examples/rllib_multiagent_ppo.py --address auto --env-runners 16 --iterations 200
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import ray
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from card_envs import thirty_one_v0

ENV_ID = "card_envs_thirty_one"
SHARED_POLICY = "shared"


class RLlibObservationKeys(BaseWrapper):
    """Our observations with ``"observation"`` renamed ``"observations"``, RLlib's masking key."""

    def observation_space(self, agent: str) -> spaces.Dict:
        space = self.env.observation_space(agent)
        return spaces.Dict(
            {"observations": space["observation"], "action_mask": space["action_mask"]}
        )

    def observe(self, agent: str) -> dict[str, Any]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def make_env(env_config: dict[str, Any]) -> PettingZooEnv:
    """The RLlib env: RLlib's PettingZoo wrapper around the strict ``raw_env``."""
    return PettingZooEnv(RLlibObservationKeys(thirty_one_v0.raw_env(**env_config)))


def every_seat_to_shared(agent_id: str, episode: Any, **kwargs: Any) -> str:
    return SHARED_POLICY


def ppo_config(num_players: int, env_runners: int, batch: int) -> PPOConfig:
    """PPO with one masked module that every seat maps to."""
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": [64, 64], "head_fcnet_hiddens": [64]},
    )
    return (
        PPOConfig()
        # RLlib's env pre-check steps one action sampled without the mask, which raw_env rejects.
        .environment(ENV_ID, env_config={"num_players": num_players}, disable_env_checking=True)
        .env_runners(num_env_runners=env_runners)
        .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=every_seat_to_shared)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED_POLICY: module}))
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(128, batch),
            num_epochs=2,
            lr=3e-4,
            gamma=1.0,  # the only reward is the match result
        )
        .debugging(seed=0)
    )


def connect(address: str | None) -> None:
    """Start a small local Ray, or join the running cluster at ``address`` (e.g. "auto")."""
    if address is None:
        ray.init(num_cpus=2, include_dashboard=False)
    else:
        ray.init(address=address)


def train(
    iterations: int = 1,
    num_players: int = 3,
    env_runners: int = 0,
    batch: int = 1000,
) -> list[dict[str, Any]]:
    """Build PPO and run ``iterations`` training iterations; Ray must be running."""
    register_env(ENV_ID, make_env)
    algo = ppo_config(num_players, env_runners, batch).build_algo()
    try:
        results = []
        for i in range(iterations):
            result = algo.train()
            results.append(result)
            print(report(i + 1, result))
        return results
    finally:
        algo.stop()


def report(iteration: int, result: dict[str, Any]) -> str:
    """One line: env steps so far, episodes, and the mean return of every seat."""
    runners = result["env_runners"]
    per_seat = runners.get("agent_episode_returns_mean", {})
    seats = "  ".join(f"{a} {r:+.3f}" for a, r in sorted(per_seat.items()))
    episode_return = runners.get("episode_return_mean", math.nan)
    return (
        f"iteration {iteration}: {int(runners['num_env_steps_sampled_lifetime'])} env steps, "
        f"{int(runners.get('num_episodes_lifetime', 0))} episodes, "
        f"episode return mean {episode_return:+.3f} (zero-sum), per seat: {seats}"
    )


def main(
    iterations: int = 5,
    num_players: int = 3,
    env_runners: int = 0,
    batch: int = 2000,
    address: str | None = None,
) -> list[dict[str, Any]]:
    connect(address)
    try:
        return train(iterations, num_players, env_runners, batch)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--env-runners", type=int, default=0)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    parser.add_argument("--address", default=None, help='a Ray cluster to join, e.g. "auto"')
    args = parser.parse_args()
    main(args.iterations, args.players, args.env_runners, args.batch, args.address)
