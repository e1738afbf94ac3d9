"""Strength ladder: every agent of a game plays the others; ratings with intervals; docs.

``card-envs ladder GAME`` plays every agent a game's spec lists (``random``, the rule
agents, each search agent at two budgets, the shipped model ``best`` when one loads for
those rules, and ``best+search``, that model guiding the game's search) and prints a
table; ``card-envs ladder all --write`` runs every setting of ``SETTINGS`` and writes
docs/ladder.md (with a plot per setting under docs/img/) and the ladder block of each
game's docs page, in the checkout it is run in (``--write DIR``: the checkout in DIR); it
never writes where the package is installed.

How agents meet, by the shape of the game:

- one player (98 Cards): each agent plays ``games`` deals alone (its own deals: agent i's
  game g is deal ``[seed, i, g]``); the table gives its win rate (Wilson 95% interval) and
  mean score (normal 95% interval), no rating.
- two players (simple tricks, Thirty-One at 2 players): every pair of agents plays
  duplicate deals (each deal twice, seats swapped); a pair of games is one rated match,
  won by the larger total score (tricks; the payoff for a game without a score). For a
  game small enough to solve (its spec's ``exact_solver``: simple tricks) the table adds
  each agent's regret: what it gives away per game against perfect play.
- two teams (Literature): every pair of agents plays with one agent in all the seats of
  one team and the other in the other team's seats, seats rotated game by game.
- free for all (Palace; Thirty-One with 3 or more players): every set of
  ``num_players`` different agents plays, seats rotated game by game.

A setting may give a match whose every agent has a batched form (the rule agents, a trained
model) more games than the others (``batched_games``, ``--batched-games``): the twin plays
them at once, for little time, and they narrow the intervals of the agents such matches
rate, the shipped model and the rule agents among them, where the search agents' matches
(game by game) keep the setting's ``games``.

Ratings are OpenSkill's Plackett-Luce model (no drift: ``tau=0``) fitted by one pass over
every game in a seeded random order; the interval is mu +- 1.96 sigma. Game g of a match
between a lineup draws its deal from ``default_rng([seed, match, g, 0])`` and its agents'
choices from ``default_rng([seed, match, g, 1])``, so a ladder run is reproducible; for
duplicate deals the second game replays the deal with ``[..., 2]`` for the agents; with
``--record FILE`` every game is written there, its seed ``[seed, match, g, 0]``
(docs/records.md). The cost per move is the mean wall time of an agent's ``act`` on this
machine (the only number here that a rerun does not reproduce exactly).
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.agents import Agent, make_agent, search_budgets
from card_envs.core.evaluation import Tally, play_game
from card_envs.core.game import Game, View
from card_envs.core.spec import GameSpec
from card_envs.records import RecordWriter, make_record
from card_envs.registry import env_names, load_spec

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Setting:
    """One ladder of docs/ladder.md: a game, its rules arguments and how many games to play.

    ``games``: games per agent (one player), duplicate deals per pair of agents (two
    players) or games per lineup (teams, free for all). ``batched_games``: as many for a
    match whose every agent has a batched form (the rule agents, a trained model: the twin
    plays all its games at once), where more games cost little and narrow the intervals
    of the agents a search-free match rates; None: ``games``.
    """

    env_name: str
    game_args: dict[str, Any]
    games: int
    title: str
    batched_games: int | None = None

    @property
    def games_batched(self) -> int:
        """Games of a match whose every agent has a batched form."""
        return self.games if self.batched_games is None else self.batched_games

    @property
    def key(self) -> str:
        """``literature_v0-original``: the env name, then the rules arguments' values."""
        return "-".join([self.env_name, *(str(v) for v in self.game_args.values())])

    def command(self, seed: int = 0) -> str:
        """The command that runs this setting and writes its part of the docs."""
        sets = "".join(f" --set {k}={v}" for k, v in self.game_args.items())
        more = "" if self.games_batched == self.games else f" --batched-games {self.games_batched}"
        return (f"card-envs ladder {self.env_name}{sets} --games {self.games}{more} "
                f"--seed {seed} --write")

    def with_games(self, games: int | None, batched_games: int | None = None) -> Setting:
        """This setting with other game counts: ``games`` (None: its own) and
        ``batched_games`` (None: its own when ``games`` is None, else ``games``)."""
        if games is None and batched_games is None:
            return self
        if batched_games is None:
            batched_games = self.batched_games if games is None else None
        return Setting(self.env_name, self.game_args, self.games if games is None else games,
                       self.title, batched_games)


