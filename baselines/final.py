"""The final evaluation of a reproduce: each finished run's results, the shipped run, the
rule agents on the same deals, the search rows, the targets, and docs/baselines.json."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from baselines.common import Run, evaluate_agent, result_row
from baselines.config import game_config, spec_and_game
from baselines.evaluation import evaluate
from baselines.recipes import comparable, machine, recipe, stage_dirs
from baselines.train import FINAL_SEED, selection
from card_envs.rl.policy_agent import guided_search, load_model_agent

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "docs" / "baselines.json"


def reference_rows(setting: str, games: int, seed: int = FINAL_SEED) -> dict[str, dict]:
    """The setting's reference rule agents in the model's place, on the final evaluation's
    deals: ``{agent: {opponent: result row}}``."""
    cfg = game_config(setting)
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    out: dict[str, dict] = {}
    for agent_name in reference_agents(setting):
        rows = out[agent_name] = {}
        for opponent in cfg["eval_opponents"]:
            result = evaluate(spec, game, agent_name, opponent, games, seed, cfg["duplicate"],
                              cfg["team"])
            rows[opponent] = result_row(result, opponent)
    return out


def reference_agents(setting: str) -> list[str]:
    """The rule agents a setting's table shows as reference: ``reference`` in games.yaml,
    else the game's strongest rule agent."""
    cfg = game_config(setting)
    spec, _ = spec_and_game(cfg["env"], cfg["env_kwargs"])
    return list(cfg.get("reference") or [spec.strongest_agent])


def collect(run_dir: str) -> dict[str, Any]:
    """A finished run's results (eval.json), learning curve and settings, as plain data."""
    run = Run(Path(run_dir))
    cfg = run.config
    ev = json.loads((run.path / "eval.json").read_text())
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    curve, steps, wall = recipe_curve(run.path)
    # the kept checkpoint's step, counted from the recipe's start (the stages before the last)
    before = steps - ev.get("trained_timesteps", 0) if steps else 0
    return {
        "setting": cfg["setting"],
        "algo": cfg["algo"],
        "seed": cfg["seed"],
        "budget": cfg.get("budget", "full"),
        "timesteps": ev["timesteps"] + before,
        "trained_timesteps": steps or ev.get("trained_timesteps", ev["timesteps"]),
        "wall_s": wall or ev["wall_s"],
        "stages": cfg.get("stage_count", 1),
        "device": cfg.get("device", "cpu"),
        "mode": ev.get("mode", "greedy"),
        "selection": ev.get("selection"),
        "results": ev["results"],
        "by_mode": ev.get("by_mode", {"greedy": ev["results"]}),
        "final_games": cfg["final_games"],
        "curve": curve,
        "path": run_dir,
        "solo": game.num_players == 1,
    }


def recipe_curve(last: Path) -> tuple[list[dict[str, Any]], int, float]:
    """The learning curve of every stage of a recipe's run, one after another (a later
    stage's steps and wall time counted on from the stages before it), with the steps trained
    and the wall time of them all (0 where a stage has no model.json: older runs)."""
    rows: list[dict[str, Any]] = []
    steps, wall = 0, 0.0
    for path in stage_dirs(last):
        meta_file = path / "model.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        for row in Run(path).curve():
            rows.append({**row, "timesteps": row["timesteps"] + steps,
                         "wall_s": round(row["wall_s"] + wall, 1), "stage": path.name})
        steps += int(meta.get("trained_timesteps", 0))
        wall += float(meta.get("wall_s", 0.0))
    return rows, steps, round(wall, 1)


def config_drift(run_dir: str, timesteps: int | None = None) -> list[str]:
    """How a finished run's settings differ from what configs/ gives its setting, algorithm,
    seed and budget today (its recipe's stage, and ``--timesteps``, if given; empty when they
    agree): a table rebuilt by ``--collect`` must describe what ``reproduce`` would train."""
    cfg = Run(Path(run_dir)).config
    chain = recipe(cfg["setting"], cfg["algo"], cfg["budget"], cfg["seed"], timesteps)
    stage = cfg.get("stage", 0)
    mine = comparable(cfg)
    expected = comparable(chain[stage]) if stage < len(chain) else {}
    return [f"{key}: run {mine.get(key)!r}, configs {expected.get(key)!r}"
            for key in sorted(set(mine) | set(expected))
            if mine.get(key) != expected.get(key)]


