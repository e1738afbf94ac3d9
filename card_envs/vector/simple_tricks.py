"""Simple tricks over a batch of games (the rules of ``card_envs.simple_tricks.rules``).

State (B games, C = 2N cards): ``planes`` (B, 2, 4C) int8, for each seat the scalar state's
four card planes [my hand | opponent's hand | I played | opponent played]; ``deal_pos``
(B, C), each card's place in its holder's hand as dealt (the first-play agent plays the
legal card dealt first); ``lead`` (B,) the card led in the current trick or -1, ``leader``
(B,) who led it; ``tricks`` (B, 2) tricks won per seat.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.simple_tricks.rules import HAND, OPPONENT_HAND, SimpleTricks
from card_envs.vector.base import Dealer, VectorGame, VectorState, random_actions


class TricksBatch(VectorState):
    """B deals of simple tricks in progress (see the module docstring)."""

    planes: np.ndarray
    deal_pos: np.ndarray
    lead: np.ndarray
    leader: np.ndarray
    tricks: np.ndarray


class SimpleTricksVector(VectorGame):
    """Batched simple tricks; ``SimpleTricksVector(num_values=10)`` as ``SimpleTricks``."""

    name = "simple_tricks"
    numba_kernels = "tricks"

    def __init__(self, num_values: int = 10):
        super().__init__(SimpleTricks(num_values=num_values))
        n = self.n = self.game.num_values
        c = self.c = 2 * n
        self.plane_size = 4 * c
        cards = np.arange(c)
        self.colour = cards // n
        self.value = cards % n

    def observation_size(self, encoding: str = "default") -> int:
        return 5 * self.c + 3 if encoding == "default" else 3 * self.c

    # --- dealing --------------------------------------------------------------------------
    def _new_state(self, num_envs: int, dealer: Dealer) -> TricksBatch:
        s = TricksBatch()
        s.dealer = dealer
        s.current_player = np.zeros(num_envs, np.int64)
        s.terminated = np.zeros(num_envs, bool)
        s.truncated = np.zeros(num_envs, bool)
        s.rewards = np.zeros((num_envs, 2))
        s.steps = np.zeros(num_envs, np.int64)
        s.mask = np.zeros((num_envs, self.c), np.int8)
        s.planes = np.zeros((num_envs, 2, self.plane_size), np.int8)
        s.deal_pos = np.zeros((num_envs, self.c), np.int8)
        s.lead = np.full(num_envs, -1, np.int64)
        s.leader = np.zeros(num_envs, np.int64)
        s.tricks = np.zeros((num_envs, 2), np.int64)
        return s

    def _deal(self, s: TricksBatch, slots: np.ndarray) -> None:
        # SimpleTricks.init: the shuffled deck's first N cards to seat 0, the rest to seat 1
        n, c = self.n, self.c
        deck = s.dealer.permutations(slots, c)
        if self.backend == "numba":
            self.kernels.tricks_deal(s.planes, s.deal_pos, s.lead, s.leader, s.tricks,
                                     s.current_player, s.mask, slots, deck, n)
            return
        k = len(slots)
        rows = np.repeat(slots, n)
        first, second = deck[:, :n].ravel(), deck[:, n:].ravel()
        planes = s.planes
        planes[slots] = 0
        planes[rows, 0, first] = 1
        planes[rows, 1, c + first] = 1
        planes[rows, 1, second] = 1
        planes[rows, 0, c + second] = 1
        s.deal_pos[np.repeat(slots, c), deck.ravel()] = np.tile(np.arange(c) % n, k)
        s.lead[slots] = -1
        s.leader[slots] = 0
        s.current_player[slots] = 0
        s.tricks[slots] = 0
        self._update_mask(s, slots)

    # --- the rules ------------------------------------------------------------------------
    def _update_mask(self, s: TricksBatch, slots: np.ndarray) -> None:
        # SimpleTricks._legal_mask: the hand, or only the led colour's cards when holding any
        c, n = self.c, self.n
        hand = s.planes[slots, s.current_player[slots], :c]
        lead = s.lead[slots]
        same = hand * (self.colour == lead[:, None] // n)
        follow = (lead >= 0) & same.any(axis=1)
        mask = np.where(follow[:, None], same, hand)
        mask[s.terminated[slots]] = 0
        s.mask[slots] = mask

    def _apply_compiled(self, s: TricksBatch, live: np.ndarray, card: np.ndarray) -> None:
        self.kernels.tricks_step(s.planes, s.lead, s.leader, s.tricks, s.current_player,
                                 s.terminated, s.truncated, s.rewards, s.steps, s.mask, live,
                                 card, self.n, self.max_steps)

    def _apply(self, s: TricksBatch, live: np.ndarray, card: np.ndarray) -> None:
        self._play(s, live, card)
        self._update_mask(s, live)

    def _play(self, s: TricksBatch, live: np.ndarray, card: np.ndarray) -> None:
        n, c, size = self.n, self.c, self.plane_size
        flat = s.planes.reshape(-1)
        p = s.current_player[live]
        mine = (2 * live + p) * size
        theirs = (2 * live + 1 - p) * size
        flat[mine + HAND * c + card] = 0
        flat[theirs + OPPONENT_HAND * c + card] = 0
        lead = s.lead[live]
        leading = lead < 0
        if leading.any():
            at = live[leading]
            s.lead[at] = card[leading]
            s.leader[at] = p[leading]
            s.current_player[at] = 1 - p[leading]
        f = ~leading
        if not f.any():
            return
        at, card, lead, p = live[f], card[f], lead[f], p[f]
        mine, theirs = mine[f], theirs[f]  # the follower's planes and the leader's
        follows = card // n == lead // n
        follower_wins = follows & (card % n > lead % n)
        winner = np.where(follower_wins, p, 1 - p)
        flat[theirs + 2 * c + lead] = 1  # the leader played the lead
        flat[mine + 3 * c + lead] = 1
        flat[mine + 2 * c + card] = 1
        flat[theirs + 3 * c + card] = 1
        tricks = s.tricks
        tricks.reshape(-1)[2 * at + winner] += 1
        s.lead[at] = -1
        s.leader[at] = winner
        s.current_player[at] = winner
        won = tricks[at]
        over = won[:, 0] + won[:, 1] == n
        if over.any():
            end = at[over]
            s.terminated[end] = True
            diff = np.sign(won[over, 0] - won[over, 1]).astype(np.float64)
            s.rewards[end, 0] = diff
            s.rewards[end, 1] = -diff

    def payoffs(self, s: TricksBatch) -> np.ndarray:
        diff = np.sign(s.tricks[:, 0] - s.tricks[:, 1]) * s.terminated
        return np.stack([diff, -diff], axis=1).astype(np.float64)

    def scores(self, s: TricksBatch) -> np.ndarray:
        return s.tricks.astype(np.float64)

    # --- observations ---------------------------------------------------------------------
    def _observe_compiled(self, s: TricksBatch, encoding: str, rows: np.ndarray,
                          seats: np.ndarray) -> np.ndarray:
        obs = np.empty((len(rows), self.observation_size(encoding)), np.float32)
        return self.kernels.tricks_observe(s.planes, s.lead, s.leader, s.tricks,
                                           s.current_player, s.terminated | s.truncated, rows,
                                           seats, self.n, encoding == "default", obs)

    def _observe(self, s: TricksBatch, encoding: str, seats: np.ndarray) -> np.ndarray:
        b = np.arange(len(seats))
        c, n = self.c, self.n
        planes = s.planes[b, seats]
        lead = s.lead
        if encoding == "default":
            obs = np.zeros((len(seats), 5 * c + 3), np.float32)
            obs[:, : 4 * c] = planes
            led = np.flatnonzero(lead >= 0)
            obs[led, 4 * c + lead[led]] = 1.0
            live = ~(s.terminated | s.truncated)
            obs[:, 5 * c] = (s.current_player == seats) & live
            obs[:, 5 * c + 1] = s.tricks[b, seats] / n
            obs[:, 5 * c + 2] = s.tricks[b, 1 - seats] / n
            return obs
        obs = np.zeros((len(seats), 3 * c), np.float32)
        obs[:, :c] = planes[:, 2 * c : 3 * c] + planes[:, 3 * c :]
        obs[:, c : 2 * c] = planes[:, :c]
        led = np.flatnonzero((lead >= 0) & (s.leader != seats))
        obs[led, 2 * c + lead[led]] = 1.0
        return obs


# --- batched rule agents: each reads only the acting seat's cards, the trick and the mask ----
def first_play(engine: SimpleTricksVector, s: TricksBatch, rng: np.random.Generator) -> np.ndarray:
    """FirstPlayAgent for every game: the legal card dealt first into the hand."""
    return np.where(s.mask != 0, s.deal_pos, 127).argmin(axis=1)


def heuristic(engine: SimpleTricksVector, s: TricksBatch, rng: np.random.Generator) -> np.ndarray:
    """HeuristicAgent for every game (win cheaply; lead a card the opponent cannot beat)."""
    n, c = engine.n, engine.c
    b = np.arange(s.num_envs)
    legal = s.mask != 0
    value, colour = engine.value, engine.colour
    big = 1000
    lowest = np.where(legal, value, big).argmin(axis=1)
    lead = s.lead
    # following: beat the lead as cheaply as possible, else the lowest of the led colour
    same = legal & (colour == lead[:, None] // n)
    beating = same & (value > (lead % n)[:, None])
    pool = np.where(beating.any(axis=1)[:, None], beating, same)
    follow = np.where(same.any(axis=1), np.where(pool, value, big).argmin(axis=1), lowest)
    # leading: the lowest card above the opponent's best of its colour (by elimination)
    opponent = s.planes[b, s.current_player, c : 2 * c] != 0
    best = np.where(opponent, value, -1).reshape(-1, 2, n).max(axis=2)  # per colour
    sure = legal & (value > best[:, colour])
    leading = np.where(sure.any(axis=1), np.where(sure, value, big).argmin(axis=1), lowest)
    return np.where(lead >= 0, follow, leading)


AGENTS = {"random": random_actions, "first_play": first_play, "heuristic": heuristic}


def vector_env(num_envs: int = 1, **kwargs: Any):
    """The Gymnasium VectorEnv of simple tricks (the registry's vector entry point)."""
    from card_envs.vector.gym_env import make_vector_env

    return make_vector_env("simple_tricks", num_envs=num_envs, **kwargs)
