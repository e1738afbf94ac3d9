"""Evaluate a trained model against an agent: win / draw / loss with 95% intervals.

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
import sys

from baselines.config import game_config
from baselines.evaluation import evaluate
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


def main(argv: list[str] | None = None) -> int:
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
        spec, path, meta = resolve_model(args.env, args.model)
        game = spec.make_game(**meta.get("game_args", {}))
        agent = make_agent(spec, f"model:{path}", game)
        flags = setting_flags(meta.get("setting", spec.env_name))
        team = args.team or flags["team"]
        duplicate = flags["duplicate"] if args.duplicate is None else args.duplicate
        if args.games < 1:
            raise ValueError(f"--games={args.games} is not valid; it must be at least 1")
        result = evaluate(
            spec, game, agent, args.opponent, args.games, args.seed, duplicate=duplicate,
            team=team,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"{spec.env_name} {game!r}: {path} ({meta['algo']}, {meta.get('timesteps')} steps)")
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
