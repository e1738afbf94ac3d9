"""A sixth game is one folder: high card (tests/toy_game/) gets everything the five games get.

The game lives only under tests/toy_game/ and is registered by the one line in the fixture
below, only while these tests run. The generic checks of the suite are then run on it as they
are on every registered game, and so are the CLI, the benchmark, the golden traces and the
docs tables.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import pytest

import card_envs
import tests.test_bad_input as bad_input
import tests.test_conformance as conformance
import tests.test_invariants as invariants
import tests.test_leaks as leaks
import tests.test_masks_and_errors as masks_and_errors
import tests.test_read_only as read_only
from card_envs.core.make import factories
from card_envs.registry import env_names, load_spec, register_game, unregister_game

ROOT = Path(__file__).resolve().parents[1]
TOY = "tests.toy_game.env"
NAME = "high_card_v0"


@pytest.fixture(scope="module", autouse=True)
def toy():
    """High card, registered while this module's tests run (the one registration line)."""
    spec = register_game(TOY)
    yield spec
    unregister_game(NAME)


def _configs() -> list[dict]:
    from tests.toy_game.env import SPEC

    return [{**v, "obs_encoding": e} for v in SPEC.variants for e in SPEC.encoders]


def test_registration_derives_every_id_from_the_spec(toy):
    assert NAME in env_names() and load_spec("high_card") is toy
    assert toy.pettingzoo_id == "card_envs/high_card-v0" in pettingzoo.aec_registry
    assert toy.gymnasium_id == "card_envs/HighCard-v0" in gymnasium.registry
    from card_envs import high_card_v0  # the import module, made from the spec

    assert high_card_v0.SPEC is toy and high_card_v0.HighCard is toy.game_cls
    assert pettingzoo.make("aec", toy.pettingzoo_id).metadata["name"] == NAME
    assert gymnasium.make(toy.gymnasium_id).unwrapped.spec_ is toy
    row = next(r for r in card_envs.list_envs() if r.env_name == NAME)
    assert (row.gymnasium_id, row.num_players, row.agents) == (
        "card_envs/HighCard-v0", (2,), ("random", "cheapest_win"))


def test_a_second_game_with_a_taken_identity_fails_loudly(toy, tmp_path, monkeypatch):
    clash = tmp_path / "clash_spec.py"
    clash.write_text(
        "from dataclasses import replace\n"
        "from tests.toy_game.env import SPEC as TOY\n"
        "SPEC = replace(TOY, name='other_game')\n"  # a new name, the toy's Gymnasium id
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="gymnasium_id 'card_envs/HighCard-v0' is already taken"):
        register_game("clash_spec")
    assert "other_game_v0" not in env_names()
    with pytest.raises(ValueError, match="gym_name must be a CamelCase identifier"):
        type(toy)(**{**_fields(toy), "gym_name": "high card"})


def _fields(spec) -> dict:
    from dataclasses import fields

    return {f.name: getattr(spec, f.name) for f in fields(spec) if f.init}


def test_the_game_folder_imports_only_core():
    folder = ROOT / "tests" / "toy_game"
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                # numba: the twin is compiled (batched.py); torch: the per-action facts
                # (features.py) are part of a policy's network
                assert node.module.startswith(("card_envs.core", "tests.toy_game", "__future__",
                                               "numpy", "typing", "numba", "torch")), (
                    path.name, node.module)


# --- the generic checks of the suite, on the toy game ----------------------------------------
@pytest.mark.parametrize("config", _configs())
@pytest.mark.parametrize("factory", ["env", "raw_env"])
def test_pettingzoo_api(config, factory):
    conformance.test_pettingzoo_api(NAME, config, factory)


@pytest.mark.parametrize("config", _configs())
def test_pettingzoo_seed(config):
    conformance.test_pettingzoo_seed(NAME, config)


