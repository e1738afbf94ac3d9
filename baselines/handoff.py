"""Where in a 98 Cards game does an agent lose ground? Hand the game from one agent to another.

    python -m baselines.handoff --first expert --then best --at 0,20,40,60,98 --games 1000

Every deal is played once per handover point K: ``--first`` plays until K cards have been
played, ``--then`` plays the rest (K = 0 is ``--then`` alone; K = 98 is ``--first`` alone).
The deals are the same at every K (``--seed``), so the rows differ only by who played which
part of the game. Each row gives the mean cards played and the games won (all 98 played),
with 95% intervals. Agents are named as everywhere else (``expert``, ``greedy``, ``best``,
``model:PATH``, ``ismcts:4``); ``--set rules=original`` picks the other rules.

This is a diagnostic of the baselines (docs/policies.md: where the network loses to the
`expert`), not an agent: a handed-over game is played by two agents, each seeing only its
view, the second with no memory of the first's moves (neither keeps any).
"""

from __future__ import annotations

import argparse
import sys

from card_envs.cli import _parse_set
from card_envs.core.agents import make_agent
from card_envs.core.evaluation import Tally, game_rngs, play_move
from card_envs.registry import load_spec

ENV = "ninety_eight_cards_v0"
CARDS = 98


def parse_points(text: str) -> list[int]:
    """``--at``'s comma-separated handover points, each 0 to 98 cards played."""
    try:
        points = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        points = []
    if not points or any(not 0 <= k <= CARDS for k in points):
        raise ValueError(f"--at: expected comma-separated cards played from 0 to {CARDS} "
                         f"(e.g. 0,40,98), got {text!r}")
    return points


def handoff(first: str, then: str, points: list[int], games: int, seed: int,
            rules: dict | None = None) -> list[dict]:
    """One row per handover point: ``at``, ``games``, ``mean_cards`` with ``cards_low`` and
    ``cards_high`` (95%, within the scores seen), ``wins_rate`` with ``wins_low`` and
    ``wins_high`` (Wilson), as ``card_envs.core.evaluation.Tally`` reports them."""
    spec = load_spec(ENV)
    game = spec.make_game(**(rules or {}))
    a, b = make_agent(spec, first, game), make_agent(spec, then, game)
    rows = []
    for at in points:
        tally = Tally(f"K={at}")
        for g in range(games):
            game_rng, agent_rng = game_rngs(seed, g)
            s = game.init(game_rng)
            while not (s.terminal or s.truncated):
                play_move(game, s, a if s.played < at else b, game_rng, agent_rng)
            tally.add(float(game.payoffs(s)[0]), float(game.scores(s)[0]))  # won: all 98
        cards_low, cards_high = tally.score_interval()
        wins, wins_low, wins_high = tally.rate("wins")
        rows.append({"at": at, "games": games, "mean_cards": tally.mean_score,
                     "cards_low": cards_low, "cards_high": cards_high,
                     "wins_rate": wins, "wins_low": wins_low, "wins_high": wins_high})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baselines.handoff",
                                description=__doc__.split("\n")[0])
    p.add_argument("--first", default="expert", help="the agent that starts each game")
    p.add_argument("--then", default="best", help="the agent that finishes it")
    p.add_argument("--at", default="0,20,40,60,98",
                   help="cards played at the handover, comma-separated (0 to 98)")
    p.add_argument("--games", type=int, default=1000, help="deals per handover point")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules argument, e.g. rules=original")
    args = p.parse_args(argv)
    try:
        points = parse_points(args.at)
        if args.games < 1:
            raise ValueError(f"--games: expected a positive number of deals, got {args.games}")
        rules = _parse_set(args.set, load_spec(ENV))
        rows = handoff(args.first, args.then, points, args.games, args.seed, rules)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.first} until K cards are played, then {args.then}; {args.games} deals "
          f"(seed {args.seed}) at each K")
    print("| K | mean cards [95% CI] | games won [95% CI] |")
    print("|---|---|---|")
    for r in rows:
        print(f"| {r['at']} | {r['mean_cards']:.2f} [{r['cards_low']:.2f}, "
              f"{r['cards_high']:.2f}] | {r['wins_rate']:.1%} [{r['wins_low']:.1%}, "
              f"{r['wins_high']:.1%}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
