"""Evaluate a trained model against an agent: win / draw / loss with 95% intervals.

A thin alias of ``card-envs evaluate`` (the one evaluation command): it fills the seats as the
model's baseline setting evaluates, prints the ``card-envs evaluate`` command it runs, and
runs it.

    python -m baselines.evaluate runs/.../model.zip --env thirty_one_v0 --opponent greedy
    python -m baselines.evaluate best --env simple_tricks_v0 --opponent first_play --games 2000
    python -m baselines.evaluate best --env literature_v0-original --opponent heuristic

The model plays as it was kept (greedy, its most likely legal action, or sampling from its
policy: model.json's ``deterministic``) against ``--opponent`` in every other seat
(``--team``: in the opposing team), seats rotated; two-player games use duplicate deals
(every deal played twice with seats swapped) where the model's baseline setting does
(``--duplicate`` / ``--no-duplicate`` override it).
MODEL is a model.zip (with its model.json beside it) or ``best``, the shipped model.
``--env`` is an env name or a baseline setting of baselines/configs/games.yaml (e.g.
``literature_v0-original``): ``best`` is then the model shipped for that setting's rules.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from baselines.config import game_config
from card_envs.core.agents import make_agent
from card_envs.registry import load_spec
from card_envs.rl.policy_agent import read_meta, shipped_model


def setting_flags(setting: str) -> dict[str, bool]:
    """How a baseline setting evaluates: ``team`` and ``duplicate`` (for one not in
    games.yaml: no team, duplicate deals)."""
    try:
        cfg = game_config(setting)
    except ValueError:
        return {"team": False, "duplicate": True}
    return {"team": bool(cfg["team"]), "duplicate": bool(cfg["duplicate"])}


def resolve_model(env: str, model: str):
    """(spec, path, metadata) of ``model`` (a model.zip or ``best``) for ``env``, an env name
    or a baseline setting; ValueError when it is unknown or no model ships for it."""
    try:
        cfg = game_config(env)
    except ValueError:
        cfg = None
    spec = load_spec(cfg["env"] if cfg else env)
    if model != "best":
        return spec, model, read_meta(model)
    game = spec.make_game(**cfg["env_kwargs"]) if cfg else None
    path = shipped_model(spec.env_name, game)
    if path is None:
        rules = f" with {game!r}" if game is not None else ""
        raise ValueError(f"no trained model ships for {spec.env_name}{rules}")
    return spec, path, read_meta(path)


def evaluate_argv(args: argparse.Namespace) -> list[str]:
    """The ``card-envs evaluate`` command line that plays what ``args`` asks: the model in its
    seat (every seat of its team for a team setting), the opponent in the others, the
    setting's rules and duplicate deals."""
    spec, path, meta = resolve_model(args.env, args.model)
    game = spec.make_game(**meta.get("game_args", {}))
    flags = setting_flags(meta.get("setting", spec.env_name))
    team = args.team or flags["team"]
    duplicate = flags["duplicate"] if args.duplicate is None else args.duplicate
    if args.games < 1:
        raise ValueError(f"--games={args.games} is not valid; it must be at least 1")
    # the shipped model by its name (card-envs evaluate finds it by the rules), else the file
    model = "best" if args.model == "best" else f"model:{path}"
    make_agent(spec, model, game)  # a file that is not a model fails here, in one line
    if team:
        agents = [model if seat % 2 == 0 else args.opponent for seat in range(game.num_players)]
    else:
        agents = [model, *[args.opponent] * (game.num_players - 1)]
    sets = [f"{key}={value}" for key, value in meta.get("game_args", {}).items()]
    return ["evaluate", spec.env_name, *agents, "--games", str(args.games), "--seed",
            str(args.seed), *[x for kv in sets for x in ("--set", kv)],
            *(["--duplicate"] if duplicate and game.num_players == 2 else [])]


def main(argv: list[str] | None = None) -> int:
    """A thin alias of ``card-envs evaluate`` that fills the seats from the model's setting."""
    from card_envs.cli import main as card_envs_main

    p = argparse.ArgumentParser(
        prog="python -m baselines.evaluate", description=__doc__.split("\n")[0]
    )
    p.add_argument("model", help="path to model.zip, or 'best'")
    p.add_argument("--env", required=True,
                   help="env name or baseline setting, e.g. thirty_one_v0 or "
                        "literature_v0-original")
    p.add_argument("--opponent", default="random", help="agent name, model:PATH or best")
    p.add_argument("--games", type=int, default=1000, help="games (pairs when duplicate)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--duplicate", action=argparse.BooleanOptionalAction, default=None,
                   help="two-player games: duplicate deals (default: as the model's baseline "
                        "setting evaluates, e.g. plain matches for Thirty-One)")
    p.add_argument("--team", action="store_true", help="the model plays every seat of its team")
    args = p.parse_args(argv)
    try:
        command = evaluate_argv(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("card-envs " + shlex.join(command), flush=True)
    return card_envs_main(command)


if __name__ == "__main__":
    sys.exit(main())
