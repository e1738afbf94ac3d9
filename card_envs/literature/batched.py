"""The batched twin of Literature: ``rules.py`` and ``knowledge.py`` for one slot, compiled (numba).

State of B games beside the shared fields (``core.batched``), with n players and O knowledge
observers (n; n * n under ``rules="original"``, as ``knowledge.first_order_engine``):

* ``hands`` (B, n) uint64: each seat's cards in slot form (``deck``: card ``6h + k`` at bit
  ``8h + k``); ``sizes`` (B, n) their counts;
* ``know`` (B, 3, O, 8) uint64: the knowledge tables of every observer, kinds holds, lacks,
  least; word ``know[i, kind, o, h]`` has seat s's byte of half-suit h at byte s (the card
  bits, or the least count), as the engine's ints do per observer (``Engine.block``). A
  half-suit out of play has holds and least 0 and every card lacked (as ``Knowledge.seen``
  shows it), which leaves it inert under every rule;
* ``live`` (B,) bit h set while half-suit h is in play; ``outcome`` (B, 8) LIVE (-1), the
  scoring team or DISCARDED (2); ``declarer`` (B, 8); ``score`` (B, 2);
* ``claim_half`` (B,) the half-suit being named (-1: none), ``claim_names`` (B, 6) the seats
  named so far, ``named`` (B,) how many;
* ``asks`` (B, 4, 4) the latest asks, oldest first, as (asker, respondent, card, success);
  ``num_asks`` (B,) how many (at most ``rules.LAST_ASKS``).

The knowledge kernel keeps the tables closed under the engine's inference rules 1-8 after
every event (the event's facts exactly as ``Engine.ask`` / ``Engine.claim`` / ``Engine.deal``
write them, then every rule to the fixed point). Every rule only adds facts that follow from
true facts and is monotone on true tables, so the fixed point does not depend on the order the
rules run in: the twin runs them per observer (one 64-bit word per half-suit, one byte per
seat: the engine's byte-wise arithmetic), the engine over all observers at once, and both reach
the same tables (tests/games/test_literature_batched.py compares every observer's every step;
tests/test_batched_twins.py the observations, which show each seat its own).

Observations as ``encoding.py``'s encoders; agents as ``agents.py``'s ``cautious`` and
``heuristic`` (their decisions and draws, from the seat's view only).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from card_envs.literature.deck import BYTE_CARDS, HALF_SUIT_SIZE, NUM_CARDS, NUM_HALF_SUITS
from card_envs.literature.encoding import SOURCE_CARDS, SOURCE_HALF_INDEX, DefaultEncoder
from card_envs.literature.rules import (
    DISCARDED,
    LAST_ASKS,
    LIVE,
    Literature,
    LiteratureState,
)

Arrays = twin_arrays(__name__, "hands sizes know live outcome declarer score claim_half "
                                "claim_names named asks num_asks")


class Config(NamedTuple):
    num_players: int
    max_steps: int
    original: bool
    team_size: int
    num_asks: int  # ask actions (opponents x 48); the declarations start here
    name_base: int  # the first naming action
    num_observers: int
    # the engine's byte-wise constants for n seats: 0x01, 0x80, 0x3F in each seat's byte
    low: np.uint64
    h80: np.uint64
    cards: np.uint64
    last: np.uint64  # the shift of the last seat's byte
    # where DefaultEncoder's pieces start
    d_holds: int
    d_lacks: int
    d_least: int
    d_sizes: int
    d_halves: int
    d_claim: int
    d_claimer: int
    d_names: int
    d_asks: int
    d_turn: int
    # OriginalEncoder's order: the source's place of each of our cards and half-suits
    source_card_index: np.ndarray
    source_half_index: np.ndarray


U = np.uint64
ZERO, ONE, TWO, FOUR, SEVEN, EIGHT = U(0), U(1), U(2), U(4), U(7), U(8)
BYTE, CARD_BITS, SIX_CARDS = U(0xFF), U(0x3F), U(6)
M55, M33, M0F = U(0x5555555555555555), U(0x3333333333333333), U(0x0F0F0F0F0F0F0F0F)
SIXTH, FORTY_EIGHTH = np.float32(1 / 6), np.float32(1 / 48)  # DefaultEncoder's scales
ALL_HALVES = (1 << NUM_HALF_SUITS) - 1
POPCOUNT = np.array([bin(b).count("1") for b in range(256)], np.int64)
# BIT_FLOATS[b]: the six card bits of byte b as float32 0/1 (BYTE_CARDS as floats)
BIT_FLOATS = BYTE_CARDS[:, :HALF_SUIT_SIZE].astype(np.float32)
HOLDS, LACKS, LEAST = 0, 1, 2


def _repeat(byte: int, n: int) -> np.uint64:
    return U(int.from_bytes(bytes([byte]) * n, "little"))


def config(game: Literature) -> Config:
    n = game.num_players
    start = DefaultEncoder(game).layout.start
    return Config(
        n, game.max_steps, game.original, game.team_size, game.num_asks, game.name_base,
        game.engine.num_observers, _repeat(0x01, n), _repeat(0x80, n), _repeat(0x3F, n),
        U(8 * (n - 1)), start("holds"), start("lacks"), start("least"), start("hand_sizes"),
        start("half_suits"), start("claim_half"), start("claimer"), start("claim_names"),
        start("last_asks"), start("my_turn"), np.argsort(SOURCE_CARDS).astype(np.int64),
        SOURCE_HALF_INDEX.astype(np.int64),
    )


def allocate(game: Literature, cfg: Config, b: int) -> Arrays:
    n = cfg.num_players
    return Arrays(
        *shared_arrays(b, n, game.num_actions),
        np.zeros((b, n), np.uint64), np.zeros((b, n), np.int64),
        np.zeros((b, 3, cfg.num_observers, NUM_HALF_SUITS), np.uint64),
        np.zeros(b, np.int64), np.full((b, NUM_HALF_SUITS), LIVE, np.int64),
        np.full((b, NUM_HALF_SUITS), -1, np.int64), np.zeros((b, 2), np.int64),
        np.full(b, -1, np.int64), np.zeros((b, HALF_SUIT_SIZE), np.int64),
        np.zeros(b, np.int64), np.zeros((b, LAST_ASKS, 4), np.int64), np.zeros(b, np.int64),
    )


# --- byte-wise arithmetic (knowledge.Engine's, on one observer's 64-bit word) ------------------
@njit(cache=True, inline="always")
def _counts(x):  # pragma: no cover - compiled
    """The number of set bits in every byte of ``x`` (bits 6 and 7 clear)."""
    x = x - ((x >> ONE) & M55)
    x = (x & M33) + ((x >> TWO) & M33)
    return (x + (x >> FOUR)) & M0F


@njit(cache=True, inline="always")
def _equal(a, b, low, h80):  # pragma: no cover - compiled
    """0xFF in every seat's byte where a == b (byte values below 128)."""
    nonzero = (((a ^ b) | h80) - low) & h80
    return ((nonzero ^ h80) >> SEVEN) * BYTE


