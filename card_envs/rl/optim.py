"""The optimizer the project's SB3 policies build (card_envs.rl's PPO and DQN policies)."""

from __future__ import annotations

from typing import Any

import torch as th


def make_optimizer(optimizer_class, params, lr: float, kwargs: dict[str, Any]
                   ) -> th.optim.Optimizer:
    """``optimizer_class(params, lr=lr, **kwargs)``; Adam and AdamW with torch's fused kernel
    where this torch has one for the parameters' device (the same update, one kernel for
    all the weights instead of a loop over them: about 5% of a per-action PPO run's time
    on the 2-core machines, docs/performance.md), unless ``kwargs`` says otherwise. The
    saved model's ``optimizer_kwargs`` are left as they were."""
    params = list(params)
    if optimizer_class in (th.optim.Adam, th.optim.AdamW) and "fused" not in kwargs:
        try:
            return optimizer_class(params, lr=lr, fused=True, **kwargs)
        except (RuntimeError, TypeError, ValueError):  # no fused kernel here
            pass
    return optimizer_class(params, lr=lr, **kwargs)
