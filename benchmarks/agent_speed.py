"""Decisions per second of every twin's batched rule agents beside their scalar forms.

For each game with a batched twin (default rules, or ``--set`` rules) and each of its batched
agents (``random`` and the twin's rule agents, e.g. 98 Cards' ``expert``): the agent plays
every seat of B games at once through the twin (``engine.act`` then ``engine.step``, ended
games dealt again), and, beside it in the same run, the scalar agent plays one game at a time
from its views (``make_agent(...).act(view, rng)`` then ``game.apply``). Only the agents'
decisions and the moves are timed; both sides play the same rules. What the batched agents
buy: imitation data collected on the twin (baselines/imitation.py), batched evaluations and
ladder matches, rule-agent opponents in training.

Run: ``python benchmarks/agent_speed.py [games ...] [--batch 1024] [--seconds 3]``; prints
markdown.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's card_envs

from card_envs.core.agents import make_agent  # noqa: E402
from card_envs.core.make import make_batched  # noqa: E402
from card_envs.registry import env_names, load_spec  # noqa: E402


def batched_rate(name: str, rules: dict, agent: str, batch: int, seconds: float) -> float:
    """Decisions per second of batched ``agent`` in every seat of ``batch`` games."""
    engine = make_batched(load_spec(name), **rules)
    state = engine.init(batch, seed=0)
    engine.step(state, engine.act(state, agent))  # compiled before the clock starts
    engine.autoreset(state)
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        engine.step(state, engine.act(state, agent))
        decisions += batch
        engine.autoreset(state)
    return decisions / (time.perf_counter() - start)


def scalar_rate(name: str, rules: dict, agent: str, seconds: float) -> float:
    """Decisions per second of scalar ``agent`` in every seat of one game at a time."""
    spec = load_spec(name)
    game = spec.make_game(**rules)
    rng = np.random.default_rng(0)
    agents = [make_agent(spec, agent, game) for _ in range(game.num_players)]
    state = game.init(rng)
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.done:
            state = game.init(rng)
            agents = [make_agent(spec, agent, game) for _ in range(game.num_players)]
        player = state.player
        game.apply(state, agents[player].act(game.view(state, player), rng), rng)
        decisions += 1
    return decisions / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    twins = [e for e in env_names() if load_spec(e).batched is not None]
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("games", nargs="*", help=f"default: every game with a twin ({', '.join(twins)})")
    p.add_argument("--batch", type=int, default=1024, help="games at once on the twin")
    p.add_argument("--seconds", type=float, default=3.0, help="timed seconds per figure")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules argument for every game, e.g. --set rules=original")
    args = p.parse_args(argv)
    rules = {}
    for item in args.set:
        key, _, value = item.partition("=")
        rules[key] = int(value) if value.isdigit() else value
    names = [load_spec(g).name for g in args.games] if args.games else \
        [load_spec(e).name for e in twins]
    load = ", load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) \
        if hasattr(os, "getloadavg") else ""
    print(f"decisions/s, {args.seconds:g} s windows, B={args.batch}; {platform.machine()}, "
          f"{os.cpu_count()} CPUs{load}" + (f"; rules {rules}" if rules else "") + "\n")
    print("| game | agent | batched | scalar | batched / scalar |")
    print("|---|---|---:|---:|---:|")
    for name in names:
        engine = make_batched(load_spec(name), **rules)
        for agent in engine.agents:
            fast = batched_rate(name, rules, agent, args.batch, args.seconds)
            slow = scalar_rate(name, rules, agent, args.seconds)
            print(f"| {name} | {agent} | {fast:,.0f} | {slow:,.0f} | {fast / slow:,.0f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
