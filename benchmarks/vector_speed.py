"""Speed of the batched twins beside the scalar envs, every game, in one run.

Random legal play through each game's twin (default rules; Thirty-One with 2 players), beside
the scalar envs of the same run:

* the functional core: ``step`` + the acting seat's observation (default encoding) +
  ``autoreset``, every seat's move counted, the moves drawn by the twin's ``random`` agent,
  at batch sizes 64, 1024 and 4096, against the scalar ``raw_env()`` (random legal moves);
* the Gymnasium VectorEnv (``gymnasium.make_vec(id, num_envs=B)``) against the batched random
  opponent (only the learner's steps count: the opponents' moves are inside ``step``), at the
  same sizes;
* the VectorEnv at B = 1024 against the game's default training opponent (the spec's
  ``default_opponent``) beside the scalar ``gym_env()`` against the same opponent;
* the no-op PettingZoo floors of ``card_envs.bench``; with ``--sweep``, the core at
  B = 1 .. 16384.

Targets at B = 1024: the core at least 20x ``raw_env()`` (issue 28; Literature 10x, issue 29),
and the VectorEnv against the default opponent at least 10x ``gym_env()`` against it. Each
figure is the median of ``--rounds`` interleaved rounds. The script prints markdown.
``benchmarks/speed_ab.py OLD NEW --script vector_speed.py`` compares two checkouts.

Run: ``python benchmarks/vector_speed.py [--sweep] [games ...]``
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's card_envs

import gymnasium  # noqa: E402

import card_envs  # noqa: E402,F401  (registers the games)
from card_envs import vector  # noqa: E402
from card_envs.bench import NoOpEnv, noop_wrapped, time_aec  # noqa: E402
from card_envs.core.make import factories  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402

CORE_TARGET = {"literature": 10.0}  # x raw_env(); 20x for the others
ENV_TARGET = 10.0  # VectorEnv vs gym_env(), against the default opponent
SIZES = (64, 1024, 4096)
SWEEP = (1, 4, 16, 64, 256, 1024, 4096, 16384)


def rules_of(name: str) -> dict:
    """The rules each figure uses: the Gymnasium view's defaults (Thirty-One: 2 players)."""
    return dict(load_spec(name).gym_defaults)


def time_core(name: str, batch: int, seconds: float) -> float:
    """Agent-steps per second of the functional core (every seat's move counts)."""
    engine = vector.make(name, **rules_of(name))
    state = engine.init(batch, seed=0)
    rows = np.arange(batch)
    engine.step(state, engine.act(state, "random", rows))  # compiled (or loaded) before timing
    engine.observe(state)
    engine.autoreset(state)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        engine.step(state, engine.act(state, "random", rows))
        engine.observe(state)
        engine.autoreset(state)
        steps += batch
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start)


def time_vector_env(name: str, batch: int, seconds: float, opponent: str) -> float:
    """Learner steps per second of the VectorEnv against ``opponent`` (random learner)."""
    env = gymnasium.make_vec(load_spec(name).gymnasium_id, num_envs=batch, opponent=opponent)
    env.reset(seed=0)
    engine = env.engine
    rows = np.arange(batch)
    env.step(engine.act(env.state, "random", rows))  # compiled (or loaded) before timing
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.step(engine.act(env.state, "random", rows))
        steps += batch
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start)


def time_gym_env(name: str, seconds: float, opponent: str) -> float:
    """Learner steps per second of the scalar ``gym_env()`` against ``opponent``."""
    env = factories(load_spec(name)).gym(opponent=opponent)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        legal = np.flatnonzero(env.action_masks())
        _, _, terminated, truncated, _ = env.step(int(legal[int(rng.random() * len(legal))]))
        if terminated or truncated:
            env.reset()
        steps += 1
        if steps % 64 == 0 and time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start)


def medians(jobs: list[tuple[str, Callable[[], float]]], rounds: int) -> dict[str, float]:
    """Each job's median over ``rounds`` interleaved rounds."""
    samples: dict[str, list[float]] = {label: [] for label, _ in jobs}
    for _ in range(rounds):
        for label, job in jobs:
            samples[label].append(job())
    return {label: statistics.median(values) for label, values in samples.items()}