@pytest.mark.parametrize("config", _configs())
@pytest.mark.parametrize("dict_obs", [False, True])
def test_gymnasium_check_env(config, dict_obs):
    conformance.test_gymnasium_check_env_variants(NAME, config, dict_obs)


def test_pickling(monkeypatch):
    conformance.test_pickle_mid_game_continues_identically(NAME)
    conformance.test_last_then_step_encodes_once(NAME, monkeypatch)
    env = factories(load_spec(NAME)).raw_env()
    env.reset(seed=3)
    assert pickle.loads(pickle.dumps(env)).spec is load_spec(NAME)


def test_invariants_rewards_and_copies():
    invariants.test_random_play_keeps_the_invariants(NAME)
    invariants.test_state_copy_is_independent(NAME)
    invariants.test_rewards_summed_over_a_game_equal_its_payoffs(NAME)


def test_no_leaks():
    leaks.test_hidden_cards_never_reach_observations_or_masks(NAME)
    leaks.test_future_chance_comes_only_from_the_seeded_generator(NAME)
    leaks.test_the_envs_fast_encoding_equals_encoding_the_view(NAME)
    leaks.test_twin_states_give_every_agent_identical_decisions(NAME)


def test_read_only():
    read_only.test_no_field_of_a_view_can_change_the_game(NAME)
    read_only.test_observations_the_env_keeps_are_read_only(NAME)


def test_bad_input_and_errors():
    for which in ("env", "raw_env", "gym_env"):
        bad_input.test_unknown_argument_names_the_valid_ones(NAME, which)
    bad_input.test_bad_opponent_and_seat_in_gymnasium(NAME)
    bad_input.test_raw_env_illegal_action_raises_and_changes_nothing(NAME)
    for illegal_at in (0, 3):
        bad_input.test_env_matches_pettingzoo_classic_wrappers(NAME, illegal_at)
    bad_input.test_env_order_and_bounds_errors_match_pettingzoo(NAME)
    bad_input.test_gymnasium_illegal_action_ends_the_episode_or_raises(NAME)
    for which in ("env", "raw_env"):
        bad_input.test_numpy_integer_actions_are_accepted(NAME, which)
    masks_and_errors.test_raw_env_names_the_agent_as_the_env_does(NAME)


def test_its_batched_twin_is_the_scalar_game_bit_for_bit():
    pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")
    import tests.test_batched_twins as twins
    import tests.test_vector_env as vector_env

    for variant in load_spec(NAME).variants:
        twins.differential("high_card", variant, games=300, batch=50)
        twins.differential("high_card", variant, games=100, batch=50, agent="cheapest_win")
        twins.differential("high_card", variant, games=30, batch=10, every_seat=True)
    twins.test_twin_worlds_give_a_seat_identical_observations_and_decisions("high_card")
    twins.test_loaded_scalar_states_step_as_the_scalar_game("high_card")
    vector_env.test_seeded_slots_play_the_games_of_gym_env("high_card", {"opponent": "random"})
    vector_env.test_a_player_opponent_plays_between_the_compiled_calls("high_card")


# --- the tools ------------------------------------------------------------------------------
def _cli(*argv: str) -> str:
    from card_envs.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return out.getvalue()


