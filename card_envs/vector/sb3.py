"""Stable-Baselines3 ``VecEnv`` over the batched Gymnasium env: B games, one Python call a step.

``sb3_vec_env("simple_tricks", num_envs=256, opponent="first_play")`` plugs straight into
``MaskablePPO("MlpPolicy", vec_env)`` (sb3-contrib reads the masks through
``env_method("action_masks")``) or any SB3 algorithm for discrete actions. Importing this module
imports stable-baselines3 (the ``train`` extra); ``import card_envs`` never does.

SB3 semantics: a game that ends is reset in the same step; its last observation is in
``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]`` says whether the
step cap cut it, and ``infos[i]["payoff"]`` / ``["score"]`` are the learner's result (as
``gym_env()``'s last info carries them). ``seed(s)`` before ``reset()`` seeds the batch with
``s`` (one generator for the whole batch; ``CardVectorEnv.reset(seed=[...])`` gives per-game
seeds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from card_envs.vector.gym_env import CardVectorEnv, make_vector_env


class CardSB3VecEnv(VecEnv):
    """An SB3 VecEnv of a ``CardVectorEnv`` (see the module docstring)."""

    def __init__(self, env: CardVectorEnv):
        self.env = env
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        obs, reward, terminated, truncated, info = self.env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            for i in np.flatnonzero(dones).tolist():
                infos[i]["terminal_observation"] = info["final_obs"][i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                infos[i]["payoff"] = float(final["payoff"][i])
                infos[i]["score"] = float(final["score"][i])
        return obs, reward.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(B, actions) bool: each game's legal actions for its learner."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        """``action_masks`` per game (what sb3-contrib calls); nothing else is per game."""
        if method_name != "action_masks":
            raise AttributeError(f"the batched env has no per-game method {method_name!r}")
        masks = self.env.action_masks()
        return list(masks[self._indices(indices)])

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The batched env's attribute, once per game asked for (AttributeError if none)."""
        value = getattr(self.env, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r}: the games of a batch share one env")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


def sb3_vec_env(game: str, num_envs: int = 1, monitor: bool = True,
                **kwargs: Any) -> VecEnv:
    """An SB3 VecEnv of ``num_envs`` batched games of ``game`` (the CardVectorEnv arguments),
    inside SB3's VecMonitor (episode returns and lengths in the logs) unless ``monitor=False``."""
    env = CardSB3VecEnv(make_vector_env(game, num_envs=num_envs, **kwargs))
    return VecMonitor(env) if monitor else env
