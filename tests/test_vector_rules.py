"""The batched engines against the scalar AEC envs: same seeds and actions, the same games.

Every game of a batch is dealt from the same seed as one ``raw_env()`` (the engine's
SeededDealer shuffles as the scalar rules do), both get the same actions, and at every step
the seat to act, its legal mask and its observation in every encoding, each seat's
observation (what it may see), the rewards and the ends must be equal, bit for bit. A game
that ends is followed in the same slot by the next deal of the same generator (the engine's
auto-reset and the env's ``reset()`` without a seed). With a rule agent in every seat, the
batched agent must also choose exactly what the scalar agent chooses from its view.
"""

from __future__ import annotations

import numpy as np
import pytest

from card_envs import vector
from card_envs.core.agents import make_agent
from card_envs.registry import load_spec
from card_envs.vector.base import SeededDealer, numba_available

# (game, rules arguments) the tests run: every variant the scalar tests exercise
CONFIGS = [
    ("simple_tricks", {}),
    ("simple_tricks", {"num_values": 2}),
    ("simple_tricks", {"num_values": 5}),
    ("simple_tricks", {"num_values": 26}),
    ("ninety_eight_cards", {}),
    ("ninety_eight_cards", {"reward": "original"}),
    ("ninety_eight_cards", {"rules": "original"}),
    ("ninety_eight_cards", {"rules": "original", "reward": "original"}),
    ("thirty_one", {}),
    ("thirty_one", {"num_players": 2}),
    ("thirty_one", {"num_players": 7, "lives": 1}),
    ("thirty_one", {"three_of_a_kind": True, "instant_31": True}),
    ("thirty_one", {"reward": "original", "max_round_turns": 6}),
]
IDS = [
    f"{name}-{'-'.join(f'{k}={v}' for k, v in cfg.items()) or 'default'}" for name, cfg in CONFIGS
]


def backends() -> list[str]:
    """numpy always; numba where the extra is installed and the game has kernels so far."""
    return ["numpy", *(["numba"] if numba_available() else [])]


BACKENDS = backends()


def agent_names(name: str) -> list[str]:
    """The rule agents with a batched version (random has no scalar twin to match)."""
    return [a for a in vector.module(name).AGENTS if a != "random"]


def patient(engine, state, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions that never knock (Thirty-One): long rounds that empty the deck."""
    mask = state.mask.copy()
    mask[:, 2] = 0
    counts = mask.sum(axis=1)
    pick = (rng.random(len(counts)) * counts).astype(np.int64)
    return (mask.cumsum(axis=1) > pick[:, None]).argmax(axis=1)


def differential(name: str, config: dict, games: int, batch: int, policy: str = "random",
                 seed: int = 0, all_seats: bool = True, engine=None,
                 backend: str = "numpy") -> int:
    """Play ``games`` games through both, comparing every step; return the steps compared.

    ``policy``: "random" (uniform legal actions, the same for both), "patient" (random, never
    knocking: Thirty-One only) or a rule agent's name (the batched agent acts for every seat;
    the scalar agent must agree at every step).
    """
    spec = load_spec(name)
    raw_env = spec.factories()[1]
    engine = engine or vector.make(name, **config)
    engine.set_backend(backend)
    seeds = np.arange(batch) + 100_000 * seed
    state = engine.init(batch, seeds=seeds)
    envs = []
    for s in seeds.tolist():
        env = raw_env(**config)
        env.reset(seed=s)
        envs.append(env)
    game = envs[0].game
    encoders = {enc: cls(game) for enc, cls in spec.encoders.items()}
    assert tuple(spec.encoders) == engine.encodings
    players = range(game.num_players)
    act = patient if policy == "patient" else vector.module(name).AGENTS[policy]
    scalar_agent = None if policy in ("random", "patient") else make_agent(spec, policy, game)
    rng = np.random.default_rng(seed)
    agent_rng = np.random.default_rng(seed + 1)  # the scalar agents' (rule agents use none)
    finished = steps = 0

    def compare_seats(slots: list[int]) -> None:
        for enc, encoder in encoders.items():
            for q in players:
                batched = engine.observe(state, enc, seats=np.full(batch, q))
                for i in slots:
                    expected = encoder.encode_state(envs[i].game_state, q)
                    assert np.array_equal(batched[i], expected), (enc, q, i)
                    if enc == "default":
                        aec = envs[i].observe(f"player_{q}")["observation"]
                        assert np.array_equal(batched[i], aec), (q, i)

    while finished < games:
        lasts = [env.last() for env in envs]
        assert state.current_player.tolist() == [env.seat for env in envs]
        mask = engine.legal_action_mask(state)
        assert np.array_equal(mask, np.stack([o["action_mask"] for o, *_ in lasts]))
        obs = engine.observe(state)
        assert np.array_equal(obs, np.stack([o["observation"] for o, *_ in lasts]))
        for enc, encoder in encoders.items():
            expected = [encoder.encode_state(env.game_state, env.seat) for env in envs]
            assert np.array_equal(engine.observe(state, enc), np.stack(expected)), enc
        if all_seats:
            compare_seats(list(range(batch)))
        actions = act(engine, state, rng)
        if scalar_agent is not None:
            for i, env in enumerate(envs):
                view = game.view(env.game_state, env.seat)
                assert actions[i] == scalar_agent.act(view, agent_rng), (i, view)
        engine.step(state, actions)
        for env, a in zip(envs, actions.tolist(), strict=True):
            env.step(a)
        steps += batch
        rewards = [[env.rewards[f"player_{q}"] for q in players] for env in envs]
        assert np.array_equal(state.rewards, np.array(rewards))
        assert state.terminated.tolist() == [env.terminations["player_0"] for env in envs]
        assert state.truncated.tolist() == [env.truncations["player_0"] for env in envs]
        ended = np.flatnonzero(state.terminated | state.truncated).tolist()
        if ended:
            assert not np.any(engine.legal_action_mask(state)[ended])
            compare_seats(ended)
            for i in ended:
                envs[i].reset()
            finished += len(ended)
            engine.autoreset(state)
    return steps


def games_for(name: str, config: dict, default: int, variant: int) -> int:
    """``default`` games for a game's default rules, ``variant`` for its other variants."""
    return default if not config else variant


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_random_games_match_the_scalar_env(name, config, backend):
    differential(name, config, games_for(name, config, 2000, 300), batch=200, all_seats=False,
                 backend=backend)
    differential(name, config, games=100, batch=50, seed=1, backend=backend)  # every seat


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_rule_agent_games_match_the_scalar_agents(name, config, backend):
    for policy in agent_names(name):
        differential(name, config, games_for(name, config, 150, 50), batch=50, policy=policy,
                     seed=2, all_seats=False, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_patient_random_games_reach_reshuffles_and_match(backend, monkeypatch):
    # random play knocks often, so its rounds rarely empty the deck; without knocks they do
    reshuffles = []
    original = SeededDealer.ragged_permutations

    def counted(self, slots, lengths, width):
        reshuffles.append(len(slots))
        return original(self, slots, lengths, width)

    monkeypatch.setattr(SeededDealer, "ragged_permutations", counted)
    differential("thirty_one", {"num_players": 2}, games=20, batch=20, policy="patient",
                 backend=backend)
    assert sum(reshuffles) > 20


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_100k_random_games_match_the_scalar_env(name, config, backend):
    games = games_for(name, config, 100_000, 10_000)
    differential(name, config, games, batch=1000, all_seats=False, seed=3, backend=backend)
    for policy in agent_names(name):
        differential(name, config, games // 10, batch=1000, policy=policy, seed=4,
                     all_seats=False, backend=backend)