# The page's sections: each game's (its spec's ``ladder``), in the order of the registry.
SETTINGS: tuple[Setting, ...] = tuple(
    Setting(spec.env_name, dict(section.rules), section.games, section.title,
            section.batched_games)
    for spec in map(load_spec, env_names()) for section in spec.ladder
)
QUICK_GAMES = 2


# --- agents --------------------------------------------------------------------------------
def agent_names(spec: GameSpec, quick: bool = False) -> list[str]:
    """The names the ladder plays: random, rule agents, search agents at two budgets.

    ``quick`` keeps only the lower budget of each search agent.
    """
    names = ["random"]
    for name, cls in spec.agents.items():
        budgets = search_budgets(cls)
        if budgets is None:
            names.append(name)
        else:
            names += [f"{name}:{b}" for b in (budgets[:1] if quick else budgets)]
    return names


class TimedAgent:
    """An agent that counts its moves and the wall time of its ``act`` calls."""

    def __init__(self, agent: Agent):
        self.agent = agent
        self.name = getattr(agent, "name", type(agent).__name__)
        # an agent that reads the table as text gets its text view through this wrapper
        self.text_spec = getattr(agent, "text_spec", None)
        self.moves = 0
        self.seconds = 0.0

    def reset(self) -> None:
        if hasattr(self.agent, "reset"):
            self.agent.reset()

    def act(self, view: View, rng: np.random.Generator) -> int:
        start = time.perf_counter()
        action = self.agent.act(view, rng)
        self.seconds += time.perf_counter() - start
        self.moves += 1
        return action


class Roster:
    """The ladder's agents by name: instances made on demand, one per seat they fill."""

    def __init__(self, spec: GameSpec, game: Game, names: Sequence[str]):
        self.spec, self.game, self.names = spec, game, list(names)
        self._made: dict[str, list[TimedAgent]] = {n: [] for n in self.names}
        self._batched: dict[str, tuple[float, int]] = {}

    def seats(self, name: str, count: int) -> list[TimedAgent]:
        """``count`` distinct instances of ``name`` (agents may keep per-game memory)."""
        made = self._made[name]
        while len(made) < count:
            made.append(TimedAgent(make_agent(self.spec, name, self.game)))
        return made[:count]

    def add_cost(self, name: str, seconds: float, moves: int) -> None:
        """Count ``moves`` of ``name`` that took ``seconds`` (batched play)."""
        seconds_, moves_ = self._batched.get(name, (0.0, 0))
        self._batched[name] = (seconds_ + seconds, moves_ + moves)

    def cost_ms(self, name: str) -> float:
        """Mean milliseconds per move of ``name`` so far (batched moves included)."""
        made = self._made[name]
        seconds, moves = self._batched.get(name, (0.0, 0))
        moves += sum(a.moves for a in made)
        seconds += sum(a.seconds for a in made)
        return 1000.0 * seconds / moves if moves else float("nan")


def with_best(spec: GameSpec, game: Game, names: list[str]) -> tuple[list[str], str]:
    """``names`` plus ``best`` if a shipped model loads for these rules, and ``best+search``
    (the model guiding its game's search, as it ships) where the game has a search a model
    can guide; and a note of what is left out, and why."""
    try:
        make_agent(spec, "best", game)
    except (ValueError, ImportError) as err:
        return names, f"`best` is not on this ladder: {err}"
    try:
        make_agent(spec, "best+search", game)
    except ValueError as err:
        return [*names, "best"], f"`best+search` is not on this ladder: {err}"
    return [*names, "best", "best+search"], ""


# --- results -------------------------------------------------------------------------------
@dataclass
class Row:
    """One agent's line of a ladder table."""

    name: str
    tally: Tally
    cost_ms: float
    rating: tuple[float, float] | None = None  # mu, sigma
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def interval(self) -> tuple[float, float]:
        mu, sigma = self.rating or (float("nan"), float("nan"))
        return (mu - Z95 * sigma, mu + Z95 * sigma)


