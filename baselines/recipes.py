"""Recipes: everything a baseline model goes through, declared in baselines/configs/.

A setting's recipe for an algorithm is a list of *stages*. The first is what
``configs/<algo>.yaml`` and ``configs/games.yaml`` give the setting: imitation (games.yaml
``pretrain``), the network, shaping, opponents, hyperparameters and budget. Each entry of the
algorithm's ``stages:`` list (in the setting's block of ``configs/<algo>.yaml``) is one more
stage that continues from the previous stage's kept model, with its own budget, opponents,
checkpoint selection and hyperparameters::

    stages:
      - name: fine-tune against greedy
        timesteps: {quick: 100000, full: 3000000}
        opponent: [greedy, greedy, greedy, expected_value]
        select: {opponent: greedy, metric: wins_rate}
        hp: {learning_rate: 3.0e-5}

Expert iteration (games.yaml ``refine``) ends the last stage. No stage starts from a shipped
model or from a file outside the run: a recipe runs from scratch.

``recipe(setting, algo, budget, seed)`` resolves the stages to the run configs that
``baselines.train`` reads (one per stage); ``digest`` names a recipe by the SHA-256 of what
it trains (the seed, the device and the folder a stage starts from left out), which a shipped
model's JSON records (``provenance``) and ``shipped_status`` compares with the configs today.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from baselines.common import versions
from baselines.config import (
    SELECT_METRICS,
    _budget_entry,
    _checked_opponent,
    build_config,
    game_config,
    hyperparams,
    spec_and_game,
)
from baselines.shaping import potential
from baselines.train import parser as train_parser
from card_envs.registry import load_spec
from card_envs.rl.policy_agent import models_dir

ROOT = Path(__file__).resolve().parents[1]

# what a stage may change; `hp` entries go over the algorithm's hyperparameters
STAGE_KEYS = ("name", "timesteps", "eval_freq", "eval_games", "opponent", "select", "shaping",
              "mix", "hp")
# a run's own settings, not the recipe's: left out of its digest and of drift checks
RUN_KEYS = ("seed", "device", "init_from")
# the stage a later stage starts from, as a recipe names it (a run's config holds its path)
PREVIOUS = "previous stage"


def recipe(setting: str, algo: str, budget: str = "full", seed: int = 0,
           timesteps: int | None = None, device: str = "cpu") -> list[dict[str, Any]]:
    """The run configs of every stage of ``setting``'s recipe for ``algo``, in order.

    ``timesteps`` (a smoke test's budget) replaces every stage's steps, with a checkpoint
    halfway."""
    argv = ["--env", setting, "--algo", algo, "--seed", str(seed), "--budget", budget,
            "--device", device]
    if timesteps:
        argv += ["--timesteps", str(timesteps), "--eval-freq", str(max(1, timesteps // 2))]
    first = build_config(train_parser().parse_args(argv))
    stages = hyperparams(algo, first["env"], budget, setting).get("stages") or []
    names = [stage.get("name", f"stage {k}") for k, stage in enumerate(stages, 1)]
    count = 1 + len(stages)
    chain = [{**first, "stage": 0, "stage_name": "train", "stage_count": count,
              "refine": first["refine"] if count == 1 else None}]
    for k, (stage, name) in enumerate(zip(stages, names, strict=True), 1):
        chain.append(_stage(first, stage, k, name, count, timesteps))
    return chain


def _stage(first: dict[str, Any], stage: dict[str, Any], k: int, name: str, count: int,
           timesteps: int | None) -> dict[str, Any]:
    """Stage ``k`` of a recipe: the first stage's config with ``stage``'s changes, starting
    from the previous stage's kept model."""
    stage = {key: _budget_entry(value, first["budget"]) for key, value in stage.items()}
    unknown = sorted(set(stage) - set(STAGE_KEYS))
    if unknown:
        raise ValueError(f"setting {first['setting']!r}, {first['algo']} stage {k}: unknown "
                         f"key {unknown[0]!r}; a stage takes {', '.join(STAGE_KEYS)}")
    opponent = first["opponent"]
    if "opponent" in stage:  # an unknown name fails here, as the first stage's would
        opponent = _checked_opponent(stage["opponent"],
                                     *spec_and_game(first["env"], first["env_kwargs"]))
    out = {**first, "stage": k, "stage_name": name, "stage_count": count, "pretrain": None,
           "init_from": PREVIOUS, "opponent": opponent,
           "hyperparams": {**first["hyperparams"], **stage.get("hp", {})},
           "refine": first["refine"] if k == count - 1 else None}
    for key in ("timesteps", "eval_freq", "eval_games"):
        if key in stage:
            out[key] = int(stage[key])
    if timesteps:
        out["timesteps"], out["eval_freq"] = timesteps, max(1, timesteps // 2)
    for key in ("select", "shaping", "mix"):
        if key in stage:
            out[key] = stage[key]
    _check_stage(out, k)
    return out


def _check_stage(cfg: dict[str, Any], k: int) -> None:
    """A stage's checkpoint selection and shaping must name what exists: ValueError naming
    the stage and the valid choices."""
    where = f"setting {cfg['setting']!r}, {cfg['algo']} stage {k}"
    select = cfg.get("select")
    if select is not None and (set(select) - {"opponent", "metric", "below"}
                               or select.get("metric") not in SELECT_METRICS
                               or "opponent" not in select):
        raise ValueError(f"{where}: select {select!r} is not valid; give {{opponent: AGENT, "
                         f"metric: one of {', '.join(SELECT_METRICS)}}}")
    if cfg.get("shaping"):
        spec = load_spec(cfg["env"])
        try:
            potential(spec, cfg["shaping"]["potential"])
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None


def comparable(cfg: dict[str, Any]) -> dict[str, Any]:
    """A stage's config as its recipe says it: without the run's own settings (seed, device,
    the folder it started from), with ``init_from`` named as the recipe names it."""
    out = {k: v for k, v in cfg.items() if k not in RUN_KEYS}
    if cfg.get("stage"):
        out["init_from"] = PREVIOUS
    return out


def digest(chain: list[dict[str, Any]]) -> str:
    """The SHA-256 of a recipe's stages as ``comparable`` gives them (canonical JSON)."""
    text = json.dumps([comparable(c) for c in chain], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def stage_dirs(last: Path) -> list[Path]:
    """The folders of every stage of a recipe's run, in order, given its last stage's."""
    last = Path(last)
    count = json.loads((last / "config.json").read_text()).get("stage_count", 1)
    if count == 1:
        return [last]
    dirs = sorted(last.parent.glob("stage*"), key=lambda p: int(p.name[5:].split("-")[0]))
    return dirs[:count]


def git_commit() -> dict[str, Any]:
    """The checkout's commit and whether its tracked code differs from it (None outside
    git)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10, check=True)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    # (what reproduce itself writes, the docs and the shipped models, does not count)
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs",
                ":!card_envs/rl/models")
    return {"commit": commit, "dirty": bool(dirty) if commit else None}


def machine(device: str) -> str:
    """The machine a run trained on, in words."""
    text = f"{platform.machine()} with {mp.cpu_count()} CPUs"
    if device.startswith("cuda"):
        import torch as th

        return f"{text}, {th.cuda.get_device_name(0)}"
    return f"{text}, trained on the CPU"


def provenance(last: Path, command: str) -> dict[str, Any]:
    """What a shipped model's JSON records of how it was made: its resolved recipe and digest,
    the seed, the package version and commit, the command, the libraries' versions, the
    device, the machine and the wall time of every stage."""
    chain = [json.loads((d / "config.json").read_text()) for d in stage_dirs(last)]
    walls = [json.loads((d / "model.json").read_text())["wall_s"] for d in stage_dirs(last)]
    lib = versions()
    return {
        "setting": chain[0]["setting"],
        "algo": chain[0]["algo"],
        "budget": chain[0]["budget"],
        "seed": chain[0]["seed"],
        "recipe": [comparable(c) for c in chain],
        "recipe_digest": digest(chain),
        "package_version": lib["card-envs"],
        **git_commit(),
        # the command that trained it (its runs' own), and the one that shipped it
        "command": (last / "command.txt").read_text().strip(),
        "shipped_by": command,
        "versions": lib,
        "device": chain[0].get("device", "cpu"),
        "machine": machine(chain[0].get("device", "cpu")),
        "wall_s": round(sum(walls), 1),
        "stage_wall_s": walls,
        "date": time.strftime("%Y-%m-%d"),
    }


def shipped_status(models: Path | None = None) -> list[dict[str, Any]]:
    """Every shipped model with the recipe it records and whether the configs resolve to the
    same recipe today: ``{setting, algo, seed, digest, status}``, ``status`` one of
    ``matches``, ``differs`` (the configs changed since), ``no recipe`` (trained before
    models recorded one) or ``unknown setting``."""
    out = []
    for meta_file in sorted((models or models_dir()).glob("*.json")):
        meta = json.loads(meta_file.read_text())
        setting = meta_file.stem
        prov = meta.get("provenance")
        row = {"setting": setting, "algo": meta.get("algo"), "seed": meta.get("seed"),
               "digest": prov["recipe_digest"] if prov else None, "date": (prov or {}).get("date")}
        if prov is None:
            row["status"] = "no recipe"
        else:
            try:
                game_config(setting)
            except ValueError:
                row["status"] = "unknown setting"
            else:
                now = digest(recipe(setting, prov["algo"], prov["budget"], prov["seed"]))
                row["status"] = "matches" if now == prov["recipe_digest"] else "differs"
        out.append(row)
    return out


def recipe_lines(chain: list[dict[str, Any]]) -> list[str]:
    """A recipe in words, one line a stage (docs/baselines.md renders it)."""
    lines = []
    for cfg in chain:
        parts = []
        pre = cfg.get("pretrain")
        if pre:
            parts.append(f"imitate `{pre.get('agent') or pre.get('records')}` on "
                         f"{pre.get('decisions', 'all'):,} decisions, {pre.get('epochs', 10)} "
                         "passes" if isinstance(pre.get("decisions"), int) else
                         f"imitate `{pre.get('agent') or pre.get('records')}`")
        if cfg.get("stage"):
            parts.append("start from the previous stage's kept model")
        parts.append(f"{cfg['timesteps']:,} steps against `{cfg['opponent']}`")
        if cfg.get("shaping"):
            parts.append(f"shaping `{cfg['shaping']['potential']}` x{cfg['shaping']['scale']:g}")
        hp = cfg["hyperparams"]
        net = hp.get("policy_kwargs", {})
        parts.append(f"policy `{hp.get('policy', 'mlp')}` {json.dumps(net, sort_keys=True)}")
        parts.append(f"learning rate {hp.get('learning_rate')}")
        select = cfg.get("select")
        if select:
            parts.append(f"checkpoint by {select['metric']} against `{select['opponent']}`")
        if cfg.get("refine"):
            ref = cfg["refine"]
            parts.append(f"then {ref['rounds']} rounds of expert iteration labelled by "
                         f"`{ref['expert']}`")
        lines.append(f"{cfg['stage'] + 1}. {cfg['stage_name']}: " + "; ".join(parts))
    return lines