@njit(cache=True, inline="always")
def _max(a, b, h80):  # pragma: no cover - compiled
    """The byte-wise maximum of a and b (byte values below 128)."""
    keep = ((((a | h80) - b) & h80) >> SEVEN) * BYTE
    return (a & keep) | (b & ~keep)


@njit(cache=True, inline="always")
def _total(x, low, last):  # pragma: no cover - compiled
    """The sum of the seats' bytes of x (below 256)."""
    return ((x * low) >> last) & BYTE


@njit(cache=True, inline="always")
def _byte(word, seat):  # pragma: no cover - compiled
    """Seat ``seat``'s byte of a knowledge word, as an int."""
    return np.int64((word >> U(8 * seat)) & BYTE)


@njit(cache=True, inline="always")
def _wrap(x, n):  # pragma: no cover - compiled
    """x % n for x in [-n, 2n) (a seat number), without a division."""
    return x - n if x >= n else x + n if x < 0 else x


# --- the knowledge engine -----------------------------------------------------------------
@njit(cache=True)
def _close_half(know, i, o, h, n, low, h80, cards, last):  # pragma: no cover - compiled
    """Rules 1-4 and 7 for observer o inside half-suit h, to their fixed point."""
    holds, lacks, least = know[i, HOLDS, o, h], know[i, LACKS, o, h], know[i, LEAST, o, h]
    while True:
        holds0, lacks0, least0 = holds, lacks, least
        lacks |= (_total(holds, low, last) * low) & ~holds  # 1: one holder
        least = _max(least, _counts(holds), h80)  # 3: least from holds
        maybe = cards & ~lacks
        one = ZERO  # 2: last candidate (cards not lacked by one seat / by two or more)
        two = ZERO
        for s in range(n):
            column = (maybe >> U(8 * s)) & CARD_BITS
            two |= one & column
            one |= column
        holds |= ((one & ~two) * low) & maybe
        holds |= _equal(least, _counts(maybe), low, h80) & maybe  # 4: holds the rest
        if _total(least, low, last) == SIX_CARDS:  # 7: half-suit total
            lacks |= _equal(_counts(holds), least, low, h80) & cards & ~holds
        if holds == holds0 and lacks == lacks0 and least == least0:
            break
    know[i, HOLDS, o, h], know[i, LACKS, o, h], know[i, LEAST, o, h] = holds, lacks, least


@njit(cache=True)
def _close_observer(know, i, o, dirty, live, sizes, n, low, h80, cards,
                    last):  # pragma: no cover - compiled
    """Every rule but 8 for observer o to the fixed point; ``dirty``: the half-suits whose
    tables changed since they were last closed inside; ``sizes``: the hand sizes as bytes.
    (A half-suit out of play needs no test: no rule changes its tables, nor adds to the
    totals: the loops over the half-suits then vectorise.)"""
    dirty &= live
    while True:
        while dirty:
            h = 0
            while not dirty >> h & 1:
                h += 1
            dirty &= dirty - 1
            _close_half(know, i, o, h, n, low, h80, cards, last)
        least_total = ZERO
        room_total = ZERO
        for h in range(NUM_HALF_SUITS):
            least_total += know[i, LEAST, o, h]
            room_total += _counts(cards & ~know[i, LACKS, o, h])
        spare = room_total - sizes  # >= 0 in every byte: a hand fits where it may be
        full = _equal(least_total, sizes, low, h80)  # 5: the least counts fill the hand
        tight = ((((spare | h80) - SIX_CARDS * low) & h80) ^ h80) >> SEVEN  # spare room < 6
        tight *= BYTE
        if full == ZERO and tight == ZERO:
            return
        for h in range(NUM_HALF_SUITS):
            holds, lacks, least = know[i, HOLDS, o, h], know[i, LACKS, o, h], know[i, LEAST, o, h]
            if full:  # 5: a half-suit whose holdings are all known lacks the rest
                lacks |= full & _equal(_counts(holds), least, low, h80) & cards & ~holds
            if tight:  # 6: least from room: hand size - the most it could hold elsewhere
                gap = (_counts(cards & ~lacks) | h80) - spare
                bound = gap & (((gap & h80) >> SEVEN) * U(0x7F)) & tight
                least = _max(least, bound, h80)
            if lacks != know[i, LACKS, o, h] or least != know[i, LEAST, o, h]:
                know[i, LACKS, o, h], know[i, LEAST, o, h] = lacks, least
                dirty |= 1 << h
        if not dirty:
            return


