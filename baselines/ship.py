"""Shipping models: a setting's chosen run copied to the package's models
(``card_envs/rl/models/<setting>.zip`` + ``.json``), where the agent name ``best`` finds it.

A shipped model is the run's model.zip without what only a resumed training run reads: SB3
saves the last observations of every training game (``_last_obs``: 5.4 MB of Literature's
7.5 MB model with 1024 games), which playing never uses; the rest is stored compressed.

    python -m baselines.ship card_envs/rl/models/*.zip    # slim models already shipped
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from card_envs.rl.policy_agent import models_dir

MODELS = models_dir()
# SB3 data keys that only continuing training reads (the rollout's last step)
TRAINING_ONLY = ("_last_obs", "_last_original_obs", "_last_episode_starts")


def slim(src: Path, dst: Path) -> None:
    """Write ``src`` (an SB3 model.zip) to ``dst`` without ``TRAINING_ONLY``, compressed
    (``src`` and ``dst`` may be the same file)."""
    with zipfile.ZipFile(src) as zin:
        files = {info.filename: zin.read(info) for info in zin.infolist()}
    data = json.loads(files["data"])
    for key in TRAINING_ONLY:
        data.pop(key, None)
    files["data"] = json.dumps(data, indent=4).encode()
    with tempfile.NamedTemporaryFile(dir=Path(dst).parent, suffix=".zip", delete=False) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zout:
            for name, content in files.items():
                zout.writestr(name, content)
    Path(tmp.name).chmod(0o644)  # a temporary file is private to its owner; a model is not
    Path(tmp.name).replace(dst)


def ship(setting: str, run: dict) -> None:
    """Copy a run's final model (model.zip, slimmed, and model.json) to ``MODELS`` as the
    setting's shipped model."""
    MODELS.mkdir(exist_ok=True)
    slim(Path(run["path"]) / "model.zip", MODELS / f"{setting}.zip")
    shutil.copyfile(Path(run["path"]) / "model.json", MODELS / f"{setting}.json")
    print(f"shipped {run['path']} as {MODELS / setting}.zip", flush=True)


def main(argv: list[str] | None = None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    if not paths:
        print("usage: python -m baselines.ship MODEL.zip [MODEL.zip ...]  (slims in place)",
              file=sys.stderr)
        return 2
    for p in map(Path, paths):
        if not zipfile.is_zipfile(p):
            print(f"error: {p}: not a model zip", file=sys.stderr)
            return 2
        before = p.stat().st_size
        slim(p, p)
        print(f"{p}: {before / 1e6:.2f} -> {p.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
