"""The training environments of a run: the game's batched twin, or the scalar games.

``training_env(cfg, seats)`` gives the SB3 ``VecEnv`` a run learns from:

- **batched** (every game with a twin, ``GameSpec.batched``): ``cfg["n_envs"]`` games in one
  ``CardVectorEnv`` per training opponent (``card_envs.vector``), the other seats played inside
  the same compiled call by the twin's rule agents, or by ``Player``s (frozen snapshots,
  teammates that are the learner, a trained model): one forward pass for all the games where
  that seat is to act;
- **scalar** (``--scalar``, or a game without a twin): a ``DummyVecEnv`` of ``gym_env()``, the
  other seats played by scalar agents, one game at a time.

Either way the same wrappers follow: potential shaping and the result bonus
(baselines/shaping.py), ``{"observation", "action_mask"}`` observations for masked DQN
(``DictObservations``) and SB3's ``VecMonitor``. Several opponent names (``a,b,a,a``) are
spread over the games in those proportions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper, VecMonitor

from baselines.shaping import PotentialShaping, ResultBonus, potential
from card_envs.core.make import factories
from card_envs.registry import load_spec

MASK_KEY, OBS_KEY = "action_mask", "observation"


def uses_twin(cfg: dict[str, Any]) -> bool:
    """Whether a run trains on its game's batched twin (not ``scalar``, and the game has one)."""
    return not cfg.get("scalar") and load_spec(cfg["env"]).batched is not None


def opponent_shares(names: Sequence[str], num_envs: int) -> list[tuple[str, int]]:
    """Each distinct name and its games, in the proportions of ``names`` (``[a, a, b, a]``:
    three quarters ``a``), adding up to ``num_envs``; every name gets at least one game."""
    distinct = list(dict.fromkeys(names))
    if num_envs < len(distinct):
        raise ValueError(f"n_envs={num_envs} is too few for the opponents {', '.join(distinct)}")
    counts = [max(1, round(num_envs * names.count(n) / len(names))) for n in distinct]
    while sum(counts) > num_envs:  # rounding up gave too many: take from the largest share
        counts[counts.index(max(counts))] -= 1
    counts[-1] += num_envs - sum(counts)
    return list(zip(distinct, counts, strict=True))


def vec_masks(venv: VecEnv) -> np.ndarray:
    """(n_envs, actions) bool: the learners' legal actions, from a batched env at once or
    from each scalar env's ``action_masks``."""
    direct = getattr(venv, "action_masks", None)
    if direct is not None:
        return direct()
    return np.stack(venv.env_method("action_masks")).astype(bool)


class ConcatVecEnv(VecEnv):
    """Several VecEnvs of one game side by side, as one (the games of each opponent)."""

    def __init__(self, parts: list[VecEnv]):
        self.parts = parts
        self.bounds = np.cumsum([0] + [p.num_envs for p in parts])
        first = parts[0]
        super().__init__(int(self.bounds[-1]), first.observation_space, first.action_space)

    def reset(self):
        for k, part in enumerate(self.parts):
            seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
            if seed is not None:
                part.seed(seed + 7919 * k)  # a different generator for each part
        self._reset_seeds()
        return np.concatenate([p.reset() for p in self.parts])

    def step_async(self, actions: np.ndarray) -> None:
        for k, part in enumerate(self.parts):
            part.step_async(actions[self.bounds[k]:self.bounds[k + 1]])

    def step_wait(self):
        results = [p.step_wait() for p in self.parts]
        obs = np.concatenate([r[0] for r in results])
        rewards = np.concatenate([r[1] for r in results])
        dones = np.concatenate([r[2] for r in results])
        infos = [info for r in results for info in r[3]]
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return np.concatenate([vec_masks(p) for p in self.parts])

    def close(self) -> None:
        for p in self.parts:
            p.close()

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        if method_name != "action_masks":
            raise AttributeError(f"the batched env has no per-game method {method_name!r}")
        masks = self.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices=None):
        """``action_masks`` (what sb3-contrib looks for) and ``render_mode`` (what SB3's
        VecEnv asks at construction: the parts'), once per game asked for."""
        if attr_name not in ("action_masks", "render_mode"):
            raise AttributeError(f"the batched env has no per-game attribute {attr_name!r}")
        count = len(self._get_indices(indices))
        if attr_name == "render_mode":
            return [self.parts[0].render_mode] * count
        return [self.action_masks] * count

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"cannot set {attr_name!r}: the games of a batch share one env")

    def env_is_wrapped(self, wrapper_class: type, indices=None) -> list[bool]:
        return [False] * self.num_envs

    def get_images(self):
        return [None] * self.num_envs


