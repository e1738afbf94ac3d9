"""Evaluation on the game's batched twin: every game of a run at once, the same deals as the
scalar evaluation.

``evaluate(spec, game, agent, opponent, games, seed, duplicate, team)`` is
``common.evaluate_agent`` (the scalar play loop of ``card_envs.core.evaluation``), played on
the twin when the game has one and every contestant has a batched form: a model
(``PolicyAgent``: one forward pass for all the games where its seat is to act) or a rule agent
of the twin (one compiled call). Game ``g`` is dealt from ``default_rng([seed, g, 0])``, as the
scalar evaluation deals it, seats rotated (or each deal played twice with the seats swapped)
the same way, so deterministic play (greedy models, deterministic rule agents) gives the very
same games and results as the scalar loop; agents that draw (``random``, sampled play) draw
from other generators than there. Anything else (a search agent, a game that ranks its
players, which the twins do not report) falls back to the scalar loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from baselines.common import evaluate_agent, model_lineup
from card_envs.core.evaluation import MatchResult, Tally, _contestant_teams
from card_envs.rl.policy_agent import PolicyAgent, policy_actions


def twin_of(spec, game):
    """The batched engine of ``game``'s rules, or None (no twin, or the game ranks its
    players: places, which the twins do not report)."""
    if spec.batched is None:
        return None
    if "place" in game.results(game.init(np.random.default_rng(0)))[0]:
        return None
    return spec.make_batched(**game.config())


def batched_form(engine, contestant: Any) -> bool:
    """Whether a contestant can play on the twin: a model, or a rule agent of the twin."""
    if isinstance(contestant, PolicyAgent):
        return True
    return isinstance(contestant, str) and contestant in engine.agents


def evaluate(spec, game, agent, opponent, games: int, seed: int, duplicate: bool,
             team: bool) -> MatchResult:
    """``common.evaluate_agent`` on the twin where it can be (see the module docstring).

    ``agent``, ``opponent``: a ``PolicyAgent`` or a rule agent's name (the scalar loop also
    takes any agent object)."""
    engine = twin_of(spec, game)
    solo = game.num_players == 1  # no rivals: the opponent (``solo``) names no one
    if engine is None or not (batched_form(engine, agent)
                              and (solo or batched_form(engine, opponent))):
        if isinstance(agent, str):
            from card_envs.core.agents import make_agent

            agent = make_agent(spec, agent, game)
        return evaluate_agent(spec, game, agent, opponent, games, seed, duplicate, team)
    label = agent if isinstance(agent, str) else getattr(agent, "name", "model")
    rival = opponent if isinstance(opponent, str) else getattr(opponent, "name", "rival")
    n_rivals = game.num_players // 2 if team else game.num_players - 1
    if duplicate and game.num_players == 2:
        return batched_duplicate(engine, game, agent, opponent, games, seed, [label, rival])
    lineup = model_lineup(agent, [opponent] * n_rivals, team)
    names = [label if i == 0 or (team and i % 2 == 0) else rival
             for i in range(len(lineup))]
    return batched_matches(engine, game, lineup, games, seed, names)


def _deals(seed: int, games: int) -> list[np.random.Generator]:
    return [np.random.default_rng([seed, g, 0]) for g in range(games)]


def _play(engine, seat_players: np.ndarray, contestants: list, gens, seed: int):
    """Play one game per slot to its end; ``seat_players[slot, seat]``: the contestant
    playing that seat. Returns the final state."""
    state = engine.init(len(gens), seeds=gens)
    slots = np.arange(len(gens))
    rng = np.random.default_rng([seed, 1])  # sampled play's draws
    encodings = {k: c.encoder.name for k, c in enumerate(contestants)
                 if isinstance(c, PolicyAgent)}
    while True:
        live = ~state.done
        if not live.any():
            return state
        acting = seat_players[slots, state.current_player]
        actions = np.zeros(len(gens), np.int64)
        for k, who in enumerate(contestants):
            rows = np.flatnonzero(live & (acting == k))
            if not len(rows):
                continue
            if isinstance(who, PolicyAgent):
                obs = engine.observe(state, encodings[k], rows=rows)
                actions[rows] = policy_actions(who.policy, who.algo, obs, state.mask[rows],
                                               who.deterministic, rng)
            else:
                actions[rows] = engine.act(state, who, rows)
        engine.step(state, actions)


def _scored(game) -> bool:
    return game.scores(game.init(np.random.default_rng(0))) is not None


def batched_matches(engine, game, lineup: list, games: int, seed: int,
                    names: list[str]) -> MatchResult:
    """``core.evaluation.evaluate`` with seats rotated, on the twin (contestant i in seat
    (i + g) % n of game g)."""
    n = game.num_players
    # each contestant once: the model, each rival name (a twin's agent has no memory)
    contestants = _distinct(lineup)
    index_of = [contestants.index(x) for x in lineup]
    g = np.arange(games)
    seat_players = np.empty((games, n), np.int64)
    for i in range(n):
        seat_players[g, (i + g) % n] = index_of[i]
    state = _play(engine, seat_players, contestants, _deals(seed, games), seed)
    payoffs, scores = engine.results(state)
    scored = _scored(game)
    tallies = [Tally(names[i]) for i in range(n)]
    for i in range(n):
        seat = (i + g) % n
        for p, s in zip(payoffs[g, seat].tolist(), scores[g, seat].tolist(), strict=True):
            tallies[i].add(float(p), float(s) if scored else None, None)
    return MatchResult(
        tallies, games, seed, float(state.steps.mean()) if games else 0.0,
        int(state.truncated.sum()), payoffs.mean(0).tolist() if games else [0.0] * n,
        score_name=game.score_name, teams=_contestant_teams(game, range(min(games, n))),
        rotated=True, result_note=game.result_note)


def _distinct(lineup: list) -> list:
    out: list = []
    for x in lineup:
        if x not in out:
            out.append(x)
    return out


def batched_duplicate(engine, game, agent_a, agent_b, pairs: int, seed: int,
                      names: list[str]) -> MatchResult:
    """``core.evaluation.duplicate_evaluate`` on the twin: deal g in slot g (A in seat 0)
    and again in slot pairs + g (A in seat 1)."""
    contestants = [agent_a, agent_b]
    seat_players = np.empty((2 * pairs, 2), np.int64)
    seat_players[:pairs] = [0, 1]
    seat_players[pairs:] = [1, 0]
    state = _play(engine, seat_players, contestants, _deals(seed, pairs) + _deals(seed, pairs),
                  seed)
    payoffs, scores = engine.results(state)
    scored = _scored(game)
    points = scores if scored else payoffs
    first, second = points[:pairs], points[pairs:]
    a_total = first[:, 0] + second[:, 1]
    b_total = first[:, 1] + second[:, 0]
    ta, tb = Tally(names[0]), Tally(names[1])
    for a, b in zip(a_total.tolist(), b_total.tolist(), strict=True):
        diff = float(np.sign(a - b))
        ta.add(diff, a)
        tb.add(-diff, b)
    return MatchResult([ta, tb], pairs, seed, float(state.steps.mean()) if pairs else 0.0,
                       int(state.truncated.sum()), kind="duplicate",
                       score_name=game.score_name if scored else "payoff")