@njit(cache=True)
def _inject(know, i, source, o, seat, h80):  # pragma: no cover - compiled
    """Rule 8: observer o learns every fact that ``source`` knows about ``seat``; the
    half-suits where it learnt something."""
    mask = BYTE << U(8 * seat)
    changed = 0
    for h in range(NUM_HALF_SUITS):  # (out of play: the same in every observer)
        holds = know[i, HOLDS, o, h] | (know[i, HOLDS, source, h] & mask)
        lacks = know[i, LACKS, o, h] | (know[i, LACKS, source, h] & mask)
        least = _max(know[i, LEAST, o, h], know[i, LEAST, source, h] & mask, h80)
        if (holds != know[i, HOLDS, o, h] or lacks != know[i, LACKS, o, h]
                or least != know[i, LEAST, o, h]):
            know[i, HOLDS, o, h], know[i, LACKS, o, h], know[i, LEAST, o, h] = holds, lacks, least
            changed |= 1 << h
    return changed


@njit(cache=True)
def _close_all(know, i, dirty, changed, live, sizes, n, original, low, h80, cards,
               last):  # pragma: no cover - compiled
    """Every observer's tables to the fixed point of rules 1-8 after an event that changed
    the tables of the observers in the bits of ``changed`` (the others are still closed)."""
    if not original:
        for o in range(n):
            if changed >> o & 1:
                _close_observer(know, i, o, dirty, live, sizes, n, low, h80, cards, last)
        return
    # "what k can tell that j knows" learns from k's own tables, never the other way: k's own
    # tables first, then the others with what k knows of j
    for k in range(n):
        if changed >> (k * n + k) & 1:
            _close_observer(know, i, k * n + k, dirty, live, sizes, n, low, h80, cards, last)
    for k in range(n):
        for j in range(n):
            if j != k:
                o = k * n + j
                more = _inject(know, i, k * n + k, o, j, h80)
                if more or changed >> o & 1:
                    _close_observer(know, i, o, dirty | more, live, sizes, n, low, h80, cards,
                                    last)


@njit(cache=True, inline="always")
def _size_bytes(sizes, i, n):  # pragma: no cover - compiled
    """The hand sizes of game i as bytes (seat s at byte s)."""
    out = ZERO
    for q in range(n):
        out |= U(sizes[i, q]) << U(8 * q)
    return out


@njit(cache=True)
def _learn_ask(know, sizes, i, cfg, asker, respondent, card, success,
               live):  # pragma: no cover - compiled
    """Engine.ask: every observer learns from the ask (``sizes`` already after it)."""
    n, low, h80, cards, last = cfg.num_players, cfg.low, cfg.h80, cfg.cards, cfg.last
    h, pos = card // HALF_SUIT_SIZE, card % HALF_SUIT_SIZE
    mine, theirs = ONE << U(8 * asker), ONE << U(8 * respondent)
    take, give = mine << U(pos), theirs << U(pos)
    changed = (1 << cfg.num_observers) - 1
    for o in range(cfg.num_observers):
        if success:
            # before the move the asker lacked the card and held another of the half-suit,
            # and the respondent held it
            least = _max(know[i, LEAST, o, h], mine | theirs, h80)
            know[i, LEAST, o, h] = least + mine - theirs
            know[i, HOLDS, o, h] = (know[i, HOLDS, o, h] & ~give) | take
            know[i, LACKS, o, h] = (know[i, LACKS, o, h] & ~take) | give
        else:
            lacks = know[i, LACKS, o, h] | take | give
            least = know[i, LEAST, o, h]
            if (least >> U(8 * asker)) & BYTE == ZERO:  # the asker holds one
                least |= mine
            if lacks == know[i, LACKS, o, h] and least == know[i, LEAST, o, h]:
                changed &= ~(1 << o)  # it knew: its tables are still closed
            know[i, LACKS, o, h], know[i, LEAST, o, h] = lacks, least
    _close_all(know, i, 1 << h, changed, live, _size_bytes(sizes, i, n), n, cfg.original, low,
               h80, cards, last)


@njit(cache=True)
def _learn_claim(know, sizes, i, cfg, h, live):  # pragma: no cover - compiled
    """Engine.claim: half-suit h leaves play (``sizes`` and ``live`` already after it)."""
    for o in range(cfg.num_observers):
        know[i, HOLDS, o, h] = ZERO
        know[i, LACKS, o, h] = cfg.cards
        know[i, LEAST, o, h] = ZERO
    _close_all(know, i, 0, (1 << cfg.num_observers) - 1, live,
               _size_bytes(sizes, i, cfg.num_players), cfg.num_players, cfg.original, cfg.low,
               cfg.h80, cfg.cards, cfg.last)


