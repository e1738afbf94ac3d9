"""Shared pieces of the baselines: run folders, files, the scalar evaluation and result rows."""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import MatchResult, duplicate_evaluate, evaluate
from card_envs.rl.policy_agent import write_json


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in (
        "card-envs",
        "numpy",
        "numba",
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "gymnasium",
        "pettingzoo",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep the memory torch frees for reuse (no trimming, and blocks
    up to 32 MiB from the heap rather than from fresh mappings), so that the updates'
    tensors of a few MiB are not faulted in anew page by page on every minibatch (about
    15-20% of a per-action PPO run's time on the 2-core machines; docs/performance.md).
    A no-op where the C library is not glibc. True when the settings took."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_trim_threshold, 1 << 30)) & bool(mallopt(m_mmap_threshold, 32 << 20))


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, buf.getvalue())


def read_csv(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    with path.open() as f:
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


@dataclass
class Run:
    """A run folder: config.json, command.txt, versions.json, checkpoints/, curve.csv,
    eval.json, model.zip + model.json. Every file is written atomically."""

    path: Path

    @property
    def config(self) -> dict[str, Any]:
        return json.loads((self.path / "config.json").read_text())

    @classmethod
    def create(cls, root: Path, config: dict[str, Any], command: str) -> Run:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        opponent = config["opponent"].replace(",", "+").replace("/", "_").replace(":", "_")
        name = f"{config['algo']}-{opponent}-seed{config['seed']}-{stamp}"
        path = Path(root) / config["env"] / name
        suffix = 1
        while True:  # claimed by mkdir, so that runs started together never share a folder
            try:
                path.mkdir(parents=True)
                break
            except FileExistsError:
                suffix += 1
                path = path.with_name(f"{name}-{suffix}")
        (path / "checkpoints").mkdir()
        write_json(path / "config.json", config)
        write_text(path / "command.txt", command + "\n")
        write_json(path / "versions.json", versions())
        return cls(path)

    @classmethod
    def at(cls, path: Path, config: dict[str, Any], command: str) -> Run:
        """The run folder ``path`` for ``config``: made if new; if it exists (an interrupted
        reproduce), it must have been started with the same config, and is resumed."""
        path = Path(path)
        if (path / "config.json").exists():
            run = cls(path)
            before = {k: v for k, v in run.config.items() if k != "device"}
            now = {k: v for k, v in config.items() if k != "device"}
            if before != now:
                changed = sorted(k for k in set(before) | set(now)
                                 if before.get(k) != now.get(k))
                raise ValueError(f"{path} was started with other settings ({', '.join(changed)}"
                                 "); delete it to train it again, or give another --runs")
            return run
        (path / "checkpoints").mkdir(parents=True, exist_ok=True)
        write_json(path / "config.json", config)
        write_text(path / "command.txt", command + "\n")
        write_json(path / "versions.json", versions())
        return cls(path)

    def finished(self) -> bool:
        """Whether the run has its final model (and, for a recipe's last stage, its final
        evaluation)."""
        cfg = self.config
        last = cfg.get("stage", 0) == cfg.get("stage_count", 1) - 1
        return (self.path / "model.zip").exists() and (
            not last or (self.path / "eval.json").exists())

    def curve(self) -> list[dict[str, Any]]:
        return read_csv(self.path / "curve.csv")


def model_lineup(agent, rivals, team: bool) -> list:
    """Seats for an evaluation: the model first, rivals after; for teams the model takes
    every even seat and the rivals the odd ones."""
    if team:
        lineup = []
        for rival in rivals:
            lineup += [agent, rival]
        return lineup
    return [agent, *rivals]


def evaluate_agent(
    spec, game, agent, opponent, games: int, seed: int, duplicate: bool, team: bool
) -> MatchResult:
    """``agent`` against ``opponent`` (a name or an agent) in every other seat (or team),
    seats rotated; duplicate deals when ``duplicate`` and the game has two players.

    A named opponent gets one agent object per seat, so agents with memory never share it.
    """
    label = getattr(agent, "name", "model")
    rival_label = opponent if isinstance(opponent, str) else getattr(opponent, "name", "rival")
    n_rivals = game.num_players // 2 if team else game.num_players - 1
    rivals = [make_agent(spec, opponent, game) for _ in range(n_rivals)]
    if duplicate and game.num_players == 2:
        return duplicate_evaluate(game, agent, rivals[0], games, seed, [label, rival_label])
    lineup = model_lineup(agent, rivals, team)
    names = [label if a is agent else rival_label for a in lineup]
    return evaluate(game, lineup, games, seed, names=names)


def result_row(result: MatchResult, opponent: str) -> dict[str, Any]:
    """The model's line of a MatchResult as plain numbers (rates with 95% intervals)."""
    t = result.tallies[0]
    row = {
        "opponent": opponent,
        "games": t.games,
        "kind": result.kind,
        "mean_length": round(result.mean_length, 2),
        "truncated": result.truncated,
    }
    for what in ("wins", "draws", "losses"):
        rate, low, high = t.rate(what)
        row[what] = t.__getattribute__(what)
        row[f"{what}_rate"], row[f"{what}_low"], row[f"{what}_high"] = rate, low, high
    dec, dlow, dhigh = t.decided()
    row.update(decided_rate=dec, decided_low=dlow, decided_high=dhigh, mean_payoff=t.mean_payoff)
    if t.mean_place is not None:
        row["mean_place"], row["place_counts"] = t.mean_place, list(t.place_counts)
    if t.mean_score is not None:
        row["mean_score"] = t.mean_score
        row["score_low"], row["score_high"] = t.score_interval()
        row["score_sum"], row["score_sq_sum"] = t.score_sum, t.score_sq_sum
    return row
