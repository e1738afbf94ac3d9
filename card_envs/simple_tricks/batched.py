"""The batched twin of simple tricks: the rules of ``rules.py`` for one slot, compiled (numba).

State of B deals (C = 2N cards), beside the shared fields (``core.batched``): ``planes``
(B, 2, 4C) int8, for each seat its four card planes [my hand | opponent's hand | I played |
opponent played] (the scalar view's ``plane``); ``deal_pos`` (B, C) each card's place in its
holder's hand as dealt (``first_play`` plays the legal card dealt first); ``lead`` the card led
in the trick in progress or -1, ``leader`` who led it; ``tricks`` (B, 2) tricks won per seat.
Observations as ``encoding.py``'s encoders; agents as ``agents.py``'s ``first_play`` and
``heuristic``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from card_envs.simple_tricks.rules import PLANE_ROWS, SimpleTricks, TricksState

Arrays = twin_arrays(__name__, "planes deal_pos lead leader tricks")


class Config(NamedTuple):
    num_players: int
    max_steps: int
    n: int  # values per colour


def config(game: SimpleTricks) -> Config:
    return Config(2, game.max_steps, game.num_values)


def allocate(game: SimpleTricks, cfg: Config, b: int) -> Arrays:
    c = 2 * cfg.n
    return Arrays(*shared_arrays(b, 2, c), np.zeros((b, 2, 4 * c), np.int8),
                  np.zeros((b, c), np.int8), np.full(b, -1, np.int64), np.zeros(b, np.int64),
                  np.zeros((b, 2), np.int64))


@njit(cache=True)
def _update_masks(s, slots, n):  # pragma: no cover - compiled
    """SimpleTricks._legal_mask in each game of ``slots`` not over: the hand, or only the led
    colour's cards when holding one."""
    planes, mask = s.planes, s.mask
    for i in slots:
        if s.terminated[i]:
            continue
        p = s.current_player[i]
        start, stop = 0, 2 * n
        lead = s.lead[i]
        if lead >= 0:
            colour = (lead // n) * n
            for j in range(colour, colour + n):
                if planes[i, p, j]:
                    start, stop = colour, colour + n
                    break
        for j in range(2 * n):
            mask[i, j] = planes[i, p, j] if start <= j < stop else 0


@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """SimpleTricks.init: the shuffled deck's first N cards to seat 0, the rest to seat 1."""
    n = cfg.n
    c = 2 * n
    deck = np.empty(c, np.int64)
    for i in slots:
        for j in range(c):
            deck[j] = j
        shuffle(rngs[rng_of[i]], deck)
        s.planes[i] = 0
        for j in range(c):
            card = deck[j]
            seat = 0 if j < n else 1
            s.planes[i, seat, card] = 1
            s.planes[i, 1 - seat, c + card] = 1
            s.deal_pos[i, card] = j % n
        s.lead[i] = -1
        s.leader[i] = 0
        s.current_player[i] = 0
        s.tricks[i, 0] = 0
        s.tricks[i, 1] = 0
    _update_masks(s, slots, n)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """SimpleTricks._apply: lead or follow; the trick's winner leads the next."""
    n = cfg.n
    c = 2 * n
    planes = s.planes
    for r in range(len(slots)):
        i, card = slots[r], actions[r]
        p = s.current_player[i]
        planes[i, p, card] = 0
        planes[i, 1 - p, c + card] = 0
        if s.lead[i] < 0:
            s.lead[i] = card
            s.leader[i] = p
            s.current_player[i] = 1 - p
        else:
            led, first = s.lead[i], s.leader[i]
            winner = p if card // n == led // n and card % n > led % n else first
            planes[i, first, 2 * c + led] = 1
            planes[i, 1 - first, 3 * c + led] = 1
            planes[i, p, 2 * c + card] = 1
            planes[i, 1 - p, 3 * c + card] = 1
            s.tricks[i, winner] += 1
            s.lead[i] = -1
            s.leader[i] = winner
            s.current_player[i] = winner
            if s.tricks[i, 0] + s.tricks[i, 1] == n:
                s.terminated[i] = True
                diff = np.sign(s.tricks[i, 0] - s.tricks[i, 1])
                s.rewards[i, 0] = diff
                s.rewards[i, 1] = -diff
    _update_masks(s, slots, n)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s observation of game rows[r], TricksEncoder (encoding 0,
    "default") or OriginalEncoder (1)."""
    n = cfg.n
    c = 2 * n
    planes = s.planes
    for r in range(len(rows)):
        i, q = rows[r], seats[r]
        if encoding == 0:
            for j in range(4 * c):
                out[r, j] = planes[i, q, j]
            for j in range(4 * c, 5 * c):
                out[r, j] = 0.0
            if s.lead[i] >= 0:
                out[r, 4 * c + s.lead[i]] = 1.0
            live = not (s.terminated[i] or s.truncated[i])
            out[r, 5 * c] = 1.0 if s.current_player[i] == q and live else 0.0
            out[r, 5 * c + 1] = s.tricks[i, q] / n
            out[r, 5 * c + 2] = s.tricks[i, 1 - q] / n
        else:
            for j in range(c):
                out[r, j] = planes[i, q, 2 * c + j] + planes[i, q, 3 * c + j]
                out[r, c + j] = planes[i, q, j]
                out[r, 2 * c + j] = 0.0
            if s.lead[i] >= 0 and s.leader[i] != q:
                out[r, 2 * c + s.lead[i]] = 1.0


FIRST_PLAY, HEURISTIC = 1, 2


@njit(cache=True)
def _lowest(mask, i, c, n):  # pragma: no cover - compiled
    """The legal card of the lowest value (the lowest index on ties)."""
    best = -1
    for card in range(c):
        if mask[i, card] and (best < 0 or card % n < best % n):
            best = card
    return best


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """FirstPlayAgent (agent 1) or HeuristicAgent (2) for the seat to act in games ``rows``."""
    n = cfg.n
    c = 2 * n
    mask = s.mask
    for r in range(len(rows)):
        i = rows[r]
        if agent == FIRST_PLAY:  # the legal card dealt first into the hand
            best = -1
            for card in range(c):
                if mask[i, card] and (best < 0 or s.deal_pos[i, card] < s.deal_pos[i, best]):
                    best = card
            out[r] = best
            continue
        lead = s.lead[i]
        if lead >= 0:  # beat the lead as cheaply as possible, else the lowest of its colour
            colour = lead // n
            beat, same = -1, -1
            for v in range(n):
                card = colour * n + v
                if mask[i, card]:
                    if same < 0:
                        same = card
                    if beat < 0 and v > lead % n:
                        beat = card
            out[r] = beat if beat >= 0 else same if same >= 0 else _lowest(mask, i, c, n)
            continue
        # leading: the lowest card above the opponent's best of its colour (by elimination)
        p = s.current_player[i]
        best_0, best_1 = -1, -1
        for card in range(c):
            if s.planes[i, p, c + card]:
                if card < n:
                    best_0 = card % n
                else:
                    best_1 = card % n
        sure = -1
        for card in range(c):
            top = best_0 if card < n else best_1
            if mask[i, card] and card % n > top and (sure < 0 or card % n < sure % n):
                sure = card
        out[r] = sure if sure >= 0 else _lowest(mask, i, c, n)


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: SimpleTricks.payoffs (the sign of the trick difference, once over) and scores
    of game rows[r]."""
    for r in range(len(rows)):
        i = rows[r]
        diff = np.sign(s.tricks[i, 0] - s.tricks[i, 1]) if s.terminated[i] else 0
        payoffs[r, 0] = diff
        payoffs[r, 1] = -diff
        scores[r, 0] = s.tricks[i, 0]
        scores[r, 1] = s.tricks[i, 1]


def load(game: SimpleTricks, cfg: Config, s: Arrays, i: int, state: TricksState) -> None:
    """Slot ``i`` as the scalar ``state`` (each hand's order as its deal order)."""
    c = 2 * cfg.n
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    for p in range(2):
        for which in range(4):
            s.planes[i, p, which * c : (which + 1) * c] = state.cards[PLANE_ROWS[p][which]]
        for place, card in enumerate(state.hands[p]):
            s.deal_pos[i, card] = place
    s.lead[i], s.leader[i] = state.lead, state.leader
    s.tricks[i] = state.tricks


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("first_play", "heuristic"))
