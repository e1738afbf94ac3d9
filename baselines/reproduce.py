"""Train and evaluate every baseline setting x algorithm, then write the results table.

    python -m baselines.reproduce --budget quick     # minutes: one short run each, printed
    python -m baselines.reproduce --budget full --jobs 2 --ship
                                                     # docs/baselines.md, docs/img/, models

Settings come from configs/games.yaml, hyperparameters and budgets from
configs/<algo>.yaml. ``full`` trains ``--seeds`` seeds per setting and algorithm
(default: 2 for MaskablePPO, 1 for DQN) and writes docs/baselines.md, the learning
curves under docs/img/ and each game page's copy of its results;
``quick`` trains one seed and writes its table to the runs folder (the docs keep the
full-budget numbers). ``--ship`` copies each setting's best model, of either algorithm
(by its first target's metric), to baselines/models/<setting>.zip, where ``best`` finds it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from baselines.common import BUDGETS, Run, game_config, hyperparams, settings, spec_and_game
from baselines.train import build_config, train
from baselines.train import parser as train_parser
from card_envs.core.agents import make_agent
from card_envs.core.doctables import page_path
from card_envs.core.evaluation import Z95, evaluate, wilson
from card_envs.rl.policy_agent import ALGOS

ROOT = Path(__file__).resolve().parents[1]
MODELS = Path(__file__).resolve().parent / "models"
ALGO_NAMES = {"maskable_ppo": "MaskablePPO", "dqn": "DQN (masked)"}
# seeds per setting at the full budget: DQN is cheaper to judge (its target is beating random)
FULL_SEEDS = {"maskable_ppo": 2, "dqn": 1}


def _train_job(job: tuple[str, str, int, str, str]) -> str:
    setting, algo, seed, budget, runs = job
    args = train_parser().parse_args(
        [
            "--env",
            setting,
            "--algo",
            algo,
            "--seed",
            str(seed),
            "--budget",
            budget,
            "--runs",
            runs,
            "--no-progress",
        ]
    )
    command = (
        f"python -m baselines.train --env {setting} --algo {algo} --seed {seed} --budget {budget}"
    )
    run = Run.create(Path(runs), build_config(args), command)
    train(run, progress=False)
    return str(run.path)


def run_all(jobs_list: list[tuple], jobs: int) -> list[str]:
    """Train every job, ``jobs`` at a time, the longest budgets first."""
    jobs_list = sorted(jobs_list, key=_job_steps, reverse=True)
    if jobs <= 1:
        return [_train_job(j) for j in jobs_list]
    with mp.get_context("spawn").Pool(jobs) as pool:
        return pool.map(_train_job, jobs_list, chunksize=1)


def _job_steps(job: tuple) -> int:
    setting, algo, _, budget, _ = job
    return hyperparams(algo, game_config(setting)["env"], budget)["timesteps"]


def pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Results of several seeds against one opponent, pooled: counts add up."""
    out: dict[str, Any] = {"opponent": rows[0]["opponent"], "kind": rows[0]["kind"]}
    for what in ("wins", "draws", "losses", "games"):
        out[what] = sum(r[what] for r in rows)
    for what in ("wins", "draws", "losses"):
        out[f"{what}_rate"] = out[what] / out["games"]
        out[f"{what}_low"], out[f"{what}_high"] = wilson(out[what], out["games"])
    decided = out["wins"] + out["losses"]
    out["decided_rate"] = out["wins"] / decided if decided else 0.0
    out["decided_low"], out["decided_high"] = wilson(out["wins"], decided)
    if "mean_score" in rows[0]:
        n = out["games"]
        total = sum(r["score_sum"] for r in rows)
        sq = sum(r["score_sq_sum"] for r in rows)
        mean = total / n
        var = max(0.0, (sq - n * mean * mean) / max(n - 1, 1))
        half = Z95 * (var / n) ** 0.5
        out.update(mean_score=mean, score_low=mean - half, score_high=mean + half)
    out["per_seed"] = [r.get("mean_score", r["wins_rate"]) for r in rows]
    return out


