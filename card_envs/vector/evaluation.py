"""Evaluation on the batched twins: the games of ``card_envs.core.evaluation``, all at once.

``evaluate`` and ``duplicate_evaluate`` here take the arguments of the scalar ones (a game,
contestants, games, seed) and give the same ``MatchResult`` — the very same games: game ``g``
is dealt from ``default_rng([seed, g, 0])`` and its agents draw from
``default_rng([seed, g, 1])`` (the second game of a duplicate deal from ``[seed, g, 2]``), as
in the scalar loop, so rule agents that draw (``random``) draw the same numbers too. A
contestant is a batched agent's name (``random`` and the game's rule agents: one compiled call
for every game where its seat is to act) or a ``Player`` (a policy over a batch of
observations: a model, one forward pass). ``batched_contestants`` says whether a lineup can
play here; anything else (a search agent, an agent object) plays in the scalar loop.

Payoffs, scores, places, lengths and step-cap cuts come from the twin. What it does not report
(a record's moves and final state, the places of a twin without them) comes from replaying
each game's moves in the scalar rules, only where it is asked for: cheap beside choosing the
moves, and a check of them too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from card_envs.core.batched import BatchedGame, make_generators
from card_envs.core.evaluation import (
    GameRecord,
    Keep,
    MatchResult,
    PlayedGame,
    _places,
    deal_seed,
    duplicate_result,
    rotated_lineups,
    rotated_result,
)
from card_envs.core.game import Game
from card_envs.core.make import make_batched
from card_envs.core.spec import GameSpec
from card_envs.vector.selfplay import Player

Contestant = str | Player


def batched_contestants(spec: GameSpec, contestants: Sequence[Any]) -> bool:
    """Whether these contestants can play on ``spec``'s twin: it has one (numba installed)
    and each is a batched agent's name or a ``Player``."""
    from card_envs.core.batched import numba_available

    if spec.batched is None or not numba_available():
        return False
    names = ("random", *_twin_agents(spec))
    return all(isinstance(c, Player) or (isinstance(c, str) and c in names)
               for c in contestants)


def batched_form(spec: GameSpec, name: str, agent: Any, seed: int = 0) -> Contestant | None:
    """How the agent called ``name`` (built as ``agent``) plays on ``spec``'s twin: by name
    (``random`` and the twin's rule agents), as the ``Player`` its ``player(seed)`` method
    gives (a trained model: one forward pass per batch), or not at all (None: a search
    agent, say)."""
    if not batched_contestants(spec, []):
        return None
    if name in ("random", *_twin_agents(spec)):
        return name
    player = getattr(agent, "player", None)
    return player(seed) if callable(player) else None


def _twin_agents(spec: GameSpec) -> tuple[str, ...]:
    from card_envs.core.batched import load_twin

    return load_twin(spec).agents


def play_games(engine: BatchedGame, contestants: Sequence[Contestant], lineups: np.ndarray,
               deals: Sequence[Any], agent_seeds: Sequence[Any], moves: list | None = None,
               clock: dict | None = None):
    """Play game g of ``lineups`` (G, players: the contestant of each seat) to its end, dealt
    from ``default_rng(deals[g])``, its agents drawing from ``default_rng(agent_seeds[g])``;
    the final state (every game over). Each contestant acts once per step for all the games
    where one of its seats is to act; ``moves``, a list of G lists, gets each game's moves,
    and ``clock[k]`` contestant k's [seconds, moves]."""
    count = len(lineups)
    state = engine.init(count, seeds=[np.random.default_rng(d) for d in deals])
    agent_rngs = make_generators(count, seeds=[np.random.default_rng(a) for a in agent_seeds])
    slots = np.arange(count)
    while True:
        live = ~state.done
        if not live.any():
            return state
        acting = lineups[slots, state.current_player]  # the contestant to act in each game
        actions = np.zeros(count, np.int64)
        for k, who in enumerate(contestants):
            rows = np.flatnonzero(live & (acting == k))
            if not len(rows):
                continue
            start = time.perf_counter()
            if isinstance(who, Player):
                obs = engine.observe(state, who.encoding, rows=rows)
                actions[rows] = who.policy(obs, state.mask[rows], rows, state)
            else:
                actions[rows] = engine.act(state, who, rows, generators=agent_rngs)
            if clock is not None:
                spent = clock.setdefault(k, [0.0, 0])
                spent[0] += time.perf_counter() - start
                spent[1] += len(rows)
        if moves is not None:
            for i in np.flatnonzero(live).tolist():
                moves[i].append(int(actions[i]))
        engine.step(state, actions)


