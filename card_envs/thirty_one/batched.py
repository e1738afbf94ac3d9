"""The batched twin of Thirty-One: the rules of ``rules.py`` for many matches, compiled (numba).

State of B matches (n players), beside the shared fields (``core.batched``): ``lives`` (B, n);
``hands`` (B, n, 3) cards by slot, -1 for a seat without a hand (out since the last deal);
``shown`` (B, n, 3) the card in each slot if it was taken from the discard pile, else -1;
``deck`` (B, 52) the draw pile, next card at ``deck_size - 1``; ``discard`` (B, 52) the discard
pile, top at ``discard_size - 1``; ``in_discard`` (B, 52) float32 membership and
``discard_values`` (B, 4) the pile's value per suit; ``opener``, ``knocker`` (-1: none),
``first_turn``, ``phase``, ``drawn`` (-1: none), ``from_discard``, ``round_turns``, ``rounds``
and ``winner`` (-1) per match; ``pending`` (B, n) the rewards of rounds settled at a deal (a
dealt 31 with ``instant_31``), paid with the next step where ``has_pending``. Seats still in
the match are those with lives; turn order skips the others. Observations as ``encoding.py``'s
encoders; agents ``greedy`` and ``expected_value`` as ``agents.py``'s.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from card_envs.core.batched import Twin, shared_arrays, twin_arrays
from card_envs.core.batched_loops import shuffle
from card_envs.core.cards import DECK_SIZE, NUM_SUITS
from card_envs.thirty_one.agents import ExpectedValueAgent
from card_envs.thirty_one.encoding import SCORE_31, SOURCE_SUIT_PLACE, UNSEEN
from card_envs.thirty_one.rules import (
    DRAW,
    HAND_SIZE,
    KNOCK,
    NO_CARD,
    PLACE,
    SCORE_CODES,
    SCORE_TABLES,
    SUITS,
    TAKE,
    THROW,
    TWICE_31,
    VALUES,
    ThirtyOne,
    ThirtyOneState,
)

C = DECK_SIZE
INV_C = 1.0 / C


def _card_table(values: np.ndarray, places: np.ndarray, dtype) -> np.ndarray:
    """(53, 4): per card its value at its suit's place; row 52 (card -1) all 0."""
    table = np.zeros((C + 1, NUM_SUITS), dtype)
    table[np.arange(C), places] = values
    return table


# Card vectors the encoders use, indexed by card (-1 reads row 52: no card).
CARD_11 = _card_table((VALUES * (1.0 / 11.0)).astype(np.float32), SUITS, np.float32)
CARD_31 = _card_table((VALUES * (1.0 / 31.0)).astype(np.float32), SUITS, np.float32)
CARD_VALUE = _card_table(VALUES, SUITS, np.int64)
CARD_SOURCE = _card_table(VALUES, np.array(SOURCE_SUIT_PLACE)[SUITS], np.float32)
VALUE = np.append(VALUES, 0).astype(np.int64)  # by card, -1: 0
# by score code; codes past 62 (made-up hands with a card twice, never read) read 0
SCORE_31_F32 = np.pad(np.array(SCORE_31, np.float32), (0, 256 - len(SCORE_31)))
UNSEEN_F32 = np.array(UNSEEN, np.float32)
SOURCE_PLACE = np.array(SOURCE_SUIT_PLACE, np.int64)


Arrays = twin_arrays(__name__, "lives hands shown deck deck_size discard discard_size in_discard "
                     "discard_values opener knocker first_turn phase drawn from_discard "
                     "round_turns rounds winner pending has_pending")


class Config(NamedTuple):
    num_players: int
    max_steps: int
    lives: int  # each player's lives at the start
    instant_31: bool
    shaped: bool  # reward="original": the source's shaped reward at every round's end
    max_round_turns: int
    codes: np.ndarray  # twice the score of the hand (a, b, c) at (a * 52 + b) * 52 + c
    table: np.ndarray  # the score itself, float32, same index
    lives_f32: np.ndarray  # lives / full lives by lives, float32
    knock_at: int
    knock_every: int


def config(game: ThirtyOne) -> Config:
    toak = game.three_of_a_kind
    return Config(
        game.num_players, game.max_steps, game.lives, game.instant_31, game.reward == "original",
        game.max_round_turns, np.frombuffer(SCORE_CODES[toak], np.uint8).copy(),
        SCORE_TABLES[toak].reshape(-1), (np.arange(game.lives + 1) / game.lives).astype(
            np.float32), ExpectedValueAgent.knock_at, ExpectedValueAgent.knock_every)


