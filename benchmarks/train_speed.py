"""Learner steps per second of the baselines' ``learn()``, batched and scalar, side by side.

    python benchmarks/train_speed.py                          # every game, both algorithms
    python benchmarks/train_speed.py --envs simple_tricks_v0 --algos maskable_ppo --seconds 20

For each game (its base setting of baselines/configs/games.yaml, against its training
opponent) and algorithm this builds the run exactly as ``python -m baselines.train`` does
(the same settings file) and times ``model.learn()`` over whole rollouts (PPO) or steps (DQN)
after a warm-up, in three forms:

- **batched**: the run's settings on the game's batched twin (what ``baselines.train`` does);
- **scalar, same settings**: the same run with ``--scalar`` (a DummyVecEnv of ``gym_env()``);
- **scalar, before**: ``--scalar`` with the shapes the baselines trained with before the
  batched twins (``BEFORE``: 4 environments; PPO 512-step rollouts, batches of 256, 10 epochs,
  tanh [256, 256]; DQN an update of 128 every 4 steps; in team games the learner's current
  policy plays its teammates, ``teammate: self``, where the batched and scalar forms let the
  learner play their seats as its own steps), i.e. the speed of the old pipeline.

The speed-up is batched over "scalar, before". The profile splits the timed ``learn()`` of
each form into env (the VecEnv's step, opponents and wrappers included), masks (the action
masks sb3-contrib asks for), policy forward (acting in the rollout), buffer (storing
transitions, returns and advantages), update (``train()``: minibatches, backward,
optimizer) and the rest (SB3's loop, logging, callbacks), by timing those calls in place.
Imitation, evaluation and checkpoints are left out. torch threads are the run's
(``torch_threads``, 1 by default); the load average is printed with the table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEFORE = {
    "maskable_ppo": {"n_envs": 4, "n_steps": 512, "batch_size": 256, "n_epochs": 10,
                     "policy_kwargs": {"net_arch": [256, 256], "activation_fn": "tanh"}},
    "dqn": {"n_envs": 4, "train_freq": 4, "gradient_steps": 1, "batch_size": 128},
}
FORMS = ("batched", "scalar", "before")
PARTS = ("env", "masks", "forward", "buffer", "update", "other")


class Timer:
    """Seconds spent in each wrapped call, by part."""

    def __init__(self):
        self.spent = dict.fromkeys(PARTS, 0.0)
        self.on = False

    def wrap(self, part: str, fn):
        def timed(*args, **kwargs):
            if not self.on:
                return fn(*args, **kwargs)
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[part] += time.perf_counter() - t
        return timed


def build(setting: str, algo: str, form: str, runs: Path, hp: list[str] | None = None):
    """A Trainer for ``setting`` x ``algo`` in ``form``, without imitation (``hp``: the
    ``--hp KEY=VALUE`` overrides of baselines.train, for every form but ``before``)."""
    from baselines.common import Run
    from baselines.train import Trainer, build_config, parser

    argv = ["--env", setting, "--algo", algo, "--runs", str(runs)]
    if form != "batched":
        argv.append("--scalar")
    for item in hp or []:
        argv += ["--hp", item]
    cfg = build_config(parser().parse_args(argv))
    cfg["pretrain"] = None
    if form == "before":
        extra = dict(BEFORE[algo])
        cfg["n_envs"] = extra.pop("n_envs")
        if cfg["teammate"] == "learner":
            cfg["teammate"] = "self"  # the old pipeline's teammates
        hp = {**cfg["hyperparams"], **extra}
        if hp.get("policy") == "per_action":
            hp["policy_kwargs"] = {k: v for k, v in cfg["hyperparams"].get(
                "policy_kwargs", {}).items() if k != "activation_fn"}
            hp["policy_kwargs"].pop("value_arch", None)
            hp["policy_kwargs"].pop("head_arch", None)
        cfg["hyperparams"] = hp
    run = Run.create(runs, cfg, "benchmarks/train_speed.py")
    return Trainer(run)


def instrument(trainer, timer: Timer) -> None:
    """Time the parts of ``learn()`` in place (see the module docstring)."""
    import sb3_contrib.ppo_mask.ppo_mask as ppo_mask

    model = trainer.model
    model.env.step = timer.wrap("env", model.env.step)
    model.train = timer.wrap("update", model.train)
    if trainer.cfg["algo"] == "maskable_ppo":
        if not hasattr(ppo_mask, "_untimed_masks"):
            ppo_mask._untimed_masks = ppo_mask.get_action_masks
        ppo_mask.get_action_masks = timer.wrap("masks", ppo_mask._untimed_masks)
        model.policy.forward = timer.wrap("forward", model.policy.forward)
        buffer = model.rollout_buffer
        buffer.add = timer.wrap("buffer", buffer.add)
        buffer.compute_returns_and_advantage = timer.wrap(
            "buffer", buffer.compute_returns_and_advantage)
    else:
        model.predict = timer.wrap("forward", model.predict)
        model._store_transition = timer.wrap("buffer", model._store_transition)


def measure(setting: str, algo: str, form: str, seconds: float, hp: list[str] | None = None
            ) -> dict[str, Any]:
    """Learner steps per second of ``learn()`` and the profile's shares."""
    from stable_baselines3.common.callbacks import BaseCallback

    with tempfile.TemporaryDirectory() as tmp:
        trainer = build(setting, algo, form, Path(tmp), hp if form != "before" else None)
        model, timer = trainer.model, Timer()
        on_policy = algo == "maskable_ppo"
        # warm-up: the first rollouts and updates (compiled kernels, torch's first calls)
        warm = trainer.cfg["n_envs"] * (model.n_steps if on_policy else 64)
        model.learn(max(warm, 256) * 2)
        instrument(trainer, timer)
        clock: dict[str, float] = {}

        class Window(BaseCallback):
            """Counts whole rollouts (PPO) or steps (DQN) from the first after the warm-up
            until ``seconds`` have passed."""

            def _mark(self) -> bool:
                now = time.perf_counter()
                if "t0" not in clock:
                    clock.update(t0=now, s0=self.num_timesteps)
                    timer.on = True
                    return True
                if now - clock["t0"] >= seconds:
                    timer.on = False
                    clock.update(t1=now, s1=self.num_timesteps)
                    return False
                return True

            def _on_rollout_start(self) -> None:
                if on_policy and "t1" not in clock and not self._mark():
                    self.stop = True

            def _on_step(self) -> bool:
                if on_policy:
                    return not getattr(self, "stop", False)
                return "t1" in clock or self._mark()

        model.learn(10**12, callback=Window(), reset_num_timesteps=False)
        wall = clock["t1"] - clock["t0"]
        rate = (clock["s1"] - clock["s0"]) / wall
        shares = dict(timer.spent)
        shares["other"] = max(0.0, wall - sum(shares.values()))
        trainer.env.close()
    return {"setting": setting, "algo": algo, "form": form, "rate": rate, "seconds": wall,
            "shares": {k: v / wall for k, v in shares.items()}}


