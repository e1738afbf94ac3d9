"""The batched twin of 98 Cards: the rules of ``rules.py`` for many games, compiled (numba).

State of B games, beside the shared fields (``core.batched``): ``deck`` (B, 98) the draw pile
in order, drawn from ``deck_pos``; ``hand`` (B, 8) the hand's cards sorted ascending, then 0 for
each empty slot (the scalar ``slots``); ``hand_size``; ``tops`` (B, 4) the pile tops;
``in_draw`` (B, 98) float32, 1 for each card (value - 2) still in the draw pile; ``played`` and
``turn_played``. Observations as ``encoding.py``'s encoders; agent ``greedy`` as
``agents.py``'s, agent ``expert`` as ``expert.py``'s ExpertAgent with its default planner (the
same searches over arrays instead of Python ints, the same costs added in the same order, so
the same moves: tests/test_batched_twins.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from card_envs.ninety_eight_cards.encoding import JUMP_FEATURES, PER_100
from card_envs.ninety_eight_cards.expert import STUCK, TurnPlanner
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
    # the expert's planner (expert.TurnPlanner's defaults, as ExpertAgent makes it)
    loss: np.ndarray  # TurnPlanner.loss: the cost of a card's lost home, by its homes (0-4)
    extra_bonus: float
    margin: int


GREEDY, EXPERT = 1, 2  # the batched agents' numbers in ``act``
_PLANNER = TurnPlanner()
if not _PLANNER.extras:  # pragma: no cover - the kernels plan with extra plays
    raise ValueError("the batched expert plans with the planner's extra plays")


def config(game: NinetyEightCards) -> Config:
    return Config(1, game.max_steps, game.standard, game.reward == "original", FITS, JUMPS,
                  JUMP_FEATURES, PER_100, np.array(_PLANNER.loss, np.float64),
                  float(_PLANNER.extra_bonus), int(_PLANNER.margin))


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
    deck, deck_pos, hand, hand_size, in_draw = s.deck, s.deck_pos, s.hand, s.hand_size, s.in_draw
    for r in range(len(slots)):
        if not flags[r]:
            continue
        i = slots[r]
        while hand_size[i] < HAND_SIZE and deck_pos[i] < NUM_CARDS:
            card = deck[i, deck_pos[i]]
            deck_pos[i] += 1
            in_draw[i, card - LOWEST] = 0.0
            j = hand_size[i]
            while j > 0 and hand[i, j - 1] > card:
                hand[i, j] = hand[i, j - 1]
                j -= 1
            hand[i, j] = card
            hand_size[i] += 1


@njit(cache=True)
def _update_masks(s, cfg, slots):  # pragma: no cover - compiled
    """NinetyEightCards._update_legal in each game of ``slots``: the mask, and the end when
    nothing is legal or every card is played."""
    (tops, hand, deck_pos, turn_played, hand_size, terminated, mask) = (
        s.tops, s.hand, s.deck_pos, s.turn_played, s.hand_size, s.terminated, s.mask)
    fits = cfg.fits
    for i in slots:
        any_legal = False
        for pile in range(4):
            top = tops[i, pile]
            for slot in range(HAND_SIZE):
                legal = fits[pile, top, hand[i, slot]]
                mask[i, HAND_SIZE * pile + slot] = legal
                any_legal |= legal != 0
        if cfg.standard:
            end = (2 if deck_pos[i] < NUM_CARDS else 1) - turn_played[i] <= 0
            mask[i, END_TURN] = end
            any_legal |= end
        if not any_legal or (hand_size[i] == 0 and deck_pos[i] == NUM_CARDS):
            terminated[i] = True


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
    (hand, hand_size, tops, played, turn_played, rewards) = (
        s.hand, s.hand_size, s.tops, s.played, s.turn_played, s.rewards)
    refill = np.zeros(len(slots), np.bool_)
    for r in range(len(slots)):
        i, a = slots[r], actions[r]
        if a == END_TURN:
            turn_played[i] = 0
            refill[r] = True
            continue
        pile, slot = a // HAND_SIZE, a % HAND_SIZE
        card = hand[i, slot]
        for j in range(slot, HAND_SIZE - 1):
            hand[i, j] = hand[i, j + 1]
        hand[i, HAND_SIZE - 1] = 0
        hand_size[i] -= 1
        tops[i, pile] = card
        played[i] += 1
        if cfg.standard:
            turn_played[i] += 1
        else:
            refill[r] = True
        rewards[i, 0] = played[i] - 1 if cfg.shaped else 1.0
    _refill(s, slots, refill)
    _update_masks(s, cfg, slots)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: game rows[r]'s observation, DefaultEncoder (0) or OriginalEncoder (1)."""
    (hand, tops, deck_pos, played, turn_played, in_draw) = (
        s.hand, s.tops, s.deck_pos, s.played, s.turn_played, s.in_draw)
    board = np.empty(12, np.int64)
    for r in range(len(rows)):
        i = rows[r]
        if encoding == 0:
            for pile in range(4):
                top = tops[i, pile]
                out[r, pile] = cfg.per_100[top]
                for slot in range(HAND_SIZE):
                    out[r, 12 + 8 * pile + slot] = cfg.jump_features[pile, top, hand[i, slot]]
            for slot in range(HAND_SIZE):
                out[r, 4 + slot] = cfg.per_100[hand[i, slot]]
            out[r, 44] = (NUM_CARDS - deck_pos[i]) / (NUM_CARDS - HAND_SIZE)
            out[r, 45] = played[i] / NUM_CARDS
            out[r, 46] = turn_played[i] / HAND_SIZE
            need = (2 if deck_pos[i] < NUM_CARDS else 1) - turn_played[i]
            out[r, 47] = max(need, 0) / 2.0 if cfg.standard else 0.0
            for j in range(NUM_CARDS):
                out[r, 48 + j] = in_draw[i, j]
        else:
            out[r, 0] = 99 - played[i]
            for pile in range(4):
                board[pile] = tops[i, pile]
            for slot in range(HAND_SIZE):
                board[4 + slot] = hand[i, slot]
            board.sort()
            for j in range(12):
                out[r, 1 + j] = board[j]


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """GreedyAgent (agent 1): the play that moves a pile least (the tens trick first); under
    standard rules, once the minimum is played, only a free move (jump <= 0), else the end of
    the turn. ExpertAgent (agent 2): the first play of its planner's plan (``_expert``)."""
    mask, tops, hand = s.mask, s.tops, s.hand
    if agent == EXPERT:
        _expert(s, cfg, rows, out)
        return
    for r in range(len(rows)):
        i = rows[r]
        best, cost = -1, 0
        for a in range(END_TURN):
            if mask[i, a]:
                jump = cfg.jumps[a // HAND_SIZE, tops[i, a // HAND_SIZE],
                                 hand[i, a % HAND_SIZE]]
                if best < 0 or jump < cost:
                    best, cost = a, jump
        if cfg.standard and mask[i, END_TURN] and (best < 0 or cost > 0):
            best = END_TURN
        out[r] = best


