"""Speed of the batched engines beside the scalar raw_env() and the no-op floors, in one run.

Random legal play: every step each game's action is drawn uniformly from its legal mask
(``card_envs.vector.base.random_actions``). Measured per game (default rules; Thirty-One with
2 players):

* the functional core: ``step`` + the acting seat's observation (default encoding) +
  ``autoreset``, every seat's move counted, at batch sizes 64, 1024 and 4096;
* the Gymnasium VectorEnv made by ``gymnasium.make_vec(id, num_envs=B,
  vectorization_mode="vector_entry_point")`` against the batched random opponent (only the
  learner's steps count; the opponents' moves are inside ``step``), at the same sizes;
* the scalar ``raw_env()`` and the no-op PettingZoo floors of ``card_envs.bench``;
* with ``--sweep``, the core at B = 1, 4, ..., 16384: steps/s and the cost of one step per game.

Targets (issue 19) at B = 1024: at least 2M steps/s for simple tricks and 98 Cards, 1M for
Thirty-One, and at least 20x raw_env() of the same run, for the core and the VectorEnv.
Each figure is the median of ``--rounds`` interleaved rounds. The script prints markdown.

Run: ``python benchmarks/vector_speed.py [--sweep] [--backend numpy|numba]``
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
from card_envs.registry import load_spec  # noqa: E402
from card_envs.vector.base import random_actions  # noqa: E402

GAMES = {"simple_tricks": {}, "ninety_eight_cards": {}, "thirty_one": {"num_players": 2}}
TARGETS = {"simple_tricks": 2e6, "ninety_eight_cards": 2e6, "thirty_one": 1e6}
RATIO_TARGET = 20.0
SIZES = (64, 1024, 4096)
SWEEP = (1, 4, 16, 64, 256, 1024, 4096, 16384)


def time_core(name: str, rules: dict, batch: int, seconds: float, backend: str) -> float:
    """Agent-steps per second of the functional core (every seat's move counts)."""
    engine = vector.make(name, **rules)
    if backend != "auto":
        engine.set_backend(backend)
    state = engine.init(batch, seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        engine.step(state, random_actions(engine, state, rng))
        engine.observe(state)
        engine.autoreset(state)
        steps += batch
        if time.perf_counter() >= deadline:
            return steps / (time.perf_counter() - start)


def time_vector_env(name: str, rules: dict, batch: int, seconds: float, backend: str) -> float:
    """Learner steps per second of the VectorEnv against the batched random opponent."""
    env = gymnasium.make_vec(load_spec(name).gymnasium_id, num_envs=batch,
                             vectorization_mode="vector_entry_point", opponent="random",
                             **rules)
    if backend != "auto":
        env.engine.set_backend(backend)
    env.reset(seed=0)
    engine = env.engine
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        env.step(random_actions(engine, env.state, rng))
        steps += batch
        if time.perf_counter() >= deadline:
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
    parser = argparse.ArgumentParser(description="Batched engine speed (random legal play).")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--sweep", action="store_true", help="also the core at B = 1..16384")
    parser.add_argument("--backend", default="auto", choices=("auto", "numpy", "numba"),
                        help="the engines' backend (auto: numba when installed)")
    parser.add_argument("games", nargs="*", help="games (default: all three)")
    args = parser.parse_args(argv)
    games = {g: GAMES[vector.game_name(g)] for g in args.games} if args.games else GAMES
    secs, backend = args.seconds, args.backend
    command = " ".join(["python benchmarks/vector_speed.py", *(argv or sys.argv[1:])])
    print(f"`{command}`")
    print(f"\nbackend: {backend} ({vector.backend_name(backend)}); {platform.processor() or ''} "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}")
    print(f"load before: {load()}\n")
    jobs: list[tuple[str, Callable[[], float]]] = [
        ("noop (bare)", lambda: time_aec(NoOpEnv, secs)),
        ("noop (classic wrappers)", lambda: time_aec(noop_wrapped, secs)),
    ]
    for name, rules in games.items():
        raw_env = load_spec(name).factories()[1]
        jobs.append((f"{name} raw_env()",
                     lambda r=raw_env, k=rules: time_aec(lambda: r(**k), secs)))
        for b in SIZES:
            jobs.append((f"{name} core B={b}",
                         lambda n=name, k=rules, b=b: time_core(n, k, b, secs, backend)))
            jobs.append((f"{name} VectorEnv B={b}",
                         lambda n=name, k=rules, b=b: time_vector_env(n, k, b, secs, backend)))
    rates = medians(jobs, args.rounds)
    print(f"{args.rounds} interleaved rounds of {secs:g} s per figure; medians; steps/s "
          "(core: every seat's moves; VectorEnv: the learner's, against batched random)\n")
    print("| target | steps/s | vs raw_env() | target at B=1024 |")
    print("|---|---:|---:|---|")
    for label in ("noop (bare)", "noop (classic wrappers)"):
        print(f"| {label} | {rates[label]:,.0f} | | |")
    for name in games:
        scalar = rates[f"{name} raw_env()"]
        print(f"| {name} raw_env() | {scalar:,.0f} | 1.0x | |")
        for kind in ("core", "VectorEnv"):
            for b in SIZES:
                rate = rates[f"{name} {kind} B={b}"]
                verdict = ""
                if b == 1024:
                    goal = TARGETS[name]
                    ok = rate >= goal and rate >= RATIO_TARGET * scalar
                    verdict = (f"{goal / 1e6:g}M and {RATIO_TARGET:g}x: "
                               + ("met" if ok else "NOT met"))
                print(f"| {name} {kind} B={b} | {rate:,.0f} | {rate / scalar:.1f}x | {verdict} |")
    if args.sweep:
        print("\nScaling of the core (one round of each size):\n")
        print("| game | B | steps/s | us per batched step | ns per game-step |")
        print("|---|---:|---:|---:|---:|")
        for name, rules in games.items():
            for b in SWEEP:
                rate = time_core(name, rules, b, secs, backend)
                print(f"| {name} | {b} | {rate:,.0f} | {1e6 * b / rate:,.1f} | "
                      f"{1e9 / rate:,.1f} |")
    print(f"\nload after: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
