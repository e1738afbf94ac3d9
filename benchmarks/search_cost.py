"""Search agents' cost per move: seconds per decision of ``ismcts`` at a budget, in real games.

For each setting it plays ``--games`` games with the search agent in seat 0 and the game's
strongest rule agent in every other seat (seats are not rotated: this measures time, not
strength) and times every decision of seat 0, those the agent searches and those it answers
at once (a single legal action, a rule it follows without search).

Run: ``python benchmarks/search_cost.py`` (``--help`` for options); ``card-envs play`` needs
the worst case well under a second.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from card_envs.core.agents import make_agent
from card_envs.registry import load_spec

# (game, rules arguments, label)
SETTINGS = [
    ("thirty_one", {"num_players": 2}, "Thirty-One, 2 players"),
    ("thirty_one", {"num_players": 3}, "Thirty-One, 3 players"),
    ("palace", {"num_players": 3}, "Palace, 3 players"),
    ("literature", {"num_players": 6}, "Literature, 6 players"),
    ("literature", {"num_players": 4, "rules": "original"}, "Literature, 4 players, original"),
]


def time_decisions(name: str, rules: dict, budget: int | None, games: int,
                   seed: int) -> tuple[list[float], list[float]]:
    """(seconds of each searched decision, seconds of each other decision) of seat 0."""
    spec = load_spec(name)
    game = spec.make_game(**rules)
    agent = make_agent(spec, "ismcts" if budget is None else f"ismcts:{budget}", game)
    rule = make_agent(spec, spec.strongest_agent, game)
    searched, quick = [], []
    for g in range(games):
        rng = np.random.default_rng([seed, g])
        s = game.init(rng)
        agent.reset()
        while not s.done:
            p = s.player
            view = game.view(s, p)
            if p == 0:
                start = time.perf_counter()
                action = agent.act(view, rng)
                took = time.perf_counter() - start
                simple = view.legal.sum() == 1 or agent.shortcut(view) is not None
                (quick if simple else searched).append(took)
            else:
                action = rule.act(view, rng)
            game.apply(s, action, rng)
    return searched, quick


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=5, help="games per setting")
    parser.add_argument("--budget", type=int, default=None,
                        help="simulations per move (default: each agent's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default=None, help="one game's settings, e.g. palace")
    args = parser.parse_args(argv)
    print("| setting | budget | searched decisions | mean ms | median ms | p95 ms | max ms | "
          "other decisions, mean ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rules, label in SETTINGS:
        if args.only and name != args.only:
            continue
        searched, quick = time_decisions(name, rules, args.budget, args.games, args.seed)
        game = load_spec(name).make_game(**rules)
        budget = args.budget or make_agent(load_spec(name), "ismcts", game).budget
        ms = sorted(1000 * t for t in searched) or [0.0]
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        other = 1000 * statistics.fmean(quick) if quick else 0.0
        print(f"| {label} | {budget} | {len(searched)} | {statistics.fmean(ms):.0f} | "
              f"{statistics.median(ms):.0f} | {p95:.0f} | {ms[-1]:.0f} | {other:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
