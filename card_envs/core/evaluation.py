"""Play agents against each other: matches with rotated seats, duplicate deals, Wilson intervals.

Games are driven straight through the rules object (no env overhead). Every
game g of a run with seed S draws its deal and chance events from the generator
``default_rng([S, g, 0])`` and the agents' choices from ``default_rng([S, g, 1])``
(``[S, g, 2]`` in the second game of a duplicate pair), so a run is reproducible
and a duplicate pair replays exactly the same deal with fresh agent randomness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from card_envs.core.agents import Agent
from card_envs.core.game import Game

Z95 = 1.959963984540054


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval (95% by default) for ``successes`` out of ``n``."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class GameRecord:
    payoffs: np.ndarray  # per seat
    scores: np.ndarray | None  # per seat, game-specific
    steps: int
    truncated: bool


def play_game(
    game: Game,
    agents: Sequence[Agent],
    game_rng: np.random.Generator,
    agent_rng: np.random.Generator,
    state=None,
) -> GameRecord:
    """Play one game to its end; ``agents[seat]`` acts for each seat (they see only their view)."""
    s = game.init(game_rng) if state is None else state
    for agent in agents:
        if hasattr(agent, "reset"):
            agent.reset()
    while not (s.terminal or s.truncated):
        p = s.player
        action = agents[p].act(game.view(s, p), agent_rng)
        if not game.legal_mask(s)[action]:
            game.check_action(s, action)  # raises with the action and the legal ones
        game.apply(s, action, game_rng)
    return GameRecord(game.payoffs(s), game.scores(s), s.steps, s.truncated)


def _rngs(seed: int, g: int, replay: int = 0) -> tuple[np.random.Generator, np.random.Generator]:
    """The game's and the agents' generators for game ``g``; a replay shares the deal only."""
    return np.random.default_rng([seed, g, 0]), np.random.default_rng([seed, g, 1 + replay])


@dataclass
class Tally:
    """Win / draw / loss counts of one contestant, with rates and 95% Wilson intervals.

    A game counts as a win when the contestant's payoff is positive, a loss when
    negative, a draw when zero (games cut by the step cap pay 0: draws).
    """

    name: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    payoff_sum: float = 0.0
    score_sum: float = 0.0
    score_sq_sum: float = 0.0
    scored: int = 0

    def add(self, payoff: float, score: float | None = None) -> None:
        if payoff > 0:
            self.wins += 1
        elif payoff < 0:
            self.losses += 1
        else:
            self.draws += 1
        self.payoff_sum += payoff
        if score is not None:
            self.score_sum += score
            self.score_sq_sum += score * score
            self.scored += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def rate(self, what: str) -> tuple[float, float, float]:
        """(rate, low, high) for ``wins``, ``draws`` or ``losses``."""
        k = getattr(self, what)
        return (k / self.games if self.games else 0.0, *wilson(k, self.games))

    def decided(self) -> tuple[float, float, float]:
        """Wins over decided games (wins + losses), with its 95% interval."""
        n = self.wins + self.losses
        return (self.wins / n if n else 0.0, *wilson(self.wins, n))

    @property
    def mean_payoff(self) -> float:
        return self.payoff_sum / self.games if self.games else 0.0

    @property
    def mean_score(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    def score_interval(self) -> tuple[float, float]:
        """A 95% normal-approximation interval for the mean score."""
        n, mean = self.scored, self.mean_score or 0.0
        if n < 2:
            return (mean, mean)
        var = max(0.0, (self.score_sq_sum - n * mean * mean) / (n - 1))
        half = Z95 * math.sqrt(var / n)
        return (mean - half, mean + half)

    def summary(self) -> str:
        w, wl, wh = self.rate("wins")
        d, _, _ = self.rate("draws")
        lo, ll, lh = self.rate("losses")
        dec, dl, dh = self.decided()
        decided = f"{dec:.1%} [{dl:.1%}, {dh:.1%}]" if self.wins + self.losses else "n/a"
        text = (
            f"{self.name}: win {w:.1%} [{wl:.1%}, {wh:.1%}]  draw {d:.1%}  "
            f"loss {lo:.1%} [{ll:.1%}, {lh:.1%}]  won of decided {decided}  "
            f"mean payoff {self.mean_payoff:+.3f}"
        )
        if self.mean_score is not None:
            low, high = self.score_interval()
            text += f"  mean score {self.mean_score:.2f} [{low:.2f}, {high:.2f}]"
        return text


@dataclass
class MatchResult:
    """Results of a run: one Tally per contestant, plus per-seat payoffs and game lengths."""

    tallies: list[Tally]
    games: int
    seed: int
    mean_length: float
    truncated: int
    seat_payoff: list[float] = field(default_factory=list)
    kind: str = "match"

    def summary(self) -> str:
        head = (
            f"{self.games} {'pairs' if self.kind == 'duplicate' else 'games'}, seed {self.seed}, "
            f"mean length {self.mean_length:.1f} steps, {self.truncated} cut by the step cap"
        )
        return "\n".join([head, *(t.summary() for t in self.tallies)])


def evaluate(
    game: Game,
    agents: Sequence[Agent],
    games: int,
    seed: int = 0,
    rotate: bool = True,
    names: Sequence[str] | None = None,
) -> MatchResult:
    """Play ``games`` games with ``agents[i]`` as contestant i (one per seat).

    With ``rotate`` contestant i sits in seat ``(i + g) % n`` in game g, so every
    contestant plays every seat equally often. Team games score a contestant by its
    seat's payoff, so alternating lineups keep the teams intact under rotation.
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{game.name} has {n} seats; give {n} agents, got {len(agents)}")
    names = list(names) if names is not None else [_agent_name(a, i) for i, a in enumerate(agents)]
    tallies = [Tally(names[i]) for i in range(n)]
    seat_payoff = np.zeros(n)
    lengths = 0
    truncated = 0
    for g in range(games):
        shift = g % n if rotate else 0
        seats = [(i + shift) % n for i in range(n)]  # contestant i -> seat
        lineup = [None] * n
        for i, seat in enumerate(seats):
            lineup[seat] = agents[i]
        rec = play_game(game, lineup, *_rngs(seed, g))
        for i, seat in enumerate(seats):
            tallies[i].add(
                float(rec.payoffs[seat]), None if rec.scores is None else float(rec.scores[seat])
            )
        seat_payoff += rec.payoffs
        lengths += rec.steps
        truncated += rec.truncated
    return MatchResult(
        tallies,
        games,
        seed,
        lengths / max(games, 1),
        truncated,
        (seat_payoff / max(games, 1)).tolist(),
    )


