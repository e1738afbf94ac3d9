"""Batched self-play and the SB3 adapter: the same games and decisions as the scalar path."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs import vector
from card_envs.core.agents import make_agent
from card_envs.core.make import factories
from card_envs.registry import load_spec
from card_envs.vector.selfplay import play, rule_agent


def scalar_payoffs(name: str, agents: list[str], seeds: np.ndarray) -> np.ndarray:
    """Each player's payoff in each game, dealt from seeds[g] by raw_env(), seats rotated as in
    ``play`` (seat s of game g is player (s + g) % P)."""
    spec = load_spec(name)
    out = []
    for g, seed in enumerate(seeds.tolist()):
        env = factories(spec).raw_env()
        env.reset(seed=seed)
        game, n = env.game, env.game.num_players
        players = [make_agent(spec, a, game) for a in agents]
        rng = np.random.default_rng(0)
        while env.agents and not (env.terminations["player_0"] or env.truncations["player_0"]):
            seat = env.seat
            agent = players[(seat + g) % n]
            env.step(agent.act(game.view(env.game_state, seat), rng))
        payoff = game.payoffs(env.game_state)
        out.append([payoff[(k - g) % n] for k in range(n)])
    return np.array(out)


@pytest.mark.parametrize("name,agents", [
    ("simple_tricks", ["heuristic", "first_play"]),
    ("thirty_one", ["expected_value", "greedy", "greedy"]),
])
def test_play_rotates_seats_and_matches_scalar_games(name, agents):
    engine = vector.make(name)
    seeds = np.arange(60) + 11
    players = [rule_agent(engine, a) for a in agents]
    batched = play(engine, players, len(seeds), seeds=seeds)
    assert np.array_equal(batched, scalar_payoffs(name, agents, seeds))


def test_play_checks_its_players():
    engine = vector.make("simple_tricks")
    with pytest.raises(ValueError, match="one player per seat"):
        play(engine, [rule_agent(engine, "random")], 10)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        rule_agent(engine, "nobody")


def test_the_shipped_model_plays_the_same_batched_as_scalar():
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from card_envs.rl.policy_agent import load_model_agent

    example = _example("vector_selfplay_eval")
    engine = vector.make("simple_tricks")
    seeds = np.arange(100) + 5
    model = example.model_player(example.shipped_model("simple_tricks_v0", engine.game), engine)
    batched = play(engine, [model, rule_agent(engine, "first_play")], len(seeds), seeds=seeds)
    spec = load_spec("simple_tricks")
    # the example's player is greedy: so is this one, whatever mode the shipped model plays in
    agent = load_model_agent(spec, "best", spec.make_game(), deterministic=True)
    from card_envs.simple_tricks.agents import FirstPlayAgent

    expected = []
    for g, seed in enumerate(seeds.tolist()):
        env = factories(spec).raw_env()
        env.reset(seed=seed)
        game = env.game
        players = [agent, FirstPlayAgent(game)]
        while not env.terminations["player_0"]:
            seat = env.seat
            env.step(players[(seat + g) % 2].act(game.view(env.game_state, seat), None))
        payoff = game.payoffs(env.game_state)
        expected.append([payoff[(k - g) % 2] for k in range(2)])
    assert np.array_equal(batched, np.array(expected))


def test_maskable_ppo_trains_from_the_sb3_adapter():
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from card_envs.vector.sb3 import sb3_vec_env

    vec_env = sb3_vec_env("thirty_one", num_envs=32, opponent="greedy")
    assert is_masking_supported(vec_env)
    vec_env.seed(3)
    obs = vec_env.reset()
    assert obs.shape == (32, 101)
    masks = get_action_masks(vec_env)
    assert masks.shape == (32, 7) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=16, batch_size=128, n_epochs=1,
                        device="cpu", seed=0)
    model.learn(1024)  # the env raises on an illegal action: finishing proves the masks held
    assert model.num_timesteps >= 1024
    ended = 0
    vec_env.reset()
    for _ in range(300):
        masks = get_action_masks(vec_env)
        _, _, dones, infos = vec_env.step(masks.argmax(axis=1))
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (101,)
            assert "episode" in infos[i]  # VecMonitor's record
            ended += 1
    assert ended > 0


def _example(name: str):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vector_examples_run(capsys):
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    import torch

    threads = torch.get_num_threads()
    try:
        rates = _example("vector_sb3_maskable_ppo").main(timesteps=2048, envs=16)
        assert set(rates) == {"batched learn", "batched rollout", "make_vec_env learn",
                              "make_vec_env rollout"}
        result = _example("vector_selfplay_eval").main(games=400)
        assert result["wins"] + result["draws"] + result["losses"] == 400
        assert result["wins"] > result["losses"]  # the model beats first_play
    finally:
        torch.set_num_threads(threads)
