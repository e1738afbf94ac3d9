"""Stable-Baselines3 ``VecEnv`` over our Gymnasium vector envs: B games, one Python call a step.

``sb3_vec_env("simple_tricks", num_envs=256, opponent="first_play")`` (the batched twin) plugs
straight into ``MaskablePPO("MlpPolicy", vec_env)`` (sb3-contrib reads the masks through
``env_method("action_masks")``) or any SB3 algorithm for discrete actions. So does
``sb3_vec_env(envs)`` for any Gymnasium VectorEnv of a card_envs id (``gymnasium.make_vec``
in the ``"sync"`` or ``"async"`` mode, any autoreset mode: ``MaskedVectorEnv`` resets ended
games in the same step, as SB3 expects). Importing this module imports stable-baselines3 (the
``train`` extra); ``import card_envs`` never does.

SB3 semantics: a game that ends is reset in the same step; its last observation is in
``infos[i]["terminal_observation"]``, ``infos[i]["TimeLimit.truncated"]`` says whether the
step cap cut it, and ``infos[i]["payoff"]`` / ``["score"]`` are the learner's result (as
``gym_env()``'s last info carries them). ``seed(s)`` before ``reset()`` seeds the batch with
``s`` (the batched env: one generator for the whole batch, ``CardVectorEnv.reset(seed=[...])``
gives per-game seeds; sync and async: game i from ``s + i``, Gymnasium's rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env import VecEnv, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

from card_envs.vector.gym_env import CardVectorEnv, make_vector_env
from card_envs.vector.masks import MaskedVectorEnv, autoreset_mode_of


class CardSB3VecEnv(VecEnv):
    """An SB3 VecEnv of a Gymnasium VectorEnv that resets in the same step and has
    ``action_masks()``: a ``CardVectorEnv`` or a ``MaskedVectorEnv`` (module docstring)."""

    def __init__(self, env: VectorEnv):
        if autoreset_mode_of(env) != AutoresetMode.SAME_STEP or not hasattr(env, "action_masks"):
            raise ValueError(f"CardSB3VecEnv needs same-step autoreset and action_masks(); "
                             f"wrap {type(env).__name__} in MaskedVectorEnv (or use sb3_vec_env)")
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
            final_obs, final = info["final_obs"], info["final_info"]
            for i in np.flatnonzero(dones).tolist():
                infos[i]["terminal_observation"] = _row(final_obs, i)
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                for key in ("payoff", "score"):
                    if key in final and final.get(f"_{key}", dones)[i]:
                        infos[i][key] = float(final[key][i])
        return obs, np.asarray(reward, np.float32), dones, infos

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
            raise AttributeError(f"the vector env has no per-game method {method_name!r}")
        masks = self.env.action_masks()
        return list(masks[self._indices(indices)])

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The vector env's attribute, once per game asked for (AttributeError if none)."""
        value = getattr(self.env, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r}: the games of a batch share one env")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs


def sb3_vec_env(game: str | VectorEnv, num_envs: int = 1, monitor: bool = True,
                **kwargs: Any) -> VecEnv:
    """An SB3 VecEnv of ``num_envs`` batched games of ``game`` (the CardVectorEnv arguments),
    or of ``game`` itself if it is a Gymnasium VectorEnv of a card_envs id (then give no
    other argument but ``monitor``); inside SB3's VecMonitor (episode returns and lengths in
    the logs) unless ``monitor=False``."""
    if isinstance(game, VectorEnv):
        if kwargs or num_envs != 1:
            raise ValueError("sb3_vec_env(envs): the VectorEnv is already made; give no "
                             "num_envs or env arguments with it")
        env = game if isinstance(game, CardVectorEnv) else MaskedVectorEnv(game)
    elif isinstance(game, str):
        env = make_vector_env(game, num_envs=num_envs, **kwargs)
    else:
        raise ValueError(f"game={game!r} is not valid; give a game name (e.g. "
                         "'simple_tricks') or a Gymnasium VectorEnv (gymnasium.make_vec)")
    vec_env = CardSB3VecEnv(env)
    return VecMonitor(vec_env) if monitor else vec_env


def _row(batch: Any, i: int) -> Any:
    """Row ``i`` of a batched observation (an array, or a dict of them for Dict spaces)."""
    if isinstance(batch, dict):
        return {key: _row(value, i) for key, value in batch.items()}
    return batch[i]
