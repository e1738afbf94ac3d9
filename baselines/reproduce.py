"""Train and evaluate every baseline setting x algorithm from its recipe, then write the table.

    python -m baselines.reproduce --budget quick     # minutes: one short run each, printed
    python -m baselines.reproduce --budget full --ship
                                                     # docs/baselines.md, docs/img/, models
    python -m baselines.reproduce --list             # shipped models against their recipes
    python -m baselines.reproduce --verify SETTING   # retrain one seed, compare with the docs

Recipes come from baselines/configs/ (games.yaml: settings; <algo>.yaml: hyperparameters,
budgets and further stages; baselines/recipes.py). Every run trains every stage of its
recipe from scratch in ``RUNS/SETTING/ALGO-seedN/stageK-NAME``; a rerun keeps the finished
stages and resumes an interrupted one from its last checkpoint. Each run keeps its best
checkpoint (chosen on selection deals, greedy or sampled play, whichever did better) and is
then evaluated in both modes against every rule agent of its setting on deals no run trains or
selects on (``FINAL_SEED``). The rule agents are evaluated on the same deals in the model's
seat, as reference figures.

``full`` trains the setting's seeds (``seeds:`` in games.yaml, default 3 per algorithm),
records every setting's results in docs/baselines.json and renders docs/baselines.md (a
summary table first, then each setting's tables, figures over seeds, recipe and command),
the learning curves under docs/img/ and each game page's copy of its results; running
some ``--settings`` updates their sections and keeps the others. ``quick`` trains one seed
each and prints, per game, a short table beside the full-budget figures (nothing in docs/
changes). ``--ship`` copies each setting's best run (by its selection figure, not by the
final evaluation) to card_envs/rl/models/<setting>.zip, where the agent name ``best`` finds it,
with its provenance in the JSON beside it. ``--render`` renders the docs again from
docs/baselines.json without training. ``--device`` picks where torch trains.

Its parts: baselines/recipes.py resolves the recipes, baselines/jobs.py runs the training
jobs, baselines/final.py evaluates the finished runs and keeps the records,
baselines/render.py writes the docs, baselines/ship.py ships.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

from baselines.common import Run
from baselines.config import BUDGETS, DEVICES, game_config, resolve_device, settings
from baselines.final import (
    RESULTS,
    ROOT,
    config_drift,
    load_results,
    search_rows,
    verify_line,
)
from baselines.jobs import collect_runs, record_all, run_all, seeds_of
from baselines.recipes import recipe, shipped_status
from baselines.render import _wall, quick_report, render, render_docs
from baselines.ship import MODELS, ship
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


def parser() -> argparse.ArgumentParser:
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
                   help="every stage's training steps instead of the budget's (a smoke test)")
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="where torch trains: auto (CUDA when torch sees a GPU), cpu or cuda")
    p.add_argument("--runs", help="runs folder (default runs/reproduce-<budget>); a run "
                   "already there is kept if finished and resumed if not")
    p.add_argument("--out", help="markdown output (default: docs/baselines.md for full)")
    p.add_argument("--ship", action="store_true",
                   help="copy the best models to the package's models (card_envs/rl/models) "
                        "with their provenance")
    p.add_argument("--render", action="store_true",
                   help="no training: render docs/baselines.md and the game pages again from "
                        "docs/baselines.json (plots kept)")
    p.add_argument("--collect", action="store_true",
                   help="skip training; rebuild the table from the finished runs in --runs")
    p.add_argument("--search-only", action="store_true",
                   help="no training: evaluate each chosen setting's shipped model with its "
                        "search (games.yaml `search`) on the final deals and update its record")
    p.add_argument("--list", action="store_true",
                   help="no training: every shipped model, its recipe's digest and whether the "
                        "configs still resolve to that recipe")
    p.add_argument("--verify", metavar="SETTING",
                   help="retrain one seed of SETTING's shipped algorithm from scratch (full "
                        "budget) and say whether its figure falls inside the published "
                        "interval over seeds")
    p.add_argument("--seed", type=int, default=0, help="--verify: the seed to retrain")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    known = settings()
    chosen = args.settings or known
    for s in chosen + ([args.verify] if args.verify else []):
        if s not in known:
            print(f"error: no baseline setting {s!r}; configured: {', '.join(known)}",
                  file=sys.stderr)
            return 2
    try:
        device = resolve_device(args.device)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.list:
        return list_models()
    if args.verify:
        return verify(args.verify, args, device, _command(argv))
    if args.search_only:
        return update_search(chosen)
    if args.render:
        print(f"wrote {render_docs(load_results(RESULTS), ROOT)}")
        return 0
    runs_root = args.runs or f"runs/reproduce-{args.budget}"
    started = time.time()
    if args.collect:
        dirs = finished_runs(runs_root, chosen)
        for d in dirs:
            drift = config_drift(d, args.timesteps)
            if drift:
                print(f"error: {d} was not trained as configs/ says now; rerun it or change "
                      f"configs/: " + "; ".join(drift), file=sys.stderr)
                return 2
        measured = None
    else:
        dirs, measured = train_all(chosen, args, runs_root, device, _command(argv))
    return report(chosen, args, collect_runs(dirs), measured, runs_root, started,
                  _command(argv))


def _command(argv: list[str] | None) -> str:
    """This command as a user types it (no interpreter path)."""
    return shlex.join(["python", "-m", "baselines.reproduce",
                       *(sys.argv[1:] if argv is None else argv)])


def finished_runs(runs_root: str, chosen: list[str]) -> list[str]:
    """The last stage's folder of every finished run under ``runs_root`` of the settings
    ``chosen`` (a recipe's earlier stages have no final evaluation)."""
    dirs = [str(p.parent) for p in sorted(Path(runs_root).rglob("eval.json"))]
    return [d for d in dirs if Run(Path(d)).config["setting"] in chosen]


def train_all(chosen: list[str], args: argparse.Namespace, runs_root: str, device: str,
              command: str) -> tuple[list[str], dict]:
    """Every chosen setting's recipe for every algorithm and seed, ``--jobs`` at a time."""
    # a setting's PPO and DQN runs imitate the same search games: played once, shared
    # through this folder, which lives as long as this command
    Path(runs_root).mkdir(parents=True, exist_ok=True)
    shared = Path(tempfile.mkdtemp(prefix=".demonstrations-", dir=runs_root))
    jobs = [(s, a, seed, args.budget, runs_root, args.timesteps,
             args.jobs == 1 and sys.stdout.isatty(), shared, device, command)
            for s in chosen
            for a in args.algos
            for seed in range(seeds_of(s, a, args.budget, args.seeds))]
    print(f"{len(jobs)} training runs, {args.jobs} at a time, under {runs_root} (a rerun "
          "keeps what finished and resumes the rest); each prints labelled progress lines",
          flush=True)
    # the reference rule agents on each setting's final deals (as many games as the
    # setting's first run by ALGOS order plays, whose count the record uses)
    first = {s: next(a for a in ALGOS if a in args.algos) for s in chosen}
    references = {s: recipe(s, first[s], args.budget)[-1]["final_games"] for s in chosen}
    try:
        return run_all(jobs, args.jobs, references)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def report(chosen: list[str], args: argparse.Namespace, runs: list[dict],
           measured: dict | None, runs_root: str, started: float, command: str) -> int:
    """Each setting's record from its runs: shipped (``--ship``), written to the docs (full
    budget) or to ``--out`` and the terminal (quick)."""
    results = load_results(RESULTS)
    fresh = {"settings": {}}
    records = record_all([(s, [r for r in runs if r["setting"] == s], args.budget)
                          for s in chosen if any(r["setting"] == s for r in runs)], args.jobs,
                         measured)
    for setting, record in records.items():
        fresh["settings"][setting] = record
        if args.ship and record["shipped"] is not None:
            ship(setting, next(r for r in runs if r["setting"] == setting
                               and r["seed"] == record["shipped"]["seed"]
                               and r["algo"] == record["shipped"]["algo"]), command)
    if args.budget == "full" and not args.out:
        results["settings"].update(fresh["settings"])
        write_json(RESULTS, results)
        print(f"wrote {RESULTS.name} and {render_docs(results, ROOT, plot=True)}")
        return 0
    out = Path(args.out) if args.out else Path(runs_root) / "baselines.md"
    render(fresh, out.parent if (args.budget == "full" or args.out) else None, out, plot=True)
    write_json(out.with_suffix(".json"), fresh)
    print()
    for setting, record in fresh["settings"].items():
        print(quick_report(setting, record, results["settings"].get(setting)))
        print()
    print(f"wrote {out} ({_wall(time.time() - started)} in all); the full-budget table is "
          "docs/baselines.md")
    return 0


def list_models() -> int:
    """``--list``: every shipped model with its recipe's digest and whether it matches."""
    rows = shipped_status()
    print(f"{'setting':34} {'algo':13} {'seed':>4}  {'recipe':12}  {'trained':10}  status")
    for r in rows:
        seed = "-" if r["seed"] is None else r["seed"]
        print(f"{r['setting']:34} {r['algo'] or '-':13} {seed:>4}  {(r['digest'] or '-')[:12]:12}"
              f"  {r['date'] or '-':10}  {r['status']}")
    mismatched = sum(r["status"] != "matches" for r in rows)
    print(f"{len(rows) - mismatched} of {len(rows)} shipped models match their recipe in "
          "baselines/configs/")
    return 0


def verify(setting: str, args: argparse.Namespace, device: str, command: str) -> int:
    """``--verify SETTING``: retrain seed ``--seed`` of the algorithm the setting ships, from
    scratch at the full budget (or ``--timesteps``, a smoke test), and compare its headline
    figure with the published one over seeds (docs/baselines.json)."""
    record = load_results(RESULTS)["settings"].get(setting)
    if not record or not record.get("shipped") or not record.get("seeds"):
        print(f"error: --verify: docs/baselines.json has no record over seeds of {setting!r} "
              "yet: run python -m baselines.reproduce --budget full --settings "
              f"{setting} first", file=sys.stderr)
        return 2
    algo = record["shipped"]["algo"]
    runs_root = args.runs or "runs/verify"
    Path(runs_root).mkdir(parents=True, exist_ok=True)
    job = (setting, algo, args.seed, "full", runs_root, args.timesteps, sys.stdout.isatty(),
           None, device, command)
    run = collect_runs([run_all([job], 1)[0][0]])[0]
    print(verify_line(record, run, smoke=bool(args.timesteps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