def base_settings() -> list[str]:
    """Each game's base setting (its env name) of configs/games.yaml, in registry order."""
    from baselines.config import settings
    from card_envs.registry import env_names

    known = settings()
    return [e for e in env_names() if e in known]


def has_twin(setting: str) -> bool:
    from baselines.config import game_config
    from card_envs.registry import load_spec

    return load_spec(game_config(setting)["env"]).batched is not None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--envs", nargs="*", help="settings (default: every game's base setting)")
    p.add_argument("--algos", nargs="*", default=["maskable_ppo", "dqn"],
                   choices=["maskable_ppo", "dqn"])
    p.add_argument("--forms", nargs="*", default=list(FORMS), choices=FORMS)
    p.add_argument("--seconds", type=float, default=15.0, help="timed window per row")
    p.add_argument("--hp", action="append", metavar="KEY=VALUE",
                   help="a hyperparameter override, as baselines.train's --hp (not for the "
                        "'before' form)")
    args = p.parse_args(argv)
    from baselines.config import game_config, settings

    known = settings()
    chosen = args.envs or base_settings()
    for s in chosen:
        if s not in known:
            print(f"error: no baseline setting {s!r}; configured: {', '.join(known)}",
                  file=sys.stderr)
            return 2
    if args.seconds <= 0:
        print(f"error: --seconds={args.seconds} is not valid; it must be above 0",
              file=sys.stderr)
        return 2
    import torch

    rows = []
    for setting in chosen:
        for algo in args.algos:
            for form in args.forms:
                if form == "batched" and not has_twin(setting):
                    rows.append({"setting": setting, "algo": algo, "form": form,
                                 "rate": None})
                    continue
                row = measure(setting, algo, form, args.seconds, args.hp)
                rows.append(row)
                print(f"# {setting} {algo} {form}: {row['rate']:,.0f} steps/s", flush=True,
                      file=sys.stderr)
    load = os.getloadavg()
    print(f"learner steps/s of learn(), {args.seconds:g} s windows; torch "
          f"{torch.__version__}, torch threads as configured (1 unless a config says); "
          f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    print(speed_table(rows, game_config))
    print()
    print(profile_table(rows))
    return 0


def _rate(rows, setting, algo, form):
    row = next((r for r in rows if (r["setting"], r["algo"], r["form"]) == (setting, algo,
                                                                               form)), None)
    return None if row is None else row["rate"]


def speed_table(rows: list[dict], game_config) -> str:
    names = {"maskable_ppo": "MaskablePPO", "dqn": "DQN (masked)"}
    lines = ["| game | opponent | algorithm | batched | scalar, same settings | scalar, before "
             "| batched / before |", "|---|---|---|---:|---:|---:|---:|"]
    seen = []
    for r in rows:
        key = (r["setting"], r["algo"])
        if key in seen:
            continue
        seen.append(key)
        rates = [_rate(rows, *key, form) for form in FORMS]
        cells = ["no twin" if (f == "batched" and x is None and any(
            q["form"] == "batched" for q in rows if (q["setting"], q["algo"]) == key))
            else "" if x is None else f"{x:,.0f}" for f, x in zip(FORMS, rates, strict=True)]
        ratio = (f"{rates[0] / rates[2]:.1f}x" if rates[0] and rates[2] else "")
        opponent = game_config(r["setting"])["opponent"]
        opponent = ",".join(opponent) if isinstance(opponent, list) else opponent
        lines.append(f"| {r['setting']} | {opponent} | {names[r['algo']]} | "
                     + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def profile_table(rows: list[dict]) -> str:
    names = {"maskable_ppo": "MaskablePPO", "dqn": "DQN (masked)"}
    lines = ["| game | algorithm | form | " + " | ".join(PARTS) + " |",
             "|---|---|---|" + "---:|" * len(PARTS)]
    for r in rows:
        if r.get("rate") is None:
            continue
        shares = " | ".join(f"{r['shares'][k]:.0%}" for k in PARTS)
        lines.append(f"| {r['setting']} | {names[r['algo']]} | {r['form']} | {shares} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