# --- the expert (expert.py), over bit words ----------------------------------------------
# expert.py keeps card sets as Python ints (bit v = card value v); here a set is two uint64
# words (values 0-63, 64-127). A search position is the set ``left`` of hand indices not yet
# played (a bit mask over the hand's n cards) and the four tops; ``alive`` (the cards still to
# come) and ``held`` (those still in hand) are handed down the search path. The memo maps
# ``_key(left, tops)`` to the position's cost (or run length), as expert.py's dicts do, in a
# hash table of arrays that every decision reuses (its rows stamped with the decision).
U64 = np.uint64
ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def _key(left, t0, t1, t2, t3):  # pragma: no cover - compiled
    return left | (t0 << 8) | (t1 << 15) | (t2 << 22) | (t3 << 29)


MEMO_BITS = 15  # the memo's table: 2^15 positions a decision at most (then it stops storing)


@njit(cache=True, inline="always")
def _slot(memo_keys, memo_stamp, stamp, key):  # pragma: no cover - compiled
    """The table row of ``key`` (open addressing, linear probing): where it is stored, else
    the first free row of this decision's ``stamp``; -1 when the table is full."""
    size = len(memo_keys)
    row = np.int64((U64(key) * U64(0x9E3779B97F4A7C15)) >> U64(64 - MEMO_BITS))
    for _ in range(size):
        if memo_stamp[row] != stamp or memo_keys[row] == key:
            return row
        row = (row + 1) & (size - 1)
    return -1


@njit(cache=True, inline="always")
def _bits(x):  # pragma: no cover - compiled
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True, inline="always")
def _pop(x):  # pragma: no cover - compiled
    """The set bits of uint64 ``x``."""
    x = x - ((x >> U64(1)) & U64(0x5555555555555555))
    x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
    x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * U64(0x0101010101010101)) >> U64(56))


