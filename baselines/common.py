"""Shared pieces of the baselines: configs, run folders, environments, model evaluation."""

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

import yaml

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import MatchResult, duplicate_evaluate, evaluate
from card_envs.registry import load_spec
from card_envs.rl.policy_agent import ALGOS, write_json

CONFIGS = Path(__file__).resolve().parent / "configs"
BUDGETS = ("quick", "full")


def load_yaml(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONFIGS / name).read_text()) or {}


def settings() -> list[str]:
    """Every baseline setting of configs/games.yaml, in file order."""
    return list(load_yaml("games.yaml"))


def game_config(name: str) -> dict[str, Any]:
    """How baselines train and evaluate a setting of configs/games.yaml.

    A setting is an env name (``thirty_one_v0``) or a named variant of one
    (``ninety_eight_cards_v0-original``, with ``env:`` and its own ``env_kwargs``).
    """
    games = load_yaml("games.yaml")
    if name not in games:
        raise ValueError(f"no baseline setting {name!r}; configured: {', '.join(games)}")
    return {
        "env": name,
        "env_kwargs": {},
        "opponent": "random",
        "eval_opponents": ["random"],
        "duplicate": False,
        "team": False,
        "mix": None,
        "teammate": None,
        "source": "",
        "targets": [],
        **games[name],
        "setting": name,
    }


def hyperparams(algo: str, env_name: str, budget: str, setting: str | None = None
                ) -> dict[str, Any]:
    """The algorithm's hyperparameters for a setting: the ``default`` block, then the env's
    own, then the setting's own (when a variant has a block of its name).

    Budget-dependent entries (``{quick: ..., full: ...}``) are resolved for ``budget``.
    """
    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}")
    table = load_yaml(f"{algo}.yaml")
    merged = {**table.get("default", {}), **table.get(env_name, {})}
    if setting is not None and setting != env_name:
        merged.update(table.get(setting, {}))
    out = {}
    for key, value in merged.items():
        if isinstance(value, dict) and set(value) <= set(BUDGETS) and value:
            value = value[budget]
        out[key] = value
    return out


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in (
        "card-envs",
        "numpy",
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
        while path.exists():
            suffix += 1
            path = path.with_name(f"{name}-{suffix}")
        (path / "checkpoints").mkdir(parents=True)
        write_json(path / "config.json", config)
        write_text(path / "command.txt", command + "\n")
        write_json(path / "versions.json", versions())
        return cls(path)

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


def spec_and_game(env_name: str, env_kwargs: dict[str, Any]):
    spec = load_spec(env_name)
    return spec, spec.make_game(**env_kwargs)