def agent_score(setting: str, agent: str, games: int) -> float:
    """An agent's own mean score on a one-player setting (what a model must beat)."""
    cfg = game_config(setting)
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    return evaluate(game, [make_agent(spec, agent, game)], games, seed=0).tallies[0].mean_score


def check_target(target: dict, results: dict, setting: str, games: int) -> tuple[bool, str]:
    rows = results.get(target["algo"], {})
    row = rows.get(target["opponent"])
    if row is None:
        return False, "not measured"
    metric = target["metric"]
    value = row[metric]
    shown = f"{value:.2f}" if metric == "mean_score" else f"{value:.1%}"
    if "beats_agent" in target:
        bar = agent_score(setting, target["beats_agent"], games)
        return value > bar, f"{shown} vs {target['beats_agent']} {bar:.2f}"
    if "below" in target:
        return value < target["below"], f"{shown} (target below {target['below']:.1%})"
    if "above" in target:
        return value > target["above"], f"{shown} (target above {target['above']:.1%})"
    return value >= target["at_least"], f"{shown} (target at least {target['at_least']:.1%})"


def target_text(target: dict) -> str:
    algo = ALGO_NAMES[target["algo"]]
    metric = {
        "wins_rate": "win rate",
        "decided_rate": "wins of decided games",
        "losses_rate": "loss rate",
        "mean_score": "mean score",
    }[target["metric"]]
    if "beats_agent" in target:
        return f"{algo}: {metric} above `{target['beats_agent']}`'s"
    if "below" in target:
        return f"{algo}: {metric} against `{target['opponent']}` below {target['below']:.1%}"
    if "above" in target:
        return f"{algo}: {metric} against `{target['opponent']}` above {target['above']:.1%}"
    return f"{algo}: {metric} against `{target['opponent']}` at least {target['at_least']:.1%}"


def _pct(row: dict, what: str) -> str:
    return f"{row[f'{what}_rate']:.1%} [{row[f'{what}_low']:.1%}, {row[f'{what}_high']:.1%}]"