def _replay(game: Game, deal: Any, moves: list[int]) -> GameRecord:
    """The scalar game dealt from ``deal`` with ``moves`` applied: its record (places and the
    final state included). The game draws from its own generator, as the twin did."""
    rng = np.random.default_rng(deal)
    s = game.init(rng)
    for action in moves:
        game.apply(s, game.check_action(s, action), rng)
    return GameRecord(game.payoffs(s), game.scores(s), s.steps, s.truncated, _places(game, s),
                      s)


def _names(contestants: Sequence[Contestant], names: Sequence[str] | None) -> list[str]:
    if names is not None:
        return list(names)
    return [c.name if isinstance(c, Player) else c for c in contestants]


def evaluate(spec: GameSpec, game: Game, contestants: Sequence[Contestant], games: int,
             seed: int = 0, rotate: bool = True, names: Sequence[str] | None = None,
             keep: Keep | None = None) -> MatchResult:
    """``core.evaluation.evaluate`` on the twin: the same games, the same result."""
    n = game.num_players
    if len(contestants) != n:
        raise ValueError(f"{game.name} has {n} seats; give {n} agents, got {len(contestants)}")
    lineups = rotated_lineups(n, games, rotate)
    deals = [deal_seed(seed, g) for g in range(games)]
    agent_seeds = [[seed, g, 1] for g in range(games)]
    records = play_records(spec, game, contestants, lineups, deals, agent_seeds, keep)
    return rotated_result(game, records, lineups, _names(contestants, names), seed, rotate)


def duplicate_evaluate(spec: GameSpec, game: Game, agent_a: Contestant, agent_b: Contestant,
                       pairs: int, seed: int = 0, names: Sequence[str] | None = None,
                       keep: Keep | None = None) -> MatchResult:
    """``core.evaluation.duplicate_evaluate`` on the twin: the same deals, the same result."""
    if game.num_players != 2:
        raise ValueError(
            f"duplicate evaluation needs a 2-player game; {game.name} has {game.num_players}"
        )
    # each deal twice, seats swapped, kept pair by pair as the scalar loop plays them
    lineups = [seats for _ in range(pairs) for seats in ([0, 1], [1, 0])]
    deals = [deal_seed(seed, g) for g in range(pairs) for _ in range(2)]
    agent_seeds = [[seed, g, 1 + replay] for g in range(pairs) for replay in range(2)]
    records = play_records(spec, game, [agent_a, agent_b], lineups, deals, agent_seeds, keep)
    return duplicate_result(game, records[0::2], records[1::2],
                            _names([agent_a, agent_b], names), seed)


def play_records(spec: GameSpec, game: Game, contestants: Sequence[Contestant],
                 lineups: list[list[int]], deals: list, agent_seeds: list,
                 keep: Keep | None = None, clock: dict | None = None) -> list[GameRecord]:
    """The record of every game of ``lineups`` (per game, the contestant in each seat),
    played on the twin (``play_games``); replayed in the scalar rules where the twin does not
    report what is asked for, and handed to ``keep`` in order."""
    engine = make_batched(spec, **game.config())
    first = game.init(np.random.default_rng(0))
    ranked = _places(game, _ended(game, first)) is not None
    replay = keep is not None or (ranked and engine.twin.places is None)
    moves = [[] for _ in lineups] if replay else None
    state = play_games(engine, contestants,
                       np.array(lineups, np.int64).reshape(-1, game.num_players), deals,
                       agent_seeds, moves, clock)
    if not replay:
        payoffs, scores = engine.results(state)
        places = engine.places(state) if ranked else None
        scored = game.scores(first) is not None
        return [GameRecord(payoffs[g], scores[g] if scored else None, int(state.steps[g]),
                           bool(state.truncated[g]),
                           None if places is None else places[g].tolist())
                for g in range(len(lineups))]
    records = []
    for g, game_moves in enumerate(moves):
        rec = _replay(game, deals[g], game_moves)
        if keep is not None:
            keep(PlayedGame(deals[g], tuple(lineups[g]), tuple(game_moves), rec.state))
        records.append(rec)
    return records


def _ended(game: Game, s: Any) -> Any:
    """A copy of ``s`` marked cut by the step cap: what ``results`` says at an end."""
    s = s.copy()
    s.truncated = True
    return s
