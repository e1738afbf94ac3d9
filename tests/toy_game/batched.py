"""High card's batched twin (numba): a sixth game gets one as one file and its spec's line.

State of B games beside the shared fields: ``held`` (B, 2, C) int8, 1 where a seat holds the
card; ``played_by`` (B, C) int8, the seat + 1 that played a card in a completed round (0:
not played); ``lead`` (-1: none), ``leader``; ``won`` (B, 2) rounds won.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from tests.toy_game.rules import HighCard, HighCardState

Arrays = twin_arrays(__name__, "held played_by lead leader won")


class Config(NamedTuple):
    num_players: int
    max_steps: int
    hand_size: int
    num_cards: int


def config(game: HighCard) -> Config:
    return Config(2, game.max_steps, game.hand_size, game.num_cards)


def allocate(game: HighCard, cfg: Config, b: int) -> Arrays:
    c = cfg.num_cards
    return Arrays(*shared_arrays(b, 2, c), np.zeros((b, 2, c), np.int8),
                  np.zeros((b, c), np.int8), np.full(b, -1, np.int64), np.zeros(b, np.int64),
                  np.zeros((b, 2), np.int64))


@njit(cache=True)
def _masks(s, slots):  # pragma: no cover - compiled
    """HighCard._legal_mask: any card of the hand."""
    for i in slots:
        if not s.terminated[i]:
            for card in range(s.mask.shape[1]):
                s.mask[i, card] = s.held[i, s.current_player[i], card]


@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """HighCard.init: a permutation of the cards; the first k to seat 0, the next k to 1."""
    deck = np.empty(cfg.num_cards, np.int64)
    k = cfg.hand_size
    for i in slots:
        for j in range(cfg.num_cards):
            deck[j] = j
        shuffle(rngs[rng_of[i]], deck)  # rng.permutation(n): the same draws
        s.held[i] = 0
        s.played_by[i] = 0
        for j in range(2 * k):
            s.held[i, j // k, deck[j]] = 1
        s.lead[i], s.leader[i], s.current_player[i] = -1, 0, 0
        s.won[i] = 0
    _masks(s, slots)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """HighCard._apply: lead, or answer; the higher card wins the round and leads next."""
    for r in range(len(slots)):
        i, card = slots[r], actions[r]
        p = s.current_player[i]
        s.held[i, p, card] = 0
        if s.lead[i] < 0:
            s.lead[i], s.leader[i], s.current_player[i] = card, p, 1 - p
            continue
        leader = s.leader[i]
        winner = leader if s.lead[i] > card else p
        s.played_by[i, s.lead[i]] = leader + 1
        s.played_by[i, card] = p + 1
        s.won[i, winner] += 1
        s.lead[i], s.current_player[i] = -1, winner
        if s.won[i, 0] + s.won[i, 1] == cfg.hand_size:
            s.terminated[i] = True
            sign = np.sign(s.won[i, 0] - s.won[i, 1])
            s.rewards[i, 0], s.rewards[i, 1] = sign, -sign
    _masks(s, slots)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: DefaultEncoder's observation of game rows[r] for seats[r]."""
    c, k = cfg.num_cards, cfg.hand_size
    for r in range(len(rows)):
        i, q = rows[r], seats[r]
        for card in range(c):
            out[r, card] = s.held[i, q, card]
            out[r, c + card] = s.played_by[i, card] == q + 1
            out[r, 2 * c + card] = s.played_by[i, card] == 2 - q
            out[r, 3 * c + card] = card == s.lead[i]
        done = s.terminated[i] or s.truncated[i]
        out[r, 4 * c] = s.current_player[i] == q and not done
        out[r, 4 * c + 1] = s.won[i, q] / k
        out[r, 4 * c + 2] = s.won[i, 1 - q] / k


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """CheapestWinAgent (agent 1): lead the highest card; answer with the lowest card that
    wins, else the lowest."""
    for r in range(len(rows)):
        i = rows[r]
        lowest, highest, cheapest = -1, -1, -1
        for card in range(cfg.num_cards):
            if s.mask[i, card]:
                lowest = card if lowest < 0 else lowest
                highest = card
                if cheapest < 0 and card > s.lead[i]:
                    cheapest = card
        if s.lead[i] < 0:
            out[r] = highest
        else:
            out[r] = cheapest if cheapest >= 0 else lowest


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: +1 / -1 / 0 by rounds won once over, and the rounds won."""
    for r in range(len(rows)):
        i = rows[r]
        sign = np.sign(s.won[i, 0] - s.won[i, 1]) if s.terminated[i] else 0
        payoffs[r, 0], payoffs[r, 1] = sign, -sign
        scores[r, 0], scores[r, 1] = s.won[i, 0], s.won[i, 1]


def load(game: HighCard, cfg: Config, s: Arrays, i: int, state: HighCardState) -> None:
    """Slot ``i`` as the scalar ``state``."""
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    s.held[i] = 0
    s.played_by[i] = 0
    for p in range(2):
        s.held[i, p, state.hands[p]] = 1
    for seat, card in state.played:
        s.played_by[i, card] = seat + 1
    s.lead[i], s.leader[i] = state.lead, state.leader
    s.won[i] = state.won


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("cheapest_win",))