def allocate(game: ThirtyOne, cfg: Config, b: int) -> Arrays:
    n = game.num_players

    def ints(*shape, fill=0, dtype=np.int64):
        return np.full((b, *shape), fill, dtype)

    # cards as int8 (0..51, -1: none): a match's piles and hands in a few hundred bytes
    return Arrays(
        *shared_arrays(b, n, game.num_actions), ints(n),
        ints(n, HAND_SIZE, fill=-1, dtype=np.int8), ints(n, HAND_SIZE, fill=-1, dtype=np.int8),
        ints(C, dtype=np.int8), ints(), ints(C, dtype=np.int8), ints(),
        np.zeros((b, C), np.float32), ints(NUM_SUITS), ints(), ints(fill=-1),
        np.zeros(b, bool), ints(), ints(fill=-1), np.zeros(b, bool), ints(), ints(),
        ints(fill=-1), np.zeros((b, n)), np.zeros(b, bool),
    )


@njit(cache=True, inline="always")
def _code(codes, a, b, c):  # pragma: no cover - compiled
    """Twice the score of the hand (a, b, c)."""
    return np.int64(codes[(a * C + b) * C + c])


@njit(cache=True, inline="always")
def _next_in(lives, i, p, n):  # pragma: no cover - compiled
    """The next seat after ``p`` still in the match (``p`` if none)."""
    for d in range(1, n):
        if lives[i, (p + d) % n] > 0:
            return (p + d) % n
    return p


@njit(cache=True)
def _update_masks(s, slots):  # pragma: no cover - compiled
    """ThirtyOne._legal_mask in each match of ``slots`` not over: place (no throw after a
    take), or draw/take/knock (no knock once someone has knocked)."""
    (terminated, phase, mask, knocker, from_discard) = (
        s.terminated, s.phase, s.mask, s.knocker, s.from_discard)
    for i in slots:
        if terminated[i]:
            continue
        placing = phase[i] == 1
        for a in range(3):
            mask[i, a] = not placing
            mask[i, 3 + a] = placing
        if not placing and knocker[i] >= 0:
            mask[i, KNOCK] = 0
        mask[i, THROW] = placing and not from_discard[i]


@njit(cache=True)
def _settle(s, cfg, slots, out):  # pragma: no cover - compiled
    """ThirtyOne._settle in each match of ``slots``: show the hands, take lives, revive or
    eliminate; row r of ``out``, the shaped rewards of match slots[r] (reward="original")."""
    n = cfg.num_players
    lives, hands = s.lives, s.hands
    inside = np.zeros(n, np.bool_)
    score = np.zeros(n, np.int64)
    for r in range(len(slots)):
        i = slots[r]
        low = 999
        has_31 = False
        for q in range(n):
            inside[q] = lives[i, q] > 0
            score[q] = 0
            if inside[q]:
                score[q] = _code(cfg.codes, hands[i, q, 0], hands[i, q, 1], hands[i, q, 2])
                low = min(low, score[q])
                has_31 |= score[q] == TWICE_31
        knocked_out = False
        for q in range(n):
            if inside[q] and ((has_31 and score[q] != TWICE_31)
                              or (not has_31 and score[q] == low)):
                loss = 2 if q == s.knocker[i] else 1
                if lives[i, q] > loss:
                    lives[i, q] -= loss
                else:
                    lives[i, q] = 0
                    knocked_out = True
        if knocked_out:
            alive = False
            for q in range(n):
                alive |= inside[q] and lives[i, q] > 0
            if not alive:
                for q in range(n):
                    if inside[q]:
                        lives[i, q] = 1
        if cfg.shaped:  # ThirtyOne.round_rewards, from the lives after any revival
            low_score = low / 2
            for q in range(n):
                out[r, q] = 0.0
                if inside[q]:
                    sc = score[q] / 2
                    reward = 0.5 * (sc - low_score)
                    if sc == low_score:
                        reward -= 5.0 if q == s.knocker[i] else 2.0
                    elif sc == 31.0:
                        reward += 10.0
                    elif q == s.knocker[i]:
                        reward += 0.3 * (sc - low_score)
                    reward -= 0.3 * (cfg.lives - lives[i, q])
                    reward += -2.0 if lives[i, q] <= 0 else 0.5
                    out[r, q] = reward
        s.rounds[i] += 1
        left, last = 0, -1
        for q in range(n):
            if lives[i, q] > 0:
                left += 1
                last = q
        if left == 1:  # the match is over: no round in progress; the winner holds the turn
            s.terminated[i] = True
            s.winner[i] = last
            s.current_player[i] = last
            s.opener[i] = last
            s.knocker[i] = -1
            s.first_turn[i] = False
        else:
            s.opener[i] = _next_in(lives, i, s.opener[i], n)


