"""Potential-based reward shaping for training (Ng, Harada & Russell, 1999), and a result bonus.

A setting may add ``shaping: {potential: NAME, scale: K}`` in configs/games.yaml (NAME: one of
its game's potentials, ``card_envs/<game>/shaping.py``, which its spec names): every step
the learner also gets ``K * (gamma * phi(s') - phi(s))``, with phi(s) read from the learner's
own observation (the default encoding's named pieces) and 0 once the episode ends. Shaping of
this form leaves the optimal policy unchanged; it only tells the learner sooner which moves
help. Evaluation always uses the game's own results.

Both wrappers are SB3 ``VecEnvWrapper``s, so the batched path (the game's twin) and the
scalar path (``--scalar``: a DummyVecEnv of ``gym_env()``) shape the same way, from the same
observations, a whole batch per call.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from card_envs.core.encoding import Layout
from card_envs.core.spec import GameSpec


def potentials(spec: GameSpec) -> dict[str, Callable[[Layout, np.ndarray], np.ndarray]]:
    """The game's shaping potentials (its spec's ``potentials`` module: POTENTIALS, name ->
    phi(the encoder's layout, observations (B, D)) -> (B,)); none for a game without."""
    if spec.potentials is None:
        return {}
    return dict(importlib.import_module(spec.potentials).POTENTIALS)


def potential(spec: GameSpec, name: str) -> Callable[[Layout, np.ndarray], np.ndarray]:
    """The game's potential ``name``; ValueError naming the game's potentials if unknown."""
    known = potentials(spec)
    if name not in known:
        raise ValueError(f"unknown potential {name!r} for {spec.env_name}; choose one of "
                         f"{', '.join(known) or '(none: the game declares no potentials)'}")
    return known[name]


class PotentialShaping(VecEnvWrapper):
    """Adds ``scale * (gamma * phi(next) - phi(now))`` to every learner's reward, phi read
    from the flat observations (``layout``: the encoder's)."""

    def __init__(self, venv: VecEnv, layout: Layout,
                 phi: Callable[[Layout, np.ndarray], np.ndarray], scale: float, gamma: float):
        super().__init__(venv)
        self.phi = phi
        self.layout, self.scale, self.gamma = layout, scale, gamma
        self.last = np.zeros(self.num_envs)

    def _potential(self, obs: np.ndarray) -> np.ndarray:
        return self.scale * self.phi(self.layout, obs)

    def reset(self):
        obs = self.venv.reset()
        self.last = self._potential(obs)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        # a game that ended was reset in the same step: obs is already the next game's
        now = self._potential(obs)
        shaped = rewards + (np.where(dones, 0.0, self.gamma * now) - self.last)
        self.last = now
        return obs, shaped.astype(np.float32), dones, infos


class ResultBonus(VecEnvWrapper):
    """Adds ``scale`` times the game's result (``infos[i]["payoff"]``, e.g. +1 for winning a
    Thirty-One match) to the learner's last reward of an episode.

    For a game trained on a shaped reward that never mentions the final result (Thirty-One's
    ``reward="original"`` pays per round), this puts the result back into what is learned.
    Episodes cut by the step cap add nothing.
    """

    def __init__(self, venv: VecEnv, scale: float):
        super().__init__(venv)
        self.scale = scale

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        rewards = rewards.copy()
        for i in np.flatnonzero(dones).tolist():
            info = infos[i]
            if "payoff" in info and not info.get("TimeLimit.truncated", False):
                rewards[i] += self.scale * info["payoff"]
        return obs, rewards, dones, infos
