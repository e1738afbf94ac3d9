"""Labels per second: the scalar search agent against batched PIMC on the same positions.

Expert iteration (baselines/expert_iteration.py) asks a search agent for its move at every
position the network reaches. This benchmark collects ``--positions`` positions of Palace (a
seat to act with a choice to make, drawn at random from games of ``heuristic`` players) and
labels them: by the scalar search agent ``ismcts:BUDGET`` (PIMC, one position at a time)
and by ``BatchedPIMC`` with ``--worlds`` worlds (card_envs.core.batched_search), ``--batch``
positions per call (its worlds played out on the batched twin), with every world sampled by
``sample_world`` and loaded, then with a view's first world sampled and the others dealt again
inside the twin (``redeal_hidden``). Each gets a warm-up call first (the twin's compiled code
loads from numba's cache, or compiles), then the agents are timed in turn ``--repeats`` times
(on a shared machine the load changes alike for all) and the fastest of each is kept. It prints
a markdown table (agent, positions, playouts a label, seconds, labels per second, ratio to the
scalar search) with the threads numba and torch may use and the machine's load, and how often
the labels agree with the scalar search's. Batched PIMC plays every candidate out on every
world (the scalar search spreads its budget over the candidates, halving them), so at equal
worlds it plays several times the scalar's playouts; ``--few-worlds`` adds rows at about the
scalar's playouts.

``--game ninety_eight_cards`` does the same for 98 Cards (``--rules original`` for the
source's rules), from games of ``expert``: its scalar ``ismcts:BUDGET`` is not PIMC (it scores
the expert's few best plans of the turn by the best next turn over BUDGET sampled draws, so
the table has no playouts for it), and batched PIMC plays the first moves of those plans out
to the end of the game on each world with the twin's ``expert``, valued by the cards played: a
costlier and a different label, whose strength says what it is worth (docs/policies.md).

Run: ``nice -n 10 python benchmarks/label_speed.py`` (``--help`` for options), e.g.
``python benchmarks/label_speed.py --game ninety_eight_cards --budget 4 --worlds 8
--few-worlds 4 --batch 128 --positions 128``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import card_envs  # noqa: F401  (registers the games)
from card_envs.core.agents import make_agent
from card_envs.core.batched_search import BatchedPIMC
from card_envs.registry import load_spec

# the rule agent whose games the positions come from, by game (its strongest)
PLAYERS = {"palace": "heuristic", "ninety_eight_cards": "expert"}


def positions(game, spec, count: int, seed: int) -> list:
    """``count`` views of a seat to act with at least two legal moves, drawn at random from the
    positions of games of the game's strongest rule agent (``PLAYERS``; each view of its own
    copy of the state: a view reads its state's arrays)."""
    rng = np.random.default_rng(seed)
    agent = make_agent(spec, PLAYERS[spec.name], game)
    pool: list = []
    g = 0
    while len(pool) < 4 * count:
        s = game.init(np.random.default_rng([seed, g]))
        while not s.done:
            view = game.view(s, s.player)
            if view.legal.sum() > 1:
                pool.append(game.view(s.copy(), s.player))
            game.apply(s, agent.act(view, rng), rng)
        g += 1
    picked = rng.choice(len(pool), count, replace=False)
    return [pool[i] for i in picked]


