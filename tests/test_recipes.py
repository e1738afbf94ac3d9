"""Recipes (baselines/recipes.py): every shipped model from one recipe in the configs, run
from scratch stage by stage, resumable, with its provenance; figures over seeds; no machine
paths in the repository."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the baselines need the train extra")
pytest.importorskip("sb3_contrib", reason="the baselines need the train extra")

from baselines import final, recipes, reproduce  # noqa: E402
from baselines import ship as ship_mod  # noqa: E402
from baselines.common import Run  # noqa: E402
from baselines.config import BUDGETS, resolve_device, settings  # noqa: E402
from baselines.jobs import _train_job  # noqa: E402
from card_envs.rl.policy_agent import ALGOS, models_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("setting", settings())
def test_every_recipe_resolves_and_its_later_stages_start_from_the_one_before(
        setting, algo, budget):
    chain = recipes.recipe(setting, algo, budget)
    assert [c["stage"] for c in chain] == list(range(len(chain)))
    assert all(c["stage_count"] == len(chain) for c in chain)
    assert chain[0]["init_from"] is None, "no recipe starts from a model file"
    for cfg in chain[1:]:
        assert cfg["init_from"] == recipes.PREVIOUS and cfg["pretrain"] is None
    # expert iteration, where the setting has it, ends the last stage only
    assert all(c["refine"] is None for c in chain[:-1])
    assert all(c["timesteps"] > 0 for c in chain)


def test_the_fine_tuning_rounds_of_the_shipped_models_are_stages():
    """What the shipped models went through by hand is declared: Thirty-One 1v1's DQN is
    fine-tuned against greedy, six-player Literature's PPO twice, four-player once."""
    t31 = recipes.recipe("thirty_one_v0", "dqn", "full")
    assert [c["timesteps"] for c in t31] == [4_500_000, 3_000_000]
    assert t31[1]["opponent"] == "greedy,greedy,greedy,expected_value"
    assert t31[1]["select"] == {"opponent": "greedy", "metric": "wins_rate"}
    assert t31[1]["hyperparams"]["learning_rate"] == 3e-5
    assert [c["timesteps"] for c in recipes.recipe("literature_v0", "maskable_ppo")] == [
        500_000, 8_000_000, 8_000_000]
    assert len(recipes.recipe("literature_v0-original", "maskable_ppo")) == 2
    assert len(recipes.recipe("thirty_one_v0-4p", "dqn")) == 1  # not the 1v1 fine-tuning
    p98 = recipes.recipe("ninety_eight_cards_v0", "maskable_ppo")[0]
    assert p98["pretrain"] == {"agent": "expert", "decisions": 400_000, "epochs": 8}
    assert p98["hyperparams"]["policy_kwargs"]["facts"] == "plans"
    assert p98["shaping"] == {"potential": "homes", "scale": 0.2}


def test_a_stage_with_an_unknown_key_or_opponent_is_refused(monkeypatch):
    real = recipes.hyperparams

    def with_stage(stage):
        def fake(algo, env, budget, setting=None):
            return {**real(algo, env, budget, setting), "stages": [stage]}
        return fake

    monkeypatch.setattr(recipes, "hyperparams", with_stage({"timestep": 5}))
    with pytest.raises(ValueError, match="unknown key 'timestep'; a stage takes name, "
                                         "timesteps"):
        recipes.recipe("simple_tricks_v0", "dqn")
    monkeypatch.setattr(recipes, "hyperparams", with_stage({"opponent": "wizard"}))
    with pytest.raises(ValueError, match="unknown agent 'wizard'"):
        recipes.recipe("simple_tricks_v0", "dqn")
    monkeypatch.setattr(recipes, "hyperparams", with_stage({"select": {"opponent": "random",
                                                                       "metric": "wins"}}))
    with pytest.raises(ValueError, match="stage 1: select .* is not valid; give"):
        recipes.recipe("simple_tricks_v0", "dqn")
    monkeypatch.setattr(recipes, "hyperparams", with_stage({"shaping": {"potential": "homes"}}))
    with pytest.raises(ValueError, match="stage 1: unknown potential 'homes' for "
                                         "simple_tricks_v0"):
        recipes.recipe("simple_tricks_v0", "dqn")


def test_the_digest_names_what_a_recipe_trains_not_the_runs_own_settings():
    base = recipes.recipe("thirty_one_v0", "dqn", "full", seed=0)
    assert recipes.digest(base) == recipes.digest(recipes.recipe("thirty_one_v0", "dqn",
                                                                 "full", seed=3))
    assert recipes.digest(base) == recipes.digest([dict(c, device="cuda") for c in base])
    changed = [dict(c) for c in base]
    changed[1] = dict(changed[1], hyperparams={**changed[1]["hyperparams"],
                                               "learning_rate": 1e-4})
    assert recipes.digest(base) != recipes.digest(changed)
    assert recipes.digest(base) != recipes.digest(recipes.recipe("thirty_one_v0", "dqn",
                                                                 "quick"))


