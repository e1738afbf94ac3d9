"""No leaks: states that differ only in what a player cannot see give that player identical
observations (every encoding, through the rules and through the env), identical masks and
identical renders of the table from its seat."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES, play_states
from tests.twins import twin_worlds


@pytest.mark.parametrize("name", ENV_NAMES)
def test_hidden_cards_never_reach_observations_or_masks(name):
    spec = load_spec(name)
    env_fn = factories(spec).raw_env
    rng = np.random.default_rng(0)
    changed = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        encoders = [cls(game) for cls in spec.encoders.values()]
        envs = {enc: env_fn(**variant, obs_encoding=enc) for enc in spec.encoders}
        for s, p, other in twin_worlds(game, range(4), 3, rng):
            changed += pickle.dumps(other) != pickle.dumps(s)
            a, b = game.view(s, p), game.view(other, p)
            assert np.array_equal(a.legal, b.legal)
            assert spec.render(game, s, p) == spec.render(game, other, p), (name, p)
            for enc in encoders:
                assert np.array_equal(enc.encode(a), enc.encode(b)), (name, enc.name, p)
            for env in envs.values():
                agent = f"player_{p}"
                env.reset(options={"state": s})
                first = env.observe(agent)
                env.reset(options={"state": other})
                second = env.observe(agent)
                assert np.array_equal(first["observation"], second["observation"])
                assert np.array_equal(first["action_mask"], second["action_mask"])
    assert changed > 0, "the hidden part of the state was never redrawn: the test proves nothing"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_future_chance_comes_only_from_the_seeded_generator(name):
    """Two envs reset with the same seed agree; different seeds give different deals."""
    env_fn = factories(load_spec(name)).raw_env
    a, b, c = env_fn(), env_fn(), env_fn()
    a.reset(seed=11)
    b.reset(seed=11)
    c.reset(seed=12)
    agent = a.agent_selection
    assert np.array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])
    assert pickle.dumps(a.game_state) == pickle.dumps(b.game_state)
    assert pickle.dumps(a.game_state) != pickle.dumps(c.game_state)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_the_envs_fast_encoding_equals_encoding_the_view(name):
    """``encode_state`` (the envs' hot path) must give exactly ``encode(view)``."""
    spec = load_spec(name)
    for variant in spec.variants:
        game = spec.make_game(**variant)
        encoders = [cls(game) for cls in spec.encoders.values()]
        for seed in range(3):
            for s in play_states(game, seed, every=2):
                for p in range(game.num_players):
                    view = game.view(s, p)
                    for enc in encoders:
                        assert np.array_equal(enc.encode_state(s, p), enc.encode(view)), (
                            name, variant, enc.name, p)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_twin_states_give_every_agent_identical_decisions(name):
    """Every agent the registry lists (search agents at a small budget) reads only its view:
    states that differ only in cards the seat cannot see give it the same move for the same
    generator."""
    from card_envs.core.agents import make_agent

    spec = load_spec(name)
    rng = np.random.default_rng(5)
    agents = [f"{n}:2" if getattr(cls, "takes_budget", False) else n
              for n, cls in spec.agents.items()]
    compared = changed = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        if variant.get("num_values", 0) > 10:  # simple_tricks' exact solver: seconds a move
            agents = [a for a in agents if a.split(":")[0] not in ("solver", "ismcts")]
        states = [s for s in play_states(game, seed=1, every=5)
                  if not s.done and game.legal_mask(s).sum() > 1]
        for s in states[::max(1, len(states) // 6)]:  # about six decisions spread over a game
            p = s.player
            twin = game.randomize_hidden(s, p, rng)
            changed += pickle.dumps(twin) != pickle.dumps(s)
            for agent in agents:
                seed = int(rng.integers(2**32))
                first = make_agent(spec, agent, game).act(
                    game.view(s, p), np.random.default_rng(seed))
                second = make_agent(spec, agent, game).act(
                    game.view(twin, p), np.random.default_rng(seed))
                assert first == second, (name, variant, agent, s.steps)
                compared += 1
    assert compared > 0 and changed > 0, "no twin states were compared: the test proves nothing"


def _roots(value, seen: set[int]) -> list[bytes]:
    """The whole memory behind every array reachable from ``value`` (a view, or what its slots
    hold): each array's outermost base, as bytes, in a fixed order."""
    out: list[bytes] = []
    if id(value) in seen:
        return out
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        root = value
        while isinstance(root.base, np.ndarray):
            root = root.base
        base = root.base
        out.append(bytes(base) if isinstance(base, (bytes, bytearray, memoryview))
                   else np.ascontiguousarray(root).tobytes())
    elif isinstance(value, (tuple, list)):
        for item in value:
            out += _roots(item, seen)
    elif isinstance(value, (set, frozenset)):
        for item in sorted(value, key=repr):
            out += _roots(item, seen)
    elif hasattr(type(value), "__slots__") and not isinstance(value, (str, bytes)):
        for klass in type(value).__mro__:
            for slot in getattr(klass, "__slots__", ()):
                if hasattr(value, slot):
                    out += _roots(getattr(value, slot), seen)
    return out


@pytest.mark.parametrize("name", ENV_NAMES)
def test_no_view_array_reaches_memory_its_seat_cannot_see(name):
    # a view's arrays may be views of larger arrays (no copies); the memory behind them must
    # then hold nothing hidden from the seat: twin worlds give the same bytes behind every one
    spec = load_spec(name)
    rng = np.random.default_rng(3)
    arrays = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        for seed in range(2):
            for s in play_states(game, seed, every=4):
                for p in range(game.num_players):
                    other = game.randomize_hidden(s, p, rng)
                    mine = _roots(game.view(s, p), set())
                    theirs = _roots(game.view(other, p), set())
                    arrays += len(mine)
                    assert mine == theirs, (name, variant, p, s.steps)
    assert arrays > 0
