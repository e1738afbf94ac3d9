"""Shipping models: a setting's chosen run copied to the package's models
(``card_envs/rl/models/<setting>.zip`` + ``.json``), where the agent name ``best`` finds it.

A run's final model.zip is already written to play (``save_model(..., for_play=True)``:
no optimizer state, none of the last training step SB3 keeps, compressed); shipping copies
it through ``compact`` all the same, which leaves such a file as it is and trims a model
written before runs saved that way. The command does the same in place:

    python -m baselines.ship MODEL.zip [MODEL.zip ...]

A model ships only from its recipe (``python -m baselines.reproduce --budget full --ship``):
its JSON then carries the run's provenance (``baselines/recipes.py``), which
``reproduce --list`` and the tests compare with the configs.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from card_envs.rl.policy_agent import compact, models_dir, write_json

MODELS = models_dir()


def ship(setting: str, run: dict, command: str) -> None:
    """Copy a run's final model (model.zip, compacted) to ``MODELS`` as the setting's shipped
    model, with its model.json and the run's provenance (``recipes.provenance``: its recipe
    and digest, seed, commit, ``command``, versions, device, machine and wall time)."""
    from baselines.recipes import provenance

    MODELS.mkdir(exist_ok=True)
    path = Path(run["path"])
    compact(path / "model.zip", MODELS / f"{setting}.zip")
    meta = json.loads((path / "model.json").read_text())
    write_json(MODELS / f"{setting}.json", {**meta, "provenance": provenance(path, command)})
    print(f"shipped {path} as {MODELS.name}/{setting}.zip", flush=True)


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if paths[:1] == ["--run"]:
        print("error: --run is gone: a model ships only from its recipe in baselines/configs/ "
              "(python -m baselines.reproduce --budget full --settings SETTING --ship)",
              file=sys.stderr)
        return 2
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