@njit(cache=True)
def _start_rounds(s, cfg, slots, rngs, rng_of, chain, has_chain):  # pragma: no cover
    """ThirtyOne._start_round in each match of ``slots``: deal the next round that does not
    end at once (or up to the match's end); row r of ``chain``, the shaped rewards of the
    rounds so settled in match slots[r], summed in order (where ``has_chain[r]``)."""
    n = cfg.num_players
    k = len(slots)
    cards = np.empty(C, np.int64)
    todo = slots.copy()
    where = np.arange(k)  # each todo match's row in slots
    settled = np.zeros((k, n))
    has_chain[:] = False
    while len(todo):
        dealt_31 = np.zeros(len(todo), np.bool_)
        for t in range(len(todo)):
            i = todo[t]
            for j in range(C):
                cards[j] = j
            shuffle(rngs[rng_of[i]], cards)
            count = 0
            for d in range(n):  # three cards to each seat still in, from the opener on
                q = (s.opener[i] + d) % n
                if s.lives[i, q] > 0:
                    for c in range(HAND_SIZE):
                        s.hands[i, q, c] = cards[HAND_SIZE * count + c]
                    count += 1
                else:
                    for c in range(HAND_SIZE):
                        s.hands[i, q, c] = NO_CARD
            top = HAND_SIZE * count
            size = C - top - 1
            for j in range(size):
                s.deck[i, j] = cards[top + 1 + j]
            s.deck_size[i] = size
            _lay_pile(s.discard, s.discard_size, s.in_discard, s.discard_values, i, cards[top])
            s.shown[i, :, :] = NO_CARD
            s.current_player[i] = s.opener[i]
            s.knocker[i] = -1
            s.first_turn[i] = True
            s.phase[i] = 0
            s.drawn[i] = NO_CARD
            s.from_discard[i] = False
            s.round_turns[i] = 0
            if cfg.instant_31:
                for q in range(n):
                    if s.lives[i, q] > 0 and _code(cfg.codes, s.hands[i, q, 0],
                                                   s.hands[i, q, 1],
                                                   s.hands[i, q, 2]) == TWICE_31:
                        dealt_31[t] = True
        if not dealt_31.any():
            return
        todo, where = todo[dealt_31], where[dealt_31]
        _settle(s, cfg, todo, settled)
        if cfg.shaped:
            for t in range(len(todo)):
                r = where[t]
                for q in range(n):
                    chain[r, q] = settled[t, q] if not has_chain[r] else chain[r, q] + settled[t, q]
                has_chain[r] = True
        going = np.zeros(len(todo), np.bool_)
        for t in range(len(todo)):
            going[t] = not s.terminated[todo[t]]
        todo, where = todo[going], where[going]


@njit(cache=True)
def _showdowns(s, cfg, slots, rngs, rng_of, out):  # pragma: no cover - compiled
    """ThirtyOne._showdown in each match of ``slots``: settle the round and deal the next;
    row r of ``out``, what match slots[r]'s step pays (shaped rewards, or the payoffs at the
    match's end; all of them paid: ``has`` in ``step``)."""
    n = cfg.num_players
    k = len(slots)
    _settle(s, cfg, slots, out)
    going = np.zeros(k, np.bool_)
    for r in range(k):
        going[r] = not s.terminated[slots[r]]
    rows = np.flatnonzero(going)
    chain = np.zeros((len(rows), n))
    has_chain = np.zeros(len(rows), np.bool_)
    _start_rounds(s, cfg, slots[rows], rngs, rng_of, chain, has_chain)
    for t in range(len(rows)):
        if has_chain[t]:
            for q in range(n):
                out[rows[t], q] = out[rows[t], q] + chain[t, q]
    if not cfg.shaped:
        for r in range(k):
            i = slots[r]
            if s.terminated[i]:
                for q in range(n):
                    out[r, q] = 1.0 if q == s.winner[i] else -1.0 / (n - 1)


@njit(cache=True)
def _reshuffle(s, i, rng):  # pragma: no cover - compiled
    """ThirtyOne._reshuffle: the discard pile but its top card, shuffled, becomes the deck."""
    below = s.discard_size[i] - 1
    top = s.discard[i, below]
    pile = s.discard[i, :below].copy()
    shuffle(rng, pile)
    for j in range(below):
        s.deck[i, j] = pile[j]
    s.deck_size[i] = below
    _lay_pile(s.discard, s.discard_size, s.in_discard, s.discard_values, i, top)


@njit(cache=True, inline="always")
def _lay_pile(discard, discard_size, in_discard, discard_values, i, top):  # pragma: no cover
    """Match ``i``'s discard pile is the one card ``top`` (ThirtyOne._lay_pile)."""
    discard[i, 0] = top
    discard_size[i] = 1
    in_discard[i, :] = 0.0
    in_discard[i, top] = 1.0
    for suit in range(NUM_SUITS):
        discard_values[i, suit] = CARD_VALUE[top, suit]