def _job(runs: Path, setting="thirty_one_v0", algo="dqn", seed=0, timesteps=600):
    return (setting, algo, seed, "quick", str(runs), timesteps, False, None, "cpu",
            "python -m baselines.reproduce --test")


def test_a_recipe_runs_every_stage_from_scratch_keeps_what_finished_and_ships_with_provenance(
        tmp_path, monkeypatch, capsys):
    last = Path(_train_job(_job(tmp_path / "runs")))
    folder = tmp_path / "runs" / "thirty_one_v0" / "dqn-seed0"
    assert sorted(p.name for p in folder.iterdir()) == [
        "stage0-train", "stage1-fine-tune-against-greedy"]
    assert last == folder / "stage1-fine-tune-against-greedy"
    first = Run(folder / "stage0-train")
    assert not (first.path / "eval.json").exists(), "only the last stage evaluates"
    assert Run(last).config["init_from"] == str(first.path / "model.zip")
    # the record's curve runs on from one stage into the next
    run = final.collect(str(last))
    assert run["stages"] == 2
    stages = [row["stage"] for row in run["curve"]]
    assert stages[0] == "stage0-train" and stages[-1] == last.name
    steps = [row["timesteps"] for row in run["curve"]]
    assert steps == sorted(steps)
    # a rerun keeps the finished stages as they are
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("model.zip")}
    capsys.readouterr()
    assert Path(_train_job(_job(tmp_path / "runs"))) == last
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("model.zip")} == before
    assert "training against" not in capsys.readouterr().out
    # shipped: the model's JSON records its recipe, which the configs still resolve to
    monkeypatch.setattr(ship_mod, "MODELS", tmp_path / "models")
    ship_mod.ship("thirty_one_v0", run, "python -m baselines.reproduce --collect --ship")
    meta = json.loads((tmp_path / "models" / "thirty_one_v0.json").read_text())
    prov = meta["provenance"]
    assert meta["algo"] == "dqn" and prov["seed"] == 0 and prov["device"] == "cpu"
    assert prov["recipe_digest"] == recipes.digest(recipes.recipe(
        "thirty_one_v0", "dqn", "quick", timesteps=600))
    assert len(prov["recipe"]) == 2 and prov["recipe"][1]["init_from"] == recipes.PREVIOUS
    assert prov["command"] == "python -m baselines.reproduce --test"  # what trained it
    assert prov["shipped_by"] == "python -m baselines.reproduce --collect --ship"
    assert prov["wall_s"] == pytest.approx(sum(prov["stage_wall_s"]), abs=0.2)
    for lib in ("torch", "stable-baselines3", "sb3-contrib", "card-envs"):
        assert prov["versions"][lib]
    assert re.fullmatch(r"[0-9a-f]{40}", prov["commit"] or "0" * 40)
    assert str(tmp_path) not in json.dumps(meta), "no folder of this machine in a model"
    # the smoke test's steps are not the configs' recipe: the model is listed as differing
    status = recipes.shipped_status(tmp_path / "models")
    assert status == [{"setting": "thirty_one_v0", "algo": "dqn", "seed": 0,
                       "digest": prov["recipe_digest"], "date": prov["date"],
                       "status": "differs"}]


def test_an_interrupted_stage_resumes_and_a_changed_recipe_is_not_mixed_in(tmp_path):
    runs = tmp_path / "runs"
    cfg = recipes.recipe("thirty_one_v0", "dqn", "quick", 0, 600)[0]
    path = runs / "thirty_one_v0" / "dqn-seed0" / "stage0-train"
    Run.at(path, cfg, "x")  # as an interrupted reproduce leaves it: config, no model
    assert not Run(path).finished()
    assert Path(_train_job(_job(runs))).name == "stage1-fine-tune-against-greedy"
    assert Run(path).finished()
    with pytest.raises(ValueError, match="was started with other settings \\(timesteps\\); "
                                         "delete it"):
        Run.at(path, dict(cfg, timesteps=5), "x")


# The shipped models that predate recipes (they record none): each is retrained from its
# recipe by `python -m baselines.reproduce --budget full --settings S --ship`, and leaves this
# list then (strict: a model that matches while listed fails the test).
PREDATE_RECIPES = {"palace_v0", "literature_v0", "literature_v0-original"}


@pytest.mark.parametrize("setting", [
    pytest.param(s, marks=pytest.mark.xfail(
        strict=True, reason="shipped before recipes: retrain with reproduce --ship"))
    if s in PREDATE_RECIPES else s for s in settings()])
