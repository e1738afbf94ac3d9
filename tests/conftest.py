"""Shared fixtures: everything is driven by the registry, never a hand-kept list of games."""

from __future__ import annotations

import os

import numpy as np
import pytest

import card_envs  # noqa: F401  (registers the games)
from card_envs.registry import env_names, load_spec

ENV_NAMES = env_names()

# pytest-xdist runs the tests in one process per core (pyproject's addopts: ``-n auto``): torch
# in each on one thread, unless the user set OMP_NUM_THREADS (two workers of two threads each
# would fight over a 2-core machine). Set before any test module imports torch.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


def variants(name: str) -> list[dict]:
    """Each rules variant of a game, crossed with each observation encoding."""
    spec = load_spec(name)
    return [{**v, "obs_encoding": enc} for v in spec.variants for enc in spec.encoders]


ALL_CONFIGS = [(name, cfg) for name in ENV_NAMES for cfg in variants(name)]
CONFIG_IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in c.items())}" for n, c in ALL_CONFIGS]


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))])


def play_states(game, seed: int, every: int = 1):
    """Yield the states of one random legal game (each a copy), every ``every`` steps."""
    rng = np.random.default_rng(seed)
    s = game.init(rng)
    while not s.done:
        if s.steps % every == 0:
            yield s.copy()
        game.apply(s, random_legal(game.legal_mask(s), rng), rng)
    yield s.copy()


@pytest.fixture(params=ENV_NAMES)
def env_name(request):
    return request.param


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test (two fight each other on a 2-core machine); a module
    that trains uses it with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
