"""Per-action facts read from an observation vector, for the per-action heads (torch).

A game with per-action facts declares them in its folder (``card_envs/<game>/features.py``,
named by its spec's ``features``): modules that map a batch of observations (B, D), as the
game's encoder writes them, to (B, A, F): for every action the same F facts about that action
(what kind it is, what the observation says about the card, pile or seat it names), and
``FACT_SETS`` (name -> class; ``basic`` first), the sets the policies' ``facts`` argument
picks from. Only the observation is read, by the offsets of the encoder's declared layout, so
nothing hidden can reach a policy through here. Modules hold index tensors as buffers and no
weights. ``card_envs.rl.action_heads`` scores every action from its facts.

This module and the games' ``features.py`` import torch (the train extra); only the rl layer
imports them (``fact_sets``), so ``import card_envs`` never does.
"""

from __future__ import annotations

import importlib

import numpy as np
import torch as th
from torch import nn

from card_envs.core.encoding import Encoder
from card_envs.core.game import Game
from card_envs.core.spec import GameSpec


def fact_sets(spec: GameSpec) -> dict[str, type[ActionFeatures]]:
    """The game's sets of per-action facts (``FACT_SETS`` of ``spec.features``); ValueError if
    the game has none."""
    if spec.features is None:
        raise ValueError(f"no per-action features for {spec.env_name}")
    sets = getattr(importlib.import_module(spec.features), "FACT_SETS", None)
    if not isinstance(sets, dict) or "basic" not in sets:
        raise ValueError(f"{spec.features} declares no FACT_SETS with a 'basic' set")
    return sets


class ActionFeatures(nn.Module):
    """Base: ``num_actions`` actions, ``num_features`` facts each; ``forward(obs) -> (B, A, F)``.

    ``kinds`` (a buffer, one int per action, ``num_kinds`` in all) says which kind each action
    is (Literature: ask, declare, name): the scorer gives each kind its own head.
    """

    num_actions: int
    num_features: int
    num_kinds: int = 1

    def __init__(self, game: Game, encoder: Encoder, encodings: tuple[str, ...] = ("default",)):
        super().__init__()
        if encoder.name not in encodings:
            raise ValueError(
                f"per-action features of {game.name} read obs_encoding in "
                f"{', '.join(repr(e) for e in encodings)}, not {encoder.name!r}"
            )
        self.layout = encoder.layout
        self.num_actions = game.num_actions
        self._index("kinds", [0] * game.num_actions)

    def piece(self, obs: th.Tensor, name: str, *shape: int) -> th.Tensor:
        """A named piece of the layout, as (B, *shape)."""
        sl = self.layout[name]
        return obs[:, sl].reshape(obs.shape[0], *shape)

    def _index(self, name: str, values) -> None:
        self.register_buffer(name, th.as_tensor(np.asarray(values), dtype=th.long),
                             persistent=False)


def pad(parts: list[th.Tensor], width: int) -> th.Tensor:
    """Concatenate (B, k_i, f_i) blocks along actions, each zero-padded to ``width`` facts."""
    out = []
    for p in parts:
        if p.shape[2] < width:
            p = th.cat([p, p.new_zeros(*p.shape[:2], width - p.shape[2])], dim=2)
        out.append(p)
    return th.cat(out, dim=1)