@njit(cache=True)
def deal(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """ThirtyOne.init: every seat with full lives, seat 0 opens; the first round's deal (the
    rewards of rounds a dealt 31 settles wait in ``pending`` for the first step)."""
    for i in slots:
        s.lives[i, :] = cfg.lives
        s.opener[i] = 0
        s.rounds[i] = 0
        s.winner[i] = -1
    chain = np.zeros((len(slots), cfg.num_players))
    has_chain = np.zeros(len(slots), np.bool_)
    _start_rounds(s, cfg, slots, rngs, rng_of, chain, has_chain)
    for r in range(len(slots)):
        s.has_pending[slots[r]] = has_chain[r]
        s.pending[slots[r]] = chain[r]
    _update_masks(s, slots)


@njit(cache=True)
def _pay(terminated, rewards, pending, has_pending, shaped, n, slots, showdown,
         paid):  # pragma: no cover - compiled
    """The rewards of each match slots[r]'s step: the pending ones of the last deal first, then
    what its showdown paid (the next row of ``paid`` where showdown[r]: shaped rewards, or the
    payoffs at the match's end)."""
    t = 0
    for r in range(len(slots)):
        i = slots[r]
        has = showdown[r] and (shaped or terminated[i])
        if has_pending[i]:  # rounds settled at the last deal are paid now, first
            for q in range(n):
                rewards[i, q] = pending[i, q] + paid[t, q] if has else pending[i, q]
            has_pending[i] = False
        elif has:
            for q in range(n):
                rewards[i, q] = paid[t, q]
        t += showdown[r]


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """ThirtyOne._apply: draw, take or knock; or place the card and end the turn (a reshuffle
    of an empty deck; a showdown and the next deal when the round ends). The rewards: the
    pending ones of the last deal first, then what the showdown paid."""
    (current_player, terminated, hands, shown, deck, deck_size, discard, discard_size,
     in_discard, discard_values, knocker, first_turn, phase, drawn, from_discard, round_turns,
     lives, rewards, pending, has_pending) = (
        s.current_player, s.terminated, s.hands, s.shown, s.deck, s.deck_size, s.discard,
        s.discard_size, s.in_discard, s.discard_values, s.knocker, s.first_turn, s.phase, s.drawn,
        s.from_discard, s.round_turns, s.lives, s.rewards, s.pending, s.has_pending)
    n = cfg.num_players
    k = len(slots)
    showdown = np.zeros(k, np.bool_)
    for r in range(k):
        i, a = slots[r], actions[r]
        p = current_player[i]
        end_turn = False
        if phase[i] == 0:
            if a == KNOCK:
                knocker[i] = p
                if first_turn[i]:  # under the gun: the showdown at once
                    first_turn[i] = False
                    round_turns[i] += 1
                    showdown[r] = True
                else:
                    end_turn = True
            else:
                first_turn[i] = False
                if a == DRAW:
                    deck_size[i] -= 1
                    drawn[i] = deck[i, deck_size[i]]
                    from_discard[i] = False
                else:
                    discard_size[i] -= 1
                    card = discard[i, discard_size[i]]
                    in_discard[i, card] = 0.0
                    for suit in range(NUM_SUITS):
                        discard_values[i, suit] -= CARD_VALUE[card, suit]
                    drawn[i] = card
                    from_discard[i] = True
                phase[i] = 1
        else:
            card = drawn[i]
            gone = card
            if a != THROW:
                slot = a - PLACE
                gone = hands[i, p, slot]
                hands[i, p, slot] = card
                shown[i, p, slot] = card if from_discard[i] else NO_CARD
            discard[i, discard_size[i]] = gone
            discard_size[i] += 1
            in_discard[i, gone] = 1.0
            for suit in range(NUM_SUITS):
                discard_values[i, suit] += CARD_VALUE[gone, suit]
            drawn[i] = NO_CARD
            phase[i] = 0
            end_turn = True
        if end_turn:  # ThirtyOne._end_turn
            round_turns[i] += 1
            if deck_size[i] == 0:
                _reshuffle(s, i, rngs[rng_of[i]])
            if cfg.instant_31 and _code(cfg.codes, hands[i, p, 0], hands[i, p, 1],
                                        hands[i, p, 2]) == TWICE_31:
                showdown[r] = True
            else:
                nxt = _next_in(lives, i, p, n)
                if nxt == knocker[i] or (knocker[i] < 0
                                          and round_turns[i] >= cfg.max_round_turns):
                    showdown[r] = True
                else:
                    current_player[i] = nxt
    rows = np.flatnonzero(showdown)
    paid = np.zeros((len(rows), n))
    if len(rows):
        _showdowns(s, cfg, slots[rows], rngs, rng_of, paid)
    _pay(terminated, rewards, pending, has_pending, cfg.shaped, n, slots, showdown, paid)
    _update_masks(s, slots)


# The encoders' sections, inlined into each encoder's loop over the rows (observe's own for
# DefaultEncoder, _observe_original's). A section uses every array it takes on every path through
# it: numba then drops the counting of references to those arrays, which would cost some 10 ns an
# array and row (as would a call per row, not inlined).
@njit(cache=True, inline="always")
def _places(lives, i, me, n, places):  # pragma: no cover - compiled
    """places[q]: seat q's place from ``me`` in match ``i`` (0 me, k the k-th next seat still
    in, -1 out); returns how many other seats are in."""
    count = 0
    places[me] = 0
    for d in range(1, n):
        q = (me + d) % n
        if lives[i, q] > 0:
            count += 1
            places[q] = count
        else:
            places[q] = -1
    return count


@njit(cache=True, inline="always")
def _default_own(discard_values, in_discard, i, a, b, c, drawn_v, top, seen, out,
                 r):  # pragma: no cover - compiled
    """DefaultEncoder's own part of row r: the hand, the top and the drawn card, the hand's
    value per suit, the discard pile; ``seen`` gets the value per suit of the cards seen so
    far."""
    # the card tables have a row of 0s at 52, which card -1 reads as (-1) % 53
    ha, hb, hc = a % 53, b % 53, c % 53
    td, tt = drawn_v % 53, top % 53
    for suit in range(4):
        out[r, suit] = CARD_11[ha, suit]
        out[r, 4 + suit] = CARD_11[hb, suit]
        out[r, 8 + suit] = CARD_11[hc, suit]
        out[r, 12 + suit] = CARD_11[tt, suit]
        out[r, 16 + suit] = CARD_11[td, suit]
        out[r, 20 + suit] = (CARD_31[ha, suit] + CARD_31[hb, suit]) + CARD_31[hc, suit]
        seen[suit] = (discard_values[i, suit] + CARD_VALUE[td, suit]
                      + CARD_VALUE[ha, suit] + CARD_VALUE[hb, suit]
                      + CARD_VALUE[hc, suit])
    for j in range(C):
        out[r, 28 + j] = in_discard[i, j]


@njit(cache=True, inline="always")
def _default_scores(codes, a, b, c, card, out, r):  # pragma: no cover - compiled
    """DefaultEncoder's scores in row r: of the hand (a, b, c) with ``card`` (the drawn, else
    the top card; -1 none) in each slot, and of the hand."""
    if card >= 0:
        out[r, 25] = SCORE_31_F32[_code(codes, card, b, c)]
        out[r, 26] = SCORE_31_F32[_code(codes, a, card, c)]
        out[r, 27] = SCORE_31_F32[_code(codes, a, b, card)]
    out[r, 24] = SCORE_31_F32[_code(codes, a, b, c)]


@njit(cache=True, inline="always")
def _default_others(shown, i, n, places, acting, taken, seen, acc, out,
                    r):  # pragma: no cover - compiled
    """DefaultEncoder's part of row r on the other seats in: the value per suit of the cards
    known in each one's hand (the card the seat to act took among them), by place; then the
    unseen value per suit (``seen`` completed)."""
    for q in range(n):
        if places[q] <= 0:
            continue
        for suit in range(4):
            acc[suit] = 0.0
        for k in range(4):
            card = shown[i, q, k] if k < 3 else (taken if q == acting else -1)
            card %= 53
            for suit in range(4):
                acc[suit] = acc[suit] + CARD_31[card, suit]
                seen[suit] += CARD_VALUE[card, suit]
        for suit in range(4):
            out[r, 84 + 4 * (places[q] - 1) + suit] = acc[suit]
    for suit in range(4):
        out[r, 80 + suit] = UNSEEN_F32[seen[suit]]


@njit(cache=True, inline="always")
def _default_seats(lives_f32, lives, i, n, places, knocked, acting, opener, ph, taken, first,
                   deck_left, turns, inv_turns, out, r):  # pragma: no cover - compiled
    """DefaultEncoder's seats part of row r, by place (the lives, the knocker, the seat to
    act, the opener), then the round's (its phase, whether the card to place was taken, the
    first turn, the deck's size, the turns so far)."""
    start = 84 + 4 * (n - 1)
    for q in range(n):
        if places[q] >= 0:
            out[r, start + places[q]] = lives_f32[lives[i, q]]
    at_knocker = places[knocked] if knocked >= 0 else -1
    at_acting, at_opener = places[acting], places[opener]
    if at_knocker >= 0:
        out[r, start + n + at_knocker] = 1.0
    if at_acting >= 0:
        out[r, start + 2 * n + at_acting] = 1.0
    if at_opener >= 0:
        out[r, start + 3 * n + at_opener] = 1.0
    start += 4 * n
    out[r, start] = ph
    out[r, start + 1] = 1.0 if ph == 1 and taken >= 0 else 0.0
    out[r, start + 2] = first
    out[r, start + 3] = deck_left * INV_C
    out[r, start + 4] = 0.0 if first else min(turns * inv_turns, 1.0)


@njit(cache=True, inline="always")
def _original_ev(discard_values, shown, i, n, places, acting, taken, a, b, c, piled, seen,
                 ev):  # pragma: no cover - compiled
    """OriginalEncoder's expected value per suit (source order) of a card not seen: the
    values left of 95 per suit over the cards not seen (the discard pile, the hand, the cards
    known in the others' hands and the card taken)."""
    has_hand = a >= 0
    unseen = C - piled - (3 if has_hand else 0)
    taken_known = taken >= 0 and places[acting] >= 0
    for suit in range(4):
        seen[suit] = discard_values[i, suit]
        if has_hand:
            seen[suit] += CARD_VALUE[a, suit] + CARD_VALUE[b, suit] + CARD_VALUE[c, suit]
    for q in range(n):
        if places[q] > 0:
            for k in range(3):
                card = shown[i, q, k]
                if card >= 0:
                    unseen -= 1
                    for suit in range(4):
                        seen[suit] += CARD_VALUE[card, suit]
    if taken_known:
        unseen -= 1
        for suit in range(4):
            seen[suit] += CARD_VALUE[taken, suit]
    for suit in range(4):
        ev[SOURCE_PLACE[suit]] = (95 - seen[suit]) / unseen if unseen > 0 else 0.0


@njit(cache=True, inline="always")
def _knocker_from_opener(lives, i, n, knocked, opener):  # pragma: no cover - compiled
    """How many seats in the knocker sits after the opener, among those still in; -1.0
    when no one has knocked (OriginalEncoder's input 22)."""
    if knocked < 0:
        return -1.0
    index_knocker = index_opener = m = 0
    for q in range(n):
        if lives[i, q] > 0:
            if q == knocked:
                index_knocker = m
            if q == opener:
                index_opener = m
            m += 1
    return (index_knocker - index_opener) % m


@njit(cache=True)
def _observe_original(s, cfg, rows, seats, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s OriginalEncoder observation of match rows[r] (source 001's
    SwapNN input for a seat to place its drawn card, else its ActionNN input)."""
    (current_player, terminated, truncated, hands, shown, discard, discard_size,
     discard_values, knocker, first_turn, phase, drawn, from_discard, lives, opener) = (
        s.current_player, s.terminated, s.truncated, s.hands, s.shown, s.discard, s.discard_size,
        s.discard_values, s.knocker, s.first_turn, s.phase, s.drawn, s.from_discard, s.lives,
        s.opener)
    n = cfg.num_players
    places = np.zeros(n, np.int64)
    seen = np.zeros(4, np.int64)
    ev = np.zeros(4)
    for r in range(len(rows)):
        i, me = rows[r], seats[r]
        acting = current_player[i]
        ph = phase[i]
        done = terminated[i] or truncated[i]
        to_act = acting == me and not done
        drawn_v = drawn[i] if to_act and ph == 1 else -1
        taken = drawn[i] if ph == 1 and from_discard[i] else -1
        top = discard[i, discard_size[i] - 1] if discard_size[i] > 0 else -1
        a, b, c = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2]
        count = _places(lives, i, me, n, places)
        for j in range(out.shape[1]):
            out[r, j] = 0.0
        _original_ev(discard_values, shown, i, n, places, acting, taken, a, b, c,
                     discard_size[i], seen, ev)
        left = right = -1  # the next and the last seat in
        for q in range(n):
            if places[q] == 1:
                left = q
            if count >= 1 and places[q] == count:
                right = q
        if drawn_v >= 0:  # SwapNN: the hand, the next seat's known cards, the drawn card, ev
            out[r, 0] = 1.0
            for k in range(3):
                for suit in range(4):
                    out[r, 47 + 4 * k + suit] = CARD_SOURCE[hands[i, me, k], suit]
                    if left >= 0 and shown[i, left, k] >= 0:
                        out[r, 67 + 4 * k + suit] = CARD_SOURCE[shown[i, left, k], suit]
            for suit in range(4):
                out[r, 59 + suit] = CARD_SOURCE[drawn_v, suit]
                out[r, 63 + suit] = ev[suit]
            continue
        # ActionNN: the hand, the top card, ev, the next and the last seat's known cards
        for k in range(3):
            for suit in range(4):
                if a >= 0:
                    out[r, 1 + 4 * k + suit] = CARD_SOURCE[hands[i, me, k], suit]
                if left >= 0 and shown[i, left, k] >= 0:
                    out[r, 23 + 4 * k + suit] = CARD_SOURCE[shown[i, left, k], suit]
                if right >= 0 and shown[i, right, k] >= 0:
                    out[r, 35 + 4 * k + suit] = CARD_SOURCE[shown[i, right, k], suit]
        for suit in range(4):
            if top >= 0:
                out[r, 13 + suit] = CARD_SOURCE[top, suit]
            out[r, 17 + suit] = ev[suit]
        out[r, 21] = 1.0 if first_turn[i] else 0.0
        out[r, 22] = _knocker_from_opener(lives, i, n, knocker[i], opener[i])


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s observation of match rows[r], DefaultEncoder (0) or
    OriginalEncoder (1: ``_observe_original``)."""
    if encoding != 0:
        _observe_original(s, cfg, rows, seats, out)
        return
    (current_player, terminated, truncated, hands, shown, discard, discard_size, in_discard,
     discard_values, knocker, first_turn, phase, drawn, from_discard, round_turns, lives,
     opener, deck_size) = (
        s.current_player, s.terminated, s.truncated, s.hands, s.shown, s.discard, s.discard_size,
        s.in_discard, s.discard_values, s.knocker, s.first_turn, s.phase, s.drawn, s.from_discard,
        s.round_turns, s.lives, s.opener, s.deck_size)
    n = cfg.num_players
    codes, lives_f32 = cfg.codes, cfg.lives_f32
    places = np.zeros(n, np.int64)
    seen = np.zeros(4, np.int64)
    acc = np.zeros(4, np.float32)
    inv_turns = 1.0 / cfg.max_round_turns
    for r in range(len(rows)):
        i, me = rows[r], seats[r]
        acting = current_player[i]
        ph = phase[i]
        done = terminated[i] or truncated[i]
        to_act = acting == me and not done
        drawn_v = drawn[i] if to_act and ph == 1 else -1
        taken = drawn[i] if ph == 1 and from_discard[i] else -1
        top = discard[i, discard_size[i] - 1] if discard_size[i] > 0 else -1
        a, b, c = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2]
        _places(lives, i, me, n, places)
        for j in range(out.shape[1]):
            out[r, j] = 0.0
        _default_own(discard_values, in_discard, i, a, b, c, drawn_v, top, seen, out, r)
        if a >= 0:
            _default_scores(codes, a, b, c, drawn_v if drawn_v >= 0 else top, out, r)
        _default_others(shown, i, n, places, acting, taken, seen, acc, out, r)
        _default_seats(lives_f32, lives, i, n, places, knocker[i], acting, opener[i], ph,
                       taken, first_turn[i], deck_size[i], round_turns[i], inv_turns, out, r)


GREEDY, EXPECTED_VALUE = 1, 2


@njit(cache=True, inline="always")
def _placement(agent, a, b, c, card, now, trials, may_throw):  # pragma: no cover - compiled
    """Where agent ``agent`` puts the drawn ``card`` of a hand (a, b, c): PLACE + a slot, or
    THROW (``may_throw``: legal). ``now``: the hand's score code; ``trials``: the codes with
    the card in each slot."""
    if agent == GREEDY:  # the first slot with the strictly best score above now
        best_slot, best = -1, now
        for k in range(3):
            if trials[k] > best:
                best_slot, best = k, trials[k]
        if best_slot >= 0:
            return PLACE + best_slot
        if may_throw:
            return THROW
        least = 0  # after a take (driven by hand): the least bad slot
        for k in range(1, 3):
            if trials[k] > trials[least]:
                least = k
        return PLACE + least
    # expected_value: the best of (score, value of the other cards, -slot); THROW keeps the
    # hand (slot -1)
    total = VALUE[a] + VALUE[b] + VALUE[c]
    best_key, choice = -1, THROW
    if may_throw:
        best_key, choice = now * 1000 + total * 10 + 3, THROW
    for k in range(3):
        held = a if k == 0 else b if k == 1 else c
        key = trials[k] * 1000 + (total - VALUE[held] + VALUE[card]) * 10 + (2 - k)
        if key > best_key:
            best_key, choice = key, PLACE + k
    return choice


@njit(cache=True, inline="always")
def _take_or_draw(table, in_discard, shown, lives, i, me, n, a, b, c, taken, now,
                  unseen):  # pragma: no cover - compiled
    """ExpectedValueAgent's choice of a seat that does not knock: TAKE if the score ``taken``
    with the top card is at least the mean best score with a card it has not seen (not in the
    discard pile, its hand or known in the hands of the others still in), else DRAW."""
    for card in range(C):
        unseen[card] = in_discard[i, card] == 0.0
    unseen[a] = unseen[b] = unseen[c] = False
    for d in range(1, n):
        q = (me + d) % n
        if lives[i, q] > 0:
            for k in range(3):
                if shown[i, q, k] >= 0:
                    unseen[shown[i, q, k]] = False
    count = 0
    sum_best = 0.0  # exact: halves summing to less than 2**12
    now_f = np.float32(now / 2)
    for card in range(C):
        if unseen[card]:
            count += 1
            best = max(max(table[(card * C + b) * C + c], table[(a * C + card) * C + c]),
                       max(table[(a * C + b) * C + card], now_f))
            sum_best += best
    if count == 0:
        return TAKE
    mean = np.float32(sum_best / count)
    return TAKE if taken >= mean else DRAW


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """GreedyAgent (agent 1) or ExpectedValueAgent (2) for the seat to act in matches
    ``rows``; each reads its own hand, the card it must place, the discard pile, the cards
    known in the others' hands and the mask."""
    (current_player, hands, shown, discard, discard_size, in_discard, mask, phase, drawn,
     round_turns, lives) = (
        s.current_player, s.hands, s.shown, s.discard, s.discard_size, s.in_discard, s.mask,
        s.phase, s.drawn, s.round_turns, s.lives)
    n = cfg.num_players
    codes, table = cfg.codes, cfg.table
    unseen = np.empty(C, np.bool_)
    for r in range(len(rows)):
        i = rows[r]
        me = current_player[i]
        a, b, c = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2]
        now = _code(codes, a, b, c)
        if phase[i] == 1:
            card = drawn[i]
            trials = (_code(codes, card, b, c), _code(codes, a, card, c), _code(codes, a, b, card))
            out[r] = _placement(agent, a, b, c, card, now, trials, mask[i, THROW] != 0)
            continue
        if agent == GREEDY:
            out[r] = KNOCK if mask[i, KNOCK] and now == TWICE_31 else DRAW
            continue
        level = min(31.0, cfg.knock_at + round_turns[i] // cfg.knock_every)
        if mask[i, KNOCK] and now / 2 >= level:
            out[r] = KNOCK
            continue
        top = discard[i, discard_size[i] - 1]
        taken = max(max(_code(codes, top, b, c), _code(codes, a, top, c)),
                    _code(codes, a, b, top)) / 2
        out[r] = _take_or_draw(table, in_discard, shown, lives, i, me, n, a, b, c, taken, now,
                               unseen)


@njit(cache=True)
def result(s, cfg, rows, payoffs, scores):  # pragma: no cover - compiled
    """Row r: +1 to the winner and -1/(n-1) to the others once the match is over (0 before);
    the lives left."""
    n = cfg.num_players
    for r in range(len(rows)):
        i = rows[r]
        for q in range(n):
            if s.terminated[i]:
                payoffs[r, q] = 1.0 if q == s.winner[i] else -1.0 / (n - 1)
            else:
                payoffs[r, q] = 0.0
            scores[r, q] = s.lives[i, q]


def load(game: ThirtyOne, cfg: Config, s: Arrays, i: int, state: ThirtyOneState) -> None:
    """Slot ``i`` as the scalar ``state``."""
    n = game.num_players
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    s.lives[i] = state.lives
    for q in range(n):
        s.hands[i, q] = state.hands[q] if state.hands[q] else [NO_CARD] * HAND_SIZE
        s.shown[i, q] = state.shown[q]
    s.deck[i] = 0
    s.deck[i, : len(state.deck)] = state.deck
    s.deck_size[i] = len(state.deck)
    s.discard[i] = 0
    s.discard[i, : len(state.discard)] = state.discard
    s.discard_size[i] = len(state.discard)
    s.in_discard[i] = state.in_discard
    s.discard_values[i] = state.discard_values
    s.opener[i], s.knocker[i], s.first_turn[i] = state.opener, state.knocker, state.first_turn
    s.phase[i], s.drawn[i], s.from_discard[i] = state.phase, state.drawn, state.from_discard
    s.round_turns[i], s.rounds[i], s.winner[i] = state.round_turns, state.rounds, state.winner
    s.has_pending[i] = state.pending is not None
    s.pending[i] = 0.0 if state.pending is None else state.pending


TWIN = Twin(Arrays, config, allocate, deal, step, observe, act, result, load,
            agents=("greedy", "expected_value"))
