"""Train and evaluate every baseline setting x algorithm, then write the results table.

    python -m baselines.reproduce --budget quick     # minutes: one short run each, printed
    python -m baselines.reproduce --budget full --jobs 2 --ship
                                                     # docs/baselines.md, docs/img/, models

Settings come from configs/games.yaml, hyperparameters and budgets from
configs/<algo>.yaml. Each run keeps its best checkpoint (chosen on selection deals, greedy or
sampled play, whichever did better) and is then evaluated in both modes against every rule
agent of its setting on deals no run trains or selects on (``FINAL_SEED``). The rule agents
are evaluated on the same deals in the model's seat, as reference figures.

``full`` trains the setting's seeds (``seeds:`` in games.yaml, default one per algorithm),
records every setting's results in docs/baselines.json and renders docs/baselines.md, the
learning curves under docs/img/ and each game page's copy of its results from it; running
some ``--settings`` updates their sections and keeps the others. ``quick`` trains one seed
each and prints, per game, a short table beside the full-budget figures (nothing in docs/
changes). ``--ship`` copies each setting's best run (by its selection figure, not by the
final evaluation) to card_envs/rl/models/<setting>.zip, where the agent name ``best`` finds it.
``--render`` renders the docs again from docs/baselines.json without training.

Its parts: baselines/jobs.py runs the training jobs, baselines/final.py evaluates the finished
runs and keeps the records, baselines/render.py writes the docs, baselines/ship.py ships.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shutil
import sys
import tempfile
import time
from pathlib import Path

from baselines.common import Run
from baselines.config import BUDGETS, build_config, game_config, settings
from baselines.final import RESULTS, ROOT, config_drift, load_results, search_rows
from baselines.jobs import collect_runs, record_all, run_all, seeds_of
from baselines.render import _wall, quick_report, render, render_docs
from baselines.ship import MODELS, ship
from baselines.train import parser as train_parser
from card_envs.rl.policy_agent import ALGOS, write_json


def update_search(chosen: list[str]) -> int:
    """``--search-only``: the shipped models' play with search, measured again on the final
    deals, into docs/baselines.json and the pages rendered from it (no training)."""
    results = load_results(RESULTS)
    for setting in chosen:
        record = results["settings"].get(setting)
        if not game_config(setting).get("search"):
            print(f"error: setting {setting!r} has no search in configs/games.yaml",
                  file=sys.stderr)
            return 2
        if record is None or not record.get("shipped") or not (MODELS / f"{setting}.zip").exists():
            print(f"error: no full-budget shipped model for {setting!r}: run reproduce --budget "
                  "full --ship for it first", file=sys.stderr)
            return 2
        print(f"evaluating the shipped model of {setting} with its search", flush=True)
        record["search"] = search_rows(setting, MODELS / f"{setting}.zip",
                                       record["runs"][0]["final_games"], record["final_seed"])
    write_json(RESULTS, results)
    out = render_docs(results, ROOT)
    print(f"wrote {RESULTS} and {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m baselines.reproduce", description=__doc__.split("\n")[0]
    )
    p.add_argument("--budget", choices=BUDGETS, default="quick")
    p.add_argument("--settings", nargs="*", help="settings of configs/games.yaml (default: all)")
    p.add_argument("--algos", nargs="*", choices=ALGOS, default=list(ALGOS))
    p.add_argument("--seeds", type=int,
                   help="runs per setting and algorithm (quick: 1; full: the setting's seeds)")
    p.add_argument("--jobs", type=int, default=min(2, mp.cpu_count()),
                   help="training runs in parallel (default: 2, or 1 on a one-core machine)")
    p.add_argument("--timesteps", type=int,
                   help="every run's training steps instead of the budget's (a smoke test)")
    p.add_argument("--runs", help="runs folder (default runs/reproduce-<budget>)")
    p.add_argument("--out", help="markdown output (default: docs/baselines.md for full)")
    p.add_argument("--ship", action="store_true",
                   help="copy the best models to the package's models (card_envs/rl/models)")
    p.add_argument("--render", action="store_true",
                   help="no training: render docs/baselines.md and the game pages again from "
                        "docs/baselines.json and docs/baselines_notes.md (plots kept)")
    p.add_argument(
        "--collect",
        action="store_true",
        help="skip training; rebuild the table from the finished runs in --runs",
    )
    p.add_argument(
        "--search-only",
        action="store_true",
        help="no training: evaluate each chosen setting's shipped model with its search "
        "(games.yaml `search`) on the final deals and update its record (full budget)",
    )
    args = p.parse_args(argv)
    known = settings()
    chosen = args.settings or known
    for s in chosen:
        if s not in known:
            print(f"error: no baseline setting {s!r}; configured: {', '.join(known)}",
                  file=sys.stderr)
            return 2
    if args.search_only:
        return update_search(chosen)
    if args.render:
        print(f"wrote {render_docs(load_results(RESULTS), ROOT)}")
        return 0
    runs_root = args.runs or f"runs/reproduce-{args.budget}"
    started = time.time()
    if args.collect:
        dirs = [str(d) for d in sorted(Path(runs_root).glob("*/*")) if (d / "eval.json").exists()]
        dirs = [d for d in dirs if Run(Path(d)).config["setting"] in chosen]
        for d in dirs:
            drift = config_drift(d, args.timesteps)
            if drift:
                print(f"error: {d} was not trained as configs/ says now; rerun it or change "
                      f"configs/: " + "; ".join(drift), file=sys.stderr)
                return 2
    else:
        # a setting's PPO and DQN runs imitate the same search games: played once, shared
        # through this folder, which lives as long as this command
        Path(runs_root).mkdir(parents=True, exist_ok=True)
        shared = Path(tempfile.mkdtemp(prefix=".demonstrations-", dir=runs_root))
        jobs = [
            (s, a, seed, args.budget, runs_root, args.timesteps,
             args.jobs == 1 and sys.stdout.isatty(), shared)
            for s in chosen
            for a in args.algos
            for seed in range(seeds_of(s, a, args.budget, args.seeds))
        ]
        print(f"{len(jobs)} training runs, {args.jobs} at a time; each prints labelled "
              "progress lines", flush=True)
        # the reference rule agents on each setting's final deals (as many games as the
        # setting's first run by ALGOS order plays, whose count the record uses)
        first = {s: next(a for a in ALGOS if a in args.algos) for s in chosen}
        references = {s: build_config(train_parser().parse_args(
            ["--env", s, "--algo", first[s], "--budget", args.budget]))["final_games"]
            for s in chosen}
        try:
            dirs, measured = run_all(jobs, args.jobs, references)
        finally:
            shutil.rmtree(shared, ignore_errors=True)
    runs = collect_runs(dirs)
    full = args.budget == "full"
    results = load_results(RESULTS)
    fresh = {"settings": {}}
    records = record_all([(s, [r for r in runs if r["setting"] == s], args.budget)
                          for s in chosen if any(r["setting"] == s for r in runs)], args.jobs,
                         None if args.collect else measured)
    for setting in chosen:
        mine = [r for r in runs if r["setting"] == setting]
        if not mine:
            continue
        record = records[setting]
        fresh["settings"][setting] = record
        if args.ship and record["shipped"] is not None:
            ship(setting, next(r for r in mine if r["seed"] == record["shipped"]["seed"]
                               and r["algo"] == record["shipped"]["algo"]))
    if full and not args.out:
        results["settings"].update(fresh["settings"])
        write_json(RESULTS, results)
        out = render_docs(results, ROOT, plot=True)
        print(f"wrote {RESULTS} and {out}")
    else:
        out = Path(args.out) if args.out else Path(runs_root) / "baselines.md"
        render(fresh, out.parent if (full or args.out) else None, out, plot=True)
        write_json(out.with_suffix(".json"), fresh)
        print()
        for setting, record in fresh["settings"].items():
            print(quick_report(setting, record, results["settings"].get(setting)))
            print()
        print(f"wrote {out} ({_wall(time.time() - started)} in all); the full-budget table is "
              "docs/baselines.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
