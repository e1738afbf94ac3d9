"""The batched twin of 98 Cards: the rules of ``rules.py`` for many games, compiled (numba).

State of B games, beside the shared fields (``core.batched``): ``deck`` (B, 98) the draw pile
in order, drawn from ``deck_pos``; ``hand`` (B, 8) the hand's cards sorted ascending, then 0 for
each empty slot (the scalar ``slots``); ``hand_size``; ``tops`` (B, 4) the pile tops;
``in_draw`` (B, 98) float32, 1 for each card (value - 2) still in the draw pile; ``played`` and
``turn_played``. Observations as ``encoding.py``'s encoders; agent ``greedy`` as
``agents.py``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from card_envs.ninety_eight_cards.encoding import JUMP_FEATURES, PER_100
from card_envs.ninety_eight_cards.rules import (
    END_TURN,
    FITS,
    HAND_SIZE,
    JUMPS,
    LOWEST,
    NUM_CARDS,
    START_TOPS,
    CardsState,
    NinetyEightCards,
)

Arrays = twin_arrays(__name__, "deck deck_pos hand hand_size tops in_draw played turn_played")


class Config(NamedTuple):
    num_players: int
    max_steps: int
    standard: bool
    shaped: bool  # reward="original": the source's reward, cards played so far
    fits: np.ndarray  # FITS[pile, top, card]
    jumps: np.ndarray  # JUMPS[pile, top, card]
    jump_features: np.ndarray
    per_100: np.ndarray


def config(game: NinetyEightCards) -> Config:
    return Config(1, game.max_steps, game.standard, game.reward == "original", FITS, JUMPS,
                  JUMP_FEATURES, PER_100)


def allocate(game: NinetyEightCards, cfg: Config, b: int) -> Arrays:
    return Arrays(
        *shared_arrays(b, 1, game.num_actions), np.zeros((b, NUM_CARDS), np.int64),
        np.zeros(b, np.int64),
        np.zeros((b, HAND_SIZE), np.int64), np.zeros(b, np.int64), np.zeros((b, 4), np.int64),
        np.zeros((b, NUM_CARDS), np.float32), np.zeros(b, np.int64), np.zeros(b, np.int64),
    )


@njit(cache=True)
def _refill(s, slots, flags):  # pragma: no cover - compiled
    """NinetyEightCards._refill in each game of ``slots`` whose flag is set: draw back up to 8
    cards, keeping the hand sorted."""
    hand = s.hand
    for r in range(len(slots)):
        if not flags[r]:
            continue
        i = slots[r]
        while s.hand_size[i] < HAND_SIZE and s.deck_pos[i] < NUM_CARDS:
            card = s.deck[i, s.deck_pos[i]]
            s.deck_pos[i] += 1
            s.in_draw[i, card - LOWEST] = 0.0
            j = s.hand_size[i]
            while j > 0 and hand[i, j - 1] > card:
                hand[i, j] = hand[i, j - 1]
                j -= 1
            hand[i, j] = card
            s.hand_size[i] += 1


@njit(cache=True)
def _update_masks(s, cfg, slots):  # pragma: no cover - compiled
    """NinetyEightCards._update_legal in each game of ``slots``: the mask, and the end when
    nothing is legal or every card is played."""
    mask, fits = s.mask, cfg.fits
    for i in slots:
        any_legal = False
        for pile in range(4):
            top = s.tops[i, pile]
            for slot in range(HAND_SIZE):
                legal = fits[pile, top, s.hand[i, slot]]
                mask[i, HAND_SIZE * pile + slot] = legal
                any_legal |= legal != 0
        if cfg.standard:
            end = (2 if s.deck_pos[i] < NUM_CARDS else 1) - s.turn_played[i] <= 0
            mask[i, END_TURN] = end
            any_legal |= end
        if not any_legal or (s.hand_size[i] == 0 and s.deck_pos[i] == NUM_CARDS):
            s.terminated[i] = True


@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """NinetyEightCards.init: the cards 2..99 shuffled, the first 8 drawn."""
    for i in slots:
        deck = s.deck[i]
        for j in range(NUM_CARDS):
            deck[j] = LOWEST + j
        shuffle(rngs[rng_of[i]], deck)
        s.deck_pos[i] = 0
        s.hand[i] = 0
        s.hand_size[i] = 0
        for pile in range(4):
            s.tops[i, pile] = START_TOPS[pile]
        s.in_draw[i] = 1.0
        s.played[i] = 0
        s.turn_played[i] = 0
        s.current_player[i] = 0
    _refill(s, slots, np.ones(len(slots), np.bool_))
    _update_masks(s, cfg, slots)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """NinetyEightCards._apply: a card on a pile (and under the original rules a refill), or
    the end of the turn and a refill."""
    refill = np.zeros(len(slots), np.bool_)
    hand = s.hand
    for r in range(len(slots)):
        i, a = slots[r], actions[r]
        if a == END_TURN:
            s.turn_played[i] = 0
            refill[r] = True
            continue
        pile, slot = a // HAND_SIZE, a % HAND_SIZE
        card = hand[i, slot]
        for j in range(slot, HAND_SIZE - 1):
            hand[i, j] = hand[i, j + 1]
        hand[i, HAND_SIZE - 1] = 0
        s.hand_size[i] -= 1
        s.tops[i, pile] = card
        s.played[i] += 1
        if cfg.standard:
            s.turn_played[i] += 1
        else:
            refill[r] = True
        s.rewards[i, 0] = s.played[i] - 1 if cfg.shaped else 1.0
    _refill(s, slots, refill)
    _update_masks(s, cfg, slots)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: game rows[r]'s observation, DefaultEncoder (0) or OriginalEncoder (1)."""
    board = np.empty(12, np.int64)
    for r in range(len(rows)):
        i = rows[r]
        if encoding == 0:
            for pile in range(4):
                top = s.tops[i, pile]
                out[r, pile] = cfg.per_100[top]
                for slot in range(HAND_SIZE):
                    out[r, 12 + 8 * pile + slot] = cfg.jump_features[pile, top, s.hand[i, slot]]
            for slot in range(HAND_SIZE):
                out[r, 4 + slot] = cfg.per_100[s.hand[i, slot]]
            out[r, 44] = (NUM_CARDS - s.deck_pos[i]) / (NUM_CARDS - HAND_SIZE)
            out[r, 45] = s.played[i] / NUM_CARDS
            out[r, 46] = s.turn_played[i] / HAND_SIZE
            need = (2 if s.deck_pos[i] < NUM_CARDS else 1) - s.turn_played[i]
            out[r, 47] = max(need, 0) / 2.0 if cfg.standard else 0.0
            for j in range(NUM_CARDS):
                out[r, 48 + j] = s.in_draw[i, j]
        else:
            out[r, 0] = 99 - s.played[i]
            for pile in range(4):
                board[pile] = s.tops[i, pile]
            for slot in range(HAND_SIZE):
                board[4 + slot] = s.hand[i, slot]
            board.sort()
            for j in range(12):
                out[r, 1 + j] = board[j]


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """GreedyAgent (agent 1): the play that moves a pile least (the tens trick first); under
    standard rules, once the minimum is played, only a free move (jump <= 0), else the end of
    the turn."""
    for r in range(len(rows)):
        i = rows[r]
        best, cost = -1, 0
        for a in range(END_TURN):
            if s.mask[i, a]:
                jump = cfg.jumps[a // HAND_SIZE, s.tops[i, a // HAND_SIZE],
                                 s.hand[i, a % HAND_SIZE]]
                if best < 0 or jump < cost:
                    best, cost = a, jump
        if cfg.standard and s.mask[i, END_TURN] and (best < 0 or cost > 0):
            best = END_TURN
        out[r] = best


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: +1 for a won game (every card played), -1 for a lost one, 0 while unfinished;
    the cards played."""
    for r in range(len(rows)):
        i = rows[r]
        won = 1.0 if s.played[i] == NUM_CARDS else -1.0
        payoffs[r, 0] = won if s.terminated[i] else 0.0
        scores[r, 0] = s.played[i]


def load(game: NinetyEightCards, cfg: Config, s: Arrays, i: int, state: CardsState) -> None:
    """Slot ``i`` as the scalar ``state`` (the draw pile's cards after ``deck_pos`` in order)."""
    s.current_player[i] = 0
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    rest = state.deck[state.deck_pos :]
    s.deck[i] = 0
    s.deck[i, NUM_CARDS - len(rest) :] = rest
    s.deck_pos[i] = NUM_CARDS - len(rest)
    s.hand[i] = state.slots
    s.hand_size[i] = len(state.hand)
    s.tops[i] = state.tops
    s.in_draw[i] = np.frombuffer(bytes(state.in_draw), np.int8)
    s.played[i], s.turn_played[i] = state.played, state.turn_played


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load, agents=("greedy",))
