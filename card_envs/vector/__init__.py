"""Batched games: B games of one configuration per call, bit-identical to the scalar rules.

Every game whose spec names a batched twin (``GameSpec.batched``) runs here::

    from card_envs import vector
    engine = vector.make("simple_tricks")       # the scalar game's rules arguments
    state = engine.init(1024, seed=0)           # or seeds=[...]: one scalar seed per game
    mask = engine.legal_action_mask(state)      # (B, actions) int8
    obs = engine.observe(state)                 # (B, size) float32, the seat to act's
    engine.step(state, actions)                 # in place; state.rewards (B, players)
    engine.autoreset(state)                     # re-deal the games that are over

The engine is ``card_envs.core.batched.BatchedGame``; the Gymnasium VectorEnv
(``gymnasium.make_vec(id, num_envs=B)``) is in ``card_envs.vector.gym_env``, the SB3 VecEnv
adapter in ``card_envs.vector.sb3`` (it imports stable-baselines3 only when used), batched
self-play in ``card_envs.vector.selfplay``. ``MaskedVectorEnv`` (``card_envs.vector.masks``)
gives any Gymnasium VectorEnv of our envs (``make_vec``'s ``"sync"`` and ``"async"`` modes
too) same-step autoreset and ``action_masks()``. See docs/vector.md.
"""

from __future__ import annotations

from typing import Any

from card_envs.core.batched import BatchedGame, BatchedState, numba_available
from card_envs.core.make import make_batched
from card_envs.registry import env_names, load_spec
from card_envs.vector.masks import MaskedVectorEnv


def names() -> list[str]:
    """The games with a batched twin (their spec's ``batched``), in registry order."""
    return [load_spec(e).name for e in env_names() if load_spec(e).batched is not None]


def make(name: str, **rules: Any) -> BatchedGame:
    """The batched engine of game ``name`` (``simple_tricks`` or ``simple_tricks_v0``) for the
    rules arguments ``rules``; ValueError for a game without a twin or a bad argument."""
    spec = load_spec(name)
    if spec.batched is None:
        raise ValueError(
            f"no batched twin for {name!r}; the games with one: {', '.join(names())}"
        )
    return make_batched(spec, **rules)


__all__ = ["BatchedGame", "BatchedState", "MaskedVectorEnv", "make", "names", "numba_available"]