@njit(cache=True, inline="always")
def _below(k):  # pragma: no cover - compiled
    """The values 0..k-1 as two words (0 <= k <= 128)."""
    if k <= 0:
        return U64(0), U64(0)
    if k < 64:
        return (U64(1) << U64(k)) - U64(1), U64(0)
    if k == 64:
        return ONES, U64(0)
    if k < 128:
        return ONES, (U64(1) << U64(k - 64)) - U64(1)
    return ONES, ONES


@njit(cache=True, inline="always")
def _between(lo, hi):  # pragma: no cover - compiled
    """The values lo..hi-1 as two words."""
    a0, a1 = _below(hi)
    b0, b1 = _below(lo)
    return a0 & ~b0, a1 & ~b1


@njit(cache=True, inline="always")
def _has(w0, w1, card):  # pragma: no cover - compiled
    if card < 64:
        return (w0 >> U64(card)) & U64(1) != U64(0)
    return (w1 >> U64(card - 64)) & U64(1) != U64(0)


@njit(cache=True, inline="always")
def _without(w0, w1, card):  # pragma: no cover - compiled
    if card < 64:
        return w0 & ~(U64(1) << U64(card)), w1
    return w0, w1 & ~(U64(1) << U64(card - 64))


@njit(cache=True, inline="always")
def _pile_top(t0, t1, t2, t3, pile):  # pragma: no cover - compiled
    """The top of ``pile``, or -1 where a play on it would repeat the same play on its twin
    pile (the piles 0 and 1, or 2 and 3, at the same top)."""
    top = t0 if pile == 0 else t1 if pile == 1 else t2 if pile == 2 else t3
    if (pile == 1 and top == t0) or (pile == 3 and top == t2):
        return -1
    return top


@njit(cache=True, inline="always")
def _with_top(t0, t1, t2, t3, pile, card):  # pragma: no cover - compiled
    if pile == 0:
        return card, t1, t2, t3
    if pile == 1:
        return t0, card, t2, t3
    if pile == 2:
        return t0, t1, card, t3
    return t0, t1, t2, card


@njit(cache=True)
def _homes(t0, t1, t2, t3, out):  # pragma: no cover - compiled
    """expert.home_masks: out[h] = the cards 0, 1, 2, 3 or 4 piles take directly, as the
    two words out[h, 0], out[h, 1]."""
    all0, all1 = _between(LOWEST, 100)
    for w in range(2):
        full = all0 if w == 0 else all1
        b = _below(t0 + 1)
        up0 = full & ~b[w]
        b = _below(t1 + 1)
        up1 = full & ~b[w]
        b = _below(t2)
        down2 = full & b[w]
        b = _below(t3)
        down3 = full & b[w]
        one_up, two_up = up0 ^ up1, up0 & up1
        one_down, two_down = down2 ^ down3, down2 & down3
        no_up = full & ~(one_up | two_up)
        no_down = full & ~(one_down | two_down)
        out[0, w] = no_up & no_down
        out[1, w] = (one_up & no_down) | (no_up & one_down)
        out[2, w] = (two_up & no_down) | (one_up & one_down) | (no_up & two_down)
        out[3, w] = (two_up & one_down) | (one_up & two_down)
        out[4, w] = two_up & two_down


@njit(cache=True, inline="always")
def _cost(j0, j1, h, loss, reopened):  # pragma: no cover - compiled
    """expert.py's cost of the cards (j0, j1) jumped over (counted by their homes h: what each
    loses), or minus what a tens trick gives back to those it reopens (``reopened``; a
    trick that reopens nothing costs 0)."""
    if not reopened or (j0 == U64(0) and j1 == U64(0)):
        return (loss[1] * (_pop(j0 & h[1, 0]) + _pop(j1 & h[1, 1]))
                + loss[2] * (_pop(j0 & h[2, 0]) + _pop(j1 & h[2, 1]))
                + loss[3] * (_pop(j0 & h[3, 0]) + _pop(j1 & h[3, 1]))
                + loss[4] * (_pop(j0 & h[4, 0]) + _pop(j1 & h[4, 1])))
    return -(loss[1] * (_pop(j0 & h[0, 0]) + _pop(j1 & h[0, 1]))
             + loss[2] * (_pop(j0 & h[1, 0]) + _pop(j1 & h[1, 1]))
             + loss[3] * (_pop(j0 & h[2, 0]) + _pop(j1 & h[2, 1]))
             + loss[4] * (_pop(j0 & h[3, 0]) + _pop(j1 & h[3, 1])))