def load() -> str:
    """The machine's load averages (``uptime``), to read the figures by."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load averages {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Batched twin speed (random legal play).")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--sweep", action="store_true", help="also the core at B = 1..16384")
    parser.add_argument("games", nargs="*", help="games (default: every game with a twin)")
    args = parser.parse_args(argv)
    games = [load_spec(g).name for g in args.games] if args.games else vector.names()
    for name in games:
        vector.make(name)  # a game without a twin: its error, before any timing
    secs = args.seconds
    command = " ".join(["python benchmarks/vector_speed.py", *(argv or sys.argv[1:])])
    print(f"`{command}`")
    print(f"\n{platform.processor() or ''} {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}, numpy {np.__version__}, numba "
          f"{__import__('numba').__version__}")
    print(f"load before: {load()}\n")
    jobs: list[tuple[str, Callable[[], float]]] = [
        ("noop (bare)", lambda: time_aec(NoOpEnv, secs)),
        ("noop (classic wrappers)", lambda: time_aec(noop_wrapped, secs)),
    ]
    for name in games:
        raw_env = factories(load_spec(name)).raw_env
        opponent = load_spec(name).default_opponent
        rules = rules_of(name)
        jobs.append((f"{name} raw_env()",
                     lambda r=raw_env, k=rules: time_aec(lambda: r(**k), secs)))
        for b in SIZES:
            jobs.append((f"{name} core B={b}", lambda n=name, b=b: time_core(n, b, secs)))
            jobs.append((f"{name} VectorEnv B={b}",
                         lambda n=name, b=b: time_vector_env(n, b, secs, "random")))
        jobs.append((f"{name} gym_env() vs {opponent}",
                     lambda n=name, o=opponent: time_gym_env(n, secs, o)))
        jobs.append((f"{name} VectorEnv B=1024 vs {opponent}",
                     lambda n=name, o=opponent: time_vector_env(n, 1024, secs, o)))
    rates = medians(jobs, args.rounds)
    print(f"{args.rounds} interleaved rounds of {secs:g} s per figure; medians; steps/s (core: "
          "every seat's moves; VectorEnv and gym_env(): the learner's, a random learner)\n")
    print("| target | steps/s | ratio | target |")
    print("|---|---:|---:|---|")
    for label in ("noop (bare)", "noop (classic wrappers)"):
        print(f"| {label} | {rates[label]:,.0f} | | |")
    for name in games:
        scalar = rates[f"{name} raw_env()"]
        goal = CORE_TARGET.get(name, 20.0)
        print(f"| {name} raw_env() | {scalar:,.0f} | 1.0x | |")
        for kind in ("core", "VectorEnv"):
            for b in SIZES:
                rate = rates[f"{name} {kind} B={b}"]
                verdict = ""
                if b == 1024 and kind == "core":
                    verdict = f"{goal:g}x raw_env(): " + ("met" if rate >= goal * scalar
                                                          else "NOT met")
                print(f"| {name} {kind} B={b} | {rate:,.0f} | {rate / scalar:.1f}x | "
                      f"{verdict} |")
        opponent = load_spec(name).default_opponent
        gym = rates[f"{name} gym_env() vs {opponent}"]
        batched = rates[f"{name} VectorEnv B=1024 vs {opponent}"]
        print(f"| {name} gym_env() vs {opponent} | {gym:,.0f} | 1.0x | |")
        verdict = f"{ENV_TARGET:g}x gym_env(): " + ("met" if batched >= ENV_TARGET * gym
                                                   else "NOT met")
        print(f"| {name} VectorEnv B=1024 vs {opponent} | {batched:,.0f} | "
              f"{batched / gym:.1f}x | {verdict} |")
    if args.sweep:
        print("\nScaling of the core (one round of each size):\n")
        print("| game | B | steps/s | us per batched step | ns per game-step |")
        print("|---|---:|---:|---:|---:|")
        for name in games:
            for b in SWEEP:
                rate = time_core(name, b, secs)
                print(f"| {name} | {b} | {rate:,.0f} | {1e6 * b / rate:,.1f} | "
                      f"{1e9 / rate:,.1f} |")
    print(f"\nload after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
