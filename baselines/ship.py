"""Shipping models: a setting's chosen run copied to the package's models
(``card_envs/rl/models/<setting>.zip`` + ``.json``), where the agent name ``best`` finds it.

A run's final model.zip is already written to play (``save_model(..., for_play=True)``:
no optimizer state, none of the last training step SB3 keeps, compressed); shipping copies
it through ``compact`` all the same, which leaves such a file as it is and trims a model
written before runs saved that way. The command does the same in place:

    python -m baselines.ship MODEL.zip [MODEL.zip ...]
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

from card_envs.rl.policy_agent import compact, models_dir

MODELS = models_dir()


def ship(setting: str, run: dict) -> None:
    """Copy a run's final model (model.zip, compacted, and model.json) to ``MODELS`` as
    the setting's shipped model."""
    MODELS.mkdir(exist_ok=True)
    compact(Path(run["path"]) / "model.zip", MODELS / f"{setting}.zip")
    shutil.copyfile(Path(run["path"]) / "model.json", MODELS / f"{setting}.json")
    print(f"shipped {run['path']} as {MODELS / setting}.zip", flush=True)


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
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
