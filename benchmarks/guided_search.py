"""A solo game's plan search with and without a trained model to guide it, on the same deals.

98 Cards' ``ismcts`` scores the planner's cheapest plans by their cost and the next turn's;
guided by a model (``best+search``), it plays the plan that starts with the model's move
when that plan scores within ``guide_margin`` of the best (card_envs/ninety_eight_cards/
expert.py). This plays the search alone and guided at each margin, and the model alone, on
the same deals (game g of the run deals from ``[seed, g, 0]``, as ``card-envs evaluate``
does), and prints each one's win rate and mean score with 95% intervals, and the paired
difference in score against the search alone.

Run: ``python benchmarks/guided_search.py --set rules=original --margins 0.5 1 2 --games 400
--seed 1207101`` (``--help`` for the options). One process, the model with one torch thread.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import Tally, game_rngs, play_game, wilson
from card_envs.registry import load_spec


def scores(game, agent, games: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(score of each game, whether it was won, seconds) of ``agent`` alone on the deals."""
    got, won = np.zeros(games), np.zeros(games, bool)
    start = time.perf_counter()
    for g in range(games):
        rec = play_game(game, [agent], *game_rngs(seed, g))
        got[g], won[g] = rec.scores[0], rec.payoffs[0] > 0
    return got, won, time.perf_counter() - start


def mean_interval(x: np.ndarray) -> str:
    """The mean of ``x`` and its 95% interval (``Tally.score_interval``'s)."""
    tally = Tally("values")
    for value in x:
        tally.add(0.0, float(value))
    lo, hi = tally.score_interval()
    return f"{tally.mean_score:.2f} [{lo:.2f}, {hi:.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="ninety_eight_cards")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="rules argument, e.g. rules=original")
    parser.add_argument("--budget", type=int, default=4, help="the search's budget")
    parser.add_argument("--margins", type=float, nargs="+", default=[1.0])
    parser.add_argument("--model", default="best", help="the guide: best or model:PATH")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    spec = load_spec(args.game)
    rules = dict(item.split("=", 1) for item in args.set)
    game = spec.make_game(**rules)
    search_cls = spec.agents["ismcts"]
    if not getattr(search_cls, "takes_guide", lambda: False)():
        raise SystemExit(f"{args.game}'s ismcts takes no guide")
    model = make_agent(spec, args.model, game)
    agents = [(f"ismcts:{args.budget}", search_cls(game, budget=args.budget)),
              (args.model, model)]
    agents += [(f"{args.model}+ismcts:{args.budget}, guide_margin {m:g}",
                search_cls(game, budget=args.budget, guide=model, guide_margin=m))
               for m in args.margins]
    print(f"{args.game} {rules or 'default rules'}: {args.games} deals of seed {args.seed}; "
          "torch 1 thread")
    print("| agent | win rate [95% CI] | mean score [95% CI] | score vs the search alone "
          "[95% CI] | seconds |")
    print("|---|---|---|---|---|")
    base = None
    for name, agent in agents:
        got, won, seconds = scores(game, agent, args.games, args.seed)
        lo, hi = wilson(int(won.sum()), args.games)
        diff = "-" if base is None else mean_interval(got - base)
        base = got if base is None else base
        print(f"| `{name}` | {won.mean():.1%} [{lo:.1%}, {hi:.1%}] | {mean_interval(got)} | "
              f"{diff} | {seconds:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