@njit(cache=True)
def _list_moves(hand, n, left, t0, t1, t2, t3, alive0, alive1, held0, held1, h, loss,
                here):  # pragma: no cover - compiled
    """TurnPlanner.options' moves from position (left, tops): row m of ``here`` the m-th
    legal play as (cost, sets up a tens trick with a card held, hand index, pile), ``h`` the
    position's homes (``_homes``); returns how many."""
    count = 0
    for i in range(n):
        if not (left >> i) & 1:
            continue
        card = hand[i]
        for pile in range(4):
            top = _pile_top(t0, t1, t2, t3, pile)
            if top < 0:
                continue
            setup = False
            if pile < 2:
                if card > top:
                    j0, j1 = _between(top + 1, card)
                    cost = _cost(j0 & alive0, j1 & alive1, h, loss, False)
                    setup = card > 11 and _has(held0, held1, card - 10)
                elif card == top - 10:
                    j0, j1 = _between(card + 1, top)
                    cost = _cost(j0 & alive0, j1 & alive1, h, loss, True)
                else:
                    continue
            else:
                if card < top:
                    j0, j1 = _between(card + 1, top)
                    cost = _cost(j0 & alive0, j1 & alive1, h, loss, False)
                    setup = card < 90 and _has(held0, held1, card + 10)
                elif card == top + 10:
                    j0, j1 = _between(top + 1, card)
                    cost = _cost(j0 & alive0, j1 & alive1, h, loss, True)
                else:
                    continue
            here[count, 0] = cost
            here[count, 1] = setup
            here[count, 2] = i
            here[count, 3] = pile
            count += 1
    return count


@njit(cache=True)
def _plan(hand, n, left, t0, t1, t2, t3, alive0, alive1, held0, held1, need, cfg, memo,
          moves, homes, first):  # pragma: no cover - compiled
    """TurnPlanner.options' ``best``: the cheapest plan's cost from position (left, tops).
    ``memo``: (keys, values, stamps, stamp) of this decision's table (``_slot``);
    ``moves`` ((9, 32, 4) float) and ``homes`` ((9, 5, 2) uint64): scratch, a row per depth;
    at the root (every card left) ``first`` gets the plan's first play as (card, pile), or
    stays (-1, -1) for none."""
    memo_keys, memo_values, memo_stamp, stamp = memo
    key = _key(left, t0, t1, t2, t3)
    row = _slot(memo_keys, memo_stamp, stamp, key)
    if row >= 0 and memo_stamp[row] == stamp:
        return memo_values[row]
    loss = cfg.loss
    played = n - _bits(left)
    required = played < need
    here, h = moves[played], homes[played]
    _homes(t0, t1, t2, t3, h)
    count = _list_moves(hand, n, left, t0, t1, t2, t3, alive0, alive1, held0, held1, h, loss,
                        here)
    if required:
        result = STUCK
        cheapest = np.inf
        for m in range(count):
            cheapest = min(cheapest, here[m, 0])
        limit = cheapest + cfg.margin
        extra = 0.0
    else:
        result = 0.0
        limit = cfg.extra_bonus
        extra = cfg.extra_bonus
    at_root = played == 0
    k = 0  # the moves worth searching, kept in order (the children use the rows below)
    for m in range(count):
        if here[m, 0] <= limit or here[m, 1]:
            here[k] = here[m]
            k += 1
    for m in range(k):
        cost, i, pile = here[m, 0], int(here[m, 2]), int(here[m, 3])
        card = hand[i]
        a0, a1 = _without(alive0, alive1, card)
        b0, b1 = _without(held0, held1, card)
        n0, n1, n2, n3 = _with_top(t0, t1, t2, t3, pile, card)
        sub = _plan(hand, n, left & ~(1 << i), n0, n1, n2, n3, a0, a1, b0, b1, need, cfg, memo,
                    moves, homes, first)
        total = cost - extra + sub
        if total < result:
            result = total
            if at_root:
                first[0], first[1] = card, pile
    _store(memo, key, result)
    return result


