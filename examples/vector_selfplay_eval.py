"""A shipped model against a rule agent over 10,000 games played at once (the batched twin).

The model (``card_envs/rl/models/simple_tricks_v0.zip``, MaskablePPO) and the rule agent are the
two players of ``card_envs.vector.selfplay.play``: every step, each takes the games where its
seat is to act, the model as one batched forward pass over their observations. Seats rotate
over the games. Prints the model's wins, draws and losses with a 95% Wilson interval.

    python examples/vector_selfplay_eval.py [--games 10000] [--opponent first_play]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch as th

from card_envs import vector
from card_envs.core.evaluation import wilson
from card_envs.rl.policy_agent import load_policy, shipped_model
from card_envs.vector.selfplay import Player, play, rule_agent


def model_player(path, engine) -> Player:
    """A player of a saved MaskablePPO model: its most likely legal action, batched."""
    policy, meta = load_policy(path)
    if meta["env"] != f"{engine.name}_v0":
        raise ValueError(f"{path} was trained on {meta['env']}, not {engine.name}")

    def act(obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, state) -> np.ndarray:
        with th.no_grad():
            obs_t = th.as_tensor(obs)
            features = policy.extract_features(obs_t, policy.pi_features_extractor)
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features)).numpy()
        return np.where(mask != 0, logits, -np.inf).argmax(axis=1)

    return Player(act, encoding=meta.get("obs_encoding", "default"), name=f"model:{path.stem}")


def main(games: int = 10_000, opponent: str = "first_play", seed: int = 0) -> dict:
    engine = vector.make("simple_tricks")
    path = shipped_model("simple_tricks_v0", engine.game)
    if path is None:
        raise SystemExit("no shipped model for simple_tricks_v0")
    th.set_num_threads(1)
    players = [model_player(path, engine), rule_agent(engine, opponent)]
    start = time.perf_counter()
    payoffs = play(engine, players, games, seed=seed)
    seconds = time.perf_counter() - start
    mine = payoffs[:, 0]
    wins, draws, losses = int((mine > 0).sum()), int((mine == 0).sum()), int((mine < 0).sum())
    low, high = wilson(wins, games)
    print(f"{players[0].name} vs {opponent}: {games} games in {seconds:.2f} s "
          f"({games / seconds:,.0f} games/s), seats rotated")
    print(f"wins {wins} ({wins / games:.1%}, 95% CI {low:.1%}-{high:.1%}), draws {draws}, "
          f"losses {losses}; mean payoff {mine.mean():+.3f}")
    return {"wins": wins, "draws": draws, "losses": losses, "seconds": seconds}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--opponent", default="first_play")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(args.games, args.opponent, args.seed)