@dataclass
class LadderResult:
    """A ladder's rows (best first), what was played, and how to rerun it."""

    setting: Setting
    kind: str  # "solo", "duplicate", "teams" or "free for all"
    players: int
    rows: list[Row]
    matches: int
    games: int  # games played in all
    seed: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    def table(self) -> list[str]:
        """The ladder as markdown table lines."""
        if self.kind == "solo":
            head = "| agent | win rate [95% CI] | mean score [95% CI] | games | ms per move |"
            lines = [head, "|---|---|---|---|---|"]
            for r in self.rows:
                w, lo, hi = r.tally.rate("wins")
                s_lo, s_hi = r.tally.score_interval()
                lines.append(
                    f"| `{r.name}` | {w:.1%} [{lo:.1%}, {hi:.1%}] | {r.tally.mean_score:.2f} "
                    f"[{s_lo:.2f}, {s_hi:.2f}] | {r.tally.games} | {_ms(r.cost_ms)} |"
                )
            return lines
        extra = list(self.rows[0].extra) if self.rows else []
        played = "duplicate deals" if self.kind == "duplicate" else "games"
        head = f"| rank | agent | rating [95% CI] | {played} | win rate [95% CI] | ms per move |"
        head += "".join(f" {e} |" for e in extra)
        lines = [head, "|---|---|---|---|---|---|" + "---|" * len(extra)]
        for i, r in enumerate(self.rows, 1):
            mu = r.rating[0] if r.rating else float("nan")
            lo, hi = r.interval
            w, wl, wh = r.tally.rate("wins")
            line = (
                f"| {i} | `{r.name}` | {mu:.1f} [{lo:.1f}, {hi:.1f}] | {r.tally.games} "
                f"| {w:.1%} [{wl:.1%}, {wh:.1%}] | {_ms(r.cost_ms)} |"
            )
            lines.append(line + "".join(f" {r.extra[e]} |" for e in extra))
        return lines

    def summary(self) -> str:
        """What the command prints: the setting, what was played, the table, the notes."""
        return "\n".join(
            [
                f"{self.setting.title}: {self.kind}, {self.matches} matches, {self.games} "
                f"games, seed {self.seed}, {self.seconds:.0f} s",
                *self.table(),
                *self.notes,
            ]
        )