def _new_process(*argv: str, stdin: str = "") -> str:
    """What ``card-envs ARGV`` prints in a new process that is told of high card."""
    env = {**os.environ, "CARD_ENVS_GAMES": TOY, "CARD_ENVS_ASCII": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-m", "card_envs.cli", *argv], input=stdin,
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_card_envs_list_and_evaluate():
    assert "card_envs/HighCard-v0" in _cli("list")
    printed = _cli("evaluate", NAME, "cheapest_win", "random", "--games", "20", "--seed", "0")
    assert "cheapest_win" in printed and "random" in printed


def test_card_envs_play_and_list_in_a_new_process():
    assert "card_envs/HighCard-v0" in _new_process("list")
    played = _new_process("play", NAME, "--seed", "0", "--opponent", "cheapest_win",
                          stdin="?\n" + "1\n" * 20 + "n\n")
    assert "Whoever leads plays a card face up" in played, "? shows the rules page of the folder"
    assert "High card" in played and "Your moves:" in played
    assert any(r in played for r in ("You win!", "You lose.", "A draw.")), played[-500:]


def test_the_benchmark_runs_on_it(capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import env_speed  # benchmarks/env_speed.py
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert env_speed.main([NAME, "--seconds", "0.05", "--rounds", "1"]) == 0
    printed = capsys.readouterr().out
    assert NAME in printed, printed


def test_golden_traces_record_and_check(tmp_path, capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import golden
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = str(tmp_path / "high_card.pkl")
    assert golden.main(["record", NAME, path]) == 0
    assert golden.main(["check", NAME, path]) == 0
    assert "traces identical" in capsys.readouterr().out


def test_the_docs_tables_are_generated_and_written(tmp_path):
    from card_envs.doctables import BEGIN, END, tables, write

    block = tables(NAME)
    assert "`Discrete(9)`" in block and "| 36 | `my_turn` |" in block
    page = tmp_path / "docs" / "games" / "high_card.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"# High card (`high_card_v0`)\n\n{BEGIN}\n{END}\n")
    assert write(NAME, root=tmp_path)
    assert block in page.read_text() and not write(NAME, root=tmp_path)


def test_gym_view_plays_whole_games_against_its_rule_agent():
    env = gymnasium.make("card_envs/HighCard-v0", opponent="cheapest_win")
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(5):
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                mask = env.unwrapped.action_masks()
                obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
                done = term or trunc
            assert reward == info["payoff"]


def test_its_per_action_facts_come_from_its_folder_and_a_policy_learns_on_them():
    # features.py beside its rules and one line of the spec: no generic layer lists the game
    pytest.importorskip("torch", reason="the per-action policies need the train extra")
    pytest.importorskip("sb3_contrib", reason="the per-action policies need the train extra")
    import torch as th
    from sb3_contrib import MaskablePPO

    from card_envs.rl.action_heads import PerActionMaskablePolicy, make_features
    from tests.toy_game.features import HighCardFeatures

    features = make_features(NAME, {}, "default")
    assert isinstance(features, HighCardFeatures)
    spec = load_spec(NAME)
    game, encoder = spec.make_game(), spec.encoders["default"](spec.make_game())
    s = game.init(np.random.default_rng(0))
    facts = features(th.as_tensor(encoder.encode(game.view(s, 0)))[None])[0]
    assert facts.shape == (game.num_actions, features.num_features)
    assert facts[:, 0].tolist() == [float(c in s.hands[0]) for c in range(game.num_cards)]
    env = factories(spec).gym(illegal_reward=None)  # an illegal action would raise
    model = MaskablePPO(PerActionMaskablePolicy, env, n_steps=32, batch_size=16, n_epochs=1,
                        policy_kwargs={"env_name": NAME, "body_arch": [8], "head_arch": [8],
                                       "value_arch": [8]}, seed=0, device="cpu")
    model.learn(64)


def test_records_and_the_web_app_take_it(tmp_path, capsys):
    from card_envs.cli import main
    from card_envs.records import read_records, replay

    path = tmp_path / "high_card.jsonl"
    assert main(["evaluate", NAME, "cheapest_win", "random", "--games", "4", "--record",
                 str(path)]) == 0
    assert main(["replay", str(path)]) == 0
    assert "4 games (high_card_v0; 4 finished) replayed exactly" in capsys.readouterr().out
    assert all(replay(r).final.done for r in read_records(path))
    pytest.importorskip("starlette")
    from card_envs.web.tables import new_table

    table = new_table(NAME, {}, 0, "cheapest_win")  # a game without a board: its text
    view = table.view(0)
    assert view["board"] is None and "High card" in view["text"] and view["moves"]
