"""Every observation a policy acts on is a live game's, whatever vector env plays the games.

Gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv`` (``gymnasium.make_vec(id, num_envs=B,
vectorization_mode="sync")`` or ``"async"``) reset an ended game on the *next* ``step`` by
default (``AutoresetMode.NEXT_STEP``): the observation returned when a game ends is its last
one, whose action mask is all zeros, and the action a policy then picks there is ignored. A
masked sampler fed that row has no legal action to choose (a softmax over nothing: NaN).

``MaskedVectorEnv(envs)`` takes any Gymnasium VectorEnv of card_envs' single-agent envs (sync,
async, or the batched ``CardVectorEnv``, which already resets in the same step) and gives:

* same-step autoreset (``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``): when a game
  ends in ``step`` its slot is reset in that call, the returned observation is the new game's,
  the ended game's last observation is in ``info["final_obs"]`` and its last info in
  ``info["final_info"]`` (rows valid where ``info["_final_obs"]`` / ``info["_final_info"]``),
  as Gymnasium's own same-step mode gives them;
* ``action_masks()``: (B, actions) bool, the learners' legal actions, never an all-False row.

``card_envs.vector.sb3.sb3_vec_env(envs)`` puts it between any such VectorEnv and SB3.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
from gymnasium.vector import (
    AsyncVectorEnv,
    AutoresetMode,
    SyncVectorEnv,
    VectorEnv,
    VectorWrapper,
)


def action_masks_of(env: VectorEnv) -> np.ndarray:
    """(B, actions) bool: the legal actions of each sub-env, read from the first env in the
    wrapper chain that has ``action_masks()`` (the batched env) or ``call`` (sync, async)."""
    inner: Any = env
    while True:
        if callable(getattr(inner, "action_masks", None)):
            return np.asarray(inner.action_masks(), dtype=bool)
        if callable(getattr(inner, "call", None)):
            return np.stack(inner.call("action_masks")).astype(bool)
        if not isinstance(inner, VectorWrapper):
            raise ValueError(
                f"{type(env).__name__} has no action masks: give a Gymnasium VectorEnv of "
                "card_envs environments (gymnasium.make_vec with a card_envs id)"
            )
        inner = inner.env


def autoreset_mode_of(env: VectorEnv) -> AutoresetMode:
    """The autoreset mode ``env`` declares (Gymnasium's default, NEXT_STEP, if none)."""
    mode = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
    return AutoresetMode(mode.value if isinstance(mode, AutoresetMode) else mode)


class MaskedVectorEnv(VectorWrapper):
    """A Gymnasium VectorEnv of card_envs envs with same-step autoreset and
    ``action_masks()``; see the module docstring.

    Args:
        env: ``gymnasium.make_vec(...)`` of a card_envs id in any vectorization mode and any
            autoreset mode (a NEXT_STEP or DISABLED env is reset here, through Gymnasium's
            ``reset(options={"reset_mask": ...})``).
    """

    def __init__(self, env: VectorEnv):
        if not isinstance(env, VectorEnv):
            raise ValueError(
                f"MaskedVectorEnv wraps a Gymnasium VectorEnv (gymnasium.make_vec), "
                f"got {type(env).__name__}"
            )
        super().__init__(env)
        self.inner_autoreset_mode = autoreset_mode_of(env)
        self.metadata = {**env.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}

    def step(self, actions: Any):
        obs, reward, terminated, truncated, info = self.env.step(actions)
        ended = np.logical_or(terminated, truncated)
        if self.inner_autoreset_mode == AutoresetMode.SAME_STEP or not ended.any():
            return obs, reward, terminated, truncated, info
        last_obs = _final_obs(obs, ended)
        obs, reset_info = self.env.reset(options={"reset_mask": ended.copy()})
        info = {
            **_overlay(info, reset_info, ended),
            "final_obs": last_obs, "_final_obs": ended.copy(),
            "final_info": info, "_final_info": ended.copy(),
        }
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """(B, actions) bool: each game's legal actions for its learner (a live game's)."""
        return action_masks_of(self.env)

    def __getstate__(self) -> dict[str, Any]:
        """Our fields (pickle, deepcopy); TypeError saying what to do instead for Gymnasium's
        vector envs that cannot be pickled."""
        inner = self.env.unwrapped
        reason = None
        if isinstance(inner, AsyncVectorEnv):
            reason = "its games run in worker processes"
        elif isinstance(inner, SyncVectorEnv) and not _pickles(inner.env_fns):
            reason = "it keeps the env factories make_vec gave it, which do not pickle"
        if reason:
            raise TypeError(
                f"cannot pickle or copy Gymnasium's {type(inner).__name__} ({reason}): pickle "
                "the batched env (gymnasium.make_vec(id, num_envs=B)) or the single envs"
            )
        return dict(self.__dict__)


def _pickles(value: Any) -> bool:
    """Whether ``value`` pickles (Gymnasium's make_vec: a generator, or local functions)."""
    try:
        pickle.dumps(value)
    except (TypeError, AttributeError, pickle.PicklingError):
        return False
    return True


def _final_obs(obs: Any, rows: np.ndarray) -> Any:
    """The last observations of the games ``rows`` as Gymnasium's same-step mode gives them:
    a copy of the batch for array observations; for Dict observations, an object array
    holding each ended game's observation (None in the other rows)."""
    if not isinstance(obs, dict):
        return np.copy(obs)
    out = np.full(len(rows), None, dtype=object)
    for i in np.flatnonzero(rows).tolist():
        out[i] = {key: np.copy(value[i]) for key, value in obs.items()}
    return out


def _overlay(step_info: dict[str, Any], reset_info: dict[str, Any],
             rows: np.ndarray) -> dict[str, Any]:
    """Gymnasium's batched info of a step whose ``rows`` were then reset: those rows hold
    the new games' reset info (``_key`` masks say which rows of each key are valid)."""
    out: dict[str, Any] = {}
    for key in {k for k in (*step_info, *reset_info) if not k.startswith("_")}:
        old, new = step_info.get(key), reset_info.get(key)
        old_valid = step_info.get(f"_{key}", np.zeros_like(rows)) & ~rows
        new_valid = reset_info.get(f"_{key}", np.zeros_like(rows)) & rows
        if isinstance(old, dict) or isinstance(new, dict):
            out[key] = _overlay(old or {}, new or {}, rows)
        elif not (old_valid | new_valid).any():
            continue  # only the ended games had it (their result): it is in final_info
        elif new is None or not new_valid.any():
            out[key] = old
        elif old is None or not old_valid.any():
            out[key] = new
        else:
            merged = np.array(old, copy=True)
            merged[new_valid] = np.asarray(new)[new_valid]
            out[key] = merged
        out[f"_{key}"] = old_valid | new_valid
    return out


__all__ = ["MaskedVectorEnv", "action_masks_of", "autoreset_mode_of"]
