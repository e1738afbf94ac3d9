"""Building from a spec: a game's environments and its batched engine.

``factories(SPEC)`` gives the game's three constructors by name (``env``: PettingZoo AEC
with classic semantics; ``raw_env``: AEC raising on an illegal action; ``gym``: the
single-agent Gymnasium view), made once per spec; ``make_batched(SPEC, **rules)`` the
engine of its batched twin. ``card_envs.core.spec`` holds what these are built from (the
spec: data and checks) and imports nothing of this module's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from card_envs.core.aec import CardGameEnv, ClassicCardGameEnv
from card_envs.core.batched import BatchedGame
from card_envs.core.gym_env import SingleAgentEnv
from card_envs.core.spec import GYM_ARGS, GameSpec


class Factories(NamedTuple):
    """A game's environment constructors, each taking the rules and env arguments."""

    env: Callable[..., ClassicCardGameEnv]  # PettingZoo AEC, classic (illegal: -1, game over)
    raw_env: Callable[..., CardGameEnv]  # PettingZoo AEC, an illegal action raises
    gym: Callable[..., SingleAgentEnv]  # Gymnasium, one learning seat


@functools.cache  # one set per spec (specs compare by identity)
def factories(spec: GameSpec) -> Factories:
    """``spec``'s environment constructors (made on first call, then the same ones)."""
    return _make_factories(spec)


def _make_factories(spec: GameSpec) -> Factories:
    def raw_env(**kwargs: Any) -> CardGameEnv:
        game, encoder, rest = spec.build(kwargs)
        return CardGameEnv(spec, game, encoder, **rest)

    def env(**kwargs: Any) -> ClassicCardGameEnv:
        game, encoder, rest = spec.build(kwargs)
        return ClassicCardGameEnv(spec, game, encoder, **rest)

    def gym_env(**kwargs: Any) -> SingleAgentEnv:
        game, encoder, rest = spec.build({**spec.gym_defaults, **kwargs}, GYM_ARGS)
        return SingleAgentEnv(spec, game, encoder, **rest)

    raw_env.__doc__ = (
        f"The {spec.env_name} AEC environment; an illegal action raises IllegalActionError."
    )
    env.__doc__ = (
        f"The {spec.env_name} AEC environment with PettingZoo classic semantics "
        "(an illegal action ends the game with -1 to the offender)."
    )
    gym_env.__doc__ = f"The single-agent Gymnasium view of {spec.env_name}."
    return Factories(env=env, raw_env=raw_env, gym=gym_env)


def make_batched(spec: GameSpec, **rules: Any) -> BatchedGame:
    """The engine of ``spec``'s batched twin for the rules arguments ``rules``; ValueError if
    the game has no twin or numba is missing, or for a bad argument."""
    return BatchedGame(spec, spec.make_game(**rules))