@njit(cache=True)
def _learn_deal(know, hands, sizes, i, cfg):  # pragma: no cover - compiled
    """Engine.deal: each player's tables know its own hand; then the rules."""
    n = cfg.num_players
    know[i] = ZERO
    for q in range(n):
        o = q * n + q if cfg.original else q
        at = U(8 * q)
        for h in range(NUM_HALF_SUITS):
            mine = (hands[i, q] >> U(8 * h)) & CARD_BITS
            know[i, HOLDS, o, h] = mine << at
            know[i, LACKS, o, h] = (CARD_BITS & ~mine) << at
            know[i, LEAST, o, h] = U(POPCOUNT[np.int64(mine)]) << at
    _close_all(know, i, ALL_HALVES, (1 << cfg.num_observers) - 1, ALL_HALVES,
               _size_bytes(sizes, i, n), n, cfg.original, cfg.low, cfg.h80, cfg.cards, cfg.last)


# --- the rules ---------------------------------------------------------------------------------
@njit(cache=True)
def _resolve_claim(s, cfg, i, declarer, h, names):  # pragma: no cover - compiled
    """Literature._resolve_claim: settle a claim of half-suit h naming ``names`` (6 seats);
    whether the declarer's team scored it."""
    n = cfg.num_players
    at = U(8 * h)
    team = declarer % 2
    theirs = False
    right = True
    for q in range(n):
        mine = (s.hands[i, q] >> at) & CARD_BITS
        if mine:
            for pos in range(HALF_SUIT_SIZE):
                if mine >> U(pos) & ONE:
                    if q % 2 != team:
                        theirs = True
                    if names[pos] != q:
                        right = False
            s.hands[i, q] &= ~(CARD_BITS << at)
            s.sizes[i, q] -= POPCOUNT[np.int64(mine)]
    outcome = 1 - team if theirs else team if right else DISCARDED
    s.live[i] &= ~(1 << h)
    _learn_claim(s.know, s.sizes, i, cfg, h, s.live[i])
    s.outcome[i, h] = outcome
    s.declarer[i, h] = declarer
    if outcome != DISCARDED:
        s.score[i, outcome] += 1
    return outcome == team


