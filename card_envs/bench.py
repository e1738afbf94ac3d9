"""Environment speed: random legal play through every registered env, against no-op floors.

For every registered game (default configuration) it measures agent-steps per
second through ``env()`` (what users call), ``raw_env()`` and the Gymnasium
single-agent view, and in the same run a minimal no-op PettingZoo AECEnv, bare
and inside PettingZoo's classic wrapper stack. Targets are interleaved over
several rounds and each figure is the median, given as a ratio to both floors; the
project's targets compare ``env()`` with the wrapped floor and ``raw_env()`` with the bare
one (``TARGETS``), and the report says for each whether this run meets it.

With ``--anchors`` it also times PettingZoo's ``texas_holdem_v4`` (env and raw_env) and
RLCard's ``uno`` called directly, when those packages are installed, for comparison.
``--profile`` shows where raw_env() time goes under cProfile, per function; ``--split`` times
the parts of a decision in place (last(), step(), the loop, the ends of games), without a
profiler's distortion of small calls.

Run: ``python benchmarks/env_speed.py`` or ``card-envs bench`` (``--help`` for options).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from card_envs.core.make import factories
from card_envs.registry import env_names, load_spec


class NoOpEnv(AECEnv):
    """The cheapest sensible AECEnv: two agents, constant observation and mask, 100-step games."""

    metadata = {"name": "noop_v0", "render_modes": [], "is_parallelizable": False}
    LENGTH = 100

    def __init__(self):
        super().__init__()
        self.possible_agents = ["player_0", "player_1"]
        space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (4,), np.float32),
                "action_mask": spaces.Box(0, 1, (4,), np.int8),
            }
        )
        self._obs_space = space
        self._act_space = spaces.Discrete(4)
        self._obs = np.zeros(4, np.float32)
        self._mask = np.ones(4, np.int8)

    def observation_space(self, agent):
        return self._obs_space

    def action_space(self, agent):
        return self._act_space

    def reset(self, seed=None, options=None):
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = "player_0"
        self._moves = 0

    def observe(self, agent):
        return {"observation": self._obs, "action_mask": self._mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self._moves += 1
        if self._moves >= self.LENGTH:
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = "player_1" if agent == "player_0" else "player_0"


def noop_wrapped() -> AECEnv:
    env = wrappers.TerminateIllegalWrapper(NoOpEnv(), illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def time_aec(make: Callable[[], AECEnv], seconds: float, seed: int = 0) -> float:
    """Agent-steps per second of random legal play (resets and dead steps included in the time)."""
    decisions, elapsed = _play(make(), seconds, seed)
    return decisions / elapsed


def _play(env: AECEnv, seconds: float, seed: int) -> tuple[int, float]:
    """Random legal play of whole games for about ``seconds``: (decisions, seconds taken)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.random() * len(legal))]))
            decisions += 1
        if time.perf_counter() >= deadline:
            break
        env.reset()
    return decisions, time.perf_counter() - start


def time_gym(make: Callable, seconds: float, seed: int = 0) -> float:
    """Learner steps per second through the Gymnasium view (opponents' moves inside each step)."""
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, _, term, trunc, _ = env.step(int(legal[int(rng.random() * len(legal))]))
            done = term or trunc
            steps += 1
        if time.perf_counter() >= deadline:
            break
        env.reset()
    return steps / (time.perf_counter() - start)


def time_rlcard(make: Callable, seconds: float, seed: int = 0) -> float:
    """Steps per second of random legal play in an RLCard env called directly."""
    env = make()
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"])
            state, _ = env.step(legal[int(rng.random() * len(legal))])
            steps += 1
        if time.perf_counter() >= deadline:
            break
    return steps / (time.perf_counter() - start)


def anchors() -> list[tuple[str, str, Callable, Callable]]:
    """Other projects' card envs, when installed: PettingZoo's texas_holdem_v4, RLCard's uno."""
    rows = []
    try:
        from pettingzoo.classic import texas_holdem_v4

        rows.append(
            ("pettingzoo texas_holdem_v4 env()", "anchor-env", time_aec, texas_holdem_v4.env)
        )
        rows.append(
            (
                "pettingzoo texas_holdem_v4 raw_env()",
                "anchor-raw",
                time_aec,
                texas_holdem_v4.raw_env,
            )
        )
    except ImportError as err:
        print(f"(skipping PettingZoo texas_holdem_v4: {err})")
    try:
        import rlcard

        rows.append(("rlcard uno (direct)", "anchor-raw", time_rlcard, lambda: rlcard.make("uno")))
    except ImportError as err:
        print(f"(skipping RLCard uno: {err})")
    return rows


