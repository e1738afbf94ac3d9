"""Every game's ``apply`` takes an action as any integer type alike, and moves whole or not at all.

Driven by the registry: every game, every variant. A game played with numpy integers of every
width (and 0-d integer arrays) is the game played with Python ints, step by step; a bool, a
float, a string, an integer out of range or an illegal action raises IllegalActionError and
leaves the state as a deep copy taken before.
"""

from __future__ import annotations

import copy
import itertools
import pickle

import numpy as np
import pytest

from card_envs.core.game import IllegalActionError
from card_envs.literature.rules import Literature
from card_envs.registry import env_names, load_spec
from tests.conftest import random_legal

CASES = [(name, variant) for name in env_names() for variant in load_spec(name).variants]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in cfg.items()) or 'default'}"
       for name, cfg in CASES]
INTEGER_TYPES = (np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint16, np.uint32,
                 np.uint64, np.intp, lambda a: np.array(a), lambda a: np.array(a, np.uint8))


def as_next_type(action: int, types: itertools.cycle):
    """``action`` as the next integer type of ``types`` that holds it."""
    while True:
        kind = next(types)
        if np.can_cast(np.min_scalar_type(action), np.dtype(kind(0).dtype)):
            return kind(action)


def random_game(game, seed: int):
    """The actions of one random game and the state after each (pickled)."""
    rng = np.random.default_rng(seed)
    state = game.init(np.random.default_rng(seed))
    actions, states = [], []
    while not state.done:
        actions.append(random_legal(game.legal_mask(state), rng))
        game.apply(state, actions[-1], rng)
        states.append(pickle.dumps(state))
    return actions, states


@pytest.mark.parametrize(("name", "variant"), CASES, ids=IDS)
def test_numpy_integers_play_the_python_int_game(name, variant):
    game = load_spec(name).make_game(**variant)
    actions, states = random_game(game, seed=3)
    rng = np.random.default_rng(3)  # the same draws: the agent's choices are replayed below
    state = game.init(np.random.default_rng(3))
    types = itertools.cycle(INTEGER_TYPES)
    for step, (action, expected) in enumerate(zip(actions, states, strict=True)):
        random_legal(game.legal_mask(state), rng)  # the draw the agent made
        game.apply(state, as_next_type(action, types), rng)
        assert pickle.dumps(state) == expected, (name, step)


def bad_actions(game, state) -> list:
    """Actions that are not a legal action now, each of another kind."""
    legal = game.legal_actions(state)
    illegal = np.flatnonzero(game.legal_mask(state) == 0)
    a, n = legal[0], game.num_actions
    return [True, False, np.bool_(True), float(a), np.float64(a), np.float32(a), -1, n,
            np.int64(-1), np.int64(n), np.uint64(2**64 - 1), 2**70, np.array([a]), str(a), None,
            *([int(illegal[0]), np.int64(illegal[-1])] if len(illegal) else [])]


@pytest.mark.parametrize(("name", "variant"), CASES, ids=IDS)
def test_a_bad_action_changes_nothing(name, variant):
    game = load_spec(name).make_game(**variant)
    rng = np.random.default_rng(5)
    state = game.init(rng)
    checked = 0
    while not state.done:
        if state.steps % 7 == 0:
            game.legal_mask(state)  # the cache, filled as the view of the seat to act fills it
            before = copy.deepcopy(state)
            for bad in bad_actions(game, state):
                with pytest.raises(IllegalActionError, match=r"out of range|is illegal"):
                    game.apply(state, bad, rng)
                assert pickle.dumps(state) == pickle.dumps(before), (name, bad)
                checked += 1
        game.apply(state, random_legal(game.legal_mask(state), rng), rng)
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.apply(state, 0, rng)
    assert checked


def test_literature_asks_with_a_numpy_integer():
    # the move that crashed in knowledge._set_room after the turn had moved on
    game = Literature()
    state = game.init(np.random.default_rng(0))
    for action in [145, 153, 153, 154, 153, 152, 152]:
        game.apply(state, action, None)
    twin = state.copy()
    game.apply(state, np.int64(118), None)
    game.apply(twin, 118, None)
    assert pickle.dumps(state) == pickle.dumps(twin)