def setting_section(
    setting: str, runs: list[dict], img: str | None, final_games: int, budget: str = "full"
) -> list[str]:
    cfg = game_config(setting)
    lines = [f"## `{setting}`", ""]
    args = ", ".join(f"{k}={v!r}" for k, v in cfg["env_kwargs"].items()) or "default rules"
    opp = cfg["opponent"]
    opp = "` and `".join(opp) if isinstance(opp, list) else opp
    lines.append(
        f"Rules: {args}. Training opponent: `{opp}`"
        + (f" (mixed with `{cfg['mix']}`)" if cfg.get("mix") else "")
        + ". "
        + (
            "Duplicate deals (each deal twice, seats swapped; a pair is won by taking "
            "more in total). "
            if cfg["duplicate"]
            else ""
        )
        + ("The model plays every seat of its team. " if cfg["team"] else "")
    )
    if cfg["source"]:
        lines += ["", f"Source: {cfg['source']}."]
    if cfg.get("notes"):
        lines += ["", " ".join(cfg["notes"].split())]
    lines += [
        "",
        "| algorithm | opponent | runs x games | win [95% CI] | draw | loss [95% CI] "
        "| won of decided [95% CI] | mean score [95% CI] | per seed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    results: dict[str, dict[str, dict]] = {}
    for algo in ALGOS:
        algo_runs = [r for r in runs if r["algo"] == algo]
        if not algo_runs:
            continue
        for opponent in cfg["eval_opponents"]:
            rows = [next(x for x in r["results"] if x["opponent"] == opponent) for r in algo_runs]
            row = pooled(rows)
            results.setdefault(algo, {})[opponent] = row
            score = (
                f"{row['mean_score']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}]"
                if "mean_score" in row
                else ""
            )
            per_seed = ", ".join(
                f"{x:.2f}" if "mean_score" in row else f"{x:.0%}" for x in row["per_seed"]
            )
            lines.append(
                f"| {ALGO_NAMES[algo]} | `{opponent}` | {len(rows)} x {rows[0]['games']} "
                f"| {_pct(row, 'wins')} | {row['draws_rate']:.1%} | {_pct(row, 'losses')} "
                f"| {_pct(row, 'decided')} | {score} | {per_seed} |"
            )
    lines += ["", "| algorithm | seed | timesteps | wall time |", "|---|---|---|---|"]
    for r in runs:
        wall = f"{r['wall_s']:.0f} s" if r["wall_s"] < 120 else f"{r['wall_s'] / 60:.1f} min"
        lines.append(f"| {ALGO_NAMES[r['algo']]} | {r['seed']} | {r['timesteps']:,} | {wall} |")
    if cfg["targets"]:
        lines += [
            "",
            "Targets at this budget:"
            if budget == "full"
            else "Targets (set for the full budget; a quick run is not expected to reach them):",
            "",
        ]
        for target in cfg["targets"]:
            ok, detail = check_target(target, results, setting, final_games)
            lines.append(
                f"- {target_text(target)}: **{'reached' if ok else 'not reached'}** ({detail})"
            )
    if img:
        lines += ["", f"![learning curves of {setting}]({img})"]
    return lines + [""]


BASELINES_BEGIN = "<!-- BEGIN BASELINES -->"
BASELINES_END = "<!-- END BASELINES -->"


def game_page_block(section: list[str]) -> str:
    """A game page's copy of its settings' sections of docs/baselines.md."""
    body = []
    for line in section:
        if line.startswith("## "):
            line = "#" + line
        elif line.startswith("!["):
            line = line.replace("](img/", "](../img/")
        body.append(line)
    return "\n".join(
        [
            BASELINES_BEGIN,
            "<!-- copied from docs/baselines.md by `python -m baselines.reproduce --budget full`;"
            " do not edit -->",
            "",
            *body,
            BASELINES_END,
        ]
    )


def write_game_page(env_name: str, section: list[str], root: Path = ROOT) -> None:
    """Put the trained baselines' results in the game's docs page (before its version history)."""
    path = page_path(env_name, root)
    text = path.read_text()
    block = game_page_block(section)
    if BASELINES_BEGIN in text:
        start = text.index(BASELINES_BEGIN)
        end = text.index(BASELINES_END, start) + len(BASELINES_END)
        text = text[:start] + block + text[end:]
    else:
        head, sep, tail = text.partition("## Version history")
        intro = (
            "## Trained baselines\n\nMaskablePPO and masked DQN trained by `baselines/` "
            "(see [the baselines page](../baselines.md) for every game, the hyperparameters and "
            "how to rerun them).\n\n"
        )
        text = head + intro + block + "\n\n" + sep + tail
    path.write_text(text)


def plot_curves(setting: str, runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for r in runs:
        curve = r["curve"]
        if not curve:
            continue
        key = "mean_score" if "mean_score" in curve[0] and r["solo"] else "wins_rate"
        ax.plot(
            [c["timesteps"] for c in curve],
            [c[key] for c in curve],
            label=f"{ALGO_NAMES[r['algo']]} seed {r['seed']}",
        )
        ax.set_ylabel(
            "mean score" if key == "mean_score" else f"win rate vs {curve[0]['opponent']}"
        )
    ax.set_xlabel("training steps")
    ax.set_title(setting)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def collect(run_dir: str) -> dict[str, Any]:
    run = Run(Path(run_dir))
    cfg = run.config
    ev = json.loads((run.path / "eval.json").read_text())
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    return {
        "setting": cfg["setting"],
        "algo": cfg["algo"],
        "seed": cfg["seed"],
        "timesteps": ev["timesteps"],
        "wall_s": ev["wall_s"],
        "results": ev["results"],
        "curve": run.curve(),
        "path": run_dir,
        "solo": game.num_players == 1,
    }


def ship(setting: str, runs: list[dict]) -> None:
    """Copy the setting's best run's model (either algorithm) into baselines/models/."""
    cfg = game_config(setting)
    if not cfg["targets"]:
        return
    target = cfg["targets"][0]
    candidates = [
        r for r in runs if any(x["opponent"] == target["opponent"] for x in r["results"])
    ]
    if not candidates:
        return

    def metric(r):
        row = next(x for x in r["results"] if x["opponent"] == target["opponent"])
        return row[target["metric"]]

    # the first target's direction: lowest for "below" targets (a loss rate), else highest
    best = (min if "below" in target else max)(candidates, key=metric)
    MODELS.mkdir(exist_ok=True)
    for suffix in (".zip", ".json"):
        shutil.copyfile(Path(best["path"]) / f"model{suffix}", MODELS / f"{setting}{suffix}")
    print(f"shipped {best['path']} as baselines/models/{setting}.zip")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m baselines.reproduce", description=__doc__.split("\n")[0]
    )
    p.add_argument("--budget", choices=BUDGETS, default="quick")
    p.add_argument("--settings", nargs="*", help="settings of configs/games.yaml (default: all)")
    p.add_argument("--algos", nargs="*", choices=ALGOS, default=list(ALGOS))
    p.add_argument(
        "--seeds",
        type=int,
        help="seeds per setting and algorithm (quick: 1; full: MaskablePPO 2, DQN 1)",
    )
    p.add_argument("--jobs", type=int, default=1, help="training runs in parallel")
    p.add_argument("--runs", help="runs folder (default runs/reproduce-<budget>)")
    p.add_argument("--out", help="markdown output (default: docs/baselines.md for full)")
    p.add_argument("--ship", action="store_true", help="copy the best models to baselines/models")
    p.add_argument(
        "--collect",
        action="store_true",
        help="skip training; rebuild the table from the finished runs in --runs",
    )
    args = p.parse_args(argv)
    chosen = args.settings or settings()
    seeds = {
        algo: args.seeds or (1 if args.budget == "quick" else FULL_SEEDS[algo]) for algo in ALGOS
    }
    runs_root = args.runs or f"runs/reproduce-{args.budget}"
    if args.collect:
        dirs = [str(d) for d in sorted(Path(runs_root).glob("*/*")) if (d / "eval.json").exists()]
    else:
        jobs = [
            (s, a, seed, args.budget, runs_root)
            for s in chosen
            for a in args.algos
            for seed in range(seeds[a])
        ]
        dirs = run_all(jobs, args.jobs)
    runs = sorted(
        (collect(d) for d in dirs),
        key=lambda r: (r["setting"], list(ALGOS).index(r["algo"]), r["seed"]),
    )
    full = args.budget == "full"
    out = (
        Path(args.out)
        if args.out
        else (ROOT / "docs" / "baselines.md" if full else Path(runs_root) / "baselines.md")
    )
    img_dir = out.parent / "img" if full else out.parent
    counts = ", ".join(
        f"{ALGO_NAMES[a]} {max(r['seed'] for r in runs if r['algo'] == a) + 1}"
        for a in ALGOS
        if any(r["algo"] == a for r in runs)
    )
    lines = [
        "# Baselines",
        "",
        f"Generated by `python -m baselines.reproduce --budget {args.budget}` (seeds per "
        f"setting: {counts}) on "
        f"{time.strftime('%Y-%m-%d')}, on {platform.machine()} with {mp.cpu_count()} CPUs, "
        f"no GPU; {sum(r['wall_s'] for r in runs) / 60:.0f} min of training in all "
        f"(wall time of each run below). Do not edit: rerun it.",
        "",
        "Each trained model plays greedily (its most likely legal action) against the rule-based "
        "agents, seats rotated; rates pool every seed's games and carry 95% Wilson intervals. "
        "Hyperparameters: `baselines/configs/`. Settings and targets: "
        "`baselines/configs/games.yaml`.",
        "",
    ]
    pages: dict[str, list[str]] = {}
    for setting in chosen:
        mine = [r for r in runs if r["setting"] == setting]
        if not mine:
            continue
        img = None
        if full or args.out:
            path = img_dir / f"{setting}.png"
            plot_curves(setting, mine, path)
            img = str(path.relative_to(out.parent))
        final_games = json.loads((Path(mine[0]["path"]) / "config.json").read_text())["final_games"]
        section = setting_section(setting, mine, img, final_games, args.budget)
        lines += section
        pages.setdefault(game_config(setting)["env"], []).extend(section)
        if args.ship:
            ship(setting, mine)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    if out.resolve() == (ROOT / "docs" / "baselines.md").resolve():
        for env_name, section in pages.items():
            write_game_page(env_name, section)
    print("\n".join(lines))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
