"""Shipping models: a setting's chosen run copied to the package's models
(``card_envs/rl/models/<setting>.zip`` + ``.json``), where the agent name ``best`` finds it.

A run's final model.zip is already written to play (``save_model(..., for_play=True)``:
no optimizer state, none of the last training step SB3 keeps, compressed); shipping copies
it through ``compact`` all the same, which leaves such a file as it is and trims a model
written before runs saved that way. The command does the same in place:

    python -m baselines.ship MODEL.zip [MODEL.zip ...]

``--run RUN_DIR`` ships one finished full-budget run that ``reproduce`` does not train, such
as a fine-tuning of the shipped model (``baselines.train --init-from``): its final
evaluation, on the same deals as its setting's table, becomes the setting's *shipped* rows
in docs/baselines.json, and the docs are rendered again; the table's runs stay as they are.

    python -m baselines.ship --run runs/literature_v0/maskable_ppo-...
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

from card_envs.rl.policy_agent import compact, models_dir, write_json

MODELS = models_dir()


def ship(setting: str, run: dict) -> None:
    """Copy a run's final model (model.zip, compacted, and model.json) to ``MODELS`` as
    the setting's shipped model."""
    MODELS.mkdir(exist_ok=True)
    compact(Path(run["path"]) / "model.zip", MODELS / f"{setting}.zip")
    shutil.copyfile(Path(run["path"]) / "model.json", MODELS / f"{setting}.json")
    print(f"shipped {run['path']} as {MODELS / setting}.zip", flush=True)


def ship_run(run_dir: Path) -> int:
    """``--run``: ship a finished run and make it its setting's shipped record."""
    from baselines.common import Run
    from baselines.final import RESULTS, ROOT, collect, load_results, shipped_entry
    from baselines.render import render_docs

    if not (run_dir / "eval.json").is_file() or not (run_dir / "model.zip").is_file():
        print(f"error: --run: {run_dir} is not a finished run folder (no eval.json and "
              "model.zip)", file=sys.stderr)
        return 2
    run = collect(str(run_dir))
    cfg = Run(run_dir).config
    results = load_results(RESULTS)
    record = results["settings"].get(run["setting"])
    if record is None or cfg["budget"] != "full" or run["final_games"] != \
            record["runs"][0]["final_games"]:
        print(f"error: --run: {run_dir} is not a full-budget run of a setting in "
              f"{RESULTS.name} with its final games; its rows would not compare",
              file=sys.stderr)
        return 2
    ship(run["setting"], run)
    record["shipped"] = {**shipped_entry(run), "init_from": cfg.get("init_from"),
                         "command": (run_dir / "command.txt").read_text().strip()}
    write_json(RESULTS, results)
    print(f"wrote {RESULTS} and {render_docs(results, ROOT)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if paths[:1] == ["--run"]:
        if len(paths) != 2:
            print("usage: python -m baselines.ship --run RUN_DIR", file=sys.stderr)
            return 2
        return ship_run(Path(paths[1]))
    if not paths:
        print("usage: python -m baselines.ship MODEL.zip [MODEL.zip ...]  (compacts in place)",
              file=sys.stderr)
        return 2
    for p in map(Path, paths):
        if not zipfile.is_zipfile(p):
            print(f"error: {p}: not a model zip", file=sys.stderr)
            return 2
        before = p.stat().st_size
        compact(p, p)
        print(f"{p}: {before / 1e6:.2f} -> {p.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
