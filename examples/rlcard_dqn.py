"""RLCard's PettingZoo DQN agent trained on simple_tricks_v0 against RLCard's random agent.

RLCard's PettingZoo agents (``rlcard.agents.pettingzoo_agents``) and its PettingZoo loop
(``run_game_pettingzoo`` / ``reorganize_pettingzoo`` / ``tournament_pettingzoo``) take the
environment as it is: they read ``observation`` and ``action_mask`` from our observation dict.
The learner swaps seats every deal, learns only from its own transitions (RLCard's reorganize
step pairs each of its moves with its next own observation), and is then tested greedily in
both seats. The environment is ``raw_env()``, which raises on an illegal action, so a finished
run proves that every action, exploring or greedy, was legal.

    python examples/rlcard_dqn.py [--episodes 2000] [--test-episodes 500]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import torch as th
from rlcard.agents.pettingzoo_agents import DQNAgentPettingZoo, RandomAgentPettingZoo
from rlcard.utils import set_seed
from rlcard.utils.pettingzoo_utils import (
    reorganize_pettingzoo,
    run_game_pettingzoo,
    tournament_pettingzoo,
)

from card_envs import simple_tricks_v0

SEATS = ("player_0", "player_1")


def make_learner(env, episodes: int) -> DQNAgentPettingZoo:
    """RLCard's DQN sized for this game, exploring less over about the first half of training."""
    observation_size = env.observation_space(SEATS[0])["observation"].shape[0]
    return DQNAgentPettingZoo(
        num_actions=env.action_space(SEATS[0]).n,
        state_shape=[observation_size],
        mlp_layers=[64, 64],
        learning_rate=1e-3,
        discount_factor=1.0,  # the only reward is the deal's result
        replay_memory_init_size=200,
        update_target_estimator_every=200,
        epsilon_decay_steps=max(1, episodes * 5),  # 10 own moves a deal: decayed halfway through
        batch_size=32,
        device=th.device("cpu"),
    )


def seating(learner, opponent, deal: int) -> tuple[dict, str]:
    """The agents by seat for a deal, and the learner's seat (they swap every deal)."""
    seat = SEATS[deal % 2]
    other = SEATS[1 - deal % 2]
    return {seat: learner, other: opponent}, seat


def train(env, learner, opponent, episodes: int) -> int:
    """Play ``episodes`` deals, feeding the learner its own transitions; returns moves fed."""
    fed = 0
    for deal in range(episodes):
        agents, seat = seating(learner, opponent, deal)
        trajectories = reorganize_pettingzoo(run_game_pettingzoo(env, agents, is_training=True))
        for transition in trajectories[seat]:
            learner.feed(transition)
            fed += 1
    return fed


@dataclass
class Outcome:
    moves_fed: int
    gradient_steps: int
    mean_payoff: float  # the greedy learner's mean result per deal, over both seats
    random_mean_payoff: float  # the random agent's, over the same deals


def main(episodes: int = 2000, test_episodes: int = 500, seed: int = 0) -> Outcome:
    th.set_num_threads(1)  # a net this small runs fastest on one thread (and the CPU is shared)
    set_seed(seed)  # RLCard draws from Python's, numpy's and torch's global generators
    env = simple_tricks_v0.raw_env()
    env.reset(seed=seed)  # RLCard's loop calls reset() without a seed; deals continue from here
    learner = make_learner(env, episodes)
    opponent = RandomAgentPettingZoo(num_actions=env.action_space(SEATS[0]).n)
    fed = train(env, learner, opponent, episodes)
    payoffs = {"learner": 0.0, "random": 0.0}
    for deal in range(2):  # test in both seats, half the deals each
        agents, seat = seating(learner, opponent, deal)
        means = tournament_pettingzoo(env, agents, test_episodes // 2)
        payoffs["learner"] += means[seat] / 2
        payoffs["random"] += means[SEATS[1] if seat == SEATS[0] else SEATS[0]] / 2
    outcome = Outcome(fed, learner.train_t, payoffs["learner"], payoffs["random"])
    print(
        f"\nfed {outcome.moves_fed} moves, {outcome.gradient_steps} gradient steps; greedy DQN "
        f"against random over {test_episodes} deals: mean payoff {outcome.mean_payoff:+.3f} "
        f"(random {outcome.random_mean_payoff:+.3f})"
    )
    return outcome


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--test-episodes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.episodes, args.test_episodes, args.seed)
