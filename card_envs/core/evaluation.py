"""Play agents against each other: matches with rotated seats, duplicate deals, Wilson intervals.

Games are driven straight through the rules object (no env overhead). Every
game g of a run with seed S draws its deal and chance events from the generator
``default_rng([S, g, 0])`` and the agents' choices from ``default_rng([S, g, 1])``
(``[S, g, 2]`` in the second game of a duplicate pair), so a run is reproducible
and a duplicate pair replays exactly the same deal with fresh agent randomness.
Each game is therefore replayable by itself: ``default_rng([S, g, 0])`` and its actions give
it again, step for step; ``keep`` (a callback of ``evaluate`` and ``duplicate_evaluate``)
hands every finished game over as a ``PlayedGame`` for a record (``card_envs.records``).

Reports (``MatchResult.summary``) say what the game's score counts (``Game.score_name``),
give one line per team in team games (``Game.teams``), and for games that rank players by
the order they go out (``place`` in the game's results, e.g. Palace) give losses and places
instead of "wins" that would only mean "not last" (``Game.result_note`` says what a loss is).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from card_envs.core.agents import Agent
from card_envs.core.game import Game, State, View
from card_envs.core.seat_text import text_view

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
    places: list[int] | None = None  # per seat (1 = first out), for games that rank players
    state: State | None = None  # the final state


@dataclass(frozen=True)
class PlayedGame:
    """One finished game as a record keeps it: how to deal it again, who sat where, every move.

    ``seed`` is the entropy of the game's generator (``numpy.random.default_rng(seed)``
    deals the game and draws every chance event); ``seats[p]`` is the contestant (the
    index into the agents given) that played seat p; ``state`` is the final state.
    """

    seed: int | list[int]
    seats: tuple[int, ...]
    actions: tuple[int, ...]
    state: State


Keep = Callable[[PlayedGame], None]


def agent_view(game: Game, state, seat: int, agent: Agent) -> View:
    """The view ``agent`` acts on: its seat's view; for an agent that reads the table as text
    (one with a ``text_spec``: the spec of its game) the seat's ``TextView``
    (card_envs.core.seat_text), made here so that the agent never holds the state."""
    spec = getattr(agent, "text_spec", None)
    return game.view(state, seat) if spec is None else text_view(spec, game, state, seat)


def _seat_views(game: Game, agents: Sequence[Agent | None], state, seat: int) -> View:
    """``agent_view`` of ``seat`` for the agent in that seat."""
    return agent_view(game, state, seat, agents[seat])


def play_move(game: Game, state, agent: Agent, game_rng: np.random.Generator,
              agent_rng: np.random.Generator | None = None) -> tuple[int, np.ndarray | None]:
    """One move of the seat to act, chosen by ``agent`` from that seat's view (``agent_view``),
    checked (an illegal choice raises, naming it and the legal actions) and applied with
    ``Game.apply``; returns the action and its rewards (None when all are zero)."""
    p = state.player
    action = agent.act(agent_view(game, state, p, agent),
                       game_rng if agent_rng is None else agent_rng)
    return action, game.apply(state, action, game_rng)  # raises for an illegal action


def play_until(game: Game, state, agents: Sequence[Agent | None], game_rng: np.random.Generator,
               agent_rng: np.random.Generator | None = None,
               until_player: int | None = None) -> np.ndarray | None:
    """The play loop (evaluation and the Gymnasium view's opponents): the seat to act moves by
    ``agents[seat]`` (``play_move``) until the game is over or ``until_player`` is to act, or
    a seat whose agent is None (the learner's); returns the rewards paid to each seat
    meanwhile (None when none were)."""
    earned = None
    agent_rng = game_rng if agent_rng is None else agent_rng
    view, apply = game.view, game.apply
    if any(getattr(agent, "text_spec", None) is not None for agent in agents):
        view = partial(_seat_views, game, agents)  # an agent reads text
    while (not (state.terminal or state.truncated) and state.player != until_player
           and agents[state.player] is not None):
        # play_move, inline: this loop runs every opponent move of the Gymnasium view
        p = state.player
        rewards = apply(state, agents[p].act(view(state, p), agent_rng), game_rng)
        if rewards is not None:
            earned = rewards.copy() if earned is None else earned + rewards
    return earned


def play_game(
    game: Game,
    agents: Sequence[Agent],
    game_rng: np.random.Generator,
    agent_rng: np.random.Generator,
    state=None,
    actions: list[int] | None = None,
) -> GameRecord:
    """Play one game to its end; ``agents[seat]`` acts for each seat (they see only their view).

    Given a list, ``actions`` gets every action in order (what a record keeps); the moves
    are the same either way.
    """
    s = game.init(game_rng) if state is None else state
    for agent in agents:
        if hasattr(agent, "reset"):
            agent.reset()
    if actions is None:
        play_until(game, s, agents, game_rng, agent_rng)
    else:  # move by move (play_until's loop, with the actions noted)
        while not (s.terminal or s.truncated):
            actions.append(play_move(game, s, agents[s.player], game_rng, agent_rng)[0])
    return GameRecord(game.payoffs(s), game.scores(s), s.steps, s.truncated, _places(game, s),
                      s)


def _places(game: Game, s) -> list[int] | None:
    """Each seat's place at the end of a game, when the game's results give every seat one."""
    if not (s.terminal or s.truncated):
        return None
    places = [r.get("place") for r in game.results(s)]
    return None if any(p is None for p in places) else [int(p) for p in places]


def deal_seed(seed: int, g: int) -> list[int]:
    """The entropy of game ``g``'s generator in a run seeded ``seed``: ``[seed, g, 0]``."""
    return [seed, g, 0]


def game_rngs(seed: int, g: int, replay: int = 0) -> tuple[np.random.Generator,
                                                          np.random.Generator]:
    """Game ``g`` of a run (or a play session) seeded ``seed``: its generator (``deal_seed``)
    and its agents' generator, so that each game replays by itself; a ``replay`` of the game
    (duplicate deals) shares the deal only."""
    return np.random.default_rng(deal_seed(seed, g)), np.random.default_rng([seed, g, 1 + replay])


def _kept(keep: Keep | None, seed: int, g: int, seats: Sequence[int],
          actions: list[int] | None, rec: GameRecord) -> None:
    """Hand game ``g`` to ``keep`` (when there is one)."""
    if keep is not None:
        keep(PlayedGame(deal_seed(seed, g), tuple(seats), tuple(actions or ()), rec.state))


@dataclass
class Tally:
    """Win / draw / loss counts of one contestant, with rates and 95% Wilson intervals.

    A game counts as a win when the contestant's payoff is positive, a loss when
    negative, a draw when zero (e.g. a game cut by the step cap that pays 0). Games that
    rank their players also count each place (``place_counts[k]``: games ended in place
    k + 1), and their reports give losses and places instead of wins.
    """

    name: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    payoff_sum: float = 0.0
    score_sum: float = 0.0
    score_sq_sum: float = 0.0
    scored: int = 0
    score_min: float = math.inf
    score_max: float = -math.inf
    place_counts: list[int] = field(default_factory=list)

    def add(self, payoff: float, score: float | None = None, place: int | None = None) -> None:
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
            self.score_min = min(self.score_min, score)
            self.score_max = max(self.score_max, score)
        if place is not None:
            if place > len(self.place_counts):
                self.place_counts += [0] * (place - len(self.place_counts))
            self.place_counts[place - 1] += 1

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def placed(self) -> int:
        """Games with a place (finished games of a game that ranks its players)."""
        return sum(self.place_counts)

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

    @property
    def mean_place(self) -> float | None:
        n = self.placed
        return sum(k * c for k, c in enumerate(self.place_counts, 1)) / n if n else None

    def score_interval(self) -> tuple[float, float]:
        """A 95% interval for the mean score, inside the range of the scores seen.

        The normal approximation, clipped to the lowest and highest score observed: a mean
        can be neither below the one nor above the other, and both lie inside the range
        the score can take (near its bounds, e.g. 0 lives, the plain normal interval would
        cross them).
        """
        n, mean = self.scored, self.mean_score or 0.0
        if n < 2:
            return (mean, mean)
        var = max(0.0, (self.score_sq_sum - n * mean * mean) / (n - 1))
        half = Z95 * math.sqrt(var / n)
        return (max(mean - half, self.score_min), min(mean + half, self.score_max))

    def summary(self) -> str:
        """One line: rates with 95% intervals (losses and places for games that rank players)."""
        if self.placed:
            return self._placed_summary()
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

    def _placed_summary(self) -> str:
        lo, ll, lh = self.rate("losses")
        unranked = self.games - self.placed
        places = " ".join(
            f"{_ordinal(k)} {c / self.placed:.1%}" for k, c in enumerate(self.place_counts, 1)
        )
        text = f"{self.name}: lost {lo:.1%} [{ll:.1%}, {lh:.1%}]"
        if unranked:
            text += f"  unranked {unranked / self.games:.1%}"
        text += f"  places {places}  mean place {self.mean_place:.2f}"
        return text + f"  mean payoff {self.mean_payoff:+.3f}"


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


@dataclass
class MatchResult:
    """Results of a run: one Tally per contestant, plus per-seat payoffs and game lengths.

    ``teams`` lists the contestants (indices into ``tallies``) that shared a team in every
    game, when the game has teams; ``score_name`` says what the score counts.
    """

    tallies: list[Tally]
    games: int
    seed: int
    mean_length: float
    truncated: int
    seat_payoff: list[float] = field(default_factory=list)
    kind: str = "match"
    score_name: str = "score"
    teams: list[list[int]] | None = None
    rotated: bool = True
    result_note: str = ""

    def team_tallies(self) -> list[Tally]:
        """One Tally per team ("team A (a@0, b@2)"), or the contestants' when no teams."""
        if not self.teams:
            return list(self.tallies)
        out = []
        for k, members in enumerate(self.teams):
            names = ", ".join(self.tallies[i].name for i in members)
            out.append(replace(self.tallies[members[0]], name=f"team {chr(65 + k)} ({names})"))
        return out

    def summary(self) -> str:
        """The run (games, seed, seating), what the figures mean, then one line per contestant.

        Team games get one line per team instead: its members share every result.
        """
        duplicate = self.kind == "duplicate"
        if duplicate:
            seating = "every deal played twice with the seats swapped"
        elif len(self.tallies) == 1:
            seating = "one player"
        else:
            seating = "seats rotated every game" if self.rotated else "fixed seats"
        lines = [
            f"{self.games} {'pairs' if duplicate else 'games'}, seed {self.seed}, {seating}; "
            f"mean length {self.mean_length:.1f} steps, {self.truncated} cut by the step cap"
        ]
        placed = any(t.placed for t in self.tallies)
        if placed:
            unplaced = any(t.placed < t.games for t in self.tallies)
            lines.append(
                f"lost = {self.result_note or 'a lost game; place 1 = the best place'}"
                + ("; places are shares of the games that ranked the players" if unplaced else "")
            )
        if any(t.scored for t in self.tallies):
            pair = " (both games of a pair added)" if duplicate else ""
            lines.append(
                f"score = {self.score_name}{pair}; [low, high] = 95% interval (Wilson for "
                "rates; for the mean score, normal, within the scores seen)"
            )
        elif not placed:
            lines.append("[low, high] = 95% Wilson interval")
        if self.teams:
            lines.append("one line per team: its players share every result")
        lines += [t.summary() for t in self.team_tallies()]
        return "\n".join(lines)


def evaluate(
    game: Game,
    agents: Sequence[Agent],
    games: int,
    seed: int = 0,
    rotate: bool = True,
    names: Sequence[str] | None = None,
    keep: Keep | None = None,
) -> MatchResult:
    """Play ``games`` games with ``agents[i]`` as contestant i (one per seat).

    With ``rotate`` contestant i sits in seat ``(i + g) % n`` in game g, so every
    contestant plays every seat equally often. Team games score a contestant by its
    seat's payoff, so alternating lineups keep the teams intact under rotation.
    ``keep`` gets every game as it ends (a ``PlayedGame``: ``seats`` are contestants).
    """
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{game.name} has {n} seats; give {n} agents, got {len(agents)}")
    names = list(names) if names is not None else [_agent_name(a, i) for i, a in enumerate(agents)]
    lineups = rotated_lineups(n, games, rotate)
    records = []
    for g, contestant_of in enumerate(lineups):
        actions = None if keep is None else []
        rec = play_game(game, [agents[i] for i in contestant_of], *game_rngs(seed, g),
                        actions=actions)
        _kept(keep, seed, g, contestant_of, actions, rec)
        records.append(rec)
    return rotated_result(game, records, lineups, names, seed, rotate)


def rotated_lineups(n: int, games: int, rotate: bool = True) -> list[list[int]]:
    """Per game, the contestant in each seat: with ``rotate`` contestant i sits in seat
    ``(i + g) % n`` in game g, else in seat i."""
    return [[(seat - (g % n if rotate else 0)) % n for seat in range(n)] for g in range(games)]


def rotated_result(game: Game, records: Sequence[GameRecord], lineups: Sequence[Sequence[int]],
                   names: Sequence[str], seed: int, rotate: bool) -> MatchResult:
    """The MatchResult of ``evaluate``'s games (``lineups[g][seat]``: the contestant there)."""
    n = game.num_players
    games = len(records)
    tallies = [Tally(names[i]) for i in range(n)]
    seat_payoff = np.zeros(n)
    lengths = truncated = 0
    for rec, contestant_of in zip(records, lineups, strict=True):
        for seat, i in enumerate(contestant_of):
            tallies[i].add(
                float(rec.payoffs[seat]),
                None if rec.scores is None else float(rec.scores[seat]),
                None if rec.places is None else rec.places[seat],
            )
        seat_payoff += rec.payoffs
        lengths += rec.steps
        truncated += rec.truncated
    for tally in tallies:  # every place listed, those never reached too
        if tally.place_counts:
            tally.place_counts += [0] * (n - len(tally.place_counts))
    shifts = range(min(games, n)) if rotate else range(1)
    return MatchResult(
        tallies,
        games,
        seed,
        lengths / max(games, 1),
        truncated,
        (seat_payoff / max(games, 1)).tolist(),
        score_name=game.score_name,
        teams=_contestant_teams(game, shifts),
        rotated=rotate,
        result_note=game.result_note,
    )


def _contestant_teams(game: Game, shifts: Sequence[int]) -> list[list[int]] | None:
    """The contestants that sat on one team in every game (seat i + shift), or None.

    With alternating teams (Literature: even and odd seats) rotation by one seat keeps
    contestants i and i + 2 together, so the teams of contestants stay fixed.
    """
    seat_teams = game.teams()
    if not seat_teams or not shifts:
        return None
    n = game.num_players
    team_of = {seat: k for k, seats in enumerate(seat_teams) for seat in seats}
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in range(n):
        groups.setdefault(tuple(team_of[(i + s) % n] for s in shifts), []).append(i)
    if len(groups) != len(seat_teams):
        return None  # the rotation split a team: report contestants one by one
    return sorted(groups.values())


def duplicate_evaluate(
    game: Game,
    agent_a: Agent,
    agent_b: Agent,
    pairs: int,
    seed: int = 0,
    names: Sequence[str] | None = None,
    keep: Keep | None = None,
) -> MatchResult:
    """Duplicate evaluation for two-player games: every deal is played twice, seats swapped.

    Game 1 seats A in seat 0 and B in seat 1; game 2 replays the same deal (same
    generator seed) with B in seat 0 and A in seat 1. A wins the pair when its
    total score over the two games beats B's (the game's ``scores``, e.g. tricks;
    payoffs when the game has no score); equal totals draw. For the trick game this
    is source 003's rule: A took more tricks with hand 0 than B did. ``keep`` gets both
    games of every pair as they end (``seats`` (0, 1), then (1, 0); one deal seed).
    """
    if game.num_players != 2:
        raise ValueError(
            f"duplicate evaluation needs a 2-player game; {game.name} has {game.num_players}"
        )
    names = list(names) if names is not None else [_agent_name(agent_a, 0), _agent_name(agent_b, 1)]
    firsts, seconds = [], []
    for g in range(pairs):
        moves = None if keep is None else []
        first = play_game(game, [agent_a, agent_b], *game_rngs(seed, g), actions=moves)
        _kept(keep, seed, g, (0, 1), moves, first)
        moves = None if keep is None else []
        second = play_game(game, [agent_b, agent_a], *game_rngs(seed, g, replay=1), actions=moves)
        _kept(keep, seed, g, (1, 0), moves, second)
        firsts.append(first)
        seconds.append(second)
    return duplicate_result(game, firsts, seconds, names, seed)


def duplicate_result(game: Game, firsts: Sequence[GameRecord], seconds: Sequence[GameRecord],
                     names: Sequence[str], seed: int) -> MatchResult:
    """The MatchResult of ``duplicate_evaluate``'s pairs (each deal's game with A in seat 0,
    then with B in seat 0)."""
    pairs = len(firsts)
    ta, tb = Tally(names[0]), Tally(names[1])
    lengths = truncated = 0
    scored = True
    for first, second in zip(firsts, seconds, strict=True):
        scored = first.scores is not None
        a_total = _points(first, 0) + _points(second, 1)
        b_total = _points(first, 1) + _points(second, 0)
        diff = float(np.sign(a_total - b_total))
        ta.add(diff, a_total)
        tb.add(-diff, b_total)
        lengths += first.steps + second.steps
        truncated += first.truncated + second.truncated
    return MatchResult(
        [ta, tb],
        pairs,
        seed,
        lengths / max(2 * pairs, 1),
        truncated,
        kind="duplicate",
        score_name=game.score_name if scored else "payoff",
    )


def _points(rec: GameRecord, seat: int) -> float:
    return float(rec.scores[seat] if rec.scores is not None else rec.payoffs[seat])


def _agent_name(agent: Agent, i: int) -> str:
    return f"{getattr(agent, 'name', type(agent).__name__)}#{i}"