def threads() -> str:
    """The threads numba and torch may use (torch: if installed; nothing here uses it)."""
    import numba

    out = f"numba threads {numba.get_num_threads()}"
    try:
        import torch

        out += f", torch threads {torch.get_num_threads()}"
    except ImportError:
        out += ", torch not installed"
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=sorted(PLAYERS), default="palace")
    parser.add_argument("--players", type=int, default=3, help="Palace's players")
    parser.add_argument("--rules", default="standard", help="98 Cards' rules")
    parser.add_argument("--positions", type=int, default=256)
    parser.add_argument("--budget", type=int, default=25, help="the scalar search's playouts")
    parser.add_argument("--worlds", type=int, default=25, help="batched PIMC's worlds a view")
    parser.add_argument("--few-worlds", type=int, nargs="*", default=[6],
                        help="fewer worlds, dealt in the twin, at the largest batch (6 worlds: "
                             "about the scalar search's playouts a label)")
    parser.add_argument("--batch", type=int, nargs="+", default=[64, 256],
                        help="positions per batched call (one row of the table each)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timings of each agent, in turn; the table keeps the fastest")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    spec = load_spec(args.game)
    game = (spec.make_game(num_players=args.players) if args.game == "palace"
            else spec.make_game(rules=args.rules))
    views = positions(game, spec, args.positions, args.seed)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())

    scalar = make_agent(spec, f"ismcts:{args.budget}", game)
    scalar.act(views[0], np.random.default_rng(0))  # warm-up
    played = [0]  # the scalar search's playouts (one candidate on one world each), if PIMC
    play = getattr(getattr(scalar, "searcher", None), "_play", None)

    def counted(*a, **k):
        played[0] += 1
        return play(*a, **k)

    if play is not None:
        scalar.searcher._play = counted

    def label_scalar() -> tuple[np.ndarray, float]:
        rng = np.random.default_rng(args.seed + 1)
        played[0] = 0
        return (np.array([scalar.act(v, rng) for v in views]),
                played[0] / len(views) if play is not None else np.nan)

    agents = [(f"`ismcts:{args.budget}` (the scalar search, one position a call)", label_scalar)]
    runs = [(args.worlds, False, b) for b in args.batch]
    runs += [(args.worlds, True, b) for b in args.batch]
    runs += [(w, True, max(args.batch)) for w in args.few_worlds]
    for worlds, twin_worlds, batch in runs:
        pimc = BatchedPIMC(spec, game, worlds=worlds, twin_worlds=twin_worlds)
        pimc.decide(views[:batch], np.random.default_rng(0))  # warm-up: compile, allocate

        def label_batched(pimc=pimc, batch=batch) -> tuple[np.ndarray, float]:
            rng = np.random.default_rng(args.seed + 1)
            out, valued = [], 0
            for k in range(0, len(views), batch):
                actions, values = pimc.decide(views[k:k + batch], rng)
                out.append(actions)
                valued += int(np.isfinite(values).sum())
            return np.concatenate(out), valued * pimc.worlds / len(views)

        how = "the worlds dealt in the twin" if twin_worlds else "every world by sample_world"
        agents.append((f"batched PIMC, {worlds} worlds ({how}), {batch} positions a call",
                       label_batched))
    seconds: dict[str, list[float]] = {name: [] for name, _ in agents}
    labels, playouts = {}, {}
    for _ in range(args.repeats):  # the agents in turn, each repeat: a shared machine's load
        for name, label in agents:  # changes alike for all
            start = time.perf_counter()
            labels[name], playouts[name] = label()
            seconds[name].append(time.perf_counter() - start)
    base_name = agents[0][0]
    base_seconds = min(seconds[base_name])

    what = (f"Palace, {args.players} players" if args.game == "palace"
            else f"98 Cards, {args.rules} rules")
    print(f"{what}: {len(views)} positions (a choice to make, from games of "
          f"`{PLAYERS[args.game]}`, seed {args.seed}); {threads()}; load average "
          f"{load} (before) / {' '.join(f'{x:.2f}' for x in os.getloadavg())} (after); "
          f"{os.cpu_count()} cores; each agent timed {args.repeats} times in turn\n")
    print("| agent | positions | playouts a label | seconds (best of repeats) | labels/s | "
          "ratio | same label as the scalar |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in agents:
        best = min(seconds[name])
        same = "" if name == base_name else f"{np.mean(labels[name] == labels[base_name]):.1%}"
        shown = "-" if np.isnan(playouts[name]) else f"{playouts[name]:.0f}"
        print(f"| {name} | {len(views)} | {shown} | {best:.2f} | "
              f"{len(views) / best:.0f} | {base_seconds / best:.2f}x | {same} |")


if __name__ == "__main__":
    main()
