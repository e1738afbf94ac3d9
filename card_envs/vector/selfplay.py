"""Several learning seats on one batch: the functional core driven seat by seat (pgx style).

``play(engine, players, num_games)`` deals ``num_games`` games at once and, at every step, asks
each player for the actions of the games where one of its seats is to act: a player is any
``policy(obs, mask, rows, state) -> actions`` over those games' rows (observations of the seat
to act in the player's encoding, legal masks, the slots; and the batch state, which only rule
agents read, and only what the acting seat may see). Seats rotate over the games (in game ``g``
seat ``s`` is played by player ``(s + g) % P``), so every player sits in every seat equally often.
It returns each player's payoff in each game. ``rule_agent(engine, name)`` makes a player of a
batched rule agent; a trained network is a player through a few lines (examples/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from card_envs.core.batched import BatchedGame, BatchedState

# policy(obs (k, size), mask (k, actions), rows (k,), state) -> actions (k,)
Policy = Callable[[np.ndarray, np.ndarray, np.ndarray, BatchedState], np.ndarray]


class Player:
    """A policy and the observation encoding it reads."""

    def __init__(self, policy: Policy, encoding: str = "default", name: str = "player"):
        self.policy = policy
        self.encoding = encoding
        self.name = name

    def __repr__(self) -> str:
        return f"Player({self.name!r})"


def rule_agent(engine: BatchedGame, name: str) -> Player:
    """A player of the batched rule agent ``name`` (``random`` or one of the game's agents);
    an agent that draws draws from each game's generator, as the scalar play loop does."""
    engine.agent_index(name)  # raises, listing the agents

    def policy(obs: np.ndarray, mask: np.ndarray, rows: np.ndarray,
               state: BatchedState) -> np.ndarray:
        return engine.act(state, name, rows)

    return Player(policy, name=name)


def play(engine: BatchedGame, players: Sequence[Player], num_games: int, seed: Any = None,
         seeds: Any = None) -> np.ndarray:
    """(num_games, P) float64: each player's payoff in each game, the players' seats rotated.

    One game per slot, no auto-reset: the batch runs until every game has ended. ``seed`` /
    ``seeds`` as in ``engine.init``.
    """
    n = engine.num_players
    if len(players) != n:
        raise ValueError(f"give one player per seat ({n}), got {len(players)}")
    state = engine.init(num_games, seed=seed, seeds=seeds)
    game_index = np.arange(num_games)
    while True:
        live = ~(state.terminated | state.truncated)
        if not live.any():
            break
        acting = (state.current_player + game_index) % n  # the player to act in each game
        actions = np.zeros(num_games, np.int64)
        for k, player in enumerate(players):
            rows = np.flatnonzero(live & (acting == k))
            if len(rows):
                obs = engine.observe(state, player.encoding, rows=rows)
                actions[rows] = player.policy(obs, state.mask[rows], rows, state)
        engine.step(state, actions)
    by_seat = engine.payoffs(state)
    seat_of = (np.arange(n)[None, :] - game_index[:, None]) % n  # player k's seat in game g
    return by_seat[game_index[:, None], seat_of]