def headline(setting: str) -> dict[str, Any]:
    """The figure a setting's summary reads: what picks its checkpoints (the setting's
    ``select``, else its first target): {opponent, metric, higher}."""
    return selection(game_config(setting))


def seed_summary(runs: list[dict], setting: str) -> dict[str, Any] | None:
    """A setting's headline figure over the seeds of one algorithm's runs (final deals, each
    run in the play mode it kept): the mean and the interquartile mean (scipy's
    ``trim_mean(x, 0.25)``) with 95% percentile-bootstrap intervals over seeds (rliable's
    method; 10,000 resamples, a fixed generator), the worst and best seed and every value."""
    from scipy import stats

    head = headline(setting)
    values = [_row(r["results"], head["opponent"])[head["metric"]] for r in runs]
    if not values:
        return None
    out: dict[str, Any] = {**head, "n": len(values), "values": values,
                           "worst": min(values) if head["higher"] else max(values),
                           "best": max(values) if head["higher"] else min(values)}
    for name, fn in (("mean", np.mean), ("iqm", lambda x, axis=-1: stats.trim_mean(x, 0.25,
                                                                                  axis=axis))):
        out[name] = float(fn(np.asarray(values)))
        if len(set(values)) > 1:
            ci = stats.bootstrap((np.asarray(values),), fn, n_resamples=10_000,
                                 confidence_level=0.95, method="percentile",
                                 random_state=np.random.default_rng(0)).confidence_interval
            out[f"{name}_low"], out[f"{name}_high"] = float(ci.low), float(ci.high)
        else:
            out[f"{name}_low"] = out[f"{name}_high"] = out[name]
    return out


def verify_line(record: dict, run: dict, smoke: bool = False) -> str:
    """``reproduce --verify``'s verdict: the retrained run's headline figure against the
    published seeds of its algorithm (the interval of their mean and their range)."""
    summary = record["seeds"][run["algo"]]
    value = _row(run["results"], summary["opponent"])[summary["metric"]]
    low, high = min(summary["values"]), max(summary["values"])
    inside = summary["mean_low"] <= value <= summary["mean_high"]
    within = low <= value <= high
    text = (f"{record['setting']} {run['algo']} seed {run['seed']}: {summary['metric']} "
            f"against {summary['opponent']} {value:.4g}; published over {summary['n']} seeds: "
            f"mean {summary['mean']:.4g} [{summary['mean_low']:.4g}, {summary['mean_high']:.4g}]"
            f", seeds {low:.4g} to {high:.4g}: "
            + ("inside the mean's interval" if inside else "outside the mean's interval")
            + (", within the seeds' range" if within else ", outside the seeds' range"))
    if smoke:
        text += " (a smoke test's --timesteps: not comparable)"
    return text


def shipped_run(setting: str, runs: list[dict]) -> dict | None:
    """The run to ship: the best figure on the selection deals (never the final ones)."""
    candidates = [r for r in runs if r.get("selection")]
    if not candidates:
        return None
    higher = selection(game_config(setting, candidates[0].get("budget", "full")))["higher"]
    return (max if higher else min)(candidates, key=lambda r: r["selection"]["value"])


def search_rows(setting: str, model_file: Path, games: int, seed: int = FINAL_SEED,
                rows: list[dict] | None = None) -> dict[str, Any] | None:
    """The setting's ``search`` (games.yaml: a search agent and its budget) guided by the
    model in ``model_file``, against every evaluation opponent on the final evaluation's deals
    (``card-envs evaluate GAME best+search OPPONENT`` for a shipped model); None when the
    setting plays without search. ``rows``: those results, already measured (``search_row``
    for each opponent, in order)."""
    cfg = game_config(setting)
    if not cfg.get("search"):
        return None
    if rows is None:
        rows = [search_row(setting, model_file, opponent, games, seed)
                for opponent in cfg["eval_opponents"]]
    return {**cfg["search"], "results": rows}


