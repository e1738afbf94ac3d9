"""How often a Literature agent asks an opponent for a card that opponent is known to lack.

    python -m baselines.literature_asks random cautious best model:runs/.../model.zip --games 200

Such an ask is hopeless by the asker's own knowledge (its view's tables say the opponent
lacks the card) and hands the turn to the other team. For each agent this plays ``--games``
games of its team against ``--opponent`` teams (the agent in every seat of its team), and
prints the share of its asks that were hopeless. A plain-MLP policy has to learn this once per
ask action; the per-action heads of card_envs.rl.action_heads learn it once for all.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from card_envs.core.agents import make_agent
from card_envs.literature.deck import NUM_CARDS
from card_envs.registry import load_spec


def hopeless_share(agent_name: str, opponent: str, games: int, seed: int,
                   game_args: dict) -> tuple[int, int, float]:
    """(hopeless asks, asks, share) of ``agent_name``'s team over ``games`` games."""
    spec = load_spec("literature_v0")
    game = spec.make_game(**game_args)
    n = game.num_players
    hopeless = asks = 0
    for g in range(games):
        rng = np.random.default_rng([seed, g])
        mine = g % 2  # the agent's team alternates between the two
        agents = [make_agent(spec, agent_name if p % 2 == mine else opponent, game)
                  for p in range(n)]
        s = game.init(rng)
        while not s.done:
            p = s.player
            view = game.view(s, p)
            action = agents[p].act(view, rng)
            if p % 2 == mine and action < game.num_asks:
                j, card = divmod(action, NUM_CARDS)
                asked = game.opponent(p, j)
                asks += 1
                hopeless += bool(view.lacks()[asked, card])
            game.apply(s, int(action), rng)
    return hopeless, asks, hopeless / max(asks, 1)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baselines.literature_asks",
                                description=__doc__.split("\n")[0])
    p.add_argument("agents", nargs="+", help="agent names (random, cautious, best, model:PATH)")
    p.add_argument("--opponent", default="cautious")
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--rules", default="original", choices=("original", "standard"))
    args = p.parse_args(argv)
    game_args = {"rules": args.rules}
    for name in args.agents:
        try:
            bad, total, share = hopeless_share(name, args.opponent, args.games, args.seed,
                                               game_args)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"{name}: {bad} of {total} asks hopeless ({share:.1%}), {args.games} games "
              f"against {args.opponent}, rules={args.rules}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
