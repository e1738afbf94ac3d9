"""The batched twin of Palace: the rules of ``rules.py`` for one slot, compiled (numba).

State of B games, beside the shared fields (``core.batched``), kept as the scalar state keeps
it: ``facts`` (B, F) int8, the scalar state's ``facts`` vector byte for byte (``FactIndex``:
each seat's hand size, face-up cards per rank, face-down count, publicly known hand cards per
rank and out flag; the pile per rank, its size, top rank + 1 and run; cards out of the game;
the draw pile's size; the swap-phase flag; the ring of the last n + 1 plays; then each seat's
hand per rank), so that the default observation is the scalar encoder's own gather and table.
Outside the facts, as the scalar state keeps them outside: ``face_up_size`` (B, n);
``face_down`` (B, n, 3) each seat's face-down ranks in the order of its list (a blind play
takes the card at a random place of it); ``draw`` (B, 52) the draw pile, the next card last
(the scalar ``s.draw``), its length in the facts; ``finished`` (B, n) the seats in the order
they went out, ``num_out`` how many; ``loser`` (-1 until the end); ``head`` the newest row of
the facts' history ring.

Observations as ``encoding.py``'s encoders; agents as ``agents.py``'s ``lowest_first`` and
``heuristic``. The heuristic is exact: once the draw pile is empty it imagines its deals
(``search.deal_unseen``, ``pile_order`` and ``Palace.deal``) into a scratch batch of two slots
and plays its rollouts there through the same compiled rules, drawing from the slot's
generator what the scalar agent draws, in the same order.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin
from card_envs.core.batched_loops import shuffle
from card_envs.core.cards import DECK_SIZE, NUM_RANKS
from card_envs.palace.agents import KEEP_VALUE, SPEND_ORDER, HeuristicAgent
from card_envs.palace.encoding import DefaultEncoder
from card_envs.palace.rules import (
    BLIND,
    BLIND_FAIL,
    BLIND_PLAY,
    BURN_RUN,
    DEAL_EACH,
    FACE_DOWN_AT,
    FACE_UP_AT,
    FACE_UP_BASE,
    FROM_FACE_UP,
    FROM_HAND,
    HAND_BONUS,
    HAND_SIZE_AT,
    HAND_TARGET,
    KNOWN_AT,
    OUT_AT,
    PICK_UP,
    PICKED_UP,
    PICKUP_WEIGHT,
    PLAYABLE,
    RANK_DECK,
    ROW_BURNED,
    ROW_KIND,
    ROW_PLACED,
    ROW_RANK,
    ROW_SEAT,
    ROW_TAKEN,
    SEAT_WIDTH,
    SEVEN,
    SWAP_BASE,
    SWAP_DONE,
    TEN,
    THREE,
    Palace,
    PalaceState,
)

ROW_WIDTH = 6  # numbers per row of the facts' history ring (FactIndex.row_width)
MAX_CHOICES = 2 * NUM_RANKS + 1  # heuristic: all or one copy of each rank, then pick up
_PLAYABLE = PLAYABLE.astype(np.int8)
_SPEND_ORDER = np.array(SPEND_ORDER, np.int64)
_KEEP_VALUE = np.array(KEEP_VALUE, np.int64)
_RANK_DECK = np.array(RANK_DECK, np.int64)
_HAND_BONUS = np.array(HAND_BONUS, np.float64)
_PICKUP_WEIGHT = PICKUP_WEIGHT.copy()


class Arrays(NamedTuple):
    current_player: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    rewards: np.ndarray
    steps: np.ndarray
    mask: np.ndarray
    facts: np.ndarray
    face_up_size: np.ndarray
    face_down: np.ndarray
    draw: np.ndarray
    finished: np.ndarray
    num_out: np.ndarray
    loser: np.ndarray
    head: np.ndarray


class Config(NamedTuple):
    num_players: int
    max_steps: int
    num_actions: int
    swap_phase: bool
    shaped: bool  # reward="original": the source's step rewards
    # where the facts are (FactIndex)
    pile: int
    pile_size: int
    top: int
    run: int
    out_cards: int
    draw: int
    swapping: int
    history: int
    rows: int
    hands: int
    size: int
    # the default encoder's gather positions per (observer, head) and tables per observer
    gather: np.ndarray
    tables: np.ndarray
    base: np.ndarray
    # the heuristic's search
    samples: int
    rollout_cap: int


def config(game: Palace) -> Config:
    ix = game.index
    encoder = DefaultEncoder(game)
    gather = np.array([[g for g in per_head] for per_head in encoder._gather], np.int64)
    tables = np.stack(encoder._tables).astype(np.float32)
    return Config(
        game.num_players, game.max_steps, game.num_actions, game.swap_phase, game.shaped,
        ix.pile, ix.pile_size, ix.top, ix.run, ix.out_cards, ix.draw, ix.swapping, ix.history,
        ix.history_rows, ix.hands, ix.size, gather, tables, encoder._base.astype(np.int64),
        HeuristicAgent.samples, HeuristicAgent.rollout_cap,
    )


def allocate(game: Palace, cfg: Config, b: int) -> Arrays:
    return _allocate(cfg, b)


@njit(cache=True)
def _allocate(cfg, b):  # pragma: no cover - compiled
    """Zeroed arrays of ``b`` games (the state, and the heuristic's scratch worlds)."""
    n = cfg.num_players
    return Arrays(
        np.zeros(b, np.int64), np.zeros(b, np.bool_), np.zeros(b, np.bool_),
        np.zeros((b, n)), np.zeros(b, np.int64), np.zeros((b, cfg.num_actions), np.int8),
        np.zeros((b, cfg.size), np.int8), np.zeros((b, n), np.int64),
        np.zeros((b, n, DEAL_EACH), np.int64), np.zeros((b, DECK_SIZE), np.int64),
        np.zeros((b, n), np.int64), np.zeros(b, np.int64), np.full(b, -1, np.int64),
        np.zeros(b, np.int64),
    )


# --- the rules of one game (inlined into the kernels) --------------------------------------------
@njit(cache=True, inline="always")
def _hand(cfg, p):  # pragma: no cover - compiled
    """Where seat p's hand (per rank) starts in the facts."""
    return cfg.hands + NUM_RANKS * p


@njit(cache=True, inline="always")
def _clear_pile(f, cfg, i):  # pragma: no cover - compiled
    for r in range(NUM_RANKS):
        f[i, cfg.pile + r] = 0
    f[i, cfg.pile_size] = 0
    f[i, cfg.top] = 0
    f[i, cfg.run] = 0


@njit(cache=True, inline="always")
def _burn(f, cfg, i):  # pragma: no cover - compiled
    """The whole pile leaves the game."""
    for r in range(NUM_RANKS):
        f[i, cfg.out_cards + r] += f[i, cfg.pile + r]
    _clear_pile(f, cfg, i)


@njit(cache=True, inline="always")
def _place(f, cfg, i, rank, count):  # pragma: no cover - compiled
    """Palace._place: ``count`` cards of ``rank`` on the pile; a 10 or a fourth in a row burns
    it (returns whether it burned)."""
    if rank == TEN:
        f[i, cfg.out_cards + TEN] += count
        _burn(f, cfg, i)
        return True
    f[i, cfg.pile + rank] += count
    f[i, cfg.pile_size] += count
    if rank == f[i, cfg.top] - 1:
        run = f[i, cfg.run] + count
    else:
        f[i, cfg.top] = rank + 1
        run = count
    f[i, cfg.run] = run
    if run >= BURN_RUN:
        _burn(f, cfg, i)
        return True
    return False


@njit(cache=True, inline="always")
def _take_into_hand(f, cfg, i, p, count):  # pragma: no cover - compiled
    """The pile (counted, ``count`` cards) into p's hand in full view of everyone."""
    hand, known = _hand(cfg, p), p * SEAT_WIDTH + KNOWN_AT
    for r in range(NUM_RANKS):
        c = f[i, cfg.pile + r]
        f[i, hand + r] += c
        f[i, known + r] += c
    f[i, p * SEAT_WIDTH + HAND_SIZE_AT] += count
    _clear_pile(f, cfg, i)


@njit(cache=True, inline="always")
def _pickup_penalty(f, cfg, i, total):  # pragma: no cover - compiled
    """rules._pickup_penalty of the pile (already without its top 3s)."""
    if total == 0:
        return 0.0
    weighed = total - f[i, cfg.pile + THREE] - f[i, cfg.pile + SEVEN]
    if weighed == 0:
        return 0.5
    dot = 0.0
    for r in range(NUM_RANKS):
        dot += _PICKUP_WEIGHT[r] * f[i, cfg.pile + r]
    return total / NUM_RANKS * dot / weighed


@njit(cache=True, inline="always")
def _result_payoffs(s, cfg, i, capped, pay, row):  # pragma: no cover - compiled
    """Palace._result_payoffs into pay[row]: the loser -1, the others 1/(n-1); at the cap the
    players holding the most cards share the loss."""
    n = cfg.num_players
    f = s.facts
    for q in range(n):
        pay[row, q] = 1.0 / (n - 1)
    if not capped:
        pay[row, s.loser[i]] = -1.0
        return
    most, k = -1, 0
    for q in range(n):
        if f[i, q * SEAT_WIDTH + OUT_AT] == 0:
            held = _held(s, i, q)
            if held > most:
                most, k = held, 1
            elif held == most:
                k += 1
    share = -1.0 / k + (1.0 - 1.0 / k) / (n - 1)
    for q in range(n):
        if f[i, q * SEAT_WIDTH + OUT_AT] == 0 and _held(s, i, q) == most:
            pay[row, q] = share


@njit(cache=True, inline="always")
def _held(s, i, q):  # pragma: no cover - compiled
    """Cards seat q holds: hand, face-up and face-down."""
    at = q * SEAT_WIDTH
    return (np.int64(s.facts[i, at + HAND_SIZE_AT]) + s.face_up_size[i, q]
            + s.facts[i, at + FACE_DOWN_AT])


@njit(cache=True, inline="always")
def _swap(s, cfg, i, action):  # pragma: no cover - compiled
    """Palace._swap: exchange a hand card for a face-up card, or end this seat's swapping."""
    f = s.facts
    p = s.current_player[i]
    if action == SWAP_DONE:
        if p + 1 < cfg.num_players:
            s.current_player[i] = p + 1
        else:
            f[i, cfg.swapping] = 0
            s.current_player[i] = 0
        return
    given, taken = divmod(action - SWAP_BASE, NUM_RANKS)
    hand, seat = _hand(cfg, p), p * SEAT_WIDTH
    f[i, hand + given] -= 1
    f[i, hand + taken] += 1
    f[i, seat + FACE_UP_AT + taken] -= 1
    f[i, seat + FACE_UP_AT + given] += 1
    f[i, seat + KNOWN_AT + taken] += 1  # everyone saw the face-up card go into the hand
    f[i, seat + KNOWN_AT + given] = max(0, f[i, seat + KNOWN_AT + given] - 1)


@njit(cache=True, inline="always")
def _apply(s, cfg, i, action, rng):  # pragma: no cover - compiled
    """Palace._apply in game i: the play, its history row, the refill, going out, the next
    seat, and the step's rewards in s.rewards[i] (zeroed before)."""
    n = cfg.num_players
    f = s.facts
    if action >= SWAP_BASE:
        _swap(s, cfg, i, action)
        if s.steps[i] + 1 >= cfg.max_steps:
            _result_payoffs(s, cfg, i, True, s.rewards, i)
            if cfg.shaped:
                s.rewards[i, s.current_player[i]] += 0.0
                for q in range(n):
                    if f[i, q * SEAT_WIDTH + OUT_AT] == 0:
                        s.rewards[i, q] -= 10.0
        return
    p = s.current_player[i]
    seat, hand = p * SEAT_WIDTH, _hand(cfg, p)
    top = f[i, cfg.top] - 1
    if action < FACE_UP_BASE:  # from the hand
        kind = FROM_HAND
        rank, count = action % NUM_RANKS, action // NUM_RANKS + 1
        f[i, hand + rank] -= count
        f[i, seat + HAND_SIZE_AT] -= count
        known = f[i, seat + KNOWN_AT + rank]
        if known:  # the cards played may have been unknown ones: the rest stays certain
            f[i, seat + KNOWN_AT + rank] = max(0, known - count)
        burned = _place(f, cfg, i, rank, count)
        bonus = _HAND_BONUS[count]
    elif action < BLIND:  # a face-up card
        kind, rank, count = FROM_FACE_UP, action - FACE_UP_BASE, 1
        f[i, seat + FACE_UP_AT + rank] -= 1
        s.face_up_size[i, p] -= 1
        burned = _place(f, cfg, i, rank, 1)
        bonus = 5.0
    elif action == BLIND:  # a random face-down card: played if legal, else taken with the pile
        size = f[i, seat + FACE_DOWN_AT]
        at = int(rng.random() * size)
        rank = s.face_down[i, p, at]
        for k in range(at, size - 1):
            s.face_down[i, p, k] = s.face_down[i, p, k + 1]
        f[i, seat + FACE_DOWN_AT] = size - 1
        if _PLAYABLE[top + 1, rank]:
            kind, count = BLIND_PLAY, 1
            burned = _place(f, cfg, i, rank, 1)
            bonus = 10.0
        else:
            kind, burned, bonus = BLIND_FAIL, False, -5.0
            count = f[i, cfg.pile_size] + 1
            f[i, cfg.pile + rank] += 1
            _take_into_hand(f, cfg, i, p, count)
    else:  # pick up the pile; a run of 3s on top leaves the game
        kind, rank, burned = PICKED_UP, -1, False
        count = np.int64(f[i, cfg.pile_size])
        if top == THREE:
            run = f[i, cfg.run]
            count -= run
            f[i, cfg.pile + THREE] -= run
            f[i, cfg.out_cards + THREE] += run
        bonus = -_pickup_penalty(f, cfg, i, count) if cfg.shaped else 0.0
        _take_into_hand(f, cfg, i, p, count)
    # the play's row in the history ring
    head = s.head[i] = (s.head[i] + 1) % cfg.rows
    row = cfg.history + head * ROW_WIDTH
    placed = kind == FROM_HAND or kind == FROM_FACE_UP or kind == BLIND_PLAY
    f[i, row + ROW_SEAT] = p + 1
    f[i, row + ROW_KIND] = kind + 1
    f[i, row + ROW_RANK] = rank + 1
    f[i, row + ROW_PLACED] = count if placed else 0
    f[i, row + ROW_TAKEN] = 0 if placed else count
    f[i, row + ROW_BURNED] = burned
    # refill from the draw pile while it lasts
    left = f[i, cfg.draw]
    if left and f[i, seat + HAND_SIZE_AT] < HAND_TARGET:
        take = min(HAND_TARGET - f[i, seat + HAND_SIZE_AT], left)
        for _ in range(take):
            left -= 1
            f[i, hand + s.draw[i, left]] += 1
        f[i, seat + HAND_SIZE_AT] += take
        f[i, cfg.draw] = left
    went_out = (f[i, seat + HAND_SIZE_AT] == 0 and s.face_up_size[i, p] == 0
                and f[i, seat + FACE_DOWN_AT] == 0)
    if went_out:
        f[i, seat + OUT_AT] = 1
        s.finished[i, s.num_out[i]] = p
        s.num_out[i] += 1
        if s.num_out[i] == n - 1:
            q = 0
            while f[i, q * SEAT_WIDTH + OUT_AT]:
                q += 1
            s.loser[i] = q
            s.terminated[i] = True
    # a burner acts again; otherwise (or if it went out) the next player still in acts
    if (went_out or not burned) and not s.terminated[i]:
        q = (p + 1) % n
        while f[i, q * SEAT_WIDTH + OUT_AT]:
            q = (q + 1) % n
        s.current_player[i] = q
    capped = not s.terminated[i] and s.steps[i] + 1 >= cfg.max_steps
    if s.terminated[i] or capped:
        _result_payoffs(s, cfg, i, capped, s.rewards, i)
    if cfg.shaped:  # Palace._shaped_rewards
        s.rewards[i, p] += bonus
        if went_out:
            s.rewards[i, p] += 20.0 if s.num_out[i] == 1 else 10.0
        if capped:  # the source's stalemate penalty for everyone still holding cards
            for q in range(n):
                if f[i, q * SEAT_WIDTH + OUT_AT] == 0:
                    s.rewards[i, q] -= 10.0


@njit(cache=True, inline="always")
def _count_step(s, cfg, i):  # pragma: no cover - compiled
    """Game.apply after the rules: the step count and the cap (the rollouts' own steps)."""
    s.steps[i] += 1
    if not s.terminated[i] and s.steps[i] >= cfg.max_steps:
        s.truncated[i] = True


@njit(cache=True)
def _update_masks(s, cfg, slots):  # pragma: no cover - compiled
    """Palace._legal_mask in each game of ``slots`` not over: swaps in the swap phase; else
    plays from the hand, else from face-up, else blind; pick-up whenever there is a pile."""
    f, mask = s.facts, s.mask
    for i in slots:
        for a in range(cfg.num_actions):
            mask[i, a] = 0
        if s.terminated[i]:
            continue
        p = s.current_player[i]
        seat, hand = p * SEAT_WIDTH, _hand(cfg, p)
        if f[i, cfg.swapping]:
            for given in range(NUM_RANKS):
                if f[i, hand + given]:
                    for taken in range(NUM_RANKS):
                        if taken != given and f[i, seat + FACE_UP_AT + taken]:
                            mask[i, SWAP_BASE + NUM_RANKS * given + taken] = 1
            mask[i, SWAP_DONE] = 1
            continue
        top = f[i, cfg.top]  # rank + 1
        if f[i, seat + HAND_SIZE_AT]:
            for r in range(NUM_RANKS):
                if _PLAYABLE[top, r]:
                    for k in range(f[i, hand + r]):
                        mask[i, NUM_RANKS * k + r] = 1
        elif s.face_up_size[i, p]:
            for r in range(NUM_RANKS):
                if _PLAYABLE[top, r] and f[i, seat + FACE_UP_AT + r]:
                    mask[i, FACE_UP_BASE + r] = 1
        else:
            mask[i, BLIND] = 1
        if top:
            mask[i, PICK_UP] = 1


# --- kernels ------------------------------------------------------------------------------------
@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """Palace.init: the shuffled deck, 9 cards a seat in a row (face-down, face-up, hand), the
    rest the draw pile."""
    n = cfg.num_players
    f = s.facts
    deck = np.empty(DECK_SIZE, np.int64)
    for i in slots:
        deck[:] = _RANK_DECK
        shuffle(rngs[rng_of[i]], deck)
        f[i, :] = 0
        for q in range(n):
            seat, hand = q * SEAT_WIDTH, _hand(cfg, q)
            for k in range(DEAL_EACH):
                s.face_down[i, q, k] = deck[9 * q + k]
                f[i, seat + FACE_UP_AT + deck[9 * q + DEAL_EACH + k]] += 1
                f[i, hand + deck[9 * q + 2 * DEAL_EACH + k]] += 1
            f[i, seat + HAND_SIZE_AT] = DEAL_EACH
            f[i, seat + FACE_DOWN_AT] = DEAL_EACH
            s.face_up_size[i, q] = DEAL_EACH
            s.finished[i, q] = 0
        left = DECK_SIZE - 9 * n
        for k in range(left):
            s.draw[i, k] = deck[DECK_SIZE - 1 - k]
        f[i, cfg.draw] = left
        f[i, cfg.swapping] = cfg.swap_phase
        s.current_player[i] = 0
        s.num_out[i] = 0
        s.loser[i] = -1
        s.head[i] = 0
    _update_masks(s, cfg, slots)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """Palace._apply in each game of ``slots``, then the next seat's legal mask."""
    for r in range(len(slots)):
        i = slots[r]
        _apply(s, cfg, i, actions[r], rngs[rng_of[i]])
    _update_masks(s, cfg, slots)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s observation of game rows[r], DefaultEncoder (encoding 0,
    "default": the encoder's own gather of the facts and its table) or OriginalEncoder (1)."""
    f = s.facts
    size = out.shape[1]
    for r in range(len(rows)):
        i, q = rows[r], seats[r]
        head = s.head[i]
        if encoding == 0:
            gather, table = cfg.gather[q, head], cfg.tables[q]
            for j in range(size):
                out[r, j] = table[cfg.base[j] + f[i, gather[j]]]
            continue
        for j in range(size):
            out[r, j] = 0.0
        for age in range(3):  # the last three plays, the newest last
            row = cfg.history + ((head - age) % cfg.rows) * ROW_WIDTH
            if f[i, row + ROW_SEAT] == 0:
                continue  # no play yet
            at = NUM_RANKS * (2 - age)
            kind = f[i, row + ROW_KIND] - 1
            if kind == FROM_HAND:
                out[r, at + f[i, row + ROW_RANK] - 1] = f[i, row + ROW_PLACED]
            elif kind == FROM_FACE_UP or kind == BLIND_PLAY:
                out[r, at + f[i, row + ROW_RANK] - 1] = 1.0
            else:
                for k in range(NUM_RANKS):
                    out[r, at + k] = -1.0
        hand = _hand(cfg, q)
        for k in range(NUM_RANKS):
            out[r, 3 * NUM_RANKS + k] = f[i, hand + k]
        if q == s.current_player[i] and not (s.terminated[i] or s.truncated[i]):
            for a in range(PICK_UP + 1):
                out[r, 4 * NUM_RANKS + a] = s.mask[i, a]


LOWEST_FIRST, HEURISTIC = 1, 2


@njit(cache=True, inline="always")
def _lowest_first(s, cfg, i):  # pragma: no cover - compiled
    """lowest_first_action: every copy of the first playable hand rank in SPEND_ORDER, else the
    first playable face-up rank, else blind; else pick up (what the legal mask allows)."""
    f = s.facts
    p = s.current_player[i]
    seat, hand = p * SEAT_WIDTH, _hand(cfg, p)
    top = f[i, cfg.top]  # rank + 1
    if f[i, seat + HAND_SIZE_AT]:
        for rank in _SPEND_ORDER:
            held = f[i, hand + rank]
            if held and _PLAYABLE[top, rank]:
                return NUM_RANKS * (held - 1) + rank
        return PICK_UP
    if s.face_up_size[i, p]:
        for rank in _SPEND_ORDER:
            if f[i, seat + FACE_UP_AT + rank] and _PLAYABLE[top, rank]:
                return FACE_UP_BASE + rank
        return PICK_UP
    return BLIND


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """LowestFirstAgent (agent 1) or HeuristicAgent (2) for the seat to act in games ``rows``."""
    f = s.facts
    world = _allocate(cfg, 2) if agent == HEURISTIC else _allocate(cfg, 0)
    pool = np.empty(DECK_SIZE, np.int64)
    choices = np.empty(MAX_CHOICES, np.int64)
    totals = np.empty(MAX_CHOICES)
    for r in range(len(rows)):
        i = rows[r]
        p = s.current_player[i]
        seat, hand = p * SEAT_WIDTH, _hand(cfg, p)
        if f[i, cfg.swapping]:
            if agent == LOWEST_FIRST:
                out[r] = SWAP_DONE
                continue
            # show the strongest cards face-up: the most valuable hand card for the least
            # valuable face-up card while that gains
            best, worst = -1, -1
            for rank in range(NUM_RANKS):
                if f[i, hand + rank] and (best < 0 or _KEEP_VALUE[rank] > _KEEP_VALUE[best]):
                    best = rank
                if f[i, seat + FACE_UP_AT + rank] and (
                        worst < 0 or _KEEP_VALUE[rank] < _KEEP_VALUE[worst]):
                    worst = rank
            if _KEEP_VALUE[best] > _KEEP_VALUE[worst]:
                out[r] = SWAP_BASE + NUM_RANKS * best + worst
            else:
                out[r] = SWAP_DONE
            continue
        rule = _lowest_first(s, cfg, i)
        if agent == LOWEST_FIRST:
            out[r] = rule
            continue
        # heuristic: lowest_first's play, unless a four-of-a-kind burn is on offer
        legal = s.mask[i]
        top, run = f[i, cfg.top] - 1, f[i, cfg.run]
        if top >= 0 and f[i, seat + HAND_SIZE_AT] and legal[top]:
            held = f[i, hand + top]
            if run + held >= BURN_RUN:
                rule = NUM_RANKS * (held - 1) + top
        elif top >= 0 and legal[FACE_UP_BASE + top] and run + 1 >= BURN_RUN:
            rule = FACE_UP_BASE + top
        if f[i, cfg.draw]:
            out[r] = rule
            continue
        # the endgame: the distinct plays worth comparing
        count = 0
        if legal[BLIND]:
            choices[0] = BLIND
            count = 1
        else:
            for rank in range(NUM_RANKS):
                if legal[rank]:
                    held = f[i, hand + rank]
                    choices[count] = NUM_RANKS * (held - 1) + rank
                    count += 1
                    if held > 1:
                        choices[count] = rank
                        count += 1
                elif legal[FACE_UP_BASE + rank]:
                    choices[count] = FACE_UP_BASE + rank
                    count += 1
        if legal[PICK_UP]:
            choices[count] = PICK_UP
            count += 1
        if count < 2:
            out[r] = rule
            continue
        out[r] = _search(s, cfg, i, rngs[rng_of[i]], world, pool, choices[:count], rule,
                         totals[:count])


@njit(cache=True)
def _search(s, cfg, i, rng, world, pool, choices, rule, totals):  # pragma: no cover
    """HeuristicAgent._search for the seat to act in game i: each choice played out by
    lowest_first on the same imagined deals (world slot 0, copied into slot 1 per choice);
    the choice of the best total (ties: the rule's, else the first)."""
    me = s.current_player[i]
    totals[:] = 0.0
    for _ in range(cfg.samples):
        _imagine(s, cfg, i, rng, world, pool)
        for c in range(len(choices)):
            _copy_world(world)
            action = choices[c]
            outcome = 0.0
            for t in range(cfg.rollout_cap + 1):  # the choice, then the rollout's moves
                if t:
                    if world.facts[1, me * SEAT_WIDTH + OUT_AT]:
                        outcome = 1.0
                        break
                    if world.terminated[1] or world.truncated[1]:
                        outcome = -1.0 if world.terminated[1] else 0.0
                        break
                    action = _lowest_first(world, cfg, 1)
                _apply(world, cfg, 1, action, rng)
                _count_step(world, cfg, 1)
            totals[c] += outcome
    best = 0
    for c in range(1, len(choices)):
        if totals[c] > totals[best] or (totals[c] == totals[best] and choices[c] == rule
                                        and choices[best] != rule):
            best = c
    return choices[best]


@njit(cache=True, inline="always")
def _imagine(s, cfg, i, rng, world, pool):  # pragma: no cover - compiled
    """HeuristicAgent.imagine into world slot 0: the cards the seat to act in game i cannot see
    (search.deal_unseen: shuffled, then dealt to the other hands after their known cards, the
    face-down stacks seat by seat, the rest the draw pile), dealt by Palace.deal with the
    pile of search.pile_order. Reads only what that seat sees."""
    n = cfg.num_players
    f, g = s.facts, world.facts
    me = s.current_player[i]
    size = 0
    for r in range(NUM_RANKS):
        seen = f[i, _hand(cfg, me) + r] + f[i, cfg.pile + r] + f[i, cfg.out_cards + r]
        for q in range(n):
            seen += f[i, q * SEAT_WIDTH + FACE_UP_AT + r]
            if q != me:
                seen += f[i, q * SEAT_WIDTH + KNOWN_AT + r]
        for _ in range(4 - seen):
            pool[size] = r
            size += 1
    shuffle(rng, pool[:size])
    g[0, :] = 0
    at = 0
    for q in range(n):
        seat, hand = q * SEAT_WIDTH, _hand(cfg, q)
        for r in range(NUM_RANKS):
            g[0, seat + FACE_UP_AT + r] = f[i, seat + FACE_UP_AT + r]
            g[0, seat + KNOWN_AT + r] = f[i, seat + KNOWN_AT + r]
            g[0, hand + r] = f[i, hand + r] if q == me else f[i, seat + KNOWN_AT + r]
        held = f[i, seat + HAND_SIZE_AT]
        if q != me:
            known = 0
            for r in range(NUM_RANKS):
                known += f[i, seat + KNOWN_AT + r]
            for k in range(held - known):
                g[0, hand + pool[at + k]] += 1
            at += held - known
        g[0, seat + HAND_SIZE_AT] = held
        down = f[i, seat + FACE_DOWN_AT]
        for k in range(down):
            world.face_down[0, q, k] = pool[at + k]
        at += down
        g[0, seat + FACE_DOWN_AT] = down
        world.face_up_size[0, q] = s.face_up_size[i, q]
    for k in range(size - at):  # the draw pile (empty when the heuristic searches)
        world.draw[0, k] = pool[size - 1 - k]
    g[0, cfg.draw] = size - at
    top = f[i, cfg.top] - 1
    for r in range(NUM_RANKS):
        g[0, cfg.pile + r] = f[i, cfg.pile + r]
        g[0, cfg.out_cards + r] = f[i, cfg.out_cards + r]
    g[0, cfg.pile_size] = f[i, cfg.pile_size]
    g[0, cfg.top] = top + 1
    if top >= 0:  # the run Palace.deal reads off pile_order's pile: the whole pile if one rank
        g[0, cfg.run] = (f[i, cfg.run] if f[i, cfg.pile_size] > f[i, cfg.pile + top]
                         else f[i, cfg.pile + top])
    out = 0
    for q in range(n):
        if _held(world, 0, q) == 0:
            g[0, q * SEAT_WIDTH + OUT_AT] = 1
            world.finished[0, out] = q
            out += 1
    world.num_out[0] = out
    world.loser[0] = -1
    world.terminated[0] = False
    world.truncated[0] = False
    world.steps[0] = 0
    world.current_player[0] = me
    world.head[0] = 0


@njit(cache=True, inline="always")
def _copy_world(w):  # pragma: no cover - compiled
    """World slot 0 into slot 1 (PalaceState.copy)."""
    w.facts[1, :] = w.facts[0, :]
    w.face_up_size[1, :] = w.face_up_size[0, :]
    w.face_down[1, :, :] = w.face_down[0, :, :]
    w.draw[1, :] = w.draw[0, :]
    w.finished[1, :] = w.finished[0, :]
    w.num_out[1] = w.num_out[0]
    w.loser[1] = w.loser[0]
    w.head[1] = w.head[0]
    w.current_player[1] = w.current_player[0]
    w.terminated[1] = w.terminated[0]
    w.truncated[1] = w.truncated[0]
    w.steps[1] = w.steps[0]


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: Palace.payoffs of game rows[r] (zeros until it ends; at the cap the players
    holding the most cards share the loss); scores 0 (Palace has none: Game.scores is None)."""
    for r in range(len(rows)):
        i = rows[r]
        for q in range(cfg.num_players):
            payoffs[r, q] = 0.0
            scores[r, q] = 0.0
        if s.terminated[i] or s.truncated[i]:
            _result_payoffs(s, cfg, i, s.truncated[i], payoffs, r)


def load(game: Palace, cfg: Config, s: Arrays, i: int, state: PalaceState) -> None:
    """Slot ``i`` as the scalar ``state`` (its facts with every number, observed or not)."""
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    facts = state.facts.copy()
    game.copy_numbers(state, facts)
    s.facts[i] = facts
    s.face_up_size[i] = state.face_up_size
    s.face_down[i] = 0
    for q, cards in enumerate(state.face_down):
        s.face_down[i, q, : len(cards)] = cards
    s.draw[i] = 0
    s.draw[i, : len(state.draw)] = state.draw
    s.finished[i] = 0
    s.finished[i, : len(state.finished)] = state.finished
    s.num_out[i] = len(state.finished)
    s.loser[i] = state.loser
    s.head[i] = state.head


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("lowest_first", "heuristic"))
