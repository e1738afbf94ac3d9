"""Baselines: masked DQN, model agents, train/resume/evaluate smoke tests (need the train extra)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the baselines need the train extra")
pytest.importorskip("sb3_contrib", reason="the baselines need the train extra")

import torch as th  # noqa: E402

from baselines import evaluate as evaluate_cli  # noqa: E402
from baselines import train as train_cli  # noqa: E402
from baselines.common import Run  # noqa: E402
from baselines.config import settings  # noqa: E402
from card_envs.cli import main as card_envs_main  # noqa: E402
from card_envs.core.make import factories  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402
from card_envs.rl.masked_dqn import MaskedDQN, masked_argmax, masked_max  # noqa: E402
from tests.conftest import ENV_NAMES  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _dqn(env_name: str, **kwargs):
    gym_env = factories(load_spec(env_name)).gym
    env = gym_env(dict_obs=True, illegal_reward=None)  # an illegal action would raise
    params = {
        "learning_starts": 100,
        "buffer_size": 2000,
        "batch_size": 32,
        "train_freq": 2,
        "target_update_interval": 100,
        "exploration_fraction": 0.5,
        "seed": 0,
        "policy_kwargs": {"net_arch": [32]},
        "device": "cpu",
    }
    return MaskedDQN("MaskedDQNPolicy", env, **{**params, **kwargs})


def test_greedy_action_is_the_best_legal_one():
    q = th.tensor([[5.0, 1.0, 3.0, 9.0], [0.0, -2.0, -1.0, 0.5]])
    mask = th.tensor([[0, 1, 1, 0], [0, 1, 1, 0]])
    assert masked_argmax(q, mask).tolist() == [2, 2]


def test_target_max_runs_over_legal_next_actions_only():
    q = th.tensor([[5.0, 1.0, 3.0], [2.0, 7.0, -1.0], [4.0, 4.0, 4.0]])
    mask = th.tensor([[0, 1, 1], [1, 0, 0], [0, 0, 0]])  # the last row is a terminal state
    assert masked_max(q, mask).tolist() == [3.0, 2.0, 0.0]


@pytest.mark.parametrize("env_name", ENV_NAMES)
def test_exploration_and_warm_up_pick_only_legal_actions(env_name):
    model = _dqn(env_name, learning_starts=10**9)
    model.exploration_rate = 1.0
    env = model.get_env()
    obs = env.reset()
    for _ in range(200):
        model._last_obs = obs
        warm, _ = model._sample_action(model.learning_starts, n_envs=1)
        explore, _ = model.predict(obs, deterministic=False)
        greedy, _ = model.predict(obs, deterministic=True)
        mask = obs["action_mask"][0]
        assert mask[warm[0]] and mask[explore[0]] and mask[greedy[0]]
        obs, *_ = env.step(explore)


@pytest.mark.parametrize("env_name", ENV_NAMES)
def test_masked_dqn_never_takes_an_illegal_action_while_learning(env_name):
    # warm-up (first 100 steps), epsilon exploration and greedy play, with updates;
    # the environment raises on any illegal action.
    model = _dqn(env_name)
    model.learn(600)
    assert model.num_timesteps >= 600 and model._n_updates > 0


def _train(tmp_path, setting, algo, *extra):
    argv = [
        "--env",
        setting,
        "--algo",
        algo,
        "--budget",
        "quick",
        "--timesteps",
        "300",
        "--eval-freq",
        "128",
        "--eval-games",
        "4",
        "--final-games",
        "6",
        "--n-envs",
        "2",
        "--runs",
        str(tmp_path),
        "--no-progress",
        *extra,
    ]
    assert train_cli.main(argv) == 0
    (run,) = [p for p in tmp_path.glob("*/*") if (p / "model.zip").exists()]
    return Run(run)


@pytest.mark.parametrize("setting", settings())
@pytest.mark.parametrize("algo", ["maskable_ppo", "dqn"])
def test_train_save_load_evaluate(tmp_path, setting, algo, capsys):
    from baselines.config import _for_budget, game_config

    pre = _for_budget(game_config(setting).get("pretrain"), "quick")
    # the setting's own imitation agent, on a few hundred decisions (the quick budget's tens
    # of thousands are for learning, not for this test)
    run = _train(tmp_path, setting, algo, *(["--pretrain", f"{pre['agent']},300,1"] if pre
                                            else []))
    if pre:
        assert json.loads((run.path / "pretrain.json").read_text())["agent"] == pre["agent"]
    for name in (
        "config.json",
        "command.txt",
        "versions.json",
        "curve.csv",
        "eval.json",
        "model.json",
        "checkpoints/latest.zip",
    ):
        assert (run.path / name).exists(), name
    meta = json.loads((run.path / "model.json").read_text())
    # the final model is the best checkpoint, kept from a run that trained the whole budget
    assert meta["algo"] == algo and meta["trained_timesteps"] >= 300
    assert meta["timesteps"] == meta["selection"]["timesteps"] <= meta["trained_timesteps"]
    assert isinstance(meta["deterministic"], bool)
    results = json.loads((run.path / "eval.json").read_text())["results"]
    assert [r["opponent"] for r in results] == run.config["eval_opponents"]
    env_name = run.config["env"]
    model = f"{run.path / 'model.zip'}"
    gym_env = factories(load_spec(env_name)).gym
    env = gym_env(**run.config["env_kwargs"], opponent=f"model:{model}")
    capsys.readouterr()
    assert evaluate_cli.main([model, "--env", env_name, "--games", "4"]) == 0
    printed = capsys.readouterr().out
    # games that rank their players (Palace) report losses and places instead of wins, and
    # team games (Literature) a line per team
    first = "lost" if env_name == "palace_v0" else "win"
    # (baselines.evaluate is card-envs evaluate with the setting's seats: it says which)
    assert printed.startswith(f"card-envs evaluate {env_name} model:{model} ")
    if env.game.teams():
        assert re.search(rf"^team A \(model:{re.escape(model)}@0, .*\): {first} ", printed,
                         re.M), printed
    else:  # (a one-player game's line names no seat)
        assert re.search(rf"^model:{re.escape(model)}(@0)?: {first} ", printed, re.M), printed
    # duplicate deals exactly where the setting evaluates with them (Thirty-One: plain matches)
    assert ("4 pairs" in printed) == (run.config["duplicate"] and env.game.num_players == 2)
    # the saved model is usable as an opponent in the Gymnasium view and in card-envs evaluate
    env.reset(seed=0)
    args = [f"--set={k}={v}" for k, v in run.config["env_kwargs"].items()]
    rivals = ["random"] if env.game.num_players > 1 else []
    assert (
        card_envs_main(["evaluate", env_name, f"model:{model}", *rivals, "--games", "2", *args])
        == 0
    )
    if run.config.get("search"):  # Palace's model also plays guiding its game's search
        assert meta["search"] == run.config["search"]
        capsys.readouterr()
        assert card_envs_main(["evaluate", env_name, f"model+search:{model}", *rivals,
                               "--games", "2", *args]) == 0
        assert f"model+search:{model}@0: lost" in capsys.readouterr().out


def test_run_all_plays_the_search_and_the_rule_agents_beside_the_training(tmp_path,
                                                                         monkeypatch):
    from baselines import jobs
    from baselines.jobs import record_all, run_all

    # the search's tasks are made here, in this process: 4 games per opponent, not 50
    tasks = jobs._search_tasks
    monkeypatch.setattr(jobs, "_search_tasks",
                        lambda *args: [(*t[:4], 4) for t in tasks(*args)])
    # DQN: its quick run fits 10k decisions (PPO imitates 100k)
    job = ("palace_v0", "dqn", 0, "quick", str(tmp_path), 512, False, tmp_path / "d", "cpu",
           "python -m baselines.reproduce")
    dirs, measured = run_all([job], jobs=2, references={"palace_v0": 500})
    (run,) = jobs.collect_runs(dirs)  # one job, trained once
    assert len(list(tmp_path.glob("palace_v0/*"))) == 1
    assert set(measured["reference"]) == set(measured["search"]) == {"palace_v0"}
    model_file, rows = measured["search"]["palace_v0"]
    assert model_file == Path(run["path"]) / "model.zip" and len(rows) == 3
    assert {row["games"] for row in rows} == {4}
    # the records made from what run_all measured equal those that play it all again, the
    # search's opponents spread over two workers, the rule agents' record after them
    beside = record_all([("palace_v0", [run], "quick")], 2, measured)["palace_v0"]
    again = record_all([("palace_v0", [run], "quick")], 2)["palace_v0"]
    assert len(again["search"]["results"]) == 3 and again["reference"]
    for key in ("search", "reference", "shipped"):
        assert beside[key] == again[key]


def test_search_only_refuses_a_setting_without_search_or_without_a_shipped_model(
        tmp_path, monkeypatch, capsys):
    from baselines import reproduce

    monkeypatch.setattr(reproduce, "RESULTS", tmp_path / "baselines.json")
    argv = ["--budget", "full", "--search-only", "--settings"]
    assert reproduce.main([*argv, "simple_tricks_v0"]) == 2
    assert "'simple_tricks_v0' has no search" in capsys.readouterr().err
    assert reproduce.main([*argv, "palace_v0"]) == 2  # no record in this results file
    assert "no full-budget shipped model for 'palace_v0'" in capsys.readouterr().err
    assert not (tmp_path / "baselines.json").exists()


def test_a_setting_with_search_records_shows_and_checks_the_models_play_with_it(tmp_path):
    from baselines import final, render, reproduce

    run = _train(tmp_path, "palace_v0", "maskable_ppo", "--pretrain", "heuristic,300,1")
    search = reproduce.search_rows("palace_v0", run.path / "model.zip", games=3, seed=1)
    assert search["agent"] == "ismcts" and search["budget"] == 25
    assert [r["opponent"] for r in search["results"]] == ["random", "lowest_first", "heuristic"]
    assert all(r["games"] == 3 for r in search["results"])
    assert reproduce.search_rows("simple_tricks_v0", run.path / "model.zip", 3) is None
    record = final.collect(str(run.path))
    record = {"setting": "palace_v0", "budget": "quick", "date": "today", "machine": "here",
              "final_seed": 1, "runs": [record], "shipped": record, "search": search,
              "reference": {"heuristic": {r["opponent"]: r for r in search["results"]}}}
    text = "\n".join(render.setting_section(record, None))
    assert text.count("| shipped + search: the model guiding `ismcts:25` (`best+search`) |") == 3
    heuristic = next(r for r in search["results"] if r["opponent"] == "heuristic")
    target = {"opponent": "heuristic", "metric": "losses_rate", "below": 0.30, "play": "search"}
    ok, detail = final.check_target(target, record)
    assert ok == (heuristic["losses_rate"] < 0.30) and detail.startswith(
        f"{heuristic['losses_rate']:.1%}")
    assert "- with search, loss rate against `heuristic` below 30.0%: **" in text
    assert "that model" not in render.quick_report("palace_v0", record, None)
    assert "MaskablePPO + ismcts:25 search" in render.quick_report("palace_v0", record, None)


@pytest.mark.parametrize("algo", ["maskable_ppo", "dqn"])
def test_resume_after_an_interruption_continues_the_step_count(tmp_path, algo):
    argv = [
        "--env",
        "simple_tricks_v0",
        "--algo",
        algo,
        "--budget",
        "quick",  # the full budget ends simple tricks' PPO with minutes of expert iteration
        "--timesteps",
        "2500",
        "--eval-freq",
        "256",
        "--eval-games",
        "4",
        "--final-games",
        "4",
        "--n-envs",
        "2",
        "--runs",
        str(tmp_path),
        "--no-progress",
    ]
    # PPO collects 2 envs x 512 steps per rollout; a checkpoint keeps only whole rollouts
    assert train_cli.main([*argv, "--stop-at", "1500"]) == 130
    (path,) = tmp_path.glob("*/*")
    saved = json.loads((path / "checkpoints" / "latest.json").read_text())["timesteps"]
    assert 1000 <= saved <= 1600
    assert not (path / "model.zip").exists()
    assert train_cli.main(["--resume", str(path), "--no-progress"]) == 0
    curve = Run(path).curve()
    steps = [row["timesteps"] for row in curve]
    assert steps == sorted(steps) and steps[-1] >= 2500
    final = json.loads((path / "model.json").read_text())
    assert 2500 <= final["trained_timesteps"] < 2500 + 2 * 512
    assert final["timesteps"] in steps, "the kept checkpoint is one of the curve's"
    assert json.loads((path / "config.json").read_text())["timesteps"] == 2500


def test_self_play_pool_takes_a_new_snapshot_at_every_checkpoint(tmp_path):
    run = _train(
        tmp_path, "simple_tricks_v0", "maskable_ppo", "--opponent", "self",
        "--mix", "heuristic:0.5",
        "--hp", "n_steps=64", "--hp", "batch_size=32",  # a checkpoint every rollout of 128
    )
    assert (run.path / "checkpoints" / "pool.pt").exists()
    curve = run.curve()
    assert [row["pool_version"] for row in curve] == list(range(1, len(curve) + 1))
    assert all("pool_payoff" in row for row in curve)
    assert run.config["opponent"] == "self" and run.config["mix"] == "heuristic:0.5"
    pool = th.load(run.path / "checkpoints" / "pool.pt", weights_only=False)
    first, last = pool["members"][0], pool["members"][-1]
    assert any(not th.equal(first[k], last[k]) for k in first), "the pool's snapshots differ"


def _ppo(env_name="simple_tricks_v0", **env_kwargs):
    from sb3_contrib import MaskablePPO

    env = factories(load_spec(env_name)).gym(**env_kwargs)
    return MaskablePPO("MlpPolicy", env, seed=0, device="cpu", n_steps=64, batch_size=32)


def test_pool_opponents_draw_new_snapshots_and_the_rule_agent():
    from baselines.selfplay import PoolOpponent, SnapshotPool

    model = _ppo()
    spec, game, encoder = load_spec("simple_tricks_v0"), model.env.envs[0].unwrapped.game, None
    encoder = spec.encoders["default"](game)
    pool = SnapshotPool(spec, game, encoder, "maskable_ppo", size=2)
    pool.add(model.policy)
    opponent = PoolOpponent(pool, "heuristic", 0.3, seed=0)
    seen_versions, rule_games = set(), 0
    for _ in range(3):
        model.learn(64)
        pool.add(model.policy)
        for _ in range(20):
            opponent.reset()
            if opponent.current is opponent.rule:
                rule_games += 1
            else:
                seen_versions.add(opponent.version)
    assert pool.added == 4 and len(pool.members) == 2
    assert seen_versions == {2, 3, 4} and 0 < rule_games < 60
    a, b = (m.state_dict() for m in pool.members)
    assert any(not th.equal(a[k], b[k]) for k in a)


def test_teammates_play_the_learners_current_weights(tmp_path):
    from baselines.train import Trainer, build_config, parser

    args = parser().parse_args(["--env", "literature_v0-original", "--n-envs", "1",
                                "--runs", str(tmp_path), "--budget", "quick", "--scalar",
                                "--hp", "policy=mlp"])  # one output layer to rig below
    cfg = build_config(args)
    cfg["teammate"] = "self"  # the pipeline before: teammates play the learner's policy
    run = Run.create(tmp_path, cfg, "test")
    trainer = Trainer(run)
    env = trainer.env.envs[0].unwrapped
    teammate = env.opponents[1]  # relative seats: +1 opponent, +2 teammate, +3 opponent
    assert teammate.name == "learner" and trainer.learner.policy is trainer.model.policy
    game, rng = env.game, np.random.default_rng(0)
    s = game.init(rng)
    view = game.view(s, s.player)
    before = [teammate.act(view, np.random.default_rng(k)) for k in range(20)]
    with th.no_grad():  # the learner changes: only one legal action keeps any probability
        for p in trainer.model.policy.action_net.parameters():
            p.zero_()
        target = int(np.flatnonzero(view.legal)[-1])
        trainer.model.policy.action_net.bias[target] = 50.0
    after = [teammate.act(view, np.random.default_rng(k)) for k in range(20)]
    assert after == [target] * 20 and before != after


def test_bad_arguments_are_reported(tmp_path, capsys):
    assert train_cli.main(["--env", "chess_v0", "--runs", str(tmp_path)]) == 2
    assert "no baseline setting 'chess_v0'" in capsys.readouterr().err
    assert (
        train_cli.main(
            ["--env", "ninety_eight_cards_v0", "--opponent", "self", "--runs", str(tmp_path)]
        )
        == 2
    )
    assert "one player: there is no self-play" in capsys.readouterr().err
    assert (
        train_cli.main(
            ["--env", "simple_tricks_v0", "--opponent", "wizard", "--runs", str(tmp_path)]
        )
        == 2
    )
    assert "unknown agent 'wizard'" in capsys.readouterr().err
    from card_envs.rl.policy_agent import models_dir

    models = models_dir()
    for init, algo, message in [
        (tmp_path / "none.zip", "maskable_ppo", "none.zip is not a model file"),
        (models / "thirty_one_v0.zip", "maskable_ppo", "is a dqn model; this run trains "
         "maskable_ppo (choose --algo dqn or a maskable_ppo model)"),
        (models / "simple_tricks_v0.zip", "maskable_ppo", "was trained on simple_tricks_v0; "
         "this run trains on thirty_one_v0"),
        (models / "thirty_one_v0.zip", "dqn --obs-encoding original", "sees the 'default' "
         "observation encoding; this run's is 'original'"),
        # same algorithm, env and encoding, another network: refused when its weights load
        (models / "thirty_one_v0.zip", "dqn --hp policy_kwargs={net_arch:[32]} --budget quick",
         "network does not fit this run's"),
    ]:
        argv = ["--env", "thirty_one_v0", "--algo", *algo.split(), "--init-from", str(init),
                "--runs", str(tmp_path)]
        assert train_cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: --init-from: ") and message in err
        assert len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir()), "no run folder for a run that never started"


def test_policy_agent_plays_only_legal_moves():
    rng = np.random.default_rng(0)
    model = _dqn("simple_tricks_v0")
    from card_envs.rl.policy_agent import PolicyAgent

    spec = load_spec("simple_tricks_v0")
    game = spec.make_game()
    agent = PolicyAgent(game, spec.encoders["default"](game), model.policy, "dqn")
    s = game.init(rng)
    while not s.done:
        a = agent.act(game.view(s, s.player), rng)
        assert game.legal_mask(s)[a]
        game.apply(s, a, rng)


def test_best_finds_the_shipped_model_of_the_games_rules(tmp_path, monkeypatch):
    import shutil

    from card_envs.core.agents import make_agent
    from card_envs.rl import policy_agent

    run = _train(tmp_path, "ninety_eight_cards_v0-original", "maskable_ppo",
                 "--pretrain", "expert,300,1")  # imitation is not what this test is for
    models = tmp_path / "models"
    models.mkdir()
    for suffix in (".zip", ".json"):
        shutil.copyfile(
            run.path / f"model{suffix}", models / f"ninety_eight_cards_v0-original{suffix}"
        )
    monkeypatch.setattr(policy_agent, "models_dir", lambda: models)
    spec = load_spec("ninety_eight_cards_v0")
    original = spec.make_game(rules="original")
    agent = make_agent(spec, "best", original)
    state = original.init(np.random.default_rng(0))
    assert original.legal_mask(state)[agent.act(original.view(state, 0), np.random.default_rng(0))]
    # the reward scheme does not matter to a policy
    make_agent(spec, "best", spec.make_game(rules="original", reward="original"))
    with pytest.raises(ValueError, match="shipped: ninety_eight_cards_v0-original"):
        make_agent(spec, "best", spec.make_game())
    # baselines.evaluate takes a setting's name, whose rules pick the model; an env name
    # means its default rules, for which no model is in this folder
    assert evaluate_cli.resolve_model("ninety_eight_cards_v0-original", "best")[1] == (
        models / "ninety_eight_cards_v0-original.zip")
    with pytest.raises(ValueError, match="no trained model ships for ninety_eight_cards_v0 with"):
        evaluate_cli.resolve_model("ninety_eight_cards_v0", "best")
    with pytest.raises(ValueError, match="unknown_v0"):
        evaluate_cli.resolve_model("unknown_v0", "best")


def test_reproduce_quick_writes_a_table_and_collect_rebuilds_it(tmp_path, capsys):
    import shutil

    from baselines import render, reproduce

    out = tmp_path / "baselines.md"
    argv = ["--budget", "quick", "--settings", "simple_tricks_v0", "--runs", str(tmp_path / "r"),
            "--timesteps", "2048"]
    assert reproduce.main([*argv, "--out", str(out)]) == 0
    text = out.read_text()
    assert "## `simple_tricks_v0`" in text
    assert "| rule agent `heuristic` | `first_play` | 500 pairs |" in text
    assert "Targets for the shipped model" in text
    # each algorithm's figure over its seeds (one each at the quick budget: no interval)
    assert re.search(r"^\| MaskablePPO \| 1 \| [0-9.]+% \(one seed: no interval\) ", text, re.M)
    assert re.search(r"^\| DQN \(masked\) \| 1 \| ", text, re.M)
    assert "Reproduce: `python -m baselines.reproduce --budget full --settings simple_tricks_v0" \
        in text
    assert (tmp_path / "simple_tricks_v0.png").exists()
    record = json.loads(out.with_suffix(".json").read_text())["settings"]["simple_tricks_v0"]
    assert set(record["seeds"]) == {"maskable_ppo", "dqn"}
    assert record["seeds"]["dqn"]["n"] == 1
    labels = render.plot_curves(record, tmp_path / "again.png")
    assert labels == ["MaskablePPO (1 seed)", "DQN (masked) (1 seed)", "rule agent heuristic"]
    printed = capsys.readouterr().out
    assert "== simple_tricks_v0" in printed and "rule agent heuristic (same deals)" in printed
    again = tmp_path / "again.md"
    assert reproduce.main([*argv, "--collect", "--out", str(again)]) == 0
    table = [line for line in text.split("\n") if line.startswith("| ")]
    assert table == [line for line in again.read_text().split("\n") if line.startswith("| ")]
    # the game page gets the same section, before its version history, replaced on a rerun
    (tmp_path / "docs" / "games").mkdir(parents=True)
    page = tmp_path / "docs" / "games" / "simple_tricks.md"
    shutil.copyfile(reproduce.ROOT / "docs" / "games" / "simple_tricks.md", page)
    section = text.split("\n")[text.split("\n").index("## `simple_tricks_v0`") :]
    for _ in range(2):
        render.write_game_page("simple_tricks_v0", section, tmp_path)
        new = page.read_text()
        assert new.count(render.game_page_block(section)) == 1
        assert new.index("## Trained baselines") < new.index("## Version history")


def test_reproduce_of_some_settings_keeps_the_others(tmp_path, monkeypatch, capsys):
    import shutil

    from baselines import reproduce

    root = tmp_path / "root"
    shutil.copytree(reproduce.ROOT / "docs" / "games", root / "docs" / "games")
    monkeypatch.setattr(reproduce, "ROOT", root)
    monkeypatch.setattr(reproduce, "RESULTS", root / "docs" / "baselines.json")
    # (Literature's original rules: a setting that shares its game's page, and imitates few
    # decisions in the quick budget)
    for setting in ("simple_tricks_v0", "literature_v0-original"):
        runs = str(tmp_path / setting)
        quick = ["--budget", "quick", "--settings", setting, "--runs", runs, "--timesteps", "1024"]
        assert reproduce.main([*quick, "--out", str(tmp_path / f"{setting}.md")]) == 0
        assert reproduce.main(["--budget", "full", "--collect", "--settings", setting,
                               "--runs", runs, "--timesteps", "1024"]) == 0
    text = (root / "docs" / "baselines.md").read_text()
    assert "## `simple_tricks_v0`" in text and "## `literature_v0-original`" in text
    saved = json.loads((root / "docs" / "baselines.json").read_text())["settings"]
    assert set(saved) == {"simple_tricks_v0", "literature_v0-original"}
    assert "## `simple_tricks_v0`" in (root / "docs" / "games" / "simple_tricks.md").read_text()
    # a run trained otherwise than configs/ says is refused by --collect
    (config,) = (tmp_path / "simple_tricks_v0").glob("*/maskable_ppo-*/*/config.json")
    data = json.loads(config.read_text())
    data["hyperparams"]["learning_rate"] = 0.5
    config.write_text(json.dumps(data))
    collect = ["--budget", "full", "--collect", "--settings", "simple_tricks_v0", "--runs",
               str(tmp_path / "simple_tricks_v0"), "--timesteps", "1024"]
    assert reproduce.main(collect) == 2
    assert "hyperparams" in capsys.readouterr().err


def test_ppo_policy_agent_picks_the_masked_distributions_mode():
    from sb3_contrib import MaskablePPO

    from card_envs.rl.policy_agent import PolicyAgent

    spec = load_spec("palace_v0")
    env = factories(spec).gym(dict_obs=False)
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    game = env.game
    agent = PolicyAgent(game, env.encoder, model.policy, "maskable_ppo")
    rng = np.random.default_rng(1)
    for _ in range(5):
        s = game.init(rng)
        while not s.done:
            view = game.view(s, s.player)
            obs = th.as_tensor(env.encoder.encode(view)).unsqueeze(0)
            with th.no_grad():
                dist = model.policy.get_distribution(obs, action_masks=view.legal[None] > 0)
            a = agent.act(view, rng)
            assert a == int(dist.mode()[0]) and game.legal_mask(s)[a]
            game.apply(s, a, rng)


def test_result_bonus_adds_the_match_result_to_the_last_reward_only():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from baselines.shaping import ResultBonus

    gym_env = factories(load_spec("thirty_one_v0")).gym

    def make():
        return gym_env(num_players=2, reward="original", opponent="greedy", learner_seat=0)

    plain = DummyVecEnv([make])
    bonus = ResultBonus(DummyVecEnv([make]), 10.0)
    plain.seed(3)
    bonus.seed(3)
    plain.reset()
    bonus.reset()
    rng = np.random.default_rng(0)
    done = False
    while not done:
        action = np.array([rng.choice(np.flatnonzero(plain.env_method("action_masks")[0]))])
        _, r_plain, dones, infos = plain.step(action)
        _, r_bonus, *_ = bonus.step(action)
        done = bool(dones[0])
        assert r_bonus[0] == pytest.approx(r_plain[0] + (10.0 * infos[0]["payoff"] if done
                                                         else 0.0))
    assert infos[0]["payoff"] in (-1.0, 1.0)


def test_half_suit_lead_potential_is_my_teams_lead_in_eighths():
    from baselines.shaping import potential

    spec = load_spec("literature_v0")
    game = spec.make_game()
    encoder = spec.encoders["default"](game)
    s = game.init(np.random.default_rng(0))
    s.score = [3, 1]  # team 0 scored half-suits 0-2, team 1 half-suit 3; the rest are live
    s.outcome = [0, 0, 0, 1] + [-1] * 4
    phi = potential(spec, "half_suit_lead")

    def seen_by(seat):
        return encoder.encode(game.view(s, seat))[None]

    assert phi(encoder.layout, seen_by(0))[0] == pytest.approx(2 / 8)
    assert phi(encoder.layout, seen_by(3))[0] == pytest.approx(-2 / 8)


def test_imitation_fits_the_policy_to_the_agents_choices():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from baselines.imitation import collect, fit, scalar_actor

    gym_env = factories(load_spec("simple_tricks_v0")).gym
    env = DummyVecEnv([lambda: gym_env(opponent="first_play")] * 4)
    env.seed(0)
    data = collect(env, scalar_actor(env, "heuristic", seed=0), 1500, gamma=1.0)
    assert len(data["actions"]) >= 1500 and data["masks"][np.arange(len(data["actions"])),
                                                           data["actions"]].all()
    assert set(np.unique(data["returns"])) <= {-1.0, 0.0, 1.0}
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    before = fit(model.policy, data, epochs=0)["accuracy"]
    after = fit(model.policy, data, epochs=30)["accuracy"]
    assert after > 0.8 and after > before + 0.2


def test_imitation_of_a_per_action_policy_scores_only_legal_actions_and_fits_the_same(
        monkeypatch):
    """fit() masks the logits it fits, so a per-action policy scores only the legal actions
    there (scoring_legal_only); the fitted weights are those of scoring every action."""
    from contextlib import nullcontext

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    import baselines.imitation as imitation
    from card_envs.rl.action_heads import PerActionMaskablePolicy

    gym_env = factories(load_spec("ninety_eight_cards_v0")).gym
    env = DummyVecEnv([gym_env] * 2)
    env.seed(0)
    data = imitation.collect(env, imitation.scalar_actor(env, "greedy", seed=0), 300,
                             gamma=0.999)
    kwargs = {"env_name": "ninety_eight_cards_v0", "body_arch": [16], "head_arch": [16],
              "value_arch": [16]}
    fitted, seen = [], []
    for legal_only in (True, False):
        model = MaskablePPO(PerActionMaskablePolicy, env, seed=0, device="cpu",
                            policy_kwargs=kwargs)
        scorer = model.policy.scorer
        forward = scorer.forward
        scorer.forward = lambda obs, forward=forward, scorer=scorer: (
            seen.append(scorer.legal is not None) or forward(obs))
        if not legal_only:
            monkeypatch.setattr(imitation, "scoring_legal_only", lambda *a: nullcontext())
        stats = imitation.fit(model.policy, data, epochs=3, batch_size=64)
        fitted.append((stats, [p.detach().clone() for p in model.policy.parameters()]))
    calls = len(seen) // 2
    assert all(seen[:calls]) and not any(seen[calls:])
    assert fitted[0][0]["accuracy"] == fitted[1][0]["accuracy"]
    for a, b in zip(fitted[0][1], fitted[1][1], strict=True):
        assert th.allclose(a, b, atol=1e-5)


def test_dqn_imitation_ranks_the_agents_choice_first_and_values_it_at_the_return():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from baselines.imitation import collect, fit_q, scalar_actor
    from card_envs.rl.masked_dqn import MASK_KEY, OBS_KEY, MaskedDQN

    gym_env = factories(load_spec("simple_tricks_v0")).gym
    env = DummyVecEnv([lambda: gym_env(opponent="first_play", dict_obs=True)] * 4)
    env.seed(0)
    data = collect(env, scalar_actor(env, "heuristic", seed=0), 1500, gamma=1.0)
    assert data["obs"].ndim == 2  # the observations alone: the masks are kept apart
    model = MaskedDQN("MaskedDQNPolicy", env, seed=0, device="cpu", learning_starts=10)
    before = fit_q(model.policy, data, epochs=0)["accuracy"]
    after = fit_q(model.policy, data, epochs=30)["accuracy"]
    assert after > 0.8 and after > before + 0.2
    with th.no_grad():
        batch = {OBS_KEY: th.as_tensor(data["obs"]), MASK_KEY: th.as_tensor(data["masks"]).float()}
        q = model.policy.q_net(batch)
        chosen = q.gather(1, th.as_tensor(data["actions"])[:, None]).squeeze(1).numpy()
        # the target network starts from the fitted one
        assert th.equal(q, model.policy.q_net_target(batch))
    # the expert's q-values follow the returns its games paid (-1, 0 or +1)
    assert np.corrcoef(chosen, data["returns"])[0, 1] > 0.3


def test_scalar_demonstrations_are_played_once_and_shared_by_runs_of_the_same_games(tmp_path):
    from baselines.imitation import collect_parallel
    from baselines.train import build_config, parser

    def cfg(algo, *extra):
        argv = ["--env", "ninety_eight_cards_v0", "--algo", algo, "--budget", "quick", *extra]
        return build_config(parser().parse_args(argv))

    first, reused = collect_parallel(cfg("maskable_ppo"), "greedy", 300, 0.999, 1, 1, tmp_path)
    assert reused is None and len(list(tmp_path.iterdir())) == 1
    # DQN's run plays the same games: it reads them back, the same arrays
    again, reused = collect_parallel(cfg("dqn"), "greedy", 300, 0.999, 1, 1, tmp_path)
    assert reused is not None and again.keys() == first.keys()
    assert all(np.array_equal(again[k], first[k]) for k in first)
    # other games, agent, seed or discount: played anew, kept apart
    collect_parallel(cfg("dqn", "--env-arg", "rules=original"), "greedy", 300, 0.999, 1, 1,
                     tmp_path)
    collect_parallel(cfg("dqn"), "random", 300, 0.999, 1, 1, tmp_path)
    collect_parallel(cfg("dqn"), "greedy", 300, 0.999, 2, 1, tmp_path)
    other, reused = collect_parallel(cfg("dqn"), "greedy", 300, 0.9, 1, 1, tmp_path)
    assert reused is None and not np.array_equal(other["returns"], first["returns"])
    assert len(list(tmp_path.iterdir())) == 5


@pytest.mark.parametrize("algo", ["maskable_ppo", "dqn"])
def test_a_run_that_imitates_first_keeps_the_imitation_policy_as_a_checkpoint(tmp_path, algo):
    run = _train(tmp_path, "simple_tricks_v0", algo, "--pretrain", "heuristic,500,2")
    assert run.curve()[0]["timesteps"] == 0
    assert json.loads((run.path / "pretrain.json").read_text())["agent"] == "heuristic"


def test_dqn_imitates_at_the_quick_budget_and_learns_from_scratch_at_the_full_one():
    from baselines.train import build_config, parser

    def pretrain(algo, budget):
        argv = ["--env", "palace_v0", "--algo", algo, "--budget", budget]
        return build_config(parser().parse_args(argv))["pretrain"]

    # the same agent and passes; dqn.yaml's imitate_decisions: DQN fits fewer decisions
    ppo, dqn = pretrain("maskable_ppo", "quick"), pretrain("dqn", "quick")
    assert ppo["agent"] == dqn["agent"] == "heuristic" and ppo["epochs"] == dqn["epochs"]
    assert (ppo["decisions"], dqn["decisions"]) == (100_000, 10_000)
    assert pretrain("dqn", "full") is None and pretrain("maskable_ppo", "full") is not None
    # a setting's block may say otherwise (Literature's DQN imitates at both budgets)
    argv = ["--env", "literature_v0-original", "--algo", "dqn", "--budget", "full"]
    assert build_config(parser().parse_args(argv))["pretrain"]["agent"] == "heuristic"


def test_a_setting_may_train_otherwise_at_the_quick_budget():
    from baselines.config import game_config
    from baselines.train import build_config, parser, selection

    def built(budget):
        argv = ["--env", "palace_v0", "--algo", "maskable_ppo", "--budget", budget]
        return build_config(parser().parse_args(argv))

    quick, full = built("quick"), built("full")
    assert quick["opponent"] == "lowest_first"
    assert full["opponent"] == "heuristic,lowest_first,heuristic,lowest_first"
    assert selection(quick) == {"opponent": "lowest_first", "metric": "losses_rate",
                                "higher": False}
    assert selection(full) == {"opponent": "heuristic", "metric": "losses_rate",
                               "higher": False}  # the first target's
    # the docs describe the full budget: its entries are the default
    assert game_config("palace_v0")["opponent"] == game_config("palace_v0", "full")["opponent"]
    with pytest.raises(ValueError, match="budget"):
        game_config("palace_v0", "medium")


def test_runs_started_together_never_share_a_folder(tmp_path, monkeypatch):
    from pathlib import Path

    from baselines.train import build_config, parser

    cfg = build_config(parser().parse_args(["--env", "simple_tricks_v0"]))
    # another process may create the folder between a look and the mkdir: never look
    monkeypatch.setattr(Path, "exists", lambda self: False)
    paths = {Run.create(tmp_path, cfg, "x").path for _ in range(3)}
    assert len(paths) == 3 and all((p / "checkpoints").is_dir() for p in paths)


def test_progress_line_says_steps_speed_reward_and_time_left():
    from baselines.train import progress_line

    line = progress_line("simple_tricks_v0 dqn seed 0", 12_288, 400_000, 812.0,
                         [{"r": 1.0}, {"r": -0.5}])
    assert line == ("[simple_tricks_v0 dqn seed 0] 12,288/400,000 steps (3%), 812 steps/s, "
                    "mean reward of the last 2 episodes +0.25, 8 min left")


def test_collect_refuses_runs_trained_otherwise_but_not_for_the_runs_own_settings(tmp_path):
    pytest.importorskip("sb3_contrib")
    from baselines.common import Run
    from baselines.recipes import recipe
    from baselines.reproduce import config_drift

    for algo in ("maskable_ppo", "dqn"):
        cfg = recipe("palace_v0", algo, "full")[0]
        run = Run.create(tmp_path, dict(cfg, pretrain={"agent": "random", "decisions": 5}), "x")
        drift = config_drift(str(run.path))
        assert drift == [
            f"pretrain: run {{'agent': 'random', 'decisions': 5}}, configs {cfg['pretrain']!r}"]
        # the run's own seed and device are not the recipe's: no drift
        run = Run.create(tmp_path, dict(cfg, device="cuda"), "x")
        assert config_drift(str(run.path)) == []
        run = Run.create(tmp_path, dict(cfg, timesteps=7), "x")
        assert config_drift(str(run.path))[0].startswith("timesteps: run 7")


def test_a_learning_rate_can_fall_linearly_over_the_run():
    cfg = {"env": "thirty_one_v0", "algo": "dqn", "env_kwargs": {}, "obs_encoding": "default",
           "hyperparams": {"learning_rate": {"start": 1e-3, "end": 1e-5}}}
    _, hp = train_cli.policy_and_hyperparams(cfg)
    rate = hp["learning_rate"]
    assert rate(1.0) == pytest.approx(1e-3) and rate(0.0) == pytest.approx(1e-5)
    assert rate(0.5) == pytest.approx((1e-3 + 1e-5) / 2)
    cfg["hyperparams"] = {"learning_rate": {"begin": 1e-3, "end": 1e-5}}
    with pytest.raises(ValueError, match="learning_rate: .* give a number or"):
        train_cli.policy_and_hyperparams(cfg)


def test_the_plain_mlp_drops_the_per_action_heads_arguments():
    cfg = {"env": "literature_v0", "algo": "maskable_ppo", "env_kwargs": {},
           "obs_encoding": "default",
           "hyperparams": {"policy": "per_action", "policy_kwargs": {"facts": "beliefs"}}}
    policy, hp = train_cli.policy_and_hyperparams(cfg)
    assert hp["policy_kwargs"]["facts"] == "beliefs" and policy.__name__.startswith("PerAction")
    cfg["hyperparams"] = {"policy": "mlp", "policy_kwargs": {
        "facts": "beliefs", "body_arch": [8], "net_arch": [32]}}
    policy, hp = train_cli.policy_and_hyperparams(cfg)
    assert policy == "MlpPolicy" and hp["policy_kwargs"] == {"net_arch": [32]}
    # every argument of either per-action policy, read off their constructors
    cfg["hyperparams"]["policy_kwargs"].update(head_arch=[8], value_arch=[8])
    for algo, name in (("maskable_ppo", "MlpPolicy"), ("dqn", "MaskedDQNPolicy")):
        policy, hp = train_cli.policy_and_hyperparams({**cfg, "algo": algo})
        assert policy == name and hp["policy_kwargs"] == {"net_arch": [32]}


def test_expert_iteration_labels_the_models_own_positions_with_every_best_move(tmp_path, capsys):
    from baselines import expert_iteration
    from card_envs.core.agents import make_agent

    out = tmp_path / "dagger.zip"
    argv = ["best", "--env", "simple_tricks_v0", "--expert", "solver", "--opponent",
            "solver,heuristic", "--rounds", "2", "--decisions", "300", "--epochs", "1",
            "--out", str(out)]
    assert expert_iteration.main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.count("the model agreed with solver on") == 2
    meta = json.loads(out.with_suffix(".json").read_text())
    rounds = meta["expert_iteration"]["rounds"]
    assert [r["round"] for r in rounds] == [1, 2] and rounds[1]["labels"] > rounds[0]["labels"]
    # the shipped model already plays a best card almost always: ties count as agreement
    assert rounds[0]["agreed_before_fit"] > 0.9
    spec = load_spec("simple_tricks_v0")
    agent = make_agent(spec, f"model:{out}", spec.make_game())
    game = spec.make_game()
    s = game.init(np.random.default_rng(0))
    assert game.legal_mask(s)[agent.act(game.view(s, s.player), np.random.default_rng(0))]


def test_expert_iteration_anchor_keeps_the_models_moves_after_k_decisions():
    from baselines.expert_iteration import anchor

    data = {"turn": np.array([0, 1, 2, 0, 3]), "actions": np.array([5, 5, 5, 5, 5]),
            "best": np.zeros((5, 8), bool)}
    data["best"][:, 5] = True
    played = np.array([1, 2, 3, 4, 6])
    labelled = anchor(data, played, after=2)
    assert labelled.tolist() == [True, True, False, True, False]
    assert data["actions"].tolist() == [5, 5, 3, 5, 6]
    assert data["best"][2].nonzero()[0].tolist() == [3]
    assert data["best"][4].nonzero()[0].tolist() == [6]
    assert data["best"][0].nonzero()[0].tolist() == [5]


def test_fit_with_no_value_weight_leaves_the_critic_alone():
    import torch as th

    from baselines.imitation import fit
    from card_envs.rl.policy_agent import algo_class

    spec = load_spec("simple_tricks_v0")
    model = algo_class("maskable_ppo")("MlpPolicy", factories(spec).gym(dict_obs=False), n_steps=8,
                                       batch_size=8, policy_kwargs={"net_arch": [16]})
    env = factories(spec).gym(dict_obs=False)
    obs, info = env.reset(seed=0)
    n = 64
    data = {"obs": np.repeat(obs[None], n, 0).astype(np.float32),
            "masks": np.repeat(info["action_mask"][None], n, 0).astype(bool),
            "actions": np.full(n, int(np.flatnonzero(info["action_mask"])[0])),
            "returns": np.full(n, 50.0, np.float32)}
    critic = [p.detach().clone() for p in model.policy.value_net.parameters()]
    before = [p.detach().clone() for p in model.policy.mlp_extractor.value_net.parameters()]
    stats = fit(model.policy, data, epochs=2, value_weight=0.0)
    assert "value_loss" not in stats and stats["accuracy"] == 1.0
    after = [*model.policy.value_net.parameters(),
             *model.policy.mlp_extractor.value_net.parameters()]
    assert all(th.equal(a, b) for a, b in zip([*critic, *before], after, strict=True))
    stats = fit(model.policy, data, epochs=2)  # the default fits the critic too
    assert stats["value_loss"] > 0
    assert not th.equal(critic[0], model.policy.value_net.weight)


@pytest.mark.parametrize("argv, message", [
    (["--expert", "nobody"], "unknown agent 'nobody'"),
    (["--expert", "solver", "--rounds", "0"], "--rounds must be at least 1"),
    (["--expert", "solver", "--anchor-after", "0"], "--anchor-after must be at least 1"),
    (["--expert", "solver", "--value-weight", "-1"], "--value-weight must be at least 0"),
])
def test_expert_iteration_errors_are_one_line(tmp_path, capsys, argv, message):
    from baselines import expert_iteration

    code = expert_iteration.main(["best", "--env", "simple_tricks_v0", "--out",
                                  str(tmp_path / "x.zip"), *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err


def test_a_run_with_refine_ends_with_expert_iteration_and_keeps_it_only_if_better(tmp_path):
    from baselines.train import build_config, parser, train

    argv = ["--env", "simple_tricks_v0", "--budget", "quick", "--timesteps", "300",
            "--eval-freq", "300", "--eval-games", "20", "--final-games", "4", "--n-envs", "2",
            "--runs", str(tmp_path)]
    cfg = build_config(parser().parse_args(argv))
    assert cfg["refine"]["rounds"] == 0  # the quick budget does not refine
    cfg["refine"] = {"expert": "solver", "opponent": ["heuristic"], "rounds": 1,
                     "decisions": 300, "epochs": 2}
    run = Run.create(tmp_path, cfg, "test")
    assert train(run, progress=False) == 0
    done = json.loads((run.path / "refine.json").read_text())
    assert done["rounds_done"][0]["labels"] >= 300
    rows = run.curve()
    assert rows[-1]["timesteps"] == rows[-2]["timesteps"]  # the refined policy's point
    meta = json.loads((run.path / "model.json").read_text())
    better = rows[-1]["decided_rate"] > max(r["decided_rate"] for r in rows[:-1])
    assert done["kept"] == better
    assert (meta["selection"]["value"] == rows[-1]["decided_rate"]) == better
    build = build_config(parser().parse_args([*argv[:3], "full"]))
    assert build["refine"]["rounds"] == 4
    assert build_config(parser().parse_args([*argv[:3], "full", "--algo", "dqn"]))[
        "refine"] is None


def test_expert_iteration_plays_one_player_games_solo(tmp_path, capsys):
    from baselines import expert_iteration

    out = tmp_path / "solo.zip"
    argv = ["best", "--env", "ninety_eight_cards_v0", "--expert", "greedy", "--opponent",
            "solo", "--rounds", "1", "--decisions", "200", "--epochs", "1", "--out", str(out)]
    assert expert_iteration.main(argv) == 0
    assert "the model agreed with greedy on" in capsys.readouterr().out
    rounds = json.loads(out.with_suffix(".json").read_text())["expert_iteration"]["rounds"]
    assert rounds[0]["labels"] >= 200


def test_a_final_model_leaves_out_what_only_training_reads(tmp_path, capsys, monkeypatch):
    """A run's final model.zip (``save_model(..., for_play=True)``) holds neither the
    optimizer's state nor SB3's ``_last_obs`` (every training game's last observation),
    which a checkpoint to resume from keeps; its weights are the kept checkpoint's. Shipping
    copies it as it is; the command compacts a model written before in place."""
    import json
    import shutil
    import zipfile

    import torch as th

    from baselines import ship as ship_mod
    from card_envs.rl.policy_agent import TRAINING_ONLY, load_policy

    def data(path):
        with zipfile.ZipFile(path) as z:
            return json.loads(z.read("data"))

    def same_weights(a, b):
        want, got = load_policy(a)[0].state_dict(), load_policy(b)[0].state_dict()
        return want.keys() == got.keys() and all(th.equal(want[k], got[k]) for k in want)

    run = _train(tmp_path, "simple_tricks_v0", "maskable_ppo")
    final, latest = run.path / "model.zip", run.path / "checkpoints" / "latest.zip"
    assert data(latest)["_last_obs"] is not None  # a checkpoint keeps what is left out
    assert not set(TRAINING_ONLY) & set(data(final))
    with zipfile.ZipFile(final) as z:
        optimizer = th.load(z.open("policy.optimizer.pth"), weights_only=False)
    assert optimizer["state"] == {}
    assert same_weights(run.path / "checkpoints" / "best.zip", final)
    assert not list(run.path.glob("*.tmp*"))  # no temporary file left behind
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setattr(ship_mod, "MODELS", models)
    ship_mod.ship("simple_tricks_v0", {"path": str(run.path)}, "python -m baselines.reproduce")
    shipped = models / "simple_tricks_v0.zip"
    assert shipped.stat().st_mode & 0o777 == 0o644  # readable by all, as the package's files
    assert shipped.stat().st_size == final.stat().st_size
    assert same_weights(final, shipped)
    shipped_meta = load_policy(shipped)[1]  # the metadata, and how the model was made
    assert shipped_meta.pop("provenance")["shipped_by"] == "python -m baselines.reproduce"
    assert shipped_meta == load_policy(final)[1]
    # the command compacts a model written before in place (here a checkpoint, with its
    # metadata beside it); something else is refused in one line, exit 2
    copy = tmp_path / "copy.zip"
    shutil.copyfile(latest, copy)
    shutil.copyfile(latest.with_suffix(".json"), copy.with_suffix(".json"))
    assert ship_mod.main([str(copy)]) == 0
    assert copy.stat().st_size < latest.stat().st_size
    assert not set(TRAINING_ONLY) & set(data(copy))
    assert same_weights(latest, copy)
    assert ship_mod.main([str(tmp_path / "models" / "simple_tricks_v0.json")]) == 2
    assert "not a model zip" in capsys.readouterr().err


def test_select_picks_the_kept_checkpoint_against_the_agent_and_metric_given(tmp_path, capsys):
    """``--select AGENT[:METRIC]`` replaces the setting's selection (Thirty-One's is wins
    against ``expected_value``): every curve point and the kept checkpoint are against AGENT,
    by METRIC, lower being better for losses; bad values are one-line errors."""
    import csv
    import json

    from baselines.train import selection

    run = _train(tmp_path, "thirty_one_v0", "maskable_ppo", "--select", "greedy:losses_rate")
    cfg = json.loads((run.path / "config.json").read_text())
    assert selection(cfg) == {"opponent": "greedy", "metric": "losses_rate", "higher": False}
    with open(run.path / "curve.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["opponent"] for r in rows} == {"greedy"}
    kept = json.loads((run.path / "model.json").read_text())["selection"]
    assert kept["opponent"] == "greedy" and kept["metric"] == "losses_rate"
    assert kept["value"] == min(float(r[k]) for r in rows
                                for k in ("losses_rate", "losses_rate_sampled"))
    for value, message in [("greedy:speed", "--select: unknown metric 'speed'; choose one of "
                            "wins_rate, decided_rate, losses_rate, mean_payoff, mean_score"),
                           ("wizard", "unknown agent 'wizard'"),
                           ("solo", "unknown agent 'solo'")]:  # solo: one-player games only
        argv = ["--env", "thirty_one_v0", "--select", value, "--runs", str(tmp_path / "x")]
        assert train_cli.main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
    # a one-player game's checkpoints are picked against "solo", by any metric
    from baselines.config import parse_select

    spec = load_spec("ninety_eight_cards_v0")
    assert parse_select("solo:wins_rate", spec, spec.make_game()) == {
        "opponent": "solo", "metric": "wins_rate", "higher": True}


def test_ship_refuses_a_run_that_is_not_its_recipes(capsys):
    """A model ships only from its recipe: ``baselines.ship --run`` (which shipped hand-run
    fine-tunings) is refused with a one-line error naming the command that ships."""
    from baselines import ship as ship_mod

    assert ship_mod.main(["--run", "runs/whatever"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "python -m baselines.reproduce --budget full --settings SETTING --ship" in err


def test_the_summary_quotes_best_and_its_guided_search_from_the_ladder(tmp_path):
    """The summary's ladder column: `best`, `best+search` where the section has it, then the
    highest search agent (not the guided model, whose name has no budget)."""
    from baselines import render

    page = tmp_path / "ladder.md"
    page.write_text("\n".join([
        "<!-- BEGIN LADDER palace_v0 -->",
        "| agent | rating [95% CI] | games | ms per move |",
        "|---|---|---|---|",
        "| `best+search` | 35.0 [33.0, 37.0] | 100 | 20 |",
        "| `ismcts:100` | 32.3 [30.1, 34.5] | 100 | 53 |",
        "| `best` | 31.1 [29.7, 32.5] | 100 | 0.1 |",
        "| `heuristic` | 31.5 [30.0, 32.9] | 100 | 0.0 |",
        "<!-- END LADDER palace_v0 -->",
    ]))
    assert render.ladder_cell("palace_v0", page) == (
        "rating [95% CI] ([ladder](ladder.md)): `best` 31.1 [29.7, 32.5], `best+search` 35.0 "
        "[33.0, 37.0], `ismcts:100` 32.3 [30.1, 34.5]")
    assert render.ladder_cell("simple_tricks_v0", page) == "no ladder section"
