"""DQN with action masks, on Dict observations ``{"observation", "action_mask"}``.

SB3's DQN knows nothing of illegal actions. ``MaskedDQN`` applies the mask carried in
the observation in the three places where DQN picks an action:

1. acting greedily: the argmax runs over legal actions only (``MaskedQNetwork``);
2. exploring: epsilon-random actions, and the random warm-up actions before
   ``learning_starts``, are drawn uniformly among legal actions;
3. the TD target: the max over next actions runs over the legal actions of the next
   state (a terminal next state, whose mask is empty, contributes 0).

Use it with ``dict_obs=True`` environments (``gym_env(..., dict_obs=True)``); a flat
observation raises ValueError saying so. The policy is ``MaskedDQNPolicy``, which SB3's usual
names ``"MlpPolicy"`` and ``"MultiInputPolicy"`` also give here::

    env = make_vec_env("card_envs/SimpleTricks-v0", n_envs=4, env_kwargs={"dict_obs": True})
    model = MaskedDQN("MlpPolicy", env)

(docs/integrations.md gives settings that learn in a few seconds).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.dqn.policies import DQNPolicy, QNetwork
from torch.nn import functional as F

from card_envs.rl.optim import make_optimizer

MASK_KEY = "action_mask"
OBS_KEY = "observation"


class ObservationExtractor(BaseFeaturesExtractor):
    """Features = the flat ``observation`` entry; the mask is not an input to the network."""

    def __init__(self, observation_space: spaces.Dict):
        super().__init__(observation_space, int(np.prod(observation_space[OBS_KEY].shape)))

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        return th.flatten(observations[OBS_KEY], start_dim=1)


def masked_argmax(q_values: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """Index of the largest q-value among legal actions (action 0 where none is legal)."""
    return th.where(mask > 0.5, q_values, th.full_like(q_values, -th.inf)).argmax(dim=1)


class MaskedQNetwork(QNetwork):
    def _predict(self, observation: dict[str, th.Tensor], deterministic: bool = True) -> th.Tensor:
        return masked_argmax(self(observation), observation[MASK_KEY])


class MaskedDQNPolicy(DQNPolicy):
    """DQN policy whose greedy action is the best legal one."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("features_extractor_class", ObservationExtractor)
        super().__init__(*args, **kwargs)

    def make_q_net(self) -> MaskedQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return MaskedQNetwork(**net_args).to(self.device)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.optimizer = make_optimizer(self.optimizer_class, self.q_net.parameters(),
                                        lr_schedule(1), self.optimizer_kwargs)


def masked_max(q_values: th.Tensor, mask: th.Tensor) -> th.Tensor:
    """The largest q-value among legal actions per row, 0 for rows with none (terminal)."""
    legal = mask > 0.5
    best = th.where(legal, q_values, th.full_like(q_values, -th.inf)).max(dim=1).values
    return th.where(legal.any(dim=1), best, th.zeros_like(best))


def legal_sample(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (n, actions), all rows at
    once: the legal action with the largest uniform draw (0 for a row with none)."""
    draws = rng.random(np.shape(masks))
    return np.where(np.asarray(masks) > 0, draws, -1.0).argmax(1).astype(np.int64)


class MaskedDQN(DQN):
    """SB3 DQN that never picks an illegal action; see the module docstring."""

    # SB3's usual names mean the masked policy here: an MLP over the "observation" entry
    policy_aliases = {name: MaskedDQNPolicy
                      for name in ("MaskedDQNPolicy", "MlpPolicy", "MultiInputPolicy")}

    def __init__(self, policy: Any = "MaskedDQNPolicy", *args: Any, **kwargs: Any):
        if isinstance(policy, str) and policy not in self.policy_aliases or \
                isinstance(policy, type) and not issubclass(policy, MaskedDQNPolicy):
            raise ValueError(
                f"policy={policy!r} is not valid for MaskedDQN; choose one of "
                f"{', '.join(map(repr, self.policy_aliases))} (all MaskedDQNPolicy: an MLP over "
                "the 'observation' entry, the mask applied to its choices) or a subclass of "
                "MaskedDQNPolicy"
            )
        if isinstance(policy, str):  # before SB3's check that a Dict space has no "MlpPolicy"
            policy = self.policy_aliases[policy]
        super().__init__(policy, *args, **kwargs)
        self._explore_rng = np.random.default_rng(self.seed)

    def _check_obs_space(self) -> None:
        space = self.observation_space
        if not (
            isinstance(space, spaces.Dict) and MASK_KEY in space.spaces and OBS_KEY in space.spaces
        ):
            raise ValueError(
                "MaskedDQN needs Dict observations with 'observation' and 'action_mask'; "
                "make the environment with dict_obs=True"
            )

    def _setup_model(self) -> None:
        self._check_obs_space()
        super()._setup_model()

    def _masks(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(observation[MASK_KEY]).reshape(-1, self.action_space.n)

    def predict(self, observation, state=None, episode_start=None, deterministic: bool = False):
        """Greedy legal action, or in each game with probability epsilon (drawn game by game)
        a uniformly random legal one."""
        actions, state = self.policy.predict(observation, state, episode_start, deterministic)
        if deterministic or self.exploration_rate <= 0:
            return actions, state
        masks = self._masks(observation)
        explore = self._explore_rng.random(len(masks)) < self.exploration_rate
        if explore.any():
            actions = np.array(actions, copy=True).reshape(len(masks))
            actions[explore] = legal_sample(masks[explore], self._explore_rng)
            if not self.policy.is_vectorized_observation(observation):
                actions = actions[0]
        return actions, state

    def _sample_action(self, learning_starts, action_noise=None, n_envs: int = 1):
        if self.num_timesteps < learning_starts:
            # warm-up: random, but legal
            action = legal_sample(self._masks(self._last_obs), self._explore_rng)
            return action, action
        return super()._sample_action(learning_starts, action_noise, n_envs)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """DQN's update with the max over next actions taken among legal ones."""
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        losses = []
        for _ in range(gradient_steps):
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)
            discounts = data.discounts if data.discounts is not None else self.gamma
            with th.no_grad():
                next_q = masked_max(
                    self.q_net_target(data.next_observations), data.next_observations[MASK_KEY]
                ).reshape(-1, 1)
                target = data.rewards + (1 - data.dones) * discounts * next_q
            current = th.gather(self.q_net(data.observations), dim=1, index=data.actions.long())
            loss = F.smooth_l1_loss(current, target)
            losses.append(loss.item())
            self.policy.optimizer.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
            self.policy.optimizer.step()
        self._n_updates += gradient_steps
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(np.mean(losses)))
