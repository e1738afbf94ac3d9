"""Nothing an agent or a user receives can change the game: every field of every game's view,
the observations and masks the AEC env keeps, and the legal mask cached in the state are
read-only (writing raises), and the game is unchanged after the attempts."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

IMMUTABLE = (int, float, bool, str, bytes, type(None), np.generic, frozenset)


def _writes(value: Any, where: str) -> list[str]:
    """Try to change ``value`` in place every way its type allows; the paths that worked."""
    if isinstance(value, np.ndarray):
        if value.size == 0:
            return [] if not value.flags.writeable else [f"{where} (writeable)"]
        try:
            value.flat[0] = value.flat[0] + 1 if value.dtype != bool else not value.flat[0]
        except ValueError:
            return []
        return [where]
    if isinstance(value, tuple):
        return [w for i, x in enumerate(value) for w in _writes(x, f"{where}[{i}]")]
    if isinstance(value, IMMUTABLE):
        return []
    return [f"{where} ({type(value).__name__})"]  # a list, dict, set, bytearray or object


def _fields(view) -> list[str]:
    return [name for klass in type(view).__mro__ for name in getattr(klass, "__slots__", ())]


def _states(spec, seeds: int = 3, every: int = 5):
    """States along random games of every variant (the start, every ``every`` steps, the end)."""
    for variant in spec.variants:
        game = spec.make_game(**variant)
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            s = game.init(rng)
            while True:
                if s.steps % every == 0 or s.done:
                    yield game, s
                if s.done:
                    break
                legal = np.flatnonzero(game.legal_mask(s))
                game.apply(s, int(rng.choice(legal)), rng)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_no_field_of_a_view_can_change_the_game(name):
    spec = load_spec(name)
    checked = 0
    for game, s in _states(spec):
        game.legal_mask(s)  # cached in the state (so in its pickle) before the first view
        before = pickle.dumps(s)
        for p in range(game.num_players):
            view = game.view(s, p)
            for field in _fields(view):
                value = getattr(view, field, None)
                assert not _writes(value, f"{name} view.{field}"), (game, s.steps)
                checked += 1
        assert not _writes(game.legal_mask(s), "legal_mask")
        assert pickle.dumps(s) == before, "the game changed"
    assert checked > 100


@pytest.mark.parametrize("name", ENV_NAMES)
def test_observations_the_env_keeps_are_read_only(name):
    spec = load_spec(name)
    env = factories(spec).raw_env()
    rng = np.random.default_rng(0)
    steps = 0
    for seed in range(3):
        env.reset(seed=seed)
        for _agent in env.agent_iter(max_iter=40):
            obs, _, term, trunc, _ = env.last()
            kept = {a: {k: v.copy() for k, v in env.observe(a).items()} for a in env.agents}
            for a in env.agents:
                for key, value in env.observe(a).items():
                    assert not _writes(value, f"{name} observe({a})[{key!r}]")
            for a in env.agents:  # what observe gives again is what it gave
                for key, value in env.observe(a).items():
                    assert np.array_equal(value, kept[a][key])
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
            steps += 1
    assert steps > 10


def test_the_check_finds_a_writeable_field():
    """The helper above does catch what it must: a list, a writeable array, a nested one."""
    assert _writes([1, 2], "x") and _writes(np.zeros(3), "x")
    assert _writes((1, (2, np.zeros(2))), "x") == ["x[1][1]"]
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    assert not _writes((1, "a", frozen, b"b", None), "x")