def _ms(value: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


# --- playing the ladder --------------------------------------------------------------------
def match_kind(game: Game) -> str:
    """How agents meet in ``game``: solo, duplicate, teams (two alternating teams, a game
    with ``team_size``) or free for all."""
    if game.num_players == 1:
        return "solo"
    if game.num_players == 2:
        return "duplicate"
    if getattr(game, "team_size", None):
        return "teams"
    return "free for all"


def _rngs(seed: int, match: int, g: int, replay: int = 0):
    return (
        np.random.default_rng([seed, match, g, 0]),
        np.random.default_rng([seed, match, g, 1 + replay]),
    )


class _Games:
    """Plays the ladder's games, and writes each to ``records`` when it is given.

    A match's games are played on the game's batched twin, all at once, when every agent of
    the match has a batched form (``card_envs.vector.evaluation.batched_form``: the rule
    agents, a trained model) and ``scalar`` is not asked for; else one by one. Either way
    they are the same games (the same deals, the agents drawing from the same generators;
    a model that samples excepted); the cost of a batched agent is its share of the time of
    the batch's moves."""

    def __init__(self, spec: GameSpec, game: Game, seed: int, records: RecordWriter | None,
                 key: str, roster: Roster, scalar: bool = False):
        self.spec, self.game, self.seed, self.records, self.key = spec, game, seed, records, key
        self.roster, self.scalar = roster, scalar
        self._has_form: dict[str, bool] = {}  # whether a name has a batched form

    def batchable(self, names: Sequence[str]) -> bool:
        """Whether every agent of ``names`` has a batched form (whether or not ``scalar``
        asks for the games one by one: a match plays as many games either way)."""
        if all(name in self._has_form for name in names):
            return all(self._has_form[name] for name in names)
        return self._forms(set(names)) is not None

    def play_match(self, plan: Sequence[tuple[Sequence[str], int, int]], match: int) -> list:
        """The records of the games of ``plan`` (seat names, game g, replay) of ``match``."""
        forms = None if self.scalar else self._forms({n for names, _, _ in plan for n in names})
        if forms is None:
            return [self._play(names, match, g, replay) for names, g, replay in plan]
        from card_envs.vector.evaluation import play_records

        contestants = list(forms)
        lineups = [[contestants.index(name) for name in names] for names, _, _ in plan]
        clock: dict[int, list[float]] = {}
        records = play_records(
            self.spec, self.game, [forms[name] for name in contestants], lineups,
            [[self.seed, match, g, 0] for _, g, _ in plan],
            [[self.seed, match, g, 1 + replay] for _, g, replay in plan],
            keep=None if self.records is None else self._keeper(plan, match, contestants),
            clock=clock)
        for k, (seconds, moves) in clock.items():
            self.roster.add_cost(contestants[k], seconds, int(moves))
        return records

    def _forms(self, names: set[str]) -> dict[str, Any] | None:
        """Each name's batched form, or None unless every name has one."""
        from card_envs.vector.evaluation import batched_form

        forms = {}
        for name in sorted(names):
            if self._has_form.get(name) is False:
                return None
            form = batched_form(self.spec, name, self.roster.seats(name, 1)[0].agent, self.seed)
            self._has_form[name] = form is not None
            if form is None:
                return None
            forms[name] = form
        return forms

    def _keeper(self, plan, match: int, contestants: list[str]):
        """The ``keep`` that writes the batch's games (handed over in ``plan``'s order)."""
        order = iter(plan)

        def keep(played) -> None:
            _, g, replay = next(order)
            self._write([contestants[k] for k in played.seats], match, g, replay,
                        played.actions, played.state)

        return keep

    def _play(self, names: Sequence[str], match: int, g: int, replay: int):
        """Game ``g`` of ``match`` (``replay`` 1: the second game of a duplicate deal), one by
        one, each seat a distinct instance of its agent (agents may keep per-game memory)."""
        used: dict[str, int] = {}
        agents = []
        for name in names:
            agents.append(self.roster.seats(name, used.get(name, 0) + 1)[used.get(name, 0)])
            used[name] = used.get(name, 0) + 1
        actions = None if self.records is None else []
        rec = play_game(self.game, agents, *_rngs(self.seed, match, g, replay), actions=actions)
        if self.records is not None:
            self._write(names, match, g, replay, actions, rec.state)
        return rec

    def _write(self, names, match: int, g: int, replay: int, actions, state) -> None:
        source = f"ladder {self.key} match {match} game {g}" + (" replayed" if replay else "")
        self.records.write(make_record(self.spec, self.game, [self.seed, match, g, 0],
                                       list(names), list(actions), state, source))


def match_plan(kind: str, lineup: Sequence[str], games: int,
               n: int) -> list[tuple[list[str], int, int]]:
    """A match's games in order: (the agent in each seat, game g, replay) — duplicate deals
    twice (replay 1: seats swapped), teams and free for all with the seats rotated."""
    if kind == "solo":
        return [([lineup[0]], g, 0) for g in range(games)]
    if kind == "duplicate":
        return [game for g in range(games)
                for game in ((list(lineup), g, 0), (list(lineup[::-1]), g, 1))]
    names_at = [lineup[seat % 2] for seat in range(n)] if kind == "teams" else list(lineup)
    return [([names_at[(seat - g % n) % n] for seat in range(n)], g, 0) for g in range(games)]


def _ranks(values: Sequence[float]) -> list[int]:
    """1 for the best value, ties share a rank (competition ranking)."""
    return [1 + sum(v > x for v in values) for x in values]


def run_ladder(
    setting: Setting,
    games: int | None = None,
    seed: int = 0,
    quick: bool = False,
    names: Sequence[str] | None = None,
    log=None,
    records: RecordWriter | None = None,
    scalar: bool = False,
) -> LadderResult:
    """Play the ladder of ``setting`` and fit the ratings (see the module docstring); with
    ``records``, every game is written there as a record (card_envs/records.py)."""
    spec = load_spec(setting.env_name)
    game = spec.make_game(**setting.game_args)
    if quick and games is None:
        games = QUICK_GAMES
    setting_ = setting.with_games(games)
    games, games_batched = setting_.games, setting_.games_batched
    notes: list[str] = []
    if names is None:
        names, note = with_best(spec, game, agent_names(spec, quick))
        if note:
            notes.append(note)
    else:
        for name in names:
            make_agent(spec, name, game)  # a ValueError naming the valid names, before playing
    roster = Roster(spec, game, names)
    games_ = _Games(spec, game, seed, records, setting.key, roster, scalar)
    kind = match_kind(game)
    tallies = {n: Tally(n) for n in names}
    results: list[tuple[list[str], list[int]]] = []  # (agents of a rated match, their ranks)
    start = time.perf_counter()
    played = 0
    n = game.num_players
    lineups = _lineups(kind, names, n, setting.key)
    for m, lineup in enumerate(lineups):
        if log is not None:
            log(f"{setting.key}: match {m + 1}/{len(lineups)}: {' vs '.join(lineup)}")
        count = games_batched if games_batched != games and games_.batchable(lineup) else games
        plan = match_plan(kind, lineup, count, n)
        played += _tally_match(kind, lineup, plan, iter(games_.play_match(plan, m)), count,
                               tallies, results)
    ratings = fit_ratings(names, results, seed) if kind != "solo" else {}
    rows = [
        Row(name, tallies[name], roster.cost_ms(name), ratings.get(name)) for name in names
    ]
    if kind == "solo":
        rows.sort(key=lambda r: (-r.tally.rate("wins")[0], -(r.tally.mean_score or 0.0)))
    else:
        rows.sort(key=lambda r: -r.rating[0] if r.rating else 0.0)
    if spec.exact_solver is not None:
        add_regret(spec, game, rows, roster, games, seed)
        notes.append(spec.exact_solver.note.format(deals=games))
    return LadderResult(
        setting_, kind, n, rows, len(lineups), played, seed, time.perf_counter() - start, notes
    )


def _lineups(kind: str, names: Sequence[str], n: int, key: str) -> list[list[str]]:
    """The matches of a ladder: each agent alone (solo), every pair (duplicate deals, teams)
    or every set of ``n`` different agents (free for all)."""
    if kind == "solo":
        return [[name] for name in names]
    if kind in ("duplicate", "teams"):
        return [list(pair) for pair in itertools.combinations(names, 2)]
    if len(names) < n:
        raise ValueError(f"{key}: {len(names)} agents cannot fill {n} seats")
    return [list(c) for c in itertools.combinations(names, n)]


def _tally_match(kind: str, lineup: list[str], plan, recs, count: int,
                 tallies: dict[str, Tally], results: list) -> int:
    """Add the ``count`` games (or duplicate pairs) of one match, records ``recs`` as
    ``plan`` seated them, to the agents' ``tallies`` and the rated ``results``; the games."""
    played = 0
    for g in range(count):
        if kind == "solo":
            rec = next(recs)
            tallies[lineup[0]].add(float(rec.payoffs[0]), float(rec.scores[0]))
            played += 1
        elif kind == "duplicate":
            first, second = next(recs), next(recs)
            points = _points(first), _points(second)
            totals = [points[0][0] + points[1][1], points[0][1] + points[1][0]]
            diff = float(np.sign(totals[0] - totals[1]))
            tallies[lineup[0]].add(diff, totals[0])
            tallies[lineup[1]].add(-diff, totals[1])
            results.append((lineup, _ranks(totals)))
            played += 2
        else:  # teams (each agent's seat stands for its team) or free for all
            seat_names = plan[g][0]
            pay = next(recs).payoffs.tolist()
            values = [pay[seat_names.index(name)] for name in lineup]
            for name, value in zip(lineup, values, strict=True):
                tallies[name].add(value)
            results.append((lineup, _ranks(values)))
            played += 1
    return played


def _points(rec) -> list[float]:
    return (rec.scores if rec.scores is not None else rec.payoffs).tolist()


def fit_ratings(
    names: Sequence[str], results: list[tuple[list[str], list[int]]], seed: int
) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett-Luce (mu, sigma) per agent from ranked matches, in a seeded order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce(tau=0.0)
    ratings = {name: model.rating(name=name) for name in names}
    order = np.random.default_rng([seed, 7]).permutation(len(results))
    for i in order:
        lineup, ranks = results[i]
        new = model.rate([[ratings[name]] for name in lineup], ranks=list(ranks))
        for name, team in zip(lineup, new, strict=True):
            ratings[name] = team[0]
    return {name: (r.mu, r.sigma) for name, r in ratings.items()}


def add_regret(spec, game, rows: list[Row], roster: Roster, deals: int, seed: int) -> None:
    """Each row's regret against perfect play, for a game with an exact solver (see the
    module docstring)."""
    for row in rows:
        agent = roster.seats(row.name, 1)[0].agent
        r = spec.exact_solver.regret(game, agent, deals, seed)
        row.extra["regret [95% CI]"] = f"{r.mean:.3f} [{max(r.low, 0.0):.3f}, {r.high:.3f}]"


# --- docs ----------------------------------------------------------------------------------
PAGE_HEAD = """# Strength ladder

Where every agent of every game stands: random play, the rule agents, the search agents at
two budgets, the shipped trained model (`best`) and that model guiding its game's search
(`best+search`, as it plays where the shipped agent searches), each against the others. Generated by
`card-envs ladder all --write` (each section below also names the command that redoes just
that section); do not edit by hand. How agents meet, how ratings are fitted and what the
intervals mean: `card_envs/ladder.py`.

Ratings are OpenSkill (Plackett-Luce) ratings: mu with the interval mu +- 1.96 sigma; they
compare agents within one section only. A win rate counts the games an agent's seat (or
team, or duplicate pair) ended with a positive payoff. Cost per move is wall time on the
machine that ran the ladder (2 shared CPU cores; models play with one torch thread).
"""


def _measure(result: LadderResult, solo_score: bool = False):
    """How a section compares agents: (span(row) -> (value, low, high), what, format).

    Ratings with their 95% intervals; for one player (no ratings), win rates, or with
    ``solo_score`` mean scores."""
    if result.kind == "solo" and solo_score:
        return ((lambda r: (r.tally.mean_score, *r.tally.score_interval())), "mean score",
                "{:.2f}")
    if result.kind == "solo":
        return (lambda r: r.tally.rate("wins")), "win rate", "{:.1%}"

    def span(r: Row) -> tuple[float, float, float]:
        lo, hi = r.interval
        return (r.rating[0] if r.rating else float("nan"), lo, hi)

    return span, "rating", "{:.1f}"


def _split(result: LadderResult, rule_agents: Sequence[str],
           exact: Sequence[str] = ()) -> tuple[list[Row], list[Row]]:
    """The section's search agents (a budget, ``NAME:BUDGET``, or an ``exact`` solver) and its
    rule agents (``rule_agents``, the spec's others)."""
    search = [r for r in result.rows if ":" in r.name or r.name in exact]
    rules = [r for r in result.rows if r.name in rule_agents and r.name not in exact]
    return search, rules


def verdict(result: LadderResult, rule_agents: Sequence[str], exact: Sequence[str] = ()) -> str:
    """Whether the best search agent is clearly above the best rule agent (one sentence).

    Search agents are the ones with a budget (``NAME:BUDGET``) and the game's exact solver
    (``exact``: its spec's ``exact_solver``); rule agents are the spec's other agents.
    "Clearly" means the 95% intervals (ratings; for one player, win rates) do not overlap.
    """
    search, rules = _split(result, rule_agents, exact)
    if not search or not rules:
        return "No search agent on this ladder: nothing to compare with the rule agents."
    span, what, fmt = _measure(result)
    top = max(search, key=lambda r: span(r)[0])
    rival = max(rules, key=lambda r: span(r)[0])
    (v, lo, hi), (rv, rlo, rhi) = span(top), span(rival)
    pair = (f"`{top.name}` ({what} {fmt.format(v)} [{fmt.format(lo)}, {fmt.format(hi)}]) vs "
            f"the best rule agent `{rival.name}` ({fmt.format(rv)} [{fmt.format(rlo)}, "
            f"{fmt.format(rhi)}])")
    if lo > rhi:
        return f"The search is clearly above the rules: {pair}; the intervals do not overlap."
    if v > rv:
        return (f"The search is ahead but not clearly: {pair}; the intervals overlap by "
                f"{fmt.format(rhi - lo)}.")
    return f"The search is not ahead: {pair}; it trails by {fmt.format(rv - v)}."


STANDINGS = {"best": "The shipped model `best`",
             "best+search": "The shipped model guiding its search, `best+search`"}


def standing(result: LadderResult, rule_agents: Sequence[str],
             exact: Sequence[str] = (), name: str = "best") -> str:
    """Where the shipped model stands against the section's best rule agent and best search
    agent (one sentence): ``name`` ``best`` is the network alone, ``best+search`` the network
    guiding its game's search. Clearly above or below where the 95% intervals are apart,
    level where they overlap. For one player the mean scores are compared (98 Cards: cards
    played), which separate agents where win rates of a few percent cannot."""
    best = next((r for r in result.rows if r.name == name), None)
    if best is None:
        return "No shipped model on this ladder." if name == "best" else ""
    search, rules = _split(result, rule_agents, exact)
    span, what, fmt = _measure(result, solo_score=True)
    v, lo, hi = span(best)
    parts = []
    for kind, rows in (("rule agent", rules), ("search agent", search)):
        if not rows:
            continue
        rival = max(rows, key=lambda r: span(r)[0])
        rv, rlo, rhi = span(rival)
        place = ("clearly above" if lo > rhi else "clearly below" if hi < rlo
                 else "level with (the intervals overlap)")
        parts.append(f"{place} the best {kind} `{rival.name}` ({fmt.format(rv)} "
                     f"[{fmt.format(rlo)}, {fmt.format(rhi)}])")
    return (f"{STANDINGS[name]} ({what} {fmt.format(v)} [{fmt.format(lo)}, "
            f"{fmt.format(hi)}]) is " + " and ".join(parts) + ".")


def section_lines(result: LadderResult, img: str | None) -> list[str]:
    """A setting's section of docs/ladder.md."""
    s = result.setting
    unit = {
        "solo": "games per agent",
        "duplicate": "duplicate deals (two games) per pair of agents",
        "teams": "games per pair of agents (one team each, seats rotated)",
        "free for all": f"games per lineup of {result.players} different agents (seats rotated)",
    }[result.kind]
    lines = [
        f"## {s.title} (`{s.key}`)",
        "",
        f"Command: `{s.command(result.seed)}`. {s.games} {unit}"
        + (f" ({s.games_batched} where the twin plays every agent of the match at once)"
           if s.games_batched != s.games else "")
        + f"; {result.matches} matches, {result.games} games in all.",
        "",
        *result.table(),
    ]
    if result.notes:
        lines += ["", *result.notes]
    spec = load_spec(s.env_name)
    exact = () if spec.exact_solver is None else (spec.exact_solver.agent,)
    rule_agents = [n for n, c in spec.agents.items()
                   if not getattr(c, "takes_budget", False) and n not in exact]
    lines += ["", verdict(result, rule_agents, exact), "", standing(result, rule_agents, exact)]
    guided = standing(result, rule_agents, exact, "best+search")
    if guided:
        lines += ["", guided]
    if img:
        lines += ["", f"![ladder of {s.key}]({img})"]
    return lines


def block(key: str, lines: list[str]) -> str:
    """``lines`` between the BEGIN/END markers of setting ``key``."""
    return "\n".join([f"<!-- BEGIN LADDER {key} -->", *lines, f"<!-- END LADDER {key} -->"])


def replace_block(text: str, key: str, new_block: str, where: str | None = None) -> str:
    """``text`` with the block of ``key`` replaced (or inserted before ``where`` / appended)."""
    pattern = re.compile(
        rf"<!-- BEGIN LADDER {re.escape(key)} -->.*?<!-- END LADDER {re.escape(key)} -->", re.S
    )
    if pattern.search(text):
        return pattern.sub(lambda _: new_block, text)
    if where is not None and where in text:
        head, sep, tail = text.partition(where)
        return head + new_block + "\n\n" + sep + tail
    return text.rstrip("\n") + "\n\n" + new_block + "\n"


def page_lines(result: LadderResult) -> list[str]:
    """A setting's short table for the game's own docs page."""
    s = result.setting
    lines = [
        f"**{s.title}**, from [the ladder](../ladder.md) (`{s.command(result.seed)}`):",
        "",
    ]
    if result.kind == "solo":
        lines += ["| agent | win rate [95% CI] | mean score | ms per move |", "|---|---|---|---|"]
        for r in result.rows:
            w, lo, hi = r.tally.rate("wins")
            lines.append(
                f"| `{r.name}` | {w:.1%} [{lo:.1%}, {hi:.1%}] | {r.tally.mean_score:.2f} "
                f"| {_ms(r.cost_ms)} |"
            )
    else:
        extra = list(result.rows[0].extra) if result.rows else []
        lines += [
            "| agent | ladder rating [95% CI] | ms per move |" + "".join(f" {e} |" for e in extra),
            "|---|---|---|" + "---|" * len(extra),
        ]
        for r in result.rows:
            lo, hi = r.interval
            mu = r.rating[0] if r.rating else float("nan")
            lines.append(
                f"| `{r.name}` | {mu:.1f} [{lo:.1f}, {hi:.1f}] | {_ms(r.cost_ms)} |"
                + "".join(f" {r.extra[e]} |" for e in extra)
            )
    return lines


def plot(result: LadderResult, path: Path) -> bool:
    """Draw the ladder (ratings, or mean scores for one player) to ``path``; False without
    matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(reversed(result.rows))
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(rows) + 1.2))
    ys = np.arange(len(rows))
    if result.kind == "solo":
        means = [r.tally.mean_score or 0.0 for r in rows]
        spans = [r.tally.score_interval() for r in rows]
        ax.set_xlabel("mean score (cards played), 95% CI")
        for y, r in zip(ys, rows, strict=True):
            ax.annotate(f"win {r.tally.rate('wins')[0]:.1%}", (means[y], y),
                        textcoords="offset points", xytext=(6, 6), fontsize=8)
    else:
        means = [r.rating[0] if r.rating else 0.0 for r in rows]
        spans = [r.interval for r in rows]
        ax.set_xlabel("OpenSkill rating (mu, 95% CI)")
    err = np.array([[m - lo for m, (lo, _) in zip(means, spans, strict=True)],
                    [hi - m for m, (_, hi) in zip(means, spans, strict=True)]])
    ax.errorbar(means, ys, xerr=err, fmt="o", capsize=3)
    ax.set_yticks(ys, [r.name for r in rows])
    ax.set_title(result.setting.title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_docs(result: LadderResult, root: Path) -> list[Path]:
    """Write a setting's section of ``root``/docs/ladder.md, its plot and its game page block
    (``root``: a checkout, the folder holding docs/; the package never finds one itself)."""
    key = result.setting.key
    img_path = root / "docs" / "img" / f"ladder_{key}.png"
    img = f"img/{img_path.name}" if plot(result, img_path) else None
    page = root / "docs" / "ladder.md"
    text = page.read_text() if page.exists() else PAGE_HEAD
    text = replace_block(text, key, block(key, section_lines(result, img)))
    text = _order_sections(text)
    page.write_text(text)
    game_page = root / "docs" / "games" / f"{load_spec(result.setting.env_name).name}.md"
    written = [page] + ([game_page] if game_page.exists() else []) + ([img_path] if img else [])
    if game_page.exists():
        gtext = game_page.read_text()
        gtext = replace_block(gtext, key, block(key, page_lines(result)), "## Trained baselines")
        game_page.write_text(gtext)
    return written


def _order_sections(text: str) -> str:
    """The page's setting blocks in the order of SETTINGS (others after them)."""
    pattern = re.compile(r"<!-- BEGIN LADDER (\S+) -->.*?<!-- END LADDER \1 -->", re.S)
    blocks = {m.group(1): m.group(0) for m in pattern.finditer(text)}
    head = pattern.split(text)[0].rstrip("\n")
    order = [s.key for s in SETTINGS if s.key in blocks]
    order += [k for k in blocks if k not in order]
    return head + "\n\n" + "\n\n".join(blocks[k] for k in order) + "\n"


# --- command line --------------------------------------------------------------------------
def setting_for(game: str, game_args: dict[str, Any], games: int | None,
                batched_games: int | None = None) -> Setting:
    """The SETTINGS entry for ``game`` with ``game_args``, or a new one; with other game
    counts where they are given (``Setting.with_games``)."""
    spec = load_spec(game)
    for s in SETTINGS:
        if s.env_name == spec.env_name and s.game_args == game_args:
            return s.with_games(games, batched_games)
    args = ", ".join(f"{k}={v!r}" for k, v in game_args.items())
    title = f"{spec.env_name}" + (f" ({args})" if args else "")
    return Setting(spec.env_name, dict(game_args), games or 40, title, batched_games)


def main(args: argparse.Namespace, game_args: dict[str, Any]) -> int:
    """``card-envs ladder``: run one setting (or ``all``), print it, optionally write docs."""
    if args.write and args.quick:
        raise ValueError("--write needs the full ladder: leave out --quick")
    if args.write and args.agents:
        raise ValueError("--write needs every agent: leave out --agents")
    root = None if args.write is None else Path(args.write)
    if root is not None and not (root / "docs").is_dir():
        raise ValueError(f"--write {args.write}: no docs/ folder there; run it in a checkout of "
                         "card-envs, or give the checkout's folder")
    batched_games = getattr(args, "batched_games", None)
    for flag, value in (("--games", args.games), ("--batched-games", batched_games)):
        if value is not None and value < 1:
            raise ValueError(f"{flag} {value}: give a positive number of games")
    if args.game == "all":
        if game_args:
            raise ValueError("--set cannot go with 'all': each setting has its own rules")
        settings = [s.with_games(args.games, batched_games) for s in SETTINGS]
    else:
        settings = [setting_for(args.game, game_args, args.games, batched_games)]
    log = (lambda text: print(text, file=sys.stderr, flush=True)) if args.verbose else None
    records = RecordWriter(args.record) if getattr(args, "record", None) else None
    try:
        for setting in settings:
            result = run_ladder(setting, seed=args.seed, quick=args.quick, names=args.agents,
                                log=log, records=records,
                                scalar=getattr(args, "scalar", False))
            print(result.summary())
            print()
            if root is not None:
                for path in write_docs(result, root):
                    print(f"wrote {path.relative_to(root)}")
    finally:
        if records is not None:
            records.close()
            print(records.summary())
    return 0


def command_line(setting: Setting, seed: int = 0) -> list[str]:
    """``setting.command(seed)`` as argv (for tests and scripts)."""
    return shlex.split(setting.command(seed))[1:]