def duplicate_evaluate(
    game: Game,
    agent_a: Agent,
    agent_b: Agent,
    pairs: int,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> MatchResult:
    """Duplicate evaluation for two-player games: every deal is played twice, seats swapped.

    Game 1 seats A in seat 0 and B in seat 1; game 2 replays the same deal (same
    generator seed) with B in seat 0 and A in seat 1. A wins the pair when its
    total score over the two games beats B's (the game's ``scores``, e.g. tricks;
    payoffs when the game has no score); equal totals draw. For the trick game this
    is source 003's rule: A took more tricks with hand 0 than B did.
    """
    if game.num_players != 2:
        raise ValueError(
            f"duplicate evaluation needs a 2-player game; {game.name} has {game.num_players}"
        )
    names = list(names) if names is not None else [_agent_name(agent_a, 0), _agent_name(agent_b, 1)]
    ta, tb = Tally(names[0]), Tally(names[1])
    lengths = 0
    truncated = 0
    for g in range(pairs):
        first = play_game(game, [agent_a, agent_b], *_rngs(seed, g))
        second = play_game(game, [agent_b, agent_a], *_rngs(seed, g, replay=1))
        a_total = _points(first, 0) + _points(second, 1)
        b_total = _points(first, 1) + _points(second, 0)
        diff = float(np.sign(a_total - b_total))
        ta.add(diff, a_total)
        tb.add(-diff, b_total)
        lengths += first.steps + second.steps
        truncated += first.truncated + second.truncated
    return MatchResult(
        [ta, tb], pairs, seed, lengths / max(2 * pairs, 1), truncated, kind="duplicate"
    )


def _points(rec: GameRecord, seat: int) -> float:
    return float(rec.scores[seat] if rec.scores is not None else rec.payoffs[seat])


def _agent_name(agent: Agent, i: int) -> str:
    return f"{getattr(agent, 'name', type(agent).__name__)}#{i}"
