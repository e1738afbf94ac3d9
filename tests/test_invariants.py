"""Random-play invariants for every game: cards conserved, a legal move while the game runs,
observations inside their spaces, the game ends under its cap, same seed -> same game."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES


def _play(game, encoders, seed: int, check: bool = True) -> list[int]:
    rng = np.random.default_rng(seed)
    s = game.init(rng)
    actions = []
    spaces = [enc.space() for enc in encoders]
    while True:
        if check:
            game.check_invariants(s)
            for p in range(game.num_players):
                view = game.view(s, p)
                assert view.legal.dtype == np.int8
                if p != s.player or s.done:
                    assert not view.legal.any(), "only the player to act has legal actions"
                for enc, space in zip(encoders, spaces, strict=True):
                    obs = enc.encode(view)
                    assert obs.dtype == np.float32 and space.contains(obs), (enc.name, obs)
        if s.done:
            break
        mask = game.legal_mask(s)
        assert mask.any(), "the player to act always has a legal action"
        legal = np.flatnonzero(mask)
        a = int(legal[rng.integers(len(legal))])
        actions.append(a)
        game.apply(s, a, rng)
        assert s.steps <= game.max_steps
    assert s.terminal or s.truncated
    if s.truncated:
        assert s.steps == game.max_steps
    pay = game.payoffs(s)
    assert pay.shape == (game.num_players,)
    assert np.all(pay >= game.min_payoff - 1e-9) and np.all(pay <= game.max_payoff + 1e-9)
    return actions + [float(x) for x in pay]


@pytest.mark.parametrize("name", ENV_NAMES)
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), pick=st.integers(0, 10**6))
def test_random_play_keeps_the_invariants(name, seed, pick):
    spec = load_spec(name)
    game = spec.make_game(**spec.variants[pick % len(spec.variants)])
    encoders = [cls(game) for cls in spec.encoders.values()]
    first = _play(game, encoders, seed)
    assert _play(game, encoders, seed, check=False) == first, "same seed, same game"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_state_copy_is_independent(name):
    spec = load_spec(name)
    game = spec.make_game()
    rng = np.random.default_rng(3)
    s = game.init(rng)
    snapshot = s.copy()
    before = [
        enc(game).encode(game.view(snapshot, p))
        for enc in spec.encoders.values()
        for p in range(game.num_players)
    ]
    while not s.done:
        legal = np.flatnonzero(game.legal_mask(s))
        game.apply(s, int(legal[rng.integers(len(legal))]), rng)
    after = [
        enc(game).encode(game.view(snapshot, p))
        for enc in spec.encoders.values()
        for p in range(game.num_players)
    ]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))
    game.check_invariants(snapshot)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_rewards_summed_over_a_game_equal_its_payoffs(name):
    """The rewards over a game add up to what the game says (``rewards_sum``: its payoffs, or
    its scores), through the rules and through the AEC env, so a step that never pays fails
    here; shaped-reward variants (a source's own reward) have no fixed total."""
    spec = load_spec(name)
    env_fn = factories(spec).raw_env
    checked = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        if game.rewards_sum == "shaped":
            continue
        expected = game.scores if game.rewards_sum == "scores" else game.payoffs
        for seed in range(6):
            rng = np.random.default_rng(seed)
            s = game.init(rng)
            total = np.zeros(game.num_players)
            while not s.done:
                legal = np.flatnonzero(game.legal_mask(s))
                paid = game.apply(s, int(legal[rng.integers(len(legal))]), rng)
                if paid is not None:
                    total += paid
            assert np.allclose(total, expected(s)), (name, variant, seed)
            checked += bool(np.any(total != 0))
            env = env_fn(**variant)
            env.reset(seed=seed)
            returns = dict.fromkeys(env.possible_agents, 0.0)
            for agent in env.agent_iter():
                obs, reward, term, trunc, _ = env.last()
                returns[agent] += reward
                act = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
                env.step(act)
            final = expected(env.unwrapped.game_state)
            assert np.allclose([returns[a] for a in env.possible_agents], final), (name, variant)
    assert checked, "no game paid anything: the test proves nothing"