def search_row(setting: str, model_file: Path, opponent: str, games: int,
               seed: int = FINAL_SEED) -> dict[str, Any]:
    """One row of ``search_rows``: the search guided by the model against ``opponent``."""
    cfg = game_config(setting)
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    model = load_model_agent(spec, f"model:{model_file}", game)
    agent = guided_search(spec, model, game, cfg["search"])
    result = evaluate_agent(spec, game, agent, opponent, games, seed, cfg["duplicate"],
                            cfg["team"])
    return result_row(result, opponent)


def setting_record(setting: str, runs: list[dict], budget: str,
                   search: list[dict] | None = None, reference: dict | None = None) -> dict:
    """What docs/baselines.json keeps of a setting: its runs, the shipped one (and its play
    with search, for a setting that has one: ``search``, its rows if already measured), the
    rule agents' reference rows (``reference``, if already measured on the runs' final
    games)."""
    games = runs[0]["final_games"]
    shipped = shipped_run(setting, runs)
    search = (None if shipped is None
              else search_rows(setting, Path(shipped["path"]) / "model.zip", games,
                               rows=search))
    return {
        "setting": setting,
        "budget": budget,
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(runs_device(runs)),
        "seeds": {algo: seed_summary([r for r in runs if r["algo"] == algo], setting)
                  for algo in dict.fromkeys(r["algo"] for r in runs)},
        "final_seed": FINAL_SEED,
        "runs": [{k: v for k, v in r.items() if k != "path"} for r in runs],
        "shipped": None if shipped is None else shipped_entry(shipped),
        "search": search,
        "reference": reference if reference is not None else reference_rows(setting, games),
    }


def runs_device(runs: list[dict]) -> str:
    """Where a setting's runs trained (runs from before ``--device`` trained on the CPU)."""
    return next((r.get("device", "cpu") for r in runs if r.get("device", "cpu") != "cpu"),
                "cpu")


def shipped_entry(run: dict) -> dict:
    """What a setting's record keeps of its shipped run (``collect``'s data less its folder
    and learning curve)."""
    return {k: v for k, v in run.items() if k not in ("path", "curve")}


def load_results(path: Path | None = None) -> dict:
    """docs/baselines.json: every setting's record of its last full-budget run."""
    path = path or RESULTS
    return json.loads(path.read_text()) if path.exists() else {"settings": {}}


def _row(rows: list[dict], opponent: str) -> dict | None:
    return next((x for x in rows if x["opponent"] == opponent), None)


def check_target(target: dict, record: dict) -> tuple[bool, str]:
    """Whether the shipped model meets ``target``, with the figures that say so."""
    played = record.get("search") if target.get("play") == "search" else record.get("shipped")
    row = _row(played["results"], target["opponent"]) if played else None
    if row is None:
        return False, "not measured"
    metric = target["metric"]
    value = row[metric]
    shown = _figure(row, metric)
    if "beats_agent" in target:
        ref = record["reference"].get(target["beats_agent"], {}).get(target["opponent"])
        if ref is None:
            return False, f"{shown}; {target['beats_agent']} not measured"
        margin = target.get("margin", 0)
        ok = value > ref[metric] + margin
        return ok, f"{shown} vs {target['beats_agent']} {_figure(ref, metric)} on the same deals"
    if "below" in target:
        return value < target["below"], f"{shown}"
    if "above" in target:
        return value > target["above"], f"{shown}"
    return value >= target["at_least"], f"{shown}"


def _figure(row: dict, metric: str) -> str:
    """A metric of a result row with its 95% interval."""
    if metric == "mean_score":
        return f"{row['mean_score']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}]"
    if metric == "mean_payoff":
        return f"{row['mean_payoff']:+.3f}"
    what = metric.removesuffix("_rate")
    return f"{row[metric]:.1%} [{row[f'{what}_low']:.1%}, {row[f'{what}_high']:.1%}]"