def targets(games: list[str]) -> list[tuple[str, str, Callable, Callable]]:
    """(label, kind, timer, factory) for the floors and each game's three entry points."""
    rows = [
        ("noop (bare)", "floor-bare", time_aec, NoOpEnv),
        ("noop (classic wrappers)", "floor-wrapped", time_aec, noop_wrapped),
    ]
    for name in games:
        spec = load_spec(name)
        made = factories(spec)
        rows.append((f"{spec.env_name} env()", "env", time_aec, made.env))
        rows.append((f"{spec.env_name} raw_env()", "raw", time_aec, made.raw_env))
        rows.append((f"{spec.env_name} gymnasium", "gym", time_gym, made.gym))
    return rows


def run(
    games: list[str], seconds: float, rounds: int, with_anchors: bool = False
) -> list[tuple[str, str, float]]:
    rows = targets(games) + (anchors() if with_anchors else [])
    samples: dict[str, list[float]] = {label: [] for label, *_ in rows}
    for r in range(rounds):
        for label, _, timer, make in rows:  # interleaved: every target once per round
            samples[label].append(timer(make, seconds, seed=r))
    return [(label, kind, statistics.median(samples[label])) for label, kind, *_ in rows]


# The project's speed targets: env() against the wrapped floor, raw_env() against the bare one.
# Literature's are lower: its knowledge engine and 1000-value observation do far more per step.
TARGETS = {"env": ("wrapped", 2.5), "raw": ("bare", 0.25)}
LOWER_TARGETS = {"literature_v0": {"env": 1.0, "raw": 0.1}}


def target(env_name: str, kind: str) -> tuple[str, float] | None:
    """(floor, least ratio) that ``kind`` ("env" or "raw") of a game must reach, or None."""
    if kind not in TARGETS:
        return None
    floor, ratio = TARGETS[kind]
    return floor, LOWER_TARGETS.get(env_name, {}).get(kind, ratio)


def report(results: list[tuple[str, str, float]]) -> str:
    """A markdown table: every rate against both floors, and the target where there is one."""
    floors = {kind: rate for _, kind, rate in results if kind.startswith("floor")}
    wrapped, bare = floors["floor-wrapped"], floors["floor-bare"]
    lines = [
        "| target | agent-steps/s | vs wrapped floor | vs bare floor | project target |",
        "|---|---:|---:|---:|---|",
    ]
    for label, kind, rate in results:
        ratios = {"wrapped": rate / wrapped, "bare": rate / bare}
        goal = target(label.split()[0], kind)
        if goal is None:
            verdict = ""
        else:
            floor, least = goal
            ratio = ratios[floor]
            met = "met" if ratio >= least else f"NOT met ({ratio:.3f}x)"
            verdict = f"{least:g}x {floor}: {met}"
        lines.append(
            f"| {label} | {rate:,.0f} | {ratios['wrapped']:.2f}x | {ratios['bare']:.2f}x"
            f" | {verdict} |"
        )
    return "\n".join(lines)


def _cumulative(stats, func: str, path: str | None = None) -> float:
    return sum(
        ct
        for (fn, _, f), (_, _, _, ct, _) in stats.stats.items()
        if f == func and (path is None or path in fn)
    )


