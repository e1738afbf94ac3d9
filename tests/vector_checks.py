"""One check shared by the VectorEnv tests: a seeded CardVectorEnv plays, slot by slot, the very
games of ``gym_env()`` instances seeded alike (random legal moves)."""

from __future__ import annotations

import numpy as np

from card_envs.core.make import factories
from card_envs.registry import load_spec


def play_beside_gym_env(name: str, kwargs: dict, batch: int, most_steps: int, first_seed: int,
                        games: int | None = None) -> None:
    """Step both until ``games`` games (default: one per slot) have ended, at most
    ``most_steps`` steps, checking observations, masks, rewards, terminations, truncations,
    final observations and infos; fails if fewer games ended."""
    from card_envs.vector.gym_env import CardVectorEnv

    games = batch if games is None else games
    seeds = np.arange(batch) + first_seed
    env = CardVectorEnv(name, num_envs=batch, **kwargs)
    gym_env = factories(load_spec(name)).gym
    scalars = [gym_env(illegal_reward=None, **kwargs) for _ in range(batch)]
    obs, info = env.reset(seed=seeds)
    expected = [e.reset(seed=int(s)) for e, s in zip(scalars, seeds, strict=True)]
    assert np.array_equal(obs, np.stack([o for o, _ in expected]))
    assert info["seat"].tolist() == [e.seat for e in scalars]
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(most_steps):
        if ended >= games:
            break
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
                if "score" in inf:  # a game with a score (Palace has none)
                    assert info["final_info"]["score"][i] == inf["score"]
                o, inf = e.reset()
                assert info["seat"][i] == inf["seat"]
            assert np.array_equal(obs[i], o), i
    assert ended >= games, f"only {ended} games ended in {most_steps} steps"
