"""Tianshou's multi-agent DQN on simple_tricks_v0 through Tianshou's own PettingZoo wrapper.

``tianshou.env.PettingZooEnv`` takes the PettingZoo environment as it is: it reads our
``{"observation", "action_mask"}`` dict into ``obs.obs`` and ``obs.mask``, and Tianshou's DQN
masks its Q-values and its epsilon exploration with ``obs.mask``. The multi-agent manager
(``MultiAgentOffPolicyAlgorithm``, Tianshou 2's successor of ``MultiAgentPolicyManager``) gives
each seat its own algorithm: a DQN learner in one seat, Tianshou's masked random agent in the
other. The environment is ``raw_env()``, which raises on an illegal action, so a finished run
proves that every collected action was legal. Then the greedy learner plays test deals.

    python examples/tianshou_multiagent.py [--epochs 3] [--epoch-steps 3000] [--test-episodes 400]
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

import numpy as np
import torch as th
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from card_envs import simple_tricks_v0

LEARNER = 1  # the learner's seat: player_1 (player_0 leads the first trick)

# Tianshou warns at every collect that multi-agent returns (one column per seat) are 2-D; they
# are meant to be, and CollectStats.returns keeps them per seat.
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)


def make_env() -> PettingZooEnv:
    """Tianshou's PettingZoo wrapper around the strict ``raw_env`` (illegal actions raise)."""
    return PettingZooEnv(simple_tricks_v0.raw_env())


def learner_and_random(env: PettingZooEnv) -> MultiAgentOffPolicyAlgorithm:
    """The multi-agent manager: a masked DQN for the learner's seat, masked random for the other."""
    observation_size = env.observation_space["observation"].shape
    net = Net(state_shape=observation_size, action_shape=env.action_space.n, hidden_sizes=[64, 64])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.0
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=1.0,  # the only reward is the deal's result
        # Every seat's moves share one buffer in env-step order, so a 1-step target would
        # bootstrap from the opponent's observation; 2 steps span my move and the reply.
        n_step_return_horizon=2,
        target_update_freq=200,
    )
    seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)]
    seats.insert(LEARNER, learner)
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)


def learner_returns(returns):
    """The learner's column of the per-seat episode returns, for Tianshou's training log."""
    return returns[:, LEARNER]


@dataclass
class Outcome:
    training_env_steps: int
    training_episodes: int
    learner_moved: float  # the largest change of any learner weight during training
    test: CollectStats  # returns: one row per test deal, one column per seat


def train_and_test(
    epochs: int, epoch_steps: int, test_episodes: int, envs: int = 4, seed: int = 0
) -> Outcome:
    """Train the learner against random for ``epochs`` x ``epoch_steps`` env steps, then test."""
    th.set_num_threads(1)  # a net this small runs fastest on one thread (and the CPU is shared)
    th.manual_seed(seed)
    np.random.seed(seed)  # Tianshou's epsilon and random agent draw from numpy's global generator
    train_envs = DummyVectorEnv([make_env] * envs)
    test_envs = DummyVectorEnv([make_env] * envs)
    train_envs.seed(seed)
    test_envs.seed(seed + 1)
    algorithm = learner_and_random(make_env())
    learner = algorithm.get_algorithm(f"player_{LEARNER}")
    initial = [p.detach().clone() for p in learner.policy.parameters()]
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, envs), exploration_noise=True
    )
    train_collector.reset()
    train_collector.collect(n_step=256)  # fill the buffer a little before the first update
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            max_epochs=epochs,
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=64,
            update_step_num_gradient_steps_per_sample=0.25,
            batch_size=64,
            test_in_training=False,
            multi_agent_return_reduction=learner_returns,
            show_progress=False,
        )
    )
    test_collector = Collector[CollectStats](algorithm, test_envs)  # greedy: no exploration
    test = test_collector.collect(n_episode=test_episodes, reset_before_collect=True)
    final = learner.policy.parameters()
    moved = max(float((p.detach() - p0).abs().max()) for p, p0 in zip(final, initial, strict=True))
    return Outcome(result.train_step, result.train_episode, moved, test)


def main(epochs: int = 3, epoch_steps: int = 3000, test_episodes: int = 400) -> Outcome:
    outcome = train_and_test(epochs, epoch_steps, test_episodes)
    returns = outcome.test.returns
    print(f"trained on {outcome.training_env_steps} env steps ({outcome.training_episodes} deals)")
    print(
        f"greedy DQN (player_{LEARNER}) against random over {len(returns)} test deals: "
        f"mean payoff {returns[:, LEARNER].mean():+.3f}, "
        f"won {(returns[:, LEARNER] > 0).mean():.1%}, lost {(returns[:, LEARNER] < 0).mean():.1%}"
    )
    return outcome


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--epoch-steps", type=int, default=3000)
    parser.add_argument("--test-episodes", type=int, default=400)
    args = parser.parse_args()
    main(args.epochs, args.epoch_steps, args.test_episodes)