@njit(cache=True, inline="always")
def _next_player(sizes, i, n, p, keep):  # pragma: no cover - compiled
    """Literature._next_player: p's team first (from p) after a success, else the opponents
    first (from p's left); the first seat with cards, or -1."""
    for part in range(2):
        first = p if (part == 0) == keep else p + 1
        for t in range(n // 2):
            q = _wrap(first + 2 * t, n)
            if sizes[i, q]:
                return q
    return -1


@njit(cache=True)
def _claim_what_is_proven(s, cfg, i, names):  # pragma: no cover - compiled
    """Original rules: claim, for every player, each half-suit its own tables prove."""
    n = cfg.num_players
    found = True
    while found and s.live[i]:
        found = False
        for k in range(n):
            o = k * n + k
            proven = 0  # k's proven half-suits, all found before any is claimed
            for h in range(NUM_HALF_SUITS):
                if s.live[i] >> h & 1:
                    together = ZERO
                    for t in range(n // 2):
                        together |= (s.know[i, HOLDS, o, h] >> U(8 * _wrap(k + 2 * t, n)))
                    if together & CARD_BITS == CARD_BITS:
                        proven |= 1 << h
            while proven:  # (a loop of unknown length: the compiler leaves it rolled)
                h = 0
                while not proven >> h & 1:
                    h += 1
                proven &= proven - 1
                word = s.know[i, HOLDS, o, h]
                for pos in range(HALF_SUIT_SIZE):
                    for t in range(n // 2):
                        q = _wrap(k + 2 * t, n)
                        if word >> U(8 * q + pos) & ONE:
                            names[pos] = q
                            break
                _resolve_claim(s, cfg, i, k, h, names)
                found = True


@njit(cache=True, inline="always")
def _settle_turn(s, cfg, i):  # pragma: no cover - compiled
    """Literature._settle_turn: the end, or a player to act who holds cards."""
    n = cfg.num_players
    over = s.live[i] == 0
    if cfg.original and not over:
        even = odd = 0
        for q in range(0, n, 2):
            even += s.sizes[i, q]
            odd += s.sizes[i, q + 1]
        over = even == 0 or odd == 0
    if over:
        s.terminated[i] = True
        return
    p = s.current_player[i]
    if not s.sizes[i, p]:
        s.current_player[i] = _next_player(s.sizes, i, n, p, True)


@njit(cache=True)
def _update_masks(s, cfg, slots):  # pragma: no cover - compiled
    """Literature._legal_mask in each game of ``slots`` not over: the naming actions during a
    claim; else the asks (an opponent with cards, a card not held of a half-suit held) and,
    under the standard rules, the declarations of the live half-suits."""
    n, mask = cfg.num_players, s.mask
    for i in slots:
        mask[i, :] = 0
        if s.terminated[i]:
            continue
        p = s.current_player[i]
        if s.claim_half[i] >= 0:
            for t in range(cfg.team_size):
                mask[i, cfg.name_base + t] = 1
            continue
        hand = s.hands[i, p]
        for j in range(cfg.team_size):
            if s.sizes[i, _wrap(p + 2 * j + 1, n)]:
                at = j * NUM_CARDS
                for h in range(NUM_HALF_SUITS):
                    mine = np.int64((hand >> U(8 * h)) & CARD_BITS)
                    if mine:
                        for pos in range(HALF_SUIT_SIZE):
                            if not mine >> pos & 1:
                                mask[i, at + h * HALF_SUIT_SIZE + pos] = 1
        if not cfg.original:
            for h in range(NUM_HALF_SUITS):
                if s.live[i] >> h & 1:
                    mask[i, cfg.num_asks + h] = 1


@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """Literature.init: the shuffled deck dealt round the table (card k of the order to seat
    k mod n), every player's tables, the proven claims (original rules), seat 0 to act."""
    n = cfg.num_players
    order = np.empty(NUM_CARDS, np.int64)
    names = np.empty(HALF_SUIT_SIZE, np.int64)
    for i in slots:
        for c in range(NUM_CARDS):
            order[c] = c
        shuffle(rngs[rng_of[i]], order)
        for q in range(n):
            s.hands[i, q] = ZERO
            s.sizes[i, q] = 0
        for k in range(NUM_CARDS):
            q, card = k % n, order[k]
            s.hands[i, q] |= ONE << U((card // HALF_SUIT_SIZE) * 8 + card % HALF_SUIT_SIZE)
            s.sizes[i, q] += 1
        s.live[i] = ALL_HALVES
        s.outcome[i, :] = LIVE
        s.declarer[i, :] = -1
        s.score[i, :] = 0
        s.claim_half[i] = -1
        s.named[i] = 0
        s.num_asks[i] = 0
        s.current_player[i] = 0
        _learn_deal(s.know, s.hands, s.sizes, i, cfg)
        if cfg.original:
            _claim_what_is_proven(s, cfg, i, names)
        _settle_turn(s, cfg, i)
    _update_masks(s, cfg, slots)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """Literature._apply: an ask (the card moves, or the turn does; original rules: then the
    proven claims), a declaration, or the naming of a card's holder (the sixth settles the
    claim and passes the turn)."""
    n = cfg.num_players
    names = np.empty(HALF_SUIT_SIZE, np.int64)
    for r in range(len(slots)):
        i, a = slots[r], actions[r]
        p = s.current_player[i]
        if a < cfg.num_asks:
            j, card = a // NUM_CARDS, a % NUM_CARDS
            q = _wrap(p + 2 * j + 1, n)
            bit = ONE << U((card // HALF_SUIT_SIZE) * 8 + card % HALF_SUIT_SIZE)
            success = s.hands[i, q] & bit != ZERO
            if success:
                s.hands[i, q] &= ~bit
                s.hands[i, p] |= bit
                s.sizes[i, q] -= 1
                s.sizes[i, p] += 1
            else:
                s.current_player[i] = q
            _learn_ask(s.know, s.sizes, i, cfg, p, q, card, success, s.live[i])
            k = s.num_asks[i]
            if k == LAST_ASKS:  # the oldest goes
                for e in range(LAST_ASKS - 1):
                    s.asks[i, e, :] = s.asks[i, e + 1, :]
                k -= 1
            s.asks[i, k, 0], s.asks[i, k, 1], s.asks[i, k, 2] = p, q, card
            s.asks[i, k, 3] = 1 if success else 0
            s.num_asks[i] = k + 1
            if cfg.original:
                _claim_what_is_proven(s, cfg, i, names)
        elif s.claim_half[i] < 0:
            s.claim_half[i] = a - cfg.num_asks
            continue
        else:
            s.claim_names[i, s.named[i]] = _wrap(p + 2 * (a - cfg.name_base), n)
            s.named[i] += 1
            if s.named[i] < HALF_SUIT_SIZE:
                continue
            h = s.claim_half[i]
            s.claim_half[i] = -1
            s.named[i] = 0
            scored = _resolve_claim(s, cfg, i, p, h, s.claim_names[i])
            after = _next_player(s.sizes, i, n, p, scored)
            s.current_player[i] = after if after >= 0 else p
        _settle_turn(s, cfg, i)
        if s.terminated[i] and s.score[i, 0] != s.score[i, 1]:  # Literature.payoffs
            winner = 0 if s.score[i, 0] > s.score[i, 1] else 1
            for q in range(n):
                s.rewards[i, q] = 1.0 if q % 2 == winner else -1.0
    _update_masks(s, cfg, slots)


# --- observations ------------------------------------------------------------------------------
@njit(cache=True)
def _default_obs(s, cfg, rows, seats, out):  # pragma: no cover - compiled
    """DefaultEncoder: my hand, my tables (seats relative to me), hand sizes, outcomes, the
    claim being named, the latest asks (newest first), my turn."""
    n = cfg.num_players
    know = s.know
    ask_size = 2 * n + NUM_CARDS + 1
    for r in range(len(rows)):
        i, p = rows[r], seats[r]
        o = p * n + p if cfg.original else p
        line = out[r]
        line[cfg.d_halves:] = 0.0  # (the pieces before are all written)
        for h in range(NUM_HALF_SUITS):
            holds, lacks, least = know[i, HOLDS, o, h], know[i, LACKS, o, h], know[i, LEAST, o, h]
            mine = _byte(holds, p)
            for k in range(HALF_SUIT_SIZE):
                line[h * HALF_SUIT_SIZE + k] = BIT_FLOATS[mine, k]
            for row in range(n):
                q = _wrap(p + row, n)
                held, lacked = _byte(holds, q), _byte(lacks, q)
                at = row * NUM_CARDS + h * HALF_SUIT_SIZE
                for k in range(HALF_SUIT_SIZE):
                    line[cfg.d_holds + at + k] = BIT_FLOATS[held, k]
                    line[cfg.d_lacks + at + k] = BIT_FLOATS[lacked, k]
                line[cfg.d_least + row * NUM_HALF_SUITS + h] = np.float32(_byte(least, q)) * SIXTH
        for row in range(n):
            line[cfg.d_sizes + row] = np.float32(s.sizes[i, _wrap(p + row, n)]) * FORTY_EIGHTH
        team = p % 2
        for h in range(NUM_HALF_SUITS):
            result = s.outcome[i, h]
            if result != LIVE:
                kind = 2 if result == DISCARDED else 0 if result == team else 1
                line[cfg.d_halves + 3 * h + kind] = 1.0
        turn = s.current_player[i]
        if s.claim_half[i] >= 0:
            line[cfg.d_claim + s.claim_half[i]] = 1.0
            line[cfg.d_claimer + _wrap(turn - p, n)] = 1.0
            for k in range(s.named[i]):
                line[cfg.d_names + n * k + _wrap(s.claim_names[i, k] - p, n)] = 1.0
        at = cfg.d_asks
        for e in range(s.num_asks[i] - 1, -1, -1):
            line[at + _wrap(s.asks[i, e, 0] - p, n)] = 1.0
            line[at + n + _wrap(s.asks[i, e, 1] - p, n)] = 1.0
            line[at + 2 * n + s.asks[i, e, 2]] = 1.0
            if s.asks[i, e, 3]:
                line[at + 2 * n + NUM_CARDS] = 1.0
            at += ask_size
        if turn == p and not (s.terminated[i] or s.truncated[i]):
            line[cfg.d_turn] = 1.0


@njit(cache=True, inline="always")
def _source_blocks(know, sizes, i, o, n, card_index, half_index, line,
                   at):  # pragma: no cover - compiled
    """OriginalEncoder._blocks of observer o's tables from ``line[at]`` on (card c at source
    place card_index[c], half-suit h at half_index[h]); the next place."""
    for q in range(n):
        for h in range(NUM_HALF_SUITS):
            held, lacked = _byte(know[i, HOLDS, o, h], q), _byte(know[i, LACKS, o, h], q)
            for pos in range(HALF_SUIT_SIZE):
                value = 2 + (held >> pos & 1) - (lacked >> pos & 1)
                line[at + card_index[h * HALF_SUIT_SIZE + pos]] = value
            line[at + NUM_CARDS + half_index[h]] = _byte(know[i, LEAST, o, h], q)
        line[at + NUM_CARDS + NUM_HALF_SUITS] = sizes[i, q]
        at += NUM_CARDS + NUM_HALF_SUITS + 1
    return at


@njit(cache=True)
def _original_obs(s, cfg, rows, seats, out):  # pragma: no cover - compiled
    """OriginalEncoder: my seat, the source's blocks of my tables (absolute seats), under the
    original rules those of what I can tell each seat knows, the outcomes, the claim."""
    n = cfg.num_players
    cards, halves = cfg.source_card_index, cfg.source_half_index
    for r in range(len(rows)):
        i, p = rows[r], seats[r]
        line = out[r]
        line[:] = 0.0
        line[0] = p
        o = p * n + p if cfg.original else p
        at = _source_blocks(s.know, s.sizes, i, o, n, cards, halves, line, 1)
        if cfg.original:
            for k in range(n):
                line[at] = k
                at = _source_blocks(s.know, s.sizes, i, p * n + k, n, cards, halves, line,
                                    at + 1)
        for h in range(NUM_HALF_SUITS):
            result = s.outcome[i, h]
            if result != LIVE:
                line[at + halves[h]] = 3 if result == DISCARDED else 1 + result
        at += NUM_HALF_SUITS
        if not cfg.original and s.claim_half[i] >= 0:
            line[at] = 1 + halves[s.claim_half[i]]
            for k in range(s.named[i]):
                line[at + 1 + k] = 1 + s.claim_names[i, k]


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s observation of game rows[r], DefaultEncoder (encoding 0,
    "default") or OriginalEncoder (1)."""
    if encoding == 0:
        _default_obs(s, cfg, rows, seats, out)
    else:
        _original_obs(s, cfg, rows, seats, out)


# --- agents ------------------------------------------------------------------------------------
CAUTIOUS, HEURISTIC = 1, 2


@njit(cache=True)
def _read_tables(know, sizes, i, o, n, held, lacked, least, sizes_out):  # pragma: no cover
    """Observer o's tables as the view's holds() / lacks() (int, n x 48), least() (n x 8),
    and the hand sizes."""
    for q in range(n):
        sizes_out[q] = sizes[i, q]
        for h in range(NUM_HALF_SUITS):
            hb = _byte(know[i, HOLDS, o, h], q)
            lb = _byte(know[i, LACKS, o, h], q)
            least[q, h] = _byte(know[i, LEAST, o, h], q)
            for pos in range(HALF_SUIT_SIZE):
                held[q, h * HALF_SUIT_SIZE + pos] = hb >> pos & 1
                lacked[q, h * HALF_SUIT_SIZE + pos] = lb >> pos & 1


@njit(cache=True)
def _chance(held, lacked, least, sizes, n, weight, chance):  # pragma: no cover - compiled
    """Beliefs.chance (float64, n x 48) with its numpy operations' rounding: each seat's share
    of each unknown card, weighted by its unplaced cards (at least what its least count
    forces), normalised over the seats; 1 for a proven holder."""
    for q in range(n):
        unplaced = np.float64(sizes[q])
        open_cards = 0
        for c in range(NUM_CARDS):
            unplaced -= held[q, c]
            open_cards += held[q, c] == 0 and lacked[q, c] == 0
        share = unplaced / max(open_cards, 1) if open_cards > 0 else 0.0
        for h in range(NUM_HALF_SUITS):
            open_here = 0
            held_here = 0
            for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE):
                open_here += held[q, c] == 0 and lacked[q, c] == 0
                held_here += held[q, c]
            forced = np.float64(least[q, h] - held_here) / np.float64(max(open_here, 1))
            w = max(share, forced)
            for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE):
                weight[q, c] = w if held[q, c] == 0 and lacked[q, c] == 0 else 0.0
    for c in range(NUM_CARDS):
        total = weight[0, c]
        for q in range(1, n):
            total += weight[q, c]
        for q in range(n):
            if held[q, c] == 1:
                chance[q, c] = 1.0
            elif total > 0:
                chance[q, c] = weight[q, c] / total
            else:
                chance[q, c] = 0.0


@njit(cache=True, inline="always")
def _best_holder(chance, p, n, card):  # pragma: no cover - compiled
    """Beliefs.best_holder: (teammate slot, chance) of the teammate likeliest to hold it (the
    first of equals, as argmax)."""
    best, best_chance = 0, chance[p, card]
    for t in range(1, n // 2):
        here = chance[_wrap(p + 2 * t, n), card]
        if here > best_chance:
            best, best_chance = t, here
    return best, best_chance


@njit(cache=True)
def _likeliest_claim(chance, p, n, candidates):  # pragma: no cover - compiled
    """max(candidates, key=Beliefs.claim_chance): the first half-suit (of the bits of
    ``candidates``) whose likeliest naming is likeliest right."""
    best, best_chance = -1, 0.0
    for h in range(NUM_HALF_SUITS):
        if candidates >> h & 1:
            product = 1.0
            for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE):
                product *= _best_holder(chance, p, n, c)[1]
            if best < 0 or product > best_chance:
                best, best_chance = h, product
    return best


@njit(cache=True, inline="always")
def _pick(rng, flags, size):  # pragma: no cover - compiled
    """flatnonzero(flags)[rng.integers(count)]: a uniform draw among the set flags."""
    count = 0
    for a in range(size):
        count += flags[a] != 0
    k = rng.integers(0, count)
    for a in range(size):
        if flags[a] != 0:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def _proven_half(held, p, n, team_size, live):  # pragma: no cover - compiled
    """The first live half-suit (bit h of ``live``) whose six cards seat p's tables (``held``)
    place all in its team, or -1."""
    proven, h = -1, 0
    while proven < 0 and h < NUM_HALF_SUITS:
        if live >> h & 1:
            together = 0
            for t in range(team_size):
                q = _wrap(p + 2 * t, n)
                for pos in range(HALF_SUIT_SIZE):
                    together |= held[q, h * HALF_SUIT_SIZE + pos] << pos
            if together == 0x3F:
                proven = h
        h += 1
    return proven


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """CautiousAgent (agent 1) or HeuristicAgent (2) for the seat to act in games ``rows``:
    name a claim's holders, declare a proven half-suit, ask, or (no ask legal) claim."""
    n, team_size, asks = cfg.num_players, cfg.team_size, cfg.num_asks
    held = np.zeros((n, NUM_CARDS), np.int64)
    lacked = np.zeros((n, NUM_CARDS), np.int64)
    least = np.zeros((n, NUM_HALF_SUITS), np.int64)
    sizes = np.zeros(n, np.int64)
    weight = np.zeros((n, NUM_CARDS))
    chance = np.zeros((n, NUM_CARDS))
    score = np.zeros(asks)
    flags = np.zeros(max(asks, team_size), np.int64)
    for r in range(len(rows)):
        i = rows[r]
        rng = rngs[rng_of[i]]
        p = s.current_player[i]
        o = p * n + p if cfg.original else p
        _read_tables(s.know, s.sizes, i, o, n, held, lacked, least, sizes)
        live = s.live[i]
        if s.claim_half[i] >= 0:  # name the holder of the claim's next card
            card = s.claim_half[i] * HALF_SUIT_SIZE + s.named[i]
            if agent == HEURISTIC:
                _chance(held, lacked, least, sizes, n, weight, chance)
                out[r] = cfg.name_base + _best_holder(chance, p, n, card)[0]
                continue
            choice = -1
            for t in range(team_size):
                if held[_wrap(p + 2 * t, n), card]:
                    choice = t
                    break
            if choice < 0:
                maybe = 0
                for t in range(team_size):
                    flags[t] = lacked[_wrap(p + 2 * t, n), card] == 0
                    maybe += flags[t]
                if maybe == 0:
                    flags[:team_size] = 1
                choice = _pick(rng, flags, team_size)
            out[r] = cfg.name_base + choice
            continue
        if not cfg.original:  # a half-suit my tables place wholly in my team: declare it
            proven = _proven_half(held, p, n, team_size, live)
            if proven >= 0:
                out[r] = asks + proven
                continue
        legal_asks = 0
        for a in range(asks):
            legal_asks += s.mask[i, a]
        if legal_asks == 0:  # forced to claim: the likeliest to be named right
            _chance(held, lacked, least, sizes, n, weight, chance)
            candidates = live
            if agent == HEURISTIC:
                ours = _with_my_team(lacked, p, n, live)
                if ours:
                    candidates = ours
            out[r] = asks + _likeliest_claim(chance, p, n, candidates)
            continue
        if agent == CAUTIOUS:  # uniformly among the asks that may succeed, else any
            hopeful = 0
            for a in range(asks):
                q = _wrap(p + 2 * (a // NUM_CARDS) + 1, n)
                flags[a] = s.mask[i, a] * (1 - lacked[q, a % NUM_CARDS])
                hopeful += flags[a]
            if hopeful == 0:
                for a in range(asks):
                    flags[a] = s.mask[i, a]
            out[r] = _pick(rng, flags, asks)
            continue
        out[r] = _heuristic_ask(s.mask, s.asks, s.num_asks, i, cfg, p, rng, held, lacked,
                                least, sizes, weight, chance, score, flags, live)


@njit(cache=True)
def _with_my_team(lacked, p, n, live):  # pragma: no cover - compiled
    """The live half-suits every opponent is known to lack wholly (bits)."""
    out = 0
    for h in range(NUM_HALF_SUITS):
        if live >> h & 1:
            ours = True
            for j in range(n // 2):
                q = _wrap(p + 2 * j + 1, n)
                for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE):
                    if not lacked[q, c]:
                        ours = False
            if ours:
                out |= 1 << h
    return out


@njit(cache=True)
def _heuristic_ask(mask, last_asks, num_asks, i, cfg, p, rng, held, lacked, least, sizes,
                   weight, chance, score, flags, live):  # pragma: no cover - compiled
    """HeuristicAgent.ask: a sure card first, then the likeliest ask (bonuses for half-suits
    my team holds and for an opponent that just showed a half-suit); ties drawn."""
    n, asks = cfg.num_players, cfg.num_asks
    _chance(held, lacked, least, sizes, n, weight, chance)
    hope = False
    for a in range(asks):
        q = _wrap(p + 2 * (a // NUM_CARDS) + 1, n)
        score[a] = chance[q, a % NUM_CARDS] * mask[i, a]
        hope |= score[a] != 0.0
    if not hope:  # no ask can succeed: a claim that cannot help the opponents, else any ask
        if not cfg.original:
            ours = _with_my_team(lacked, p, n, live)
            if ours:
                return asks + _likeliest_claim(chance, p, n, ours)
        for a in range(asks):
            flags[a] = mask[i, a]
        return _pick(rng, flags, asks)
    team = np.zeros(NUM_HALF_SUITS, np.int64)
    for t in range(n // 2):
        q = _wrap(p + 2 * t, n)
        for c in range(NUM_CARDS):
            team[c // HALF_SUIT_SIZE] += held[q, c]
    for a in range(asks):
        x = score[a]
        x = x + (0.15 if x == 1.0 else 0.0)
        score[a] = x + (0.01 * team[(a % NUM_CARDS) // HALF_SUIT_SIZE] if score[a] > 0 else 0.0)
    for e in range(max(num_asks[i] - 2, 0), num_asks[i]):  # _showed, oldest first
        asker, asked = last_asks[i, e, 0], last_asks[i, e, 1]
        h = last_asks[i, e, 2] // HALF_SUIT_SIZE
        j = -1
        if (asker - p) & 1:
            j = _wrap(asker - p - 1, n) // 2
        elif last_asks[i, e, 3] and (asked - p) & 1 and asker == p:
            j = _wrap(asked - p - 1, n) // 2
        if j >= 0:
            for c in range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE):
                x = score[j * NUM_CARDS + c]
                score[j * NUM_CARDS + c] = x + (0.1 if x > 0 else 0.0)
    top = score[0]
    for a in range(1, asks):
        top = max(top, score[a])
    for a in range(asks):
        flags[a] = score[a] >= top - 1e-9
    return _pick(rng, flags, asks)


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: Literature.payoffs (+1 / -1 by team once over by the rules, 0 on a tie) and
    scores (the half-suits each seat's team scored) of game rows[r]."""
    n = cfg.num_players
    for r in range(len(rows)):
        i = rows[r]
        a, b = s.score[i, 0], s.score[i, 1]
        for q in range(n):
            scores[r, q] = s.score[i, q % 2]
            payoffs[r, q] = 0.0
            if s.terminated[i] and a != b:
                payoffs[r, q] = 1.0 if (q % 2 == 0) == (a > b) else -1.0


def load(game: Literature, cfg: Config, s: Arrays, i: int, state: LiteratureState) -> None:
    """Slot ``i`` as the scalar ``state`` (every observer's tables from its knowledge)."""
    eng, k = game.engine, state.know
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    s.hands[i] = np.array(state.hands, np.uint64)
    s.sizes[i] = state.sizes
    for o in range(eng.num_observers):
        for h in range(NUM_HALF_SUITS):
            if state.live >> h & 1:
                words = (eng.block(k.holds[h], o), eng.block(k.lacks[h], o),
                         eng.block(k.least[h], o))
            else:
                words = (0, int(cfg.cards), 0)
            for kind in range(3):
                s.know[i, kind, o, h] = words[kind]
    s.live[i] = state.live
    s.outcome[i] = state.outcome
    s.declarer[i] = state.declarer
    s.score[i] = state.score
    s.claim_half[i] = state.claim_half
    s.claim_names[i] = 0
    s.claim_names[i, : len(state.claim_names)] = state.claim_names
    s.named[i] = len(state.claim_names)
    s.asks[i] = 0
    for e, ask in enumerate(state.last_asks):
        s.asks[i, e] = [int(x) for x in ask]
    s.num_asks[i] = len(state.last_asks)


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("cautious", "heuristic"))