@njit(cache=True, inline="always")
def _store(memo, key, value):  # pragma: no cover - compiled
    """The memo's ``key`` set to ``value`` (nothing stored once the table is full: a memo
    saves searching again, the results are the same without it)."""
    memo_keys, memo_values, memo_stamp, stamp = memo
    row = _slot(memo_keys, memo_stamp, stamp, key)
    if row >= 0:
        memo_keys[row], memo_values[row], memo_stamp[row] = key, value, stamp


@njit(cache=True)
def _run(hand, n, left, t0, t1, t2, t3, fits, memo, first):  # pragma: no cover - compiled
    """expert.longest_run's ``best``: how many of the cards ``left`` can still be played,
    and at the root its first play in ``first`` (as (card, pile))."""
    memo_keys, memo_values, memo_stamp, stamp = memo
    key = _key(left, t0, t1, t2, t3)
    row = _slot(memo_keys, memo_stamp, stamp, key)
    if row >= 0 and memo_stamp[row] == stamp:
        return int(memo_values[row])
    remaining = _bits(left)
    at_root = remaining == n
    result = 0
    for i in range(n):
        if not (left >> i) & 1:
            continue
        card = hand[i]
        for pile in range(4):
            top = _pile_top(t0, t1, t2, t3, pile)
            if top >= 0 and fits[pile, top, card]:
                n0, n1, n2, n3 = _with_top(t0, t1, t2, t3, pile, card)
                sub = _run(hand, n, left & ~(1 << i), n0, n1, n2, n3, fits, memo, first) + 1
                if sub > result:
                    result = sub
                    if at_root:
                        first[0], first[1] = card, pile
                    if result == remaining:
                        _store(memo, key, float(result))
                        return result
    _store(memo, key, float(result))
    return result


@njit(cache=True)
def _expert(s, cfg, rows, out):  # pragma: no cover - compiled
    """ExpertAgent.act for the games ``rows``: the planner's first play (the longest run once
    the draw pile is empty), else the end of the turn where legal, else the first legal move.
    (ExpertAgent keeps the rest of a turn's plan instead of planning again; planning again
    from the position it leads to finds the same plan.)"""
    hand_all, hand_size, tops, deck_pos, mask = s.hand, s.hand_size, s.tops, s.deck_pos, s.mask
    moves = np.empty((HAND_SIZE + 1, 4 * HAND_SIZE, 4), np.float64)
    homes = np.empty((HAND_SIZE + 1, 5, 2), np.uint64)
    first = np.empty(2, np.int64)
    memo_keys = np.zeros(1 << MEMO_BITS, np.int64)
    memo_values = np.zeros(1 << MEMO_BITS, np.float64)
    memo_stamp = np.zeros(1 << MEMO_BITS, np.int64)  # the decision that wrote each row, from 1
    for r in range(len(rows)):
        i = rows[r]
        n = hand_size[i]
        hand = hand_all[i, :n]
        t0, t1, t2, t3 = tops[i, 0], tops[i, 1], tops[i, 2], tops[i, 3]
        first[0], first[1] = -1, -1
        memo = (memo_keys, memo_values, memo_stamp, r + 1)
        full = (1 << n) - 1
        if deck_pos[i] == NUM_CARDS:  # the draw pile is empty: nothing is hidden
            _run(hand, n, full, t0, t1, t2, t3, cfg.fits, memo, first)
        else:
            need = max(2 - s.turn_played[i], 0) if cfg.standard else 1
            alive0, alive1 = U64(0), U64(0)
            for j in range(NUM_CARDS):
                if s.in_draw[i, j] > 0.5:
                    alive0, alive1 = _with_card(alive0, alive1, LOWEST + j)
            held0, held1 = U64(0), U64(0)
            for j in range(n):
                alive0, alive1 = _with_card(alive0, alive1, hand[j])
                held0, held1 = _with_card(held0, held1, hand[j])
            _plan(hand, n, full, t0, t1, t2, t3, alive0, alive1, held0, held1, need, cfg, memo,
                  moves, homes, first)
        if first[0] >= 0:
            slot = 0
            while hand[slot] != first[0]:
                slot += 1
            out[r] = first[1] * HAND_SIZE + slot
        elif cfg.standard and mask[i, END_TURN]:
            out[r] = END_TURN
        else:
            a = 0
            while not mask[i, a]:
                a += 1
            out[r] = a


@njit(cache=True, inline="always")
def _with_card(w0, w1, card):  # pragma: no cover - compiled
    if card < 64:
        return w0 | (U64(1) << U64(card)), w1
    return w0, w1 | (U64(1) << U64(card - 64))


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


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("greedy", "expert"))
