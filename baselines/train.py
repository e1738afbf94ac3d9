"""Train MaskablePPO or masked DQN on the single-agent Gymnasium view of a game.

    python -m baselines.train --env thirty_one_v0 --algo maskable_ppo --opponent greedy
    python -m baselines.train --env palace_v0 --algo dqn --opponent self --mix heuristic:0.3
    python -m baselines.train --resume runs/thirty_one_v0/maskable_ppo-greedy-seed0-...

Writes a run folder under ``--runs`` (default ``runs/``): config.json (every setting and
hyperparameter), command.txt, versions.json, checkpoints/ (model, replay buffer for DQN,
self-play state, written atomically every ``eval_freq`` steps and on Ctrl-C), curve.csv
(the learning curve: evaluation against the opponent at every checkpoint), model.zip +
model.json (the final model, kept to play: without the optimizer's state and the last
training step, which only the checkpoints keep) and eval.json (the final evaluation
against every rule agent).
``--resume RUN_DIR`` continues an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import LinearSchedule, set_random_seed

from baselines.common import Run, keep_freed_memory, result_row, write_csv
from baselines.config import BUDGETS, DEVICES, build_config, spec_and_game
from baselines.envs import (
    ConcatVecEnv,
    batched_part,
    opponent_shares,
    scalar_env,
    uses_twin,
    wrap,
)
from baselines.evaluation import evaluate
from baselines.selfplay import (
    LearnerTeammate,
    LiveLearner,
    PoolOpponent,
    PoolPlayer,
    SnapshotPool,
    learner_player,
    model_player,
    parse_mix,
)
from card_envs.core.agents import make_agent
from card_envs.core.gym_env import LEARNER, teammate_places
from card_envs.core.make import factories, make_batched
from card_envs.registry import load_spec
from card_envs.rl.policy_agent import ALGOS, PolicyAgent, algo_class, save_model, write_json
from card_envs.rl.rollout import keep_rollout_facts

# activation_fn names in policy_kwargs
ACTIVATIONS = {"relu": th.nn.ReLU, "tanh": th.nn.Tanh}
CHECKPOINT = "checkpoints/latest"
BEST = "checkpoints/best"


class InitFromError(ValueError):
    """``--init-from``'s weights do not fit the run's network (raised before any training)."""


class Trainer:
    """Builds the environments, the model and the self-play state of one run."""

    def __init__(self, run: Run, demonstrations: Path | None = None):
        self.run = run
        self.demonstrations = demonstrations  # where scalar-collected demonstrations are shared
        cfg = self.cfg = run.config
        # the run's device (--device; runs from before it trained on the CPU)
        self.device = cfg.get("device", "cpu")
        self.spec, self.game = spec_and_game(cfg["env"], cfg["env_kwargs"])
        self.encoder = self.spec.encoders[cfg["obs_encoding"]](self.game)
        set_random_seed(cfg["seed"])
        # one thread: on a few cores torch's own threads fight the env and each other
        th.set_num_threads(int(cfg.get("torch_threads", 1)))
        keep_freed_memory()
        # torch.distributions checks every distribution's arguments (MaskablePPO makes two a
        # minibatch): a third of the masked distribution's time, for inputs that are ours
        th.distributions.Distribution.set_default_validate_args(False)
        self.learner = LiveLearner()
        self.pool: SnapshotPool | None = None
        self.batched = uses_twin(cfg)
        self.engine = (make_batched(self.spec, **{**self.spec.gym_defaults, **cfg["env_kwargs"]})
                       if self.batched else None)
        self.base = self._base_env()
        self.env = wrap(self.base, cfg)
        self.model = self._make_or_load_model()
        # per-action PPO: the rollout's facts serve the update (card_envs/rl/rollout.py)
        keep_rollout_facts(self.model)

    def _base_env(self):
        """The game's twin (one batched env per training opponent), or scalar envs."""
        cfg = self.cfg
        if not self.batched:
            return scalar_env(cfg, self._opponents)
        names = [] if cfg["opponent"] == "solo" else cfg["opponent"].split(",")
        if not names:
            return batched_part(cfg, cfg["n_envs"], None)
        parts = [batched_part(cfg, count, self._batched_seats(name, k))
                 for k, (name, count) in enumerate(opponent_shares(names, cfg["n_envs"]))]
        return parts[0] if len(parts) == 1 else ConcatVecEnv(parts)

    def _batched_seats(self, name: str, part: int) -> list:
        """The other seats of a batched env whose training opponent is ``name``, relative to
        the learner: its teammates played as the learner's own seats (``teammate: learner``)
        or by its current policy (``teammate: self``), the snapshot pool for ``self``, a
        trained model (``best``, ``model:PATH``), or the twin's rule agent."""
        cfg, n, engine = self.cfg, self.game.num_players, self.engine
        mates = teammate_places(self.game)
        seats: list = []
        for offset in range(1, n):
            seed = cfg["seed"] * 100 + part * 10 + offset
            if offset in mates and cfg["teammate"] == "learner":
                seats.append(LEARNER)
            elif offset in mates and cfg["teammate"] == "self":
                seats.append(learner_player(self.learner, cfg["algo"], cfg["obs_encoding"],
                                            seed))
            elif name == "self":
                mix, fraction = parse_mix(cfg["mix"])
                seats.append(PoolPlayer(self._pool(), engine, cfg["obs_encoding"], mix,
                                        fraction, seed=seed).player)
            elif name == "best" or name.startswith("model:"):
                seats.append(model_player(self.spec, name, self.game, seed))
            elif name in engine.agents:
                seats.append(name)
            else:
                raise ValueError(
                    f"opponent {name!r} has no batched form in {self.spec.name}'s twin (its "
                    f"agents: {', '.join(engine.agents)}; also self, best, model:PATH); "
                    "train on the scalar games with --scalar")
        return seats

    def _opponents(self, index: int) -> list:
        """The other seats of scalar env ``index``, relative to the learner (see
        SingleAgentEnv): teammates as in ``_batched_seats`` (``teammate: learner`` or
        ``self``), else the run's opponent. Several opponent names (``a,b``) are spread over
        the environments; ``self`` is the snapshot pool (mixed with a rule agent by ``--mix``)."""
        cfg, n = self.cfg, self.game.num_players
        names = cfg["opponent"].split(",")
        name = names[index % len(names)]
        mates = teammate_places(self.game)
        out = []
        for offset in range(1, n):
            if offset in mates and cfg["teammate"] == "learner":
                out.append(LEARNER)
            elif offset in mates and cfg["teammate"] == "self":
                out.append(LearnerTeammate(self.game, self.encoder, self.learner, cfg["algo"]))
            elif name == "self":
                mix, fraction = parse_mix(cfg["mix"])
                seed = cfg["seed"] * 100 + index * 10 + offset
                out.append(PoolOpponent(self._pool(), mix, fraction, seed=seed))
            else:
                out.append(make_agent(self.spec, name, self.game))
        return out

    def _pool(self) -> SnapshotPool:
        if self.pool is None:
            if self.game.num_players < 2:
                raise ValueError(f"{self.cfg['env']} has one player: there is no self-play")
            self.pool = SnapshotPool(self.spec, self.game, self.encoder, self.cfg["algo"],
                                     seed=self.cfg["seed"], team=self.cfg["team"])
        return self.pool

    def _make_or_load_model(self):
        cfg = self.cfg
        cls = algo_class(cfg["algo"])
        latest = self.run.path / f"{CHECKPOINT}.zip"
        if latest.exists():
            model = cls.load(latest, env=self.env, device=self.device)
            replay = self.run.path / "checkpoints" / "replay.pkl"
            if cfg["algo"] == "dqn" and replay.exists():
                model.load_replay_buffer(replay)
        else:
            policy, hp = policy_and_hyperparams(cfg)
            model = cls(policy, self.env, seed=cfg["seed"], device=self.device, verbose=0, **hp)
            if cfg.get("init_from"):  # start from another model's weights (same network)
                try:
                    model.set_parameters(cfg["init_from"], exact_match=False,
                                         device=self.device)
                except (RuntimeError, ValueError) as err:
                    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
                    # torch lists the misfits after a heading line: show the first one
                    detail = (lines[1:] or lines or [""])[0]
                    raise InitFromError(
                        f"--init-from: {cfg['init_from']}'s network does not fit this run's "
                        f"(another policy, facts or net_arch?): {detail}") from err
            elif cfg.get("pretrain"):
                self._imitate(model)
        self.learner.policy = model.policy
        if self.pool is not None:
            saved = self.run.path / "checkpoints" / "pool.pt"
            if saved.exists():
                self.pool.load(saved, model.policy)
            else:
                self.pool.add(model.policy)  # a stand-in until the first checkpoint
        return model

    def _imitate(self, model) -> None:
        """Fit the fresh policy to the ``pretrain`` agent's play (baselines/imitation.py):
        collected on the twin when the agent has a batched form, else on scalar games on
        every core (or, when the learner plays other seats, on the run's own scalar games);
        or read from a records file (``records: FILE``)."""
        from baselines.imitation import (
            collect,
            collect_parallel,
            fit,
            fit_q,
            from_records,
            scalar_actor,
            twin_actor,
        )

        pre, cfg = self.cfg["pretrain"], self.cfg
        started = time.time()
        self.learner.policy = model.policy  # teammates of the imitator are the learner
        gamma = cfg["hyperparams"].get("gamma", 0.99)
        agent, decisions, seed = pre.get("agent"), pre.get("decisions"), cfg["seed"] + 1
        if pre.get("records"):
            scalar = factories(self.spec).gym(**cfg["env_kwargs"],
                                              obs_encoding=cfg["obs_encoding"])
            data = from_records(pre["records"], scalar, gamma, agent)
            how = f"records {pre['records']}"
        elif self.batched and agent in self.engine.agents:
            parts = self.base.parts if isinstance(self.base, ConcatVecEnv) else [self.base]
            self.env.seed(seed)
            data = collect(self.env, twin_actor(parts, agent), decisions, gamma)
            how = "batched"
        elif cfg["opponent"] != "self" and not (cfg["teammate"] == "self"
                                                and self.game.num_players > 2):
            jobs = int(cfg.get("imitation_jobs") or min(2, os.cpu_count() or 1))
            data, reused = collect_parallel(cfg, agent, decisions, gamma, seed, jobs,
                                            self.demonstrations)
            how = f"{jobs} processes" if not reused else f"reused from {reused}"
        else:
            venv = wrap(scalar_env({**cfg, "n_envs": 8}, self._opponents), cfg)
            venv.seed(seed)
            data = collect(venv, scalar_actor(venv.unwrapped, agent, seed), decisions, gamma)
            how = "scalar"
        collected = time.time() - started
        if cfg["algo"] == "dqn":
            stats = fit_q(model.policy, data, pre.get("epochs", 10), seed=cfg["seed"],
                          margin=pre.get("margin", 0.2))
        else:
            stats = fit(model.policy, data, pre.get("epochs", 10), seed=cfg["seed"])
        stats.update(agent=agent or pre["records"], seconds=round(time.time() - started, 1),
                     collect_seconds=round(collected, 1), collected_by=how,
                     decisions_per_s=round(len(data["actions"]) / max(collected, 1e-9)))
        write_json(self.run.path / "pretrain.json", stats)
        rate = "" if how.startswith("reused") else f", {stats['decisions_per_s']:,} a second"
        print(f"[{cfg['setting']} {cfg['algo']} seed {cfg['seed']}] imitated {stats['agent']} on "
              f"{stats['decisions']:,} decisions ({how}{rate}):"
              f" it agrees on {stats['accuracy']:.1%} of them ({stats['seconds']:.0f} s)",
              flush=True)


