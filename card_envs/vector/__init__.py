"""Batched engines: B games of one configuration per call, bit-identical to the scalar rules.

``make(name, **rules)`` gives the engine of ``simple_tricks``, ``ninety_eight_cards`` or
``thirty_one`` (the rules arguments of the scalar game)::

    from card_envs import vector
    engine = vector.make("simple_tricks")
    state = engine.init(1024, seed=0)           # or seeds=[...]: one scalar seed per game
    mask = engine.legal_action_mask(state)      # (B, actions) int8
    obs = engine.observe(state)                 # (B, size) float32, the seat to act
    engine.step(state, actions)                 # in place; state.rewards (B, players)
    engine.autoreset(state)                     # re-deal the games that are over

The Gymnasium VectorEnv (``gymnasium.make_vec(id, num_envs=B,
vectorization_mode="vector_entry_point")``) is in ``card_envs.vector.gym_env``, the SB3
VecEnv adapter in ``card_envs.vector.sb3`` (it imports stable-baselines3 only when used).
See docs/vector.md.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from card_envs.vector.base import VectorGame, VectorState, numba_available

# game name -> (module, engine class): the games with a batched engine
ENGINES = {
    "simple_tricks": ("card_envs.vector.simple_tricks", "SimpleTricksVector"),
    "ninety_eight_cards": ("card_envs.vector.ninety_eight_cards", "NinetyEightCardsVector"),
    "thirty_one": ("card_envs.vector.thirty_one", "ThirtyOneVector"),
}


def game_name(name: str) -> str:
    """``simple_tricks`` for ``simple_tricks`` or ``simple_tricks_v0``; ValueError if unknown."""
    base = name.rsplit("_v", 1)[0] if name.rsplit("_v", 1)[-1].isdigit() else name
    if base not in ENGINES:
        raise ValueError(
            f"no batched engine for {name!r}; choose one of {', '.join(ENGINES)}"
        )
    return base


def module(name: str):
    """The module of ``name``'s batched engine (its engine class, AGENTS, vector_env)."""
    return importlib.import_module(ENGINES[game_name(name)][0])


def make(name: str, **rules: Any) -> VectorGame:
    """The batched engine of game ``name`` for the rules arguments ``rules``."""
    mod_name, cls_name = ENGINES[game_name(name)]
    cls = getattr(importlib.import_module(mod_name), cls_name)
    valid = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    for key in rules:
        if key not in valid:
            raise ValueError(
                f"{game_name(name)}: unknown argument {key!r}; valid arguments: {', '.join(valid)}"
            )
    return cls(**rules)


def backend_name(backend: str = "auto") -> str:
    """The backend an engine runs for ``backend`` ("auto": numba when it is installed)."""
    if backend != "auto":
        return backend
    return "numba" if numba_available() else "numpy"


__all__ = ["ENGINES", "VectorGame", "VectorState", "backend_name", "game_name", "make", "module"]