def test_every_shipped_model_matches_its_recipe_in_the_configs(setting):
    rows = {r["setting"]: r for r in recipes.shipped_status()}
    assert setting in rows, f"no shipped model for {setting}"
    assert rows[setting]["status"] == "matches", (
        f"{setting}: the shipped model's recipe {rows[setting]['status']} (configs changed "
        "since it was trained?): retrain it with python -m baselines.reproduce --budget full "
        f"--settings {setting} --ship, or undo the change")


def test_list_names_every_shipped_model_and_its_status(capsys):
    assert reproduce.main(["--list"]) == 0
    out = capsys.readouterr().out
    for meta in models_dir().glob("*.json"):
        assert re.search(rf"^{re.escape(meta.stem)} ", out, re.M)
    assert re.search(r"^\d+ of \d+ shipped models match their recipe", out, re.M)


def test_figures_over_seeds_are_means_and_iqms_with_bootstrap_intervals():
    def run(value: float) -> dict:
        return {"algo": "maskable_ppo", "results": [
            {"opponent": "heuristic", "decided_rate": value}]}

    values = [0.60, 0.62, 0.64, 0.70, 0.58]
    summary = final.seed_summary([run(v) for v in values], "literature_v0")
    assert summary["n"] == 5 and summary["values"] == values
    assert summary["mean"] == pytest.approx(np.mean(values))
    assert summary["iqm"] == pytest.approx(np.mean([0.60, 0.62, 0.64]))
    assert summary["mean_low"] < summary["mean"] < summary["mean_high"]
    assert min(values) <= summary["mean_low"] and summary["mean_high"] <= max(values)
    assert (summary["worst"], summary["best"]) == (0.58, 0.70)
    # palace's headline is a loss rate: lower is better, so the worst seed is the highest
    lost = final.seed_summary([{"results": [{"opponent": "heuristic", "losses_rate": v}]}
                               for v in (0.2, 0.3, 0.25)], "palace_v0")
    assert (lost["worst"], lost["best"]) == (0.3, 0.2)


def test_verify_retrains_one_seed_and_compares_it_with_the_published_seeds(
        tmp_path, monkeypatch, capsys):
    results = tmp_path / "baselines.json"
    monkeypatch.setattr(reproduce, "RESULTS", results)
    argv = ["--verify", "thirty_one_v0-4p", "--timesteps", "300", "--runs", str(tmp_path / "r")]
    assert reproduce.main(argv) == 2
    assert "no record over seeds of 'thirty_one_v0-4p'" in capsys.readouterr().err
    summary = final.seed_summary([{"results": [{"opponent": "expected_value",
                                                "wins_rate": v}]} for v in (0.28, 0.31, 0.3)],
                                 "thirty_one_v0-4p")
    results.write_text(json.dumps({"settings": {"thirty_one_v0-4p": {
        "setting": "thirty_one_v0-4p", "shipped": {"algo": "dqn"},
        "seeds": {"dqn": summary}}}}))
    assert reproduce.main(argv) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(
        r"thirty_one_v0-4p dqn seed 0: wins_rate against expected_value [0-9.]+; published "
        r"over 3 seeds: mean 0\.2967 \[[0-9.]+, [0-9.]+\], seeds 0\.28 to 0\.31: (inside|outside)"
        r" the mean's interval, (within|outside) the seeds' range \(a smoke test's --timesteps:"
        r" not comparable\)", line), line


def test_device_is_chosen_recorded_and_checked(tmp_path, capsys):
    import torch as th

    assert resolve_device("cpu") == "cpu"
    assert resolve_device("auto") == ("cuda" if th.cuda.is_available() else "cpu")
    if not th.cuda.is_available():
        with pytest.raises(ValueError, match="--device cuda: torch sees no CUDA device"):
            resolve_device("cuda")
        assert reproduce.main(["--device", "cuda", "--list"]) == 2
        assert "torch sees no CUDA device" in capsys.readouterr().err
    with pytest.raises(ValueError,
                       match="device='tpu' is not valid; choose one of 'auto', 'cpu', 'cuda'"):
        resolve_device("tpu")
    assert recipes.recipe("palace_v0", "dqn", device="cpu")[0]["device"] == "cpu"


# the home and work folders of the machines (written in parts, so this line is no match)
MACHINE_PATH = re.compile(r"(?<![\w.])/(" + "|".join(("work/", "root/", "home/[a-z]",
                                                      "Users/[A-Za-z]")) + ")")


def test_no_file_of_the_repository_holds_a_path_of_a_machine():
    """Recorded commands and docs name files relative to the checkout (or RUNS, MODEL.zip):
    never a folder of the machine that ran them."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    bad = []
    for name in listed:
        path = ROOT / name
        if path.suffix in (".zip", ".png") or not path.is_file():
            continue
        for k, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                bad.append(f"{name}:{k}: {line.strip()[:120]}")
    assert not bad, "\n".join(bad)
