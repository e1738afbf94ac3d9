"""The baselines' evaluation, played on the game's batched twin wherever it can be.

``evaluate(spec, game, agent, opponent, games, seed, duplicate, team)`` is
``common.evaluate_agent`` (the scalar play loop of ``card_envs.core.evaluation``) played by
``card_envs.vector.evaluation`` when the game has a twin and every contestant has a batched
form: a trained model (a ``PolicyAgent``, made a ``Player`` here: one forward pass for every
game where its seat is to act) or a rule agent of the twin, named. The twin plays the very
games of the scalar loop (game ``g`` dealt from ``default_rng([seed, g, 0])``, the same
seating, the agents' own generators), so deterministic play gives the same figures; a model
that samples draws from a generator of its own. Anything else (a search agent, an agent
object of the scalar games) plays in the scalar loop.
"""

from __future__ import annotations

from typing import Any

from baselines.common import evaluate_agent, model_lineup
from card_envs.core.evaluation import MatchResult
from card_envs.rl.policy_agent import PolicyAgent


def evaluate(spec, game, agent, opponent, games: int, seed: int, duplicate: bool,
             team: bool) -> MatchResult:
    """``common.evaluate_agent`` on the twin where it can be (see the module docstring).

    ``agent``, ``opponent``: a ``PolicyAgent`` or a rule agent's name (the scalar loop also
    takes any agent object)."""
    from card_envs.vector import evaluation as twin

    players = {id(x): x.player(seed) for x in (agent, opponent)
               if isinstance(x, PolicyAgent)}

    def batched(x: Any) -> Any:
        return players.get(id(x), x)

    label = agent if isinstance(agent, str) else getattr(agent, "name", "model")
    rival = opponent if isinstance(opponent, str) else getattr(opponent, "name", "rival")
    n_rivals = game.num_players // 2 if team else game.num_players - 1
    if duplicate and game.num_players == 2:
        pair = [batched(agent), batched(opponent)]
        if twin.batched_contestants(spec, pair):
            return twin.duplicate_evaluate(spec, game, *pair, games, seed, names=[label, rival])
    else:
        lineup = model_lineup(batched(agent), [batched(opponent)] * n_rivals, team)
        if twin.batched_contestants(spec, lineup):
            names = [label if i == 0 or (team and i % 2 == 0) else rival
                     for i in range(len(lineup))]
            return twin.evaluate(spec, game, lineup, games, seed, names=names)
    if isinstance(agent, str):
        from card_envs.core.agents import make_agent

        agent = make_agent(spec, agent, game)
    return evaluate_agent(spec, game, agent, opponent, games, seed, duplicate, team)
