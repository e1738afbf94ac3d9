"""Expert iteration (DAgger): the model plays, an expert labels every position it reaches,
the model learns all the labels so far; repeat.

    python -m baselines.expert_iteration best --env simple_tricks_v0 --expert solver \\
        --opponent solver,heuristic --rounds 3 --decisions 40000 --out runs/dagger/st.zip

Imitation before reinforcement (``pretrain``, baselines/imitation.py) learns from the positions
the expert reaches itself; a network that then plays on its own meets positions the expert
never showed it. Here the network's own games decide which positions get labelled (Ross, Gordon
and Bagnell, 2011): each round plays ``--decisions`` decisions of the model in the learner's
seat of scalar games against ``--opponent`` (a name, or several spread over the games; ``solo``
for a one-player game), asks the expert for its move in every one of those positions (it reads
the seat's view, as every agent does), then fits the policy to every label collected so far
(``imitation.fit``: masked cross-entropy, the value head to the returns of the model's own
games). Each round prints how often the model already agreed with the expert on the new
positions. An expert with ``best_moves(view)`` (simple tricks' ``solver``: equal cards tie;
Literature's rule agents: the moves they pick among at random) labels each position with all
its best moves, and the policy learns to play any of them. The result is a model.zip with its
model.json, playable as ``model:PATH``. MaskablePPO models only.

``--expert batched-pimc:W`` is the game's search (PIMC over W worlds sampled from each view)
with its playouts on the game's batched twin (card_envs.core.batched_search): at every step
of the ``n_envs`` games it labels all their positions in one search, instead of one scalar
search per game.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch as th
from stable_baselines3.common.vec_env import DummyVecEnv

from baselines.evaluate import resolve_model
from baselines.imitation import batch_actor, collect, fit, greedy_actions, scalar_actor
from card_envs.core.agents import make_agent
from card_envs.core.make import factories
from card_envs.rl.policy_agent import algo_class, save_model


def play_and_label(model, spec, meta: dict, opponents: list[str], expert: str,
                   decisions: int, gamma: float, seed: int, n_envs: int = 8
                   ) -> dict[str, np.ndarray]:
    """``decisions`` decisions of ``model`` (greedy) in the learner's seat of scalar games
    against ``opponents`` (``n_envs`` games each), each labelled with ``expert``'s move (a
    ``batched-pimc:W`` expert labels every game's position of a step in one batched search)."""
    gym_env = factories(spec).gym
    kwargs = {**meta.get("game_args", {}), "obs_encoding": meta.get("obs_encoding", "default")}
    venv = DummyVecEnv([lambda o=o: gym_env(**kwargs, **({} if o == "solo" else {"opponent": o}))
                        for o in opponents for _ in range(n_envs)])
    venv.seed(seed)

    def player(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return model.predict(obs, action_masks=masks, deterministic=True)[0]

    envs = [e.unwrapped for e in venv.envs]
    game = envs[0].game
    judge = make_agent(spec, expert, game)
    best = None
    if hasattr(judge, "best_moves"):  # an expert with ties (solver, Literature's agents)
        def best() -> np.ndarray:
            out = np.zeros((len(envs), game.num_actions), bool)
            for i, env in enumerate(envs):
                out[i, judge.best_moves(game.view(env.game_state, env.acting))] = True
            return out

    # an expert that labels many positions in one call (batched PIMC) takes every game's
    actor = (batch_actor(venv, judge, seed) if hasattr(judge, "act_many")
             else scalar_actor(venv, expert, seed))
    return collect(venv, actor, decisions, gamma, player=player, best=best)


def anchor(data: dict[str, np.ndarray], played: np.ndarray, after: int) -> np.ndarray:
    """Relabel (in place) the decisions from the ``after``-th of each game on with the move
    the model played there, so that the fit keeps what it does late in a game and learns
    the expert's moves only before; returns which decisions keep the expert's labels."""
    late = data["turn"] >= after
    data["actions"][late] = played[late]
    if "best" in data:
        data["best"][late] = False
        data["best"][late, played[late]] = True
    return ~late


def refine(model, spec, meta: dict, expert: str, opponents: list[str], rounds: int,
           decisions: int, epochs: int, seed: int = 0, label: str = "", lr: float = 1e-3,
           value_weight: float = 0.5, anchor_after: int | None = None,
           n_envs: int = 8) -> list[dict]:
    """``rounds`` rounds of expert iteration on ``model`` (in place); one line and one
    record per round (how often the model already agreed on the new positions).
    ``value_weight`` weighs the critic's loss in the fit (0: the actor alone);
    ``anchor_after``: only each game's first decisions get the expert's labels (``anchor``);
    ``n_envs``: games played side by side per opponent (a batched expert labels them all in
    one call a step)."""
    gamma = float(model.gamma)
    data: dict[str, np.ndarray] | None = None
    out = []
    for r in range(rounds):
        new = play_and_label(model, spec, meta, opponents, expert, decisions, gamma,
                             seed=seed * 1000 + r, n_envs=n_envs)
        played = greedy_actions(model.policy, th.as_tensor(new["obs"]),
                                th.as_tensor(new["masks"])).numpy()
        same = (new["best"][np.arange(len(played)), played] if "best" in new
                else played == new["actions"])
        labelled = (np.ones(len(played), bool) if anchor_after is None
                    else anchor(new, played, anchor_after))
        agreed = float(np.mean(same[labelled])) if labelled.any() else 1.0
        data = new if data is None else {k: np.concatenate([data[k], new[k]]) for k in data}
        stats = fit(model.policy, data, epochs, lr=lr, seed=seed + r,
                    value_weight=value_weight)
        out.append({"round": r + 1, "labels": len(data["actions"]),
                    "agreed_before_fit": round(agreed, 4),
                    "accuracy_after_fit": round(stats["accuracy"], 4)})
        print(f"{label}round {r + 1}: the model agreed with {expert} on {agreed:.1%} of "
              f"{len(new['actions']):,} new positions; after fitting all "
              f"{len(data['actions']):,} labels, on {stats['accuracy']:.1%}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m baselines.expert_iteration",
                                description=__doc__.split("\n")[0])
    p.add_argument("model", help="model.zip (MaskablePPO, with its model.json) or 'best'")
    p.add_argument("--env", required=True, help="env name, e.g. simple_tricks_v0")
    p.add_argument("--expert", required=True,
                   help="the agent whose moves are the labels (batched-pimc:W: the game's "
                        "search over W worlds on its batched twin, a step's positions at once)")
    p.add_argument("--opponent", default="random",
                   help="agent name(s) the model plays against, comma-separated")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--decisions", type=int, default=40000, help="new labels per round")
    p.add_argument("--epochs", type=int, default=5, help="passes over all labels per round")
    p.add_argument("--lr", type=float, default=1e-3, help="the fit's learning rate (Adam)")
    p.add_argument("--value-weight", type=float, default=0.5,
                   help="the critic's loss weight in the fit (0: fit the actor alone)")
    p.add_argument("--anchor-after", type=int, default=None, metavar="K",
                   help="label only each game's first K decisions with the expert's moves; "
                        "later ones keep the model's own (default: label all)")
    p.add_argument("--n-envs", type=int, default=8,
                   help="games played side by side per opponent (a batched-pimc expert labels "
                        "a step of all of them in one search)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="where to write the new model.zip")
    args = p.parse_args(argv)
    try:
        spec, path, meta = resolve_model(args.env, args.model)
        if meta["algo"] != "maskable_ppo":
            raise ValueError(f"{path} is a {meta['algo']} model; expert iteration takes "
                             "maskable_ppo models")
        opponents = args.opponent.split(",")
        game = spec.make_game(**meta.get("game_args", {}))
        for name in (args.expert, *[o for o in opponents if o != "solo"]):
            make_agent(spec, name, game)  # an unknown name fails here, naming the choices
        for name in ("rounds", "decisions", "epochs", "anchor_after", "n_envs"):
            if getattr(args, name) is not None and getattr(args, name) < 1:
                flag = name.replace("_", "-")
                raise ValueError(f"--{flag} must be at least 1, got {getattr(args, name)}")
        if args.value_weight < 0:
            raise ValueError(f"--value-weight must be at least 0, got {args.value_weight}")
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    th.set_num_threads(1)
    model = algo_class("maskable_ppo").load(path, device="cpu")
    rounds = refine(model, spec, meta, args.expert, opponents, args.rounds, args.decisions,
                    args.epochs, args.seed, lr=args.lr, value_weight=args.value_weight,
                    anchor_after=args.anchor_after, n_envs=args.n_envs)
    out = Path(args.out).with_suffix(".zip")
    meta = {**meta, "expert_iteration": {"from": str(path), "expert": args.expert,
                                         "opponents": opponents, "rounds": rounds,
                                         "epochs": args.epochs, "lr": args.lr,
                                         "value_weight": args.value_weight,
                                         "anchor_after": args.anchor_after,
                                         "n_envs": args.n_envs, "seed": args.seed}}
    save_model(model, out.with_suffix(""), meta, for_play=True)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
