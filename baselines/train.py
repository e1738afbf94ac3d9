"""Train MaskablePPO or masked DQN on the single-agent Gymnasium view of a game.

    python -m baselines.train --env thirty_one_v0 --algo maskable_ppo --opponent greedy
    python -m baselines.train --env palace_v0 --algo dqn --opponent self --mix heuristic:0.3
    python -m baselines.train --resume runs/thirty_one_v0/maskable_ppo-greedy-seed0-...

Writes a run folder under ``--runs`` (default ``runs/``): config.json (every setting and
hyperparameter), command.txt, versions.json, checkpoints/ (model, replay buffer for DQN,
self-play state, written atomically every ``eval_freq`` steps and on Ctrl-C), curve.csv
(the learning curve: evaluation against the opponent at every checkpoint), model.zip +
model.json (the final model) and eval.json (the final evaluation against every rule agent).
``--resume RUN_DIR`` continues an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import set_random_seed
from stable_baselines3.common.vec_env import DummyVecEnv

from baselines.common import (
    BUDGETS,
    Run,
    evaluate_agent,
    game_config,
    hyperparams,
    result_row,
    spec_and_game,
    write_csv,
)
from baselines.selfplay import KingOfTheHill, SelfPlayOpponent, parse_mix
from baselines.shaping import PotentialShaping
from card_envs.core.agents import make_agent
from card_envs.rl.policy_agent import ALGOS, PolicyAgent, algo_class, save_model, write_json

SETTINGS = ("n_envs", "timesteps", "eval_freq", "eval_games", "final_games")
CHECKPOINT = "checkpoints/latest"


def build_config(args: argparse.Namespace) -> dict[str, Any]:
    """Every setting of a run, resolved from the command line and the YAML files."""
    gcfg = game_config(args.env)
    hp = hyperparams(args.algo, gcfg["env"], args.budget)
    settings = {k: hp.pop(k) for k in SETTINGS if k in hp}
    for key in ("timesteps", "n_envs", "eval_freq", "eval_games", "final_games"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    opponent = args.opponent or gcfg["opponent"]
    if isinstance(opponent, list):
        opponent = ",".join(opponent)
    spec, game = spec_and_game(gcfg["env"], gcfg["env_kwargs"])
    if opponent == "self" and game.num_players == 1:
        raise ValueError(f"{spec.env_name} has one player: there is no self-play")
    if opponent not in ("self", "solo"):
        for name in opponent.split(","):
            make_agent(spec, name, game)  # an unknown name fails here, before any run folder
    return {
        "env": gcfg["env"],
        "setting": gcfg["setting"],
        "algo": args.algo,
        "opponent": opponent,
        "mix": args.mix if args.mix is not None else gcfg.get("mix"),
        "teammate": gcfg.get("teammate"),
        "seed": args.seed,
        "budget": args.budget,
        "env_kwargs": gcfg["env_kwargs"],
        "obs_encoding": args.obs_encoding or gcfg.get("obs_encoding", "default"),
        "eval_opponents": gcfg["eval_opponents"],
        "duplicate": gcfg["duplicate"],
        "team": gcfg["team"],
        "shaping": gcfg.get("shaping"),
        **settings,
        "hyperparams": hp,
    }


class Trainer:
    """Builds the environments, the model and the self-play state of one run."""

    def __init__(self, run: Run):
        self.run = run
        cfg = self.cfg = run.config
        self.spec, self.game = spec_and_game(cfg["env"], cfg["env_kwargs"])
        self.encoder = self.spec.encoders[cfg["obs_encoding"]](self.game)
        self.dict_obs = cfg["algo"] == "dqn"
        set_random_seed(cfg["seed"])
        th.set_num_threads(1)
        self.hill: KingOfTheHill | None = None
        self.env = DummyVecEnv([self._env_fn(i) for i in range(cfg["n_envs"])])
        self.model = self._make_or_load_model()

    def _opponents(self, index: int) -> list:
        """The other seats, relative to the learner (see SingleAgentEnv)."""
        cfg, n = self.cfg, self.game.num_players
        out = []
        for offset in range(1, n):
            teammate = n > 2 and offset % 2 == 0 and cfg["teammate"] == "self"
            if cfg["opponent"] == "self" or teammate:
                mix, fraction = (None, 0.0) if teammate else parse_mix(cfg["mix"])
                out.append(
                    SelfPlayOpponent(
                        self._hill(), mix, fraction, seed=cfg["seed"] * 100 + index * 10 + offset
                    )
                )
            else:
                # a list of opponents is spread over the vectorized environments
                names = cfg["opponent"].split(",")
                out.append(make_agent(self.spec, names[index % len(names)], self.game))
        return out

    def _hill(self) -> KingOfTheHill:
        if self.hill is None:
            if self.game.num_players < 2:
                raise ValueError(f"{self.cfg['env']} has one player: there is no self-play")
            self.hill = KingOfTheHill(
                self.spec,
                self.game,
                self.encoder,
                self.cfg["algo"],
                seed=self.cfg["seed"],
                team=self.cfg["team"],
            )
        return self.hill

    def _env_fn(self, index: int):
        cfg = self.cfg
        gym_env = self.spec.factories()[2]

        def make():
            env = gym_env(**cfg["env_kwargs"], obs_encoding=cfg["obs_encoding"],
                          opponent=self._opponents(index), dict_obs=self.dict_obs)
            shaping = cfg.get("shaping")
            if shaping:
                gamma = cfg["hyperparams"].get("gamma", 0.99)
                env = PotentialShaping(env, shaping["potential"], shaping.get("scale", 1.0), gamma)
            return env

        return make

    def _make_or_load_model(self):
        cfg = self.cfg
        cls = algo_class(cfg["algo"])
        latest = self.run.path / f"{CHECKPOINT}.zip"
        if latest.exists():
            model = cls.load(latest, env=self.env, device="cpu")
            replay = self.run.path / "checkpoints" / "replay.pkl"
            if cfg["algo"] == "dqn" and replay.exists():
                model.load_replay_buffer(replay)
        else:
            policy = "MaskedDQNPolicy" if cfg["algo"] == "dqn" else "MlpPolicy"
            model = cls(
                policy, self.env, seed=cfg["seed"], device="cpu", verbose=0, **cfg["hyperparams"]
            )
        if self.hill is not None:
            self.hill.crown(model.policy)  # the first king is the untrained learner
            king = self.run.path / "checkpoints" / "king.pt"
            if king.exists():
                self.hill.load(king)
        return model


class CurveAndCheckpoints(BaseCallback):
    """Every ``eval_freq`` steps: evaluate, extend curve.csv, run the king-of-the-hill
    tournament, and checkpoint. Also checkpoints when training is interrupted."""

    def __init__(self, trainer: Trainer, stop_at: int | None = None):
        super().__init__()
        self.trainer = trainer
        self.cfg = trainer.cfg
        self.rows = trainer.run.curve()
        self.next_eval = (self.rows[-1]["timesteps"] if self.rows else 0) + self.cfg["eval_freq"]
        self.stop_at = stop_at
        latest = trainer.run.path / f"{CHECKPOINT}.json"
        self.wall_before = (
            json.loads(latest.read_text()).get("wall_s", 0.0) if latest.exists() else 0.0
        )
        self.started = time.time()
        # PPO trains between rollouts: a checkpoint is only whole at a rollout's start.
        self.on_policy = self.cfg["algo"] == "maskable_ppo"
        self.rollout_start = trainer.model.num_timesteps

    def _on_rollout_start(self) -> None:
        self.rollout_start = self.num_timesteps
        if self.on_policy and self.num_timesteps >= self.next_eval:
            self.evaluate_and_save()

    def _on_step(self) -> bool:
        if not self.on_policy and self.num_timesteps >= self.next_eval:
            self.evaluate_and_save()
        if self.stop_at is not None and self.num_timesteps >= self.stop_at:
            raise KeyboardInterrupt  # a test's stand-in for Ctrl-C
        return True

    def wall(self) -> float:
        return self.wall_before + time.time() - self.started

    def checkpoint_on_interrupt(self) -> None:
        """Save what is whole: PPO drops its unfinished rollout (it is collected again)."""
        if self.on_policy:
            self.trainer.model.num_timesteps = self.rollout_start
        self.save_checkpoint()

    def evaluate_and_save(self) -> None:
        t = self.trainer
        steps = t.model.num_timesteps
        while self.next_eval <= steps:
            self.next_eval += self.cfg["eval_freq"]
        agent = PolicyAgent(t.game, t.encoder, t.model.policy, self.cfg["algo"], True, "model")
        opponent = self.cfg["opponent"].split(",")[0]
        if opponent == "self":
            opponent = t.spec.strongest_agent
        result = evaluate_agent(
            t.spec,
            t.game,
            agent,
            opponent,
            self.cfg["eval_games"],
            seed=10_000 + len(self.rows),
            duplicate=self.cfg["duplicate"],
            team=self.cfg["team"],
        )
        row = {"timesteps": steps, "wall_s": round(self.wall(), 1)}
        full = result_row(result, opponent)
        for key in (
            "opponent",
            "wins_rate",
            "draws_rate",
            "losses_rate",
            "mean_payoff",
            "mean_score",
        ):
            if key in full:
                row[key] = full[key]
        if t.hill is not None:
            record = t.hill.tournament(t.model.policy, steps)
            row["king_reign"] = record["reign"]
        self.rows.append(row)
        self.save_checkpoint()

    def save_checkpoint(self) -> None:
        t, path = self.trainer, self.trainer.run.path
        meta = checkpoint_meta(self.cfg, t.model.num_timesteps)
        meta["wall_s"] = round(self.wall(), 1)
        save_model(t.model, path / CHECKPOINT, meta)
        if self.cfg["algo"] == "dqn":
            tmp = path / "checkpoints" / "replay.tmp.pkl"
            t.model.save_replay_buffer(tmp)
            tmp.replace(path / "checkpoints" / "replay.pkl")
        if t.hill is not None:
            t.hill.save(path / "checkpoints" / "king.pt")
        write_csv(path / "curve.csv", self.rows)


def checkpoint_meta(cfg: dict[str, Any], timesteps: int) -> dict[str, Any]:
    """The metadata saved beside a model: what it needs to be loaded and used."""
    return {
        "env": cfg["env"],
        "setting": cfg["setting"],
        "algo": cfg["algo"],
        "game_args": cfg["env_kwargs"],
        "obs_encoding": cfg["obs_encoding"],
        "timesteps": timesteps,
        "opponent": cfg["opponent"],
        "seed": cfg["seed"],
    }


def final_evaluation(trainer: Trainer, games: int, seed: int = 0) -> list[dict[str, Any]]:
    """The trained model (greedy) against every evaluation opponent, as result rows."""
    cfg = trainer.cfg
    agent = PolicyAgent(
        trainer.game, trainer.encoder, trainer.model.policy, cfg["algo"], True, "model"
    )
    rows = []
    for opponent in cfg["eval_opponents"]:
        result = evaluate_agent(
            trainer.spec, trainer.game, agent, opponent, games, seed, cfg["duplicate"], cfg["team"]
        )
        rows.append(result_row(result, opponent))
        print(result.summary(), flush=True)
    return rows


def train(run: Run, progress: bool = True, stop_at: int | None = None) -> int:
    """Train (or continue) a run to its step budget, then save and evaluate the model."""
    trainer = Trainer(run)
    cfg = trainer.cfg
    callback = CurveAndCheckpoints(trainer, stop_at)
    done = trainer.model.num_timesteps
    remaining = cfg["timesteps"] - done
    print(
        f"{run.path}: {cfg['algo']} on {cfg['env']} vs {cfg['opponent']}, "
        f"{done}/{cfg['timesteps']} steps done",
        flush=True,
    )
    if remaining > 0:
        try:
            trainer.model.learn(
                remaining, callback=callback, progress_bar=progress, reset_num_timesteps=done == 0
            )
        except KeyboardInterrupt:
            callback.checkpoint_on_interrupt()
            print(
                f"\ninterrupted at {trainer.model.num_timesteps} steps; checkpoint saved. "
                f"Continue with: python -m baselines.train --resume {run.path}"
            )
            return 130
        if trainer.model.num_timesteps > (callback.rows[-1]["timesteps"] if callback.rows else 0):
            callback.evaluate_and_save()
    meta = checkpoint_meta(cfg, trainer.model.num_timesteps)
    meta["wall_s"] = round(callback.wall(), 1)
    save_model(trainer.model, run.path / "model", meta)
    rows = final_evaluation(trainer, cfg["final_games"])
    write_json(
        run.path / "eval.json",
        {"timesteps": trainer.model.num_timesteps, "wall_s": meta["wall_s"], "results": rows},
    )
    print(f"model: {run.path / 'model.zip'}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m baselines.train", description=__doc__.split("\n")[0]
    )
    p.add_argument("--env", help="env name (thirty_one_v0) or a setting of configs/games.yaml")
    p.add_argument("--algo", choices=ALGOS, default="maskable_ppo")
    p.add_argument("--opponent", help="agent name, model:PATH, best, or self; several names "
                   "separated by commas are spread over the environments (default: per game)")
    p.add_argument("--mix", help="self-play: AGENT:FRACTION of opponent seats played by AGENT")
    p.add_argument("--timesteps", type=int, help="training steps (default: the budget's)")
    p.add_argument("--budget", choices=BUDGETS, default="full", help="which YAML budget to use")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-envs", dest="n_envs", type=int)
    p.add_argument("--eval-freq", dest="eval_freq", type=int, help="steps between checkpoints")
    p.add_argument(
        "--eval-games", dest="eval_games", type=int, help="games per learning-curve point"
    )
    p.add_argument(
        "--final-games",
        dest="final_games",
        type=int,
        help="games per opponent in the final evaluation",
    )
    p.add_argument("--obs-encoding", dest="obs_encoding",
                   help="observation encoding (default: the setting's, else 'default')")
    p.add_argument("--runs", default="runs", help="folder for run folders")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--stop-at", type=int, help=argparse.SUPPRESS)  # tests: interrupt here
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.resume:
        run = Run(Path(args.resume))
        if not (run.path / "config.json").exists():
            print(f"error: {run.path} is not a run folder", file=sys.stderr)
            return 2
    else:
        if not args.env:
            print("error: --env is required (or --resume RUN_DIR)", file=sys.stderr)
            return 2
        try:
            config = build_config(args)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        command = shlex.join([sys.executable, "-m", "baselines.train", *(argv or sys.argv[1:])])
        run = Run.create(Path(args.runs), config, command)
    return train(run, progress=not args.no_progress, stop_at=args.stop_at)


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    sys.exit(main())
