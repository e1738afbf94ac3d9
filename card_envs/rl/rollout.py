"""A MaskablePPO rollout buffer that keeps the per-action policies' facts of each observation.

The per-action facts (card_envs.core.action_features) are a fixed function of the observation
with no weights, yet an update recomputed them for every minibatch of every epoch, after the
rollout had computed them once already: about a sixth of 98 Cards' PPO update
(docs/performance.md). ``FactsRolloutBuffer`` stores the facts the policy computed while
acting (checked against the observation it stores: equal values, or computed anew) and hands
each minibatch's facts to the scorer with its observations, so the update reads them instead.
The values are the same, so training is the same, step for step (tests/test_action_heads.py).

``keep_rollout_facts(model)`` puts one in a MaskablePPO model whose policy is a
``PerActionMaskablePolicy``; the model's saved settings (``rollout_buffer_class``) are left
as they were.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

from card_envs.rl.action_heads import PerActionMaskablePolicy, PerActionScorer


class FactsRolloutBuffer(MaskableRolloutBuffer):
    """sb3-contrib's MaskableRolloutBuffer, plus each observation's facts for ``scorer``."""

    def __init__(self, *args: Any, scorer: PerActionScorer, **kwargs: Any):
        self.scorer = scorer
        self.facts: th.Tensor | None = None
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        super().reset()
        features = self.scorer.features
        # env by env, as get() flattens the other arrays (index env * buffer_size + step)
        shape = (self.n_envs, self.buffer_size, features.num_actions, features.num_features)
        if self.facts is None or tuple(self.facts.shape) != shape:
            self.facts = th.empty(shape)
        self.scorer.recorded = None

    def add(self, obs: np.ndarray, *args: Any, **kwargs: Any) -> None:
        observed = th.as_tensor(obs, dtype=th.float32).reshape(self.n_envs, -1)
        recorded, self.scorer.recorded = self.scorer.recorded, None
        if (recorded is not None and recorded[0].shape == observed.shape
                and th.equal(recorded[0], observed)):
            facts = recorded[1]
        else:  # the policy did not act on these observations last: compute them
            with th.no_grad():
                facts = self.scorer.features(observed)
        self.facts[:, self.pos] = facts
        super().add(obs, *args, **kwargs)

    def _get_samples(self, batch_inds: np.ndarray, env=None):
        samples = super()._get_samples(batch_inds, env)
        # the whole store and the batch's rows in it: the scorer reads only what it uses
        # (with the masks, only the legal actions' facts)
        self.scorer.give(samples.observations, self.facts.view(-1, *self.facts.shape[2:]),
                         th.as_tensor(batch_inds))
        return samples


def keep_rollout_facts(model) -> bool:
    """Give a MaskablePPO ``model`` with a per-action policy a ``FactsRolloutBuffer`` (of the
    same shape as its own); True if it got one. Models with other policies are left alone."""
    policy, old = model.policy, getattr(model, "rollout_buffer", None)
    if not isinstance(policy, PerActionMaskablePolicy) or type(old) is not MaskableRolloutBuffer:
        return False
    model.rollout_buffer = FactsRolloutBuffer(
        old.buffer_size, old.observation_space, old.action_space, old.device,
        gae_lambda=old.gae_lambda, gamma=old.gamma, n_envs=old.n_envs, scorer=policy.scorer)
    return True
