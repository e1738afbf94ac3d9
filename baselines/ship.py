"""Shipping models: a setting's chosen run copied to the package's models
(``card_envs/rl/models/<setting>.zip`` + ``.json``), where the agent name ``best`` finds it."""

from __future__ import annotations

import shutil
from pathlib import Path

from card_envs.rl.policy_agent import models_dir

MODELS = models_dir()


def ship(setting: str, run: dict) -> None:
    """Copy a run's final model (model.zip + model.json) to ``MODELS`` as the setting's
    shipped model."""
    MODELS.mkdir(exist_ok=True)
    for suffix in (".zip", ".json"):
        shutil.copyfile(Path(run["path"]) / f"model{suffix}", MODELS / f"{setting}{suffix}")
    print(f"shipped {run['path']} as {MODELS / setting}.zip", flush=True)
