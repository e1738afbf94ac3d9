"""Speed of two checkouts side by side: each one's benchmark script, alternated.

Run: python benchmarks/speed_ab.py OLD_TREE NEW_TREE [--reps 4] [--script env_speed.py]
[games ...]

OLD_TREE and NEW_TREE are checkouts (e.g. ``git worktree add /tmp/old COMMIT``). Each
repetition runs the old and the new tree's ``benchmarks/SCRIPT`` once (in alternating order,
so a change of load hits both alike), each importing its own card_envs (PYTHONPATH=tree). The
table gives the median steps/s of every target the two print alike over the repetitions, and
the change. ``--script vector_speed.py`` compares the batched engines (old vs new);
``--script train_speed.py`` the baselines' learner steps/s on the twins (its batched form,
both algorithms; ``games`` are baseline settings there).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

# the rows of each script's table that name a target and its steps/s
ROWS = {
    "env_speed.py": re.compile(r"\| (\S+ (?:env\(\)|raw_env\(\)|gymnasium)) \| ([\d,]+) \|"),
    "vector_speed.py": re.compile(r"\| (\S+ (?:raw_env\(\)|core B=\d+|VectorEnv B=\d+)) \| "
                                  r"([\d,]+) \|"),
    # its progress lines (stderr): "# SETTING ALGO FORM: N steps/s"
    "train_speed.py": re.compile(r"# (\S+ \S+ \S+): ([\d,]+) steps/s"),
}


def script_args(script: str, seconds: str, rounds: str, games: list[str]) -> list[str]:
    """The command line of ``script`` for ``--seconds``, ``--rounds`` and ``games``."""
    if script == "train_speed.py":  # timed windows of learn(), the batched form only
        return ["--seconds", seconds, "--forms", "batched", *(["--envs", *games] if games
                                                              else [])]
    return ["--seconds", seconds, "--rounds", rounds, *games]


def run_tree(tree: Path, args: list[str], script: str = "env_speed.py") -> dict[str, int]:
    """Steps/s per target from one run of ``tree``'s own benchmark ``script``."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    row = ROWS[script]
    done = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / script), *args],
        capture_output=True, text=True, env=env, cwd=tree, check=True,
    )
    out = done.stdout + done.stderr
    return {m.group(1): int(m.group(2).replace(",", ""))
            for m in map(row.match, out.splitlines()) if m}


def compare(old: Path, new: Path, reps: int, args: list[str], log=print,
            script: str = "env_speed.py") -> str:
    """The markdown table of medians (old, new, change) over ``reps`` alternated runs."""
    runs: dict[str, dict[str, list[int]]] = {"old": {}, "new": {}}
    trees = {"old": old, "new": new}
    for rep in range(reps):
        for tag in ("old", "new") if rep % 2 == 0 else ("new", "old"):
            for target, rate in run_tree(trees[tag], args, script).items():
                runs[tag].setdefault(target, []).append(rate)
            log(f"repetition {rep + 1}/{reps}: {tag} done")
    lines = ["| target | old | new | change |", "|---|---:|---:|---:|"]
    for target, rates in runs["old"].items():
        if target not in runs["new"]:
            continue
        o, n = statistics.median(rates), statistics.median(runs["new"][target])
        lines.append(f"| {target} | {o:,.0f} | {n:,.0f} | {100 * (n / o - 1):+.1f}% |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", type=Path, help="the old checkout")
    p.add_argument("new", type=Path, help="the new checkout")
    p.add_argument("games", nargs="*", help="env names (default: every registered env)")
    p.add_argument("--reps", type=int, default=4, help="runs of each tree (default 4)")
    p.add_argument("--seconds", default="1", help="the script's --seconds (default 1)")
    p.add_argument("--rounds", default="3",
                   help="the script's --rounds (default 3; train_speed.py has none)")
    p.add_argument("--script", default="env_speed.py", choices=tuple(ROWS),
                   help="the benchmark to run in both checkouts (default env_speed.py)")
    a = p.parse_intermixed_args(argv)
    for name in ("old", "new"):
        tree = getattr(a, name)
        if not (tree / "benchmarks" / a.script).is_file():
            p.error(f"{name}={str(tree)!r} is not a checkout with benchmarks/{a.script}")
    if a.reps < 1:
        p.error(f"--reps={a.reps} is not valid; choose a positive number")
    args = script_args(a.script, a.seconds, a.rounds, a.games)
    print(compare(a.old.resolve(), a.new.resolve(), a.reps, args,
                  log=lambda msg: print(msg, file=sys.stderr, flush=True), script=a.script))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