def policy_and_hyperparams(cfg: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The SB3 policy for a run and the hyperparameters left for the algorithm.

    ``policy: per_action`` in the hyperparameters picks the per-action heads of
    card_envs.rl.action_heads (told which game and encoding they read); otherwise the
    plain MLP (``MlpPolicy``, or ``MaskedDQNPolicy`` for DQN), without the per-action heads'
    arguments (``action_heads.per_action_arguments``). ``learning_rate`` may be
    ``{start: A, end: B}``: a rate falling linearly from A to B over the run.
    """
    hp = dict(cfg["hyperparams"])
    kind = hp.pop("policy", "mlp")
    rate = hp.get("learning_rate")
    if isinstance(rate, dict):  # {start: A, end: B}: falls linearly from A to B over the run
        if set(rate) != {"start", "end"}:
            raise ValueError(f"learning_rate: {rate!r} is not valid; give a number or "
                             "{start: NUMBER, end: NUMBER}")
        hp["learning_rate"] = LinearSchedule(float(rate["start"]), float(rate["end"]), 1.0)
    kwargs = dict(hp.get("policy_kwargs", {}))
    if "activation_fn" in kwargs:
        name = kwargs["activation_fn"]
        if name not in ACTIVATIONS:
            raise ValueError(f"policy_kwargs.activation_fn: {name!r} is not valid; choose one "
                             f"of {', '.join(ACTIVATIONS)}")
        kwargs["activation_fn"] = ACTIVATIONS[name]
        hp["policy_kwargs"] = kwargs
    if kind == "per_action":
        from card_envs.rl.action_heads import POLICIES

        hp["policy_kwargs"] = {
            **hp.get("policy_kwargs", {}),
            "env_name": load_spec(cfg["env"]).env_name,
            "game_args": cfg["env_kwargs"],
            "obs_encoding": cfg["obs_encoding"],
        }
        return POLICIES[cfg["algo"]], hp
    if kind != "mlp":
        raise ValueError(f"policy: {kind!r} is not valid; choose one of 'mlp', 'per_action'")
    if "policy_kwargs" in hp:  # the per-action heads' own arguments mean nothing to an MLP
        from card_envs.rl.action_heads import per_action_arguments

        own = per_action_arguments()
        hp["policy_kwargs"] = {k: v for k, v in hp["policy_kwargs"].items() if k not in own}
    return ("MaskedDQNPolicy" if cfg["algo"] == "dqn" else "MlpPolicy"), hp


# Seeds of evaluation games: the learning curve and the choice of the best checkpoint play
# the same selection deals (SELECT_SEED) at every checkpoint, so checkpoints compare on equal
# terms; the final evaluation plays FINAL_SEED; training draws from the run's own seed. No
# seed is shared, so the final figures are on deals no run trained or selected on.
SELECT_SEED = 10_000
FINAL_SEED = 777_000


def selection(cfg: dict[str, Any], spec=None) -> dict[str, Any]:
    """What picks the best checkpoint: ``select`` of the setting, else its first target
    (opponent, metric, and whether higher is better); with neither, the mean payoff
    against the strongest rule agent."""
    chosen = cfg.get("select") or next(iter(cfg.get("targets") or []), None)
    if chosen is None:
        spec = spec or load_spec(cfg["env"])
        return {"opponent": spec.strongest_agent, "metric": "mean_payoff", "higher": True}
    return {"opponent": chosen["opponent"], "metric": chosen["metric"],
            "higher": chosen.get("higher", "below" not in chosen)}


class CurveAndCheckpoints(BaseCallback):
    """Every ``eval_freq`` steps: evaluate (greedy and sampled play), extend curve.csv, keep
    the best checkpoint, add a snapshot to the self-play pool, and checkpoint. Also
    checkpoints when training is interrupted."""

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
        self.select = selection(self.cfg, trainer.spec)
        best = trainer.run.path / f"{BEST}.json"
        self.best = json.loads(best.read_text())["selection"] if best.exists() else None
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
        sel = self.select
        row: dict[str, Any] = {"timesteps": steps, "wall_s": round(self.wall(), 1),
                               "opponent": sel["opponent"]}
        scores = {}
        for mode, deterministic in MODES.items():
            agent = PolicyAgent(t.game, t.encoder, t.model.policy, self.cfg["algo"],
                                deterministic, "model")
            result = evaluate(t.spec, t.game, agent, sel["opponent"], self.cfg["eval_games"],
                              SELECT_SEED, self.cfg["duplicate"], self.cfg["team"])
            full = result_row(result, sel["opponent"])
            for key in CURVE_KEYS:
                if key in full:
                    row[f"{key}_{mode}" if mode != "greedy" else key] = full[key]
            scores[mode] = full[sel["metric"]]
            if self.cfg["algo"] == "dqn":
                break  # DQN acts greedily either way
        mode = max(scores, key=lambda m: scores[m] if sel["higher"] else -scores[m])
        value = scores[mode]
        better = self.best is None or (
            value > self.best["value"] if sel["higher"] else value < self.best["value"])
        if better:
            self.best = {"timesteps": steps, "value": value, "mode": mode,
                         "metric": sel["metric"], "opponent": sel["opponent"]}
            meta = checkpoint_meta(self.cfg, steps)
            meta["deterministic"] = MODES[mode]
            save_model(t.model, t.run.path / BEST, meta)
            write_json(t.run.path / f"{BEST}.json", {**meta, "selection": self.best})
        row["best_timesteps"] = self.best["timesteps"]
        if t.pool is not None:
            row.update({k: v for k, v in t.pool.tournament(t.model.policy, steps).items()
                        if k != "timesteps"})
            t.pool.add(t.model.policy)
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
        if t.pool is not None:
            t.pool.save(path / "checkpoints" / "pool.pt")
        write_csv(path / "curve.csv", self.rows)


# Evaluation modes: greedy (the most likely legal action) and sampled (from the policy).
MODES = {"greedy": True, "sampled": False}
CURVE_KEYS = ("wins_rate", "draws_rate", "losses_rate", "decided_rate", "mean_payoff",
              "mean_score")


class ProgressLines(BaseCallback):
    """Labelled progress: SB3's progress bar on a terminal, else a line every ``every``
    seconds with the steps done, steps per second, the recent episode reward and the time
    left."""

    def __init__(self, label: str, total: int, every: float = 30.0):
        super().__init__()
        self.label, self.total, self.every = label, total, every
        self.last = self.t0 = time.time()
        self.steps0 = 0

    def _on_training_start(self) -> None:
        self.last = self.t0 = time.time()
        self.steps0 = self.num_timesteps

    def _on_step(self) -> bool:
        now = time.time()
        if now - self.last >= self.every:
            self.last = now
            print(progress_line(self.label, self.num_timesteps, self.total,
                                (self.num_timesteps - self.steps0) / max(now - self.t0, 1e-9),
                                self.model.ep_info_buffer), flush=True)
        return True


def progress_line(label: str, done: int, total: int, rate: float, episodes) -> str:
    """``[label] 12,288/400,000 steps (3%), 812 steps/s, recent reward +0.12, 8 min left``."""
    left = (total - done) / rate if rate > 0 else float("inf")
    recent = [e["r"] for e in list(episodes or [])]
    reward = f", mean reward of the last {len(recent)} episodes {np.mean(recent):+.2f}" \
        if recent else ""
    return (f"[{label}] {done:,}/{total:,} steps ({done / max(total, 1):.0%}), "
            f"{rate:,.0f} steps/s{reward}, {_duration(left)} left")


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "unknown time"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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
        **({"search": cfg["search"]} if cfg.get("search") else {}),
    }


def final_evaluation(trainer: Trainer, games: int, seed: int = FINAL_SEED,
                     label: str = "") -> dict[str, list[dict[str, Any]]]:
    """The final model against every evaluation opponent, greedy and sampled (DQN: greedy
    only), as result rows per mode."""
    cfg = trainer.cfg
    out: dict[str, list[dict[str, Any]]] = {}
    for mode, deterministic in MODES.items():
        if cfg["algo"] == "dqn" and not deterministic:
            continue
        agent = PolicyAgent(trainer.game, trainer.encoder, trainer.model.policy, cfg["algo"],
                            deterministic, "model")
        rows = out[mode] = []
        for opponent in cfg["eval_opponents"]:
            result = evaluate(trainer.spec, trainer.game, agent, opponent, games, seed,
                              cfg["duplicate"], cfg["team"])
            rows.append(result_row(result, opponent))
            print(f"[{label}] final, {mode} play, against {opponent}: "
                  f"{result_line(rows[-1])}", flush=True)
    return out


def result_line(row: dict[str, Any]) -> str:
    """One result row in words: win / loss rates with intervals, and the mean score."""
    text = (f"{row['games']} {'pairs' if row['kind'] == 'duplicate' else 'games'}, "
            f"won {row['wins_rate']:.1%} [{row['wins_low']:.1%}, {row['wins_high']:.1%}], "
            f"lost {row['losses_rate']:.1%}, won of decided {row['decided_rate']:.1%}")
    if "mean_score" in row:
        text += f", mean score {row['mean_score']:.2f}"
    return text


def train(run: Run, progress: bool = True, stop_at: int | None = None,
          bar: bool | None = None, demonstrations: Path | None = None) -> int:
    """Train (or continue) a run to its step budget, keep its best checkpoint as the final
    model, then evaluate it.

    ``progress``: SB3's progress bar when ``bar`` (default: when stdout is a terminal),
    else a labelled line every 30 seconds; nothing when False. ``demonstrations``: a folder
    where an imitation's scalar-collected demonstrations are saved and found again by a run
    with the same settings (reproduce shares one between a setting's PPO and DQN runs).
    """
    trainer = Trainer(run, demonstrations)
    cfg = trainer.cfg
    label = f"{cfg['setting']} {cfg['algo']} seed {cfg['seed']}"
    if cfg.get("stage_count", 1) > 1:
        label += f", stage {cfg['stage'] + 1}/{cfg['stage_count']} ({cfg['stage_name']})"
    callback = CurveAndCheckpoints(trainer, stop_at)
    done = trainer.model.num_timesteps
    remaining = cfg["timesteps"] - done
    print(f"[{label}] training against {cfg['opponent']} for {cfg['timesteps']:,} steps "
          f"({done:,} done); run folder {run.path}", flush=True)
    if done == 0 and (cfg.get("pretrain") or cfg.get("init_from")) and not callback.rows:
        callback.evaluate_and_save()  # the imitation policy is a checkpoint too
    if remaining > 0:
        bar = progress and (sys.stdout.isatty() if bar is None else bar)
        callbacks = [callback]
        if progress and not bar:
            callbacks.append(ProgressLines(label, cfg["timesteps"]))
        try:
            trainer.model.learn(
                remaining, callback=callbacks, progress_bar=bar, reset_num_timesteps=done == 0
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
    refined = run.path / "refine.json"
    if cfg.get("refine") and cfg["refine"].get("rounds") and not refined.exists():
        _refine(trainer, callback, label)
    best = keep_best(trainer, callback, label)
    if cfg.get("stage", 0) < cfg.get("stage_count", 1) - 1:
        return 0  # a recipe's next stage starts from this one's kept model; the last evaluates
    results = final_evaluation(trainer, cfg["final_games"], label=label)
    write_json(
        run.path / "eval.json",
        {"timesteps": best["timesteps"], "trained_timesteps": trainer.model.num_timesteps,
         "wall_s": round(callback.wall(), 1), "mode": best["mode"],
         "results": results[best["mode"]], "by_mode": results, "selection": best,
         "seed": FINAL_SEED},
    )
    print(f"[{label}] model: {run.path / 'model.zip'}", flush=True)
    return 0


def keep_best(trainer: Trainer, callback: CurveAndCheckpoints, label: str) -> dict[str, Any]:
    """Write the best checkpoint as the run's final model (model.zip + model.json, kept to
    play) and say which it was; returns the selection record of it."""
    run, cfg, best = trainer.run, trainer.cfg, callback.best
    trainer.model.set_parameters(str(run.path / f"{BEST}.zip"), device=trainer.device)
    meta = checkpoint_meta(cfg, best["timesteps"])
    meta.update(wall_s=round(callback.wall(), 1), trained_timesteps=trainer.model.num_timesteps,
                deterministic=MODES[best["mode"]], selection=best)
    save_model(trainer.model, run.path / "model", meta, for_play=True)
    print(f"[{label}] kept the checkpoint at {best['timesteps']:,} steps ({best['mode']} play: "
          f"{best['metric']} {best['value']:.3f} against {best['opponent']} on selection "
          f"deals)", flush=True)
    return best


def _refine(trainer: Trainer, callback: CurveAndCheckpoints, label: str) -> None:
    """Expert iteration on the kept checkpoint (the setting's ``refine``: expert, opponent,
    rounds, decisions, epochs; baselines/expert_iteration.py), then one more learning-curve
    point: the refined policy is kept if it does better on the selection deals."""
    from baselines.expert_iteration import refine

    cfg, run = trainer.cfg, trainer.run
    ref = cfg["refine"]
    trainer.model.set_parameters(str(run.path / f"{BEST}.zip"), device=trainer.device)
    opponents = ref["opponent"] if isinstance(ref["opponent"], list) else [ref["opponent"]]
    started = time.time()
    meta = {"game_args": cfg["env_kwargs"], "obs_encoding": cfg["obs_encoding"]}
    rounds = refine(trainer.model, trainer.spec, meta, ref["expert"], opponents, ref["rounds"],
                    ref["decisions"], ref.get("epochs", 5), seed=cfg["seed"],
                    label=f"[{label}] expert iteration ")
    before = callback.best
    callback.evaluate_and_save()  # replaces the best only if the refined policy does better
    kept = callback.best is not before
    print(f"[{label}] expert iteration: the refined policy is "
          f"{'kept' if kept else 'not better on the selection deals; not kept'}", flush=True)
    write_json(run.path / "refine.json", {**ref, "rounds_done": rounds,
                                          "seconds": round(time.time() - started, 1),
                                          "kept": bool(kept)})


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m baselines.train", description=__doc__.split("\n")[0]
    )
    p.add_argument("--env", help="env name (thirty_one_v0) or a setting of configs/games.yaml")
    p.add_argument("--algo", choices=ALGOS, default="maskable_ppo")
    p.add_argument("--opponent", help="agent name, model:PATH, best, or self; several names "
                   "separated by commas are spread over the environments (default: per game)")
    p.add_argument("--mix", help="self-play: AGENT:FRACTION of opponent seats played by AGENT")
    p.add_argument("--select", metavar="AGENT[:METRIC]",
                   help="pick the kept checkpoint by METRIC (wins_rate, decided_rate, "
                        "losses_rate, mean_payoff, mean_score; default wins_rate) against "
                        "AGENT (default: the setting's select, else its first target)")
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
    p.add_argument("--hp", action="append", metavar="KEY=VALUE",
                   help="override a hyperparameter of configs/<algo>.yaml (a YAML value), "
                        "e.g. --hp learning_rate=1e-4 --hp policy=per_action")
    p.add_argument("--set", "--env-arg", dest="env_arg", action="append", metavar="KEY=VALUE",
                   help="a rules argument on top of the setting's env_kwargs (a YAML value), "
                        "as in card-envs evaluate --set")
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="where torch trains: auto (CUDA when torch sees a GPU), cpu or cuda")
    p.add_argument("--shaping", metavar="POTENTIAL[:SCALE]",
                   help="potential-based reward shaping (baselines/shaping.py), or none "
                        "(default: the setting's)")
    p.add_argument("--result-bonus", dest="result_bonus", type=float, metavar="K",
                   help="add K x the game's result to an episode's last reward (default: the "
                        "setting's result_bonus)")
    p.add_argument("--pretrain", metavar="AGENT,DECISIONS[,EPOCHS]",
                   help="MaskablePPO: first imitate AGENT on DECISIONS decisions, or the "
                        "games of records:FILE[,EPOCHS] (baselines/imitation.py; default: the "
                        "setting's pretrain)")
    p.add_argument("--init-from", dest="init_from", metavar="MODEL.zip",
                   help="start from this model's weights (same algorithm and network) instead "
                        "of a fresh or imitating policy")
    p.add_argument("--scalar", action="store_true",
                   help="train on the scalar games (gym_env(), one game at a time) instead of "
                        "the game's batched twin: for checking, and the games without a twin")
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
    try:
        return train(run, progress=not args.no_progress, stop_at=args.stop_at)
    except InitFromError as err:  # nothing was trained: the new run folder goes too
        if not args.resume:
            shutil.rmtree(run.path, ignore_errors=True)
            with contextlib.suppress(OSError):  # the env's folder, when it held only this run
                run.path.parent.rmdir()
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    sys.exit(main())