def profile(games: list[str], seconds: float) -> str:
    """Where the time of raw_env() random play goes, per game (shares of cProfile time)."""
    import cProfile
    import pstats

    lines = [
        "| env | rules step | legal mask | encoding | env plumbing | deal/reset | benchmark loop |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in games:
        raw_env = factories(load_spec(name)).raw_env
        prof = cProfile.Profile()
        prof.enable()
        time_aec(raw_env, seconds)
        prof.disable()
        st = pstats.Stats(prof)
        total = st.total_tt
        step = _cumulative(st, "step", "core/aec.py")
        # last() encodes on its own (it does not go through observe()); they never nest
        observe = _cumulative(st, "last", "core/aec.py") + _cumulative(st, "observe", "core/aec.py")
        reset = _cumulative(st, "reset", "core/aec.py")
        # the env calls the game's _apply and _legal_mask directly (Game.apply inline)
        rules = _cumulative(st, "_apply")
        mask = _cumulative(st, "_legal_mask")
        # the env encodes through encode_state_read_only (which may call encode_state inside)
        encode = _cumulative(st, "encode_state_read_only")
        plumbing = step + observe - rules - mask - encode
        loop = total - step - observe - reset
        shares = [rules, mask, encode, plumbing, reset, loop]
        lines.append(f"| {name} | " + " | ".join(f"{x / total:.0%}" for x in shares) + " |")
    return "\n".join(lines)


def split(make: Callable[[], AECEnv], seconds: float, seed: int = 0,
          inner: bool = True) -> dict[str, float]:
    """Microseconds per decision of random legal play, timed in place with perf_counter: in
    last() and step() of decisions, in the loop's pick of a legal action (np.flatnonzero of the
    mask and a random index, as in time_aec), in the dead agents' last() and step() after each
    game, and the rest (reset(), agent_iter). The clock's own cost is taken off each part and
    the total.
    Also the mean "decisions/game", and with ``inner`` (a card game's env) "rules" and
    "encoding" (see ``_inner_split``)."""
    clock = time.perf_counter
    env = make()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    t_last = t_pick = t_step = t_dead = 0.0
    decisions = games = dead_steps = 0
    start = clock()
    deadline = start + seconds
    while True:
        games += 1
        for _ in env.agent_iter():
            t0 = clock()
            obs, _, term, trunc, _ = env.last()
            t1 = clock()
            if term or trunc:
                env.step(None)
                t_dead += clock() - t0
                dead_steps += 1
                continue
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[int(rng.random() * len(legal))])
            t2 = clock()
            env.step(action)
            t3 = clock()
            t_last += t1 - t0
            t_pick += t2 - t1
            t_step += t3 - t2
            decisions += 1
        if clock() >= deadline:
            break
        env.reset()
    total = clock() - start
    t0 = clock()
    for _ in range(10_000):
        clock()
    tick = (clock() - t0) / 10_000  # one clock() call
    # Each timed interval holds one clock() call; a decision makes four calls in all and a
    # dead step three: all are taken off, so the total is that of play without the clock.
    total -= tick * (4 * decisions + 3 * dead_steps)
    parts = {"last()": t_last - tick * decisions, "pick": t_pick - tick * decisions,
             "step()": t_step - tick * decisions, "game ends": t_dead - 2 * tick * dead_steps}
    parts["reset, iteration"] = total - sum(parts.values())
    out = {"total": 1e6 * total / decisions} | {k: 1e6 * v / decisions for k, v in parts.items()}
    out["decisions/game"] = decisions / games
    if inner:
        out |= _inner_split(make(), seconds, seed, tick)
    return out


def _inner_split(env: AECEnv, seconds: float, seed: int, tick: float) -> dict[str, float]:
    """Microseconds per decision in the game's rules step (``Game._apply``, inside step()) and
    in encoding (every ``encode_state`` call: last(), observe(), the ends of games), timed in a
    second pass of random play with both wrapped in a clock."""
    clock = time.perf_counter
    game, encoder = env.unwrapped.game, env.unwrapped.encoder
    spent = {"rules": 0.0, "encoding": 0.0}
    calls = {"rules": 0, "encoding": 0}  # timed intervals

    def timed(part: str, method: Callable) -> Callable:
        def clocked(*args):
            t0 = clock()
            out = method(*args)
            spent[part] += clock() - t0
            calls[part] += 1
            return out

        return clocked

    # instance attributes of this env's own game and encoder shadow the methods
    game._apply = timed("rules", game._apply)
    encoder.encode_state = timed("encoding", encoder.encode_state)
    try:
        decisions, _ = _play(env, seconds, seed)
    finally:
        del game._apply, encoder.encode_state
    return {k: 1e6 * (v - tick * calls[k]) / decisions for k, v in spent.items()}


def split_table(games: list[str], seconds: float) -> str:
    """``split`` of raw_env() for each game and of the bare no-op floor, as a markdown table
    ("encoding" is part of last() and of the game ends, "rules" part of step())."""
    columns = ["total", "last()", "encoding", "step()", "rules", "pick", "game ends",
               "reset, iteration"]
    lines = ["| env | " + " | ".join(f"{c} (us)" for c in columns) + " | decisions/game |",
             "|---|" + "---:|" * (len(columns) + 1)]
    rows = [("noop (bare)", NoOpEnv, False)]
    rows += [(g, factories(load_spec(g)).raw_env, True) for g in games]
    for label, make, inner in rows:
        parts = split(make, seconds, inner=inner)
        cells = [f"{parts[c]:.2f}" if c in parts else "" for c in columns]
        cells.append(f"{parts['decisions/game']:.1f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Environment speed benchmark (random legal play).")
    parser.add_argument("games", nargs="*", help="env names (default: every registered env)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per target per round")
    parser.add_argument(
        "--rounds", type=int, default=5, help="interleaved rounds (median reported)"
    )
    parser.add_argument(
        "--anchors",
        action="store_true",
        help="also PettingZoo's texas_holdem_v4 and RLCard's uno, if installed",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead, show where raw_env() time goes per game (cProfile shares)",
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="instead, time last(), step() and the rest of raw_env() random play in place "
        "(microseconds per decision)",
    )
    args = parser.parse_args(argv)
    games = args.games or env_names()
    if args.profile:
        print(profile(games, args.seconds))
        return 0
    if args.split:
        print(split_table(games, args.seconds))
        return 0
    print(f"{args.rounds} interleaved rounds of {args.seconds:g} s per target; medians")
    print(report(run(games, args.seconds, args.rounds, args.anchors)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