class DictObservations(VecEnvWrapper):
    """Observations as ``{"observation": obs, "action_mask": mask}`` (what masked DQN reads);
    a game's last observation gets an all-zero mask (no next action: the target adds 0)."""

    def __init__(self, venv: VecEnv):
        actions = venv.action_space.n
        space = spaces.Dict({OBS_KEY: venv.observation_space,
                             MASK_KEY: spaces.Box(0, 1, (actions,), np.int8)})
        super().__init__(venv, observation_space=space)
        self._no_moves = np.zeros(actions, np.int8)

    def _dict(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        return {OBS_KEY: obs, MASK_KEY: vec_masks(self.venv).astype(np.int8)}

    def reset(self):
        return self._dict(self.venv.reset())

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        for i in np.flatnonzero(dones).tolist():
            last = infos[i].get("terminal_observation")
            if last is not None:
                infos[i]["terminal_observation"] = {OBS_KEY: last, MASK_KEY: self._no_moves}
        return self._dict(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return vec_masks(self.venv)


def batched_part(cfg: dict[str, Any], num_envs: int, seats: list[Any]) -> VecEnv:
    """One CardVectorEnv of ``num_envs`` games, the other seats as given (relative to the
    learner: a batched agent's name or a ``Player``), as an SB3 VecEnv without monitor."""
    from card_envs.vector.sb3 import sb3_vec_env

    return sb3_vec_env(cfg["env"], num_envs=num_envs, monitor=False, opponent=seats,
                       obs_encoding=cfg["obs_encoding"], **cfg["env_kwargs"])


def scalar_env(cfg: dict[str, Any], seats_of: Callable[[int], list[Any]]) -> VecEnv:
    """A DummyVecEnv of ``cfg["n_envs"]`` scalar ``gym_env()``s; ``seats_of(i)`` gives env
    ``i``'s other seats (scalar agents, relative to the learner)."""
    gym_env = factories(load_spec(cfg["env"])).gym

    def make(index: int):
        def build():
            return gym_env(**cfg["env_kwargs"], obs_encoding=cfg["obs_encoding"],
                           opponent=seats_of(index))
        return build

    return DummyVecEnv([make(i) for i in range(cfg["n_envs"])])


def rule_seats(cfg: dict[str, Any], index: int) -> list[Any]:
    """Scalar env ``index``'s other seats when the opponents are rule agents only (names
    spread over the envs as ``opponent_shares`` does; ``"learner"`` for teammates the learner
    plays, ``teammate: learner``); ValueError for self-play seats."""
    from card_envs.core.agents import make_agent
    from card_envs.core.gym_env import LEARNER, teammate_places

    spec = load_spec(cfg["env"])
    game = spec.make_game(**cfg["env_kwargs"])
    if cfg["opponent"] == "solo":
        return []
    names = cfg["opponent"].split(",")
    name = names[index % len(names)]
    if name == "self" or (cfg.get("teammate") == "self" and game.num_players > 2):
        raise ValueError("rule_seats: this run's other seats include the learner's own policy")
    mates = teammate_places(game) if cfg.get("teammate") == "learner" else []
    return [LEARNER if offset in mates else make_agent(spec, name, game)
            for offset in range(1, game.num_players)]


def wrap(venv: VecEnv, cfg: dict[str, Any]) -> VecEnv:
    """The run's wrappers over its base VecEnv: shaping, result bonus, Dict observations
    (DQN), then VecMonitor (episode returns and lengths for the logs and progress lines)."""
    shaping = cfg.get("shaping")
    if shaping:
        spec = load_spec(cfg["env"])
        game = spec.make_game(**cfg["env_kwargs"])
        layout = spec.encoders[cfg["obs_encoding"]](game).layout
        gamma = cfg["hyperparams"].get("gamma", 0.99)
        venv = PotentialShaping(venv, layout, potential(spec, shaping["potential"]),
                                shaping.get("scale", 1.0), gamma)
    if cfg.get("result_bonus"):
        venv = ResultBonus(venv, cfg["result_bonus"])
    if cfg["algo"] == "dqn":
        venv = DictObservations(venv)
    return VecMonitor(venv)
