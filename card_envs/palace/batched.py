"""The batched twin of Palace: the rules of ``rules.py`` for one slot, compiled (numba).

State of B games, beside the shared fields (``core.batched``), kept as the scalar state keeps
it: ``facts`` (B, F) int8, the scalar state's ``facts`` vector byte for byte (``FactIndex``:
each seat's hand size, face-up cards per rank, face-down count, publicly known hand cards per
rank and out flag; the pile per rank, its size, top rank + 1 and run; cards out of the game;
the draw pile's size; the swap-phase flag; the ring of the last n + 1 plays), then each seat's
hand per rank (the scalar state's ``hand`` arrays), so that the default observation is the
scalar encoder's own gather and table.
Outside the facts, as the scalar state keeps them outside: ``face_up_size`` (B, n);
``face_down`` (B, n, 3) each seat's face-down ranks in the order of its list (a blind play
takes the card at a random place of it); ``draw`` (B, 52) the draw pile, the next card last
(the scalar ``s.draw``), its length in the facts; ``finished`` (B, n) the seats in the order
they went out, ``num_out`` how many; ``loser`` (-1 until the end); ``head`` the newest row of
the facts' history ring.

The rules of a move are written once, in ``_play``, which steps the batch and plays the
heuristic's rollouts. Observations as ``encoding.py``'s encoders; agents as ``agents.py``'s
``lowest_first`` and ``heuristic``. The heuristic is exact: once the draw pile is empty it
imagines its deals (``agents.deal_unseen``, ``pile_order`` and ``Palace.deal``) into a scratch
batch of two slots (slot 0 the deal, copied into slot 1 for each candidate play) and plays its
rollouts there through ``_play``, drawing from the game's generator what the scalar agent
draws, in the same order: the same decisions from the same draws.
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
    samples: int  # the heuristic's imagined deals per decision
    rollout_cap: int  # and the most moves of one rollout
    # the default encoder's facts positions per (observer, head), its numbers per observer
    # (entry j's number is tables[q, base[j] + fact]) and base
    gather: np.ndarray
    tables: np.ndarray
    base: np.ndarray


# Where the facts are (FactIndex), from the pile's place, 29 * n, on; config() checks them.
PILE_SIZE_AT, TOP_AT, RUN_AT, OUT_CARDS_AT = 13, 14, 15, 16
DRAW_AT, SWAPPING_AT, HISTORY_AT = 29, 30, 31


def config(game: Palace) -> Config:
    ix = game.index
    n = game.num_players
    at = (ix.pile, ix.pile_size, ix.top, ix.run, ix.out_cards, ix.draw, ix.swapping, ix.history,
          ix.row_width, ix.public)
    mine = (_pile(n), _pile(n) + PILE_SIZE_AT, _pile(n) + TOP_AT, _pile(n) + RUN_AT,
            _pile(n) + OUT_CARDS_AT, _pile(n) + DRAW_AT, _pile(n) + SWAPPING_AT, _history(n),
            ROW_WIDTH, _hands(n))
    if at != mine:
        raise AssertionError(f"the twin's facts layout {mine} is not FactIndex's {at}")
    encoder = DefaultEncoder(game)
    # the encoder reads the public facts followed by the observer's own hand; the twin keeps
    # every hand after the public facts, seat q's 13 * q further on
    gather = np.array([[np.where(g >= ix.public, g + NUM_RANKS * q, g) for g in per_head]
                       for q, per_head in enumerate(encoder._gather)], np.int64)
    tables = np.stack(encoder._tables).astype(np.float32)
    return Config(n, game.max_steps, game.num_actions, game.swap_phase, game.shaped,
                  HeuristicAgent.samples, HeuristicAgent.rollout_cap, gather, tables,
                  encoder._base.astype(np.int64))


def allocate(game: Palace, cfg: Config, b: int) -> Arrays:
    return _allocate(cfg.num_players, cfg.num_actions, b)


@njit(cache=True)
def _allocate(n, num_actions, b):  # pragma: no cover - compiled
    """Zeroed arrays of ``b`` games (the state, and the heuristic's scratch worlds)."""
    return Arrays(
        np.zeros(b, np.int64), np.zeros(b, np.bool_), np.zeros(b, np.bool_),
        np.zeros((b, n)), np.zeros(b, np.int64), np.zeros((b, num_actions), np.int8),
        np.zeros((b, _hands(n) + NUM_RANKS * n), np.int8), np.zeros((b, n), np.int64),
        np.zeros((b, n, DEAL_EACH), np.int64), np.zeros((b, DECK_SIZE), np.int64),
        np.zeros((b, n), np.int64), np.zeros(b, np.int64), np.full(b, -1, np.int64),
        np.zeros(b, np.int64),
    )


# --- where the facts are ----------------------------------------------------------------------
# Kernels read their arrays once (s.facts, ...) and pass helpers one or two of them with
# scalars: numba counts a reference to every array handed to an inlined helper, some 10-20 ns
# each, which per game and move would cost more than the rules.
@njit(cache=True, inline="always")
def _pile(n):  # pragma: no cover - compiled
    return SEAT_WIDTH * n


@njit(cache=True, inline="always")
def _history(n):  # pragma: no cover - compiled
    return SEAT_WIDTH * n + HISTORY_AT


@njit(cache=True, inline="always")
def _hands(n):  # pragma: no cover - compiled
    return SEAT_WIDTH * n + HISTORY_AT + (n + 1) * ROW_WIDTH


@njit(cache=True, inline="always")
def _hand(n, p):  # pragma: no cover - compiled
    """Where seat p's hand (per rank) starts in the facts."""
    return _hands(n) + NUM_RANKS * p


# --- the rules of one game ---------------------------------------------------------------------
# The pile's steps are inlined into the steps of a move below: a call from those, which may
# fail, would keep numba counting references to their arrays.
@njit(cache=True, inline="always")
def _clear_pile(f, i, n):  # pragma: no cover - compiled
    pile = _pile(n)
    for r in range(NUM_RANKS + RUN_AT - PILE_SIZE_AT + 1):  # counts, size, top, run
        f[i, pile + r] = 0


@njit(cache=True, inline="always")
def _burn(f, i, n):  # pragma: no cover - compiled
    """The whole pile leaves the game."""
    pile = _pile(n)
    for r in range(NUM_RANKS):
        f[i, pile + OUT_CARDS_AT + r] += f[i, pile + r]
    _clear_pile(f, i, n)


@njit(cache=True, inline="always")
def _place(f, i, n, rank, count):  # pragma: no cover - compiled
    """Palace._place: ``count`` cards of ``rank`` on the pile; a 10 or a fourth in a row burns
    it (returns whether it burned)."""
    pile = _pile(n)
    if rank == TEN:
        f[i, pile + OUT_CARDS_AT + TEN] += count
        _burn(f, i, n)
        return True
    f[i, pile + rank] += count
    f[i, pile + PILE_SIZE_AT] += count
    if rank == f[i, pile + TOP_AT] - 1:
        run = f[i, pile + RUN_AT] + count
    else:
        f[i, pile + TOP_AT] = rank + 1
        run = count
    f[i, pile + RUN_AT] = run
    if run >= BURN_RUN:
        _burn(f, i, n)
        return True
    return False


@njit(cache=True, inline="always")
def _take_into_hand(f, i, n, p, count):  # pragma: no cover - compiled
    """The pile (per rank, ``count`` cards) into p's hand in full view of everyone."""
    pile, hand, known = _pile(n), _hand(n, p), p * SEAT_WIDTH + KNOWN_AT
    for r in range(NUM_RANKS):
        c = f[i, pile + r]
        f[i, hand + r] += c
        f[i, known + r] += c
    f[i, p * SEAT_WIDTH + HAND_SIZE_AT] += count
    _clear_pile(f, i, n)


@njit(cache=True)
def _pickup_penalty(f, i, n, total):  # pragma: no cover - compiled
    """rules._pickup_penalty of the pile (already without its top 3s), ``total`` cards."""
    if total == 0:
        return 0.0
    pile = _pile(n)
    weighed = total - f[i, pile + THREE] - f[i, pile + SEVEN]
    if weighed == 0:
        return 0.5
    dot = 0.0
    for r in range(NUM_RANKS):
        dot += _PICKUP_WEIGHT[r] * f[i, pile + r]
    return total / NUM_RANKS * dot / weighed


@njit(cache=True)
def _result_payoffs(f, face_up_size, i, n, loser, capped, pay, row):  # pragma: no cover
    """Palace._result_payoffs into pay[row]: the loser -1, the others 1/(n-1); at the cap the
    players still holding the most cards (hand, face-up, face-down) share the loss."""
    for q in range(n):
        pay[row, q] = 1.0 / (n - 1)
    if not capped:
        pay[row, loser] = -1.0
        return
    most, k = -1, 0
    for q in range(n):
        at = q * SEAT_WIDTH
        if f[i, at + OUT_AT] == 0:
            held = f[i, at + HAND_SIZE_AT] + face_up_size[i, q] + f[i, at + FACE_DOWN_AT]
            if held > most:
                most, k = held, 1
            elif held == most:
                k += 1
    share = -1.0 / k + (1.0 - 1.0 / k) / (n - 1)
    for q in range(n):
        at = q * SEAT_WIDTH
        held = f[i, at + HAND_SIZE_AT] + face_up_size[i, q] + f[i, at + FACE_DOWN_AT]
        if f[i, at + OUT_AT] == 0 and held == most:
            pay[row, q] = share


@njit(cache=True)
def _stalemate(f, i, n, rewards):  # pragma: no cover - compiled
    """The source's penalty at the step cap for everyone still holding cards (shaped)."""
    for q in range(n):
        if f[i, q * SEAT_WIDTH + OUT_AT] == 0:
            rewards[i, q] -= 10.0


@njit(cache=True)
def _lowest_first(f, face_up_size, i, n, p):  # pragma: no cover - compiled
    """lowest_first_action for seat p: every copy of the first playable hand rank in
    SPEND_ORDER, else the first playable face-up rank, else blind; else pick up (what its
    legal mask allows)."""
    seat, hand = p * SEAT_WIDTH, _hand(n, p)
    top = f[i, _pile(n) + TOP_AT]  # rank + 1
    if f[i, seat + HAND_SIZE_AT]:
        for rank in _SPEND_ORDER:
            held = f[i, hand + rank]
            if held and _PLAYABLE[top, rank]:
                return NUM_RANKS * (held - 1) + rank
        return PICK_UP
    if face_up_size[i, p]:
        for rank in _SPEND_ORDER:
            if f[i, seat + FACE_UP_AT + rank] and _PLAYABLE[top, rank]:
                return FACE_UP_BASE + rank
        return PICK_UP
    return BLIND


# The steps of a move, for _play, which calls them per move (in rollouts too). Each uses every
# array it takes on every path through it (the pile's steps inlined), so that numba's reference
# counting of those arrays drops out: a count kept costs more than the step (_swap, of the swap
# phase only, keeps its counts).
@njit(cache=True)
def _swap(f, face_up_size, player, steps, rewards, i, n, p, action, max_steps,
          shaped):  # pragma: no cover - compiled
    """Palace._swap in game i: seat p gives a hand card for a face-up one (in full view), or
    is done swapping (the next seat swaps, or play starts at seat 0); the payoffs at the
    step cap."""
    seat, hand = p * SEAT_WIDTH, _hand(n, p)
    if action == SWAP_DONE:
        if p + 1 < n:
            player[i] = p + 1
        else:
            f[i, _pile(n) + SWAPPING_AT] = 0
            player[i] = 0
    else:
        given, taken = divmod(action - SWAP_BASE, NUM_RANKS)
        f[i, hand + given] -= 1
        f[i, hand + taken] += 1
        f[i, seat + FACE_UP_AT + taken] -= 1
        f[i, seat + FACE_UP_AT + given] += 1
        f[i, seat + KNOWN_AT + taken] += 1  # everyone saw it go into the hand
        f[i, seat + KNOWN_AT + given] = max(0, f[i, seat + KNOWN_AT + given] - 1)
    if steps[i] + 1 >= max_steps:
        _result_payoffs(f, face_up_size, i, n, -1, True, rewards, i)
        if shaped:
            rewards[i, player[i]] += 0.0
            _stalemate(f, i, n, rewards)


@njit(cache=True)
def _from_face_up(f, face_up_size, i, n, p, rank):  # pragma: no cover - compiled
    """Seat p plays its face-up card of ``rank``: whether it burned the pile."""
    f[i, p * SEAT_WIDTH + FACE_UP_AT + rank] -= 1
    face_up_size[i, p] -= 1
    return _place(f, i, n, rank, 1)


@njit(cache=True)
def _blind(f, face_down, i, n, p, u):  # pragma: no cover - compiled
    """Seat p turns up the face-down card at place int(u * size) (u: the generator's draw in
    [0, 1)): played if it may be, else taken into the hand with the pile. The play's (kind,
    rank, count, burned, shaped bonus)."""
    pile, seat = _pile(n), p * SEAT_WIDTH
    top = f[i, pile + TOP_AT] - 1
    size = f[i, seat + FACE_DOWN_AT]
    at = int(u * size)
    rank = face_down[i, p, at]
    for k in range(at, size - 1):
        face_down[i, p, k] = face_down[i, p, k + 1]
    f[i, seat + FACE_DOWN_AT] = size - 1
    if _PLAYABLE[top + 1, rank]:
        return BLIND_PLAY, rank, 1, _place(f, i, n, rank, 1), 10.0
    count = f[i, pile + PILE_SIZE_AT] + 1
    f[i, pile + rank] += 1
    _take_into_hand(f, i, n, p, count)
    return BLIND_FAIL, rank, count, False, -5.0


@njit(cache=True)
def _pick_up(f, i, n, p, shaped):  # pragma: no cover - compiled
    """Seat p picks up the pile; a run of 3s on top leaves the game. (count, shaped bonus)."""
    pile = _pile(n)
    count = np.int64(f[i, pile + PILE_SIZE_AT])
    if f[i, pile + TOP_AT] - 1 == THREE:
        run = f[i, pile + RUN_AT]
        count -= run
        f[i, pile + THREE] -= run
        f[i, pile + OUT_CARDS_AT + THREE] += run
    bonus = -_pickup_penalty(f, i, n, count) if shaped else 0.0
    _take_into_hand(f, i, n, p, count)
    return count, bonus


@njit(cache=True)
def _log_play(f, head, i, n, p, kind, rank, count, burned):  # pragma: no cover - compiled
    """Seat p's play (its kind, rank, count and whether it burned) as the newest row of game
    i's history ring."""
    head[i] = (head[i] + 1) % (n + 1)
    row = _history(n) + head[i] * ROW_WIDTH
    placed = kind == FROM_HAND or kind == FROM_FACE_UP or kind == BLIND_PLAY
    f[i, row + ROW_SEAT] = p + 1
    f[i, row + ROW_KIND] = kind + 1
    f[i, row + ROW_RANK] = rank + 1
    f[i, row + ROW_PLACED] = count if placed else 0
    f[i, row + ROW_TAKEN] = 0 if placed else count
    f[i, row + ROW_BURNED] = burned


@njit(cache=True)
def _refill(f, draw, i, n, p):  # pragma: no cover - compiled
    """Seat p, short of HAND_TARGET cards in hand, draws up to it while the draw pile (not
    empty) lasts."""
    pile, seat, hand = _pile(n), p * SEAT_WIDTH, _hand(n, p)
    left = f[i, pile + DRAW_AT]
    take = min(HAND_TARGET - f[i, seat + HAND_SIZE_AT], left)
    for _ in range(take):
        left -= 1
        f[i, hand + draw[i, left]] += 1
    f[i, seat + HAND_SIZE_AT] += take
    f[i, pile + DRAW_AT] = left


@njit(cache=True)
def _go_out(f, finished, num_out, i, n, p):  # pragma: no cover - compiled
    """Seat p, holding no card, goes out (the next place in ``finished``): whether it left
    one seat in (which then lost)."""
    f[i, p * SEAT_WIDTH + OUT_AT] = 1
    finished[i, num_out[i]] = p
    num_out[i] += 1
    return num_out[i] == n - 1


@njit(cache=True)
def _seat_in(f, i, n, q):  # pragma: no cover - compiled
    """The first seat from q on (round the table) still in."""
    while f[i, q * SEAT_WIDTH + OUT_AT]:
        q = (q + 1) % n
    return q


@njit(cache=True)
def _rollout_end(beyond_cap, me_out, over, cut):  # pragma: no cover - compiled
    """HeuristicAgent._rollout's checks after a move: whether the rollout stops, and its
    outcome (0.0 past the cap of moves, 1.0 seat ``me`` out, -1.0 the game over, 0.0 at the
    step cap)."""
    if beyond_cap:
        return True, 0.0
    if me_out:
        return True, 1.0
    if over or cut:
        return True, -1.0 if over else 0.0
    return False, 0.0


@njit(cache=True)
def _play(s, cfg, slots, actions, rngs, rng_of, me, cap):  # pragma: no cover - compiled
    """Palace._apply of actions[r] in each game slots[r]: the play, its history row, the
    refill, going out, the next seat and the step's rewards (s.rewards, zeroed before).

    A rollout (``me`` >= 0; HeuristicAgent._rollout in the one game of ``slots``): the game
    then goes on with lowest_first for every seat, each move counted as Game.apply counts it,
    until seat ``me`` is out (returns 1.0), the game ends (-1.0; 0.0 at the step cap) or
    ``cap`` more moves were made (0.0)."""
    n = cfg.num_players
    f, face_up_size, face_down, draw, head = s.facts, s.face_up_size, s.face_down, s.draw, s.head
    finished, num_out, loser = s.finished, s.num_out, s.loser
    player, over, cut, steps, rewards = (s.current_player, s.terminated, s.truncated, s.steps,
                                         s.rewards)
    pile, shaped, max_steps = _pile(n), cfg.shaped, cfg.max_steps
    outcome = 0.0
    for r in range(len(slots)):
        i = slots[r]
        action = actions[r]
        moves = 0
        while True:
            p = player[i]
            seat = p * SEAT_WIDTH
            if action >= SWAP_BASE:
                _swap(f, face_up_size, player, steps, rewards, i, n, p, action, max_steps, shaped)
            else:
                if action < FACE_UP_BASE:  # from the hand (the commonest play: kept here)
                    kind = FROM_HAND
                    rank, count = action % NUM_RANKS, action // NUM_RANKS + 1
                    f[i, _hand(n, p) + rank] -= count
                    f[i, seat + HAND_SIZE_AT] -= count
                    known = f[i, seat + KNOWN_AT + rank]
                    if known:  # those played may have been unknown ones: the rest is certain
                        f[i, seat + KNOWN_AT + rank] = max(0, known - count)
                    burned = _place(f, i, n, rank, count)
                    bonus = _HAND_BONUS[count]
                elif action < BLIND:  # a face-up card
                    kind, rank, count, bonus = FROM_FACE_UP, action - FACE_UP_BASE, 1, 5.0
                    burned = _from_face_up(f, face_up_size, i, n, p, rank)
                elif action == BLIND:  # a random face-down card
                    u = rngs[rng_of[i]].random()
                    kind, rank, count, burned, bonus = _blind(f, face_down, i, n, p, u)
                else:  # the pile picked up
                    kind, rank, burned = PICKED_UP, -1, False
                    count, bonus = _pick_up(f, i, n, p, shaped)
                _log_play(f, head, i, n, p, kind, rank, count, burned)
                if f[i, pile + DRAW_AT] and f[i, seat + HAND_SIZE_AT] < HAND_TARGET:
                    _refill(f, draw, i, n, p)
                went_out = (f[i, seat + HAND_SIZE_AT] == 0 and face_up_size[i, p] == 0
                            and f[i, seat + FACE_DOWN_AT] == 0)
                if went_out and _go_out(f, finished, num_out, i, n, p):
                    loser[i] = _seat_in(f, i, n, 0)
                    over[i] = True
                # a burner acts again; otherwise (or if it went out) the next seat still in
                if (went_out or not burned) and not over[i]:
                    player[i] = _seat_in(f, i, n, (p + 1) % n)
                capped = not over[i] and steps[i] + 1 >= max_steps
                if over[i] or capped:
                    _result_payoffs(f, face_up_size, i, n, loser[i], capped, rewards, i)
                if shaped:  # Palace._shaped_rewards
                    rewards[i, p] += bonus
                    if went_out:
                        rewards[i, p] += 20.0 if num_out[i] == 1 else 10.0
                    if capped:
                        _stalemate(f, i, n, rewards)
            if me < 0:
                break
            # the rollout: Game.apply's count and cap, then HeuristicAgent._rollout's checks
            steps[i] += 1
            if not over[i] and steps[i] >= max_steps:
                cut[i] = True
            moves += 1
            stop, outcome = _rollout_end(moves > cap, f[i, me * SEAT_WIDTH + OUT_AT] != 0,
                                         over[i], cut[i])
            if stop:
                break
            action = _lowest_first(f, face_up_size, i, n, player[i])
    return outcome


@njit(cache=True)
def _update_masks(s, cfg, slots):  # pragma: no cover - compiled
    """Palace._legal_mask in each game of ``slots`` not over: swaps in the swap phase; else
    plays from the hand, else from face-up, else blind; pick-up whenever there is a pile."""
    n = cfg.num_players
    f, mask, face_up_size, player = s.facts, s.mask, s.face_up_size, s.current_player
    pile = _pile(n)
    for i in slots:
        for a in range(cfg.num_actions):
            mask[i, a] = 0
        if s.terminated[i]:
            continue
        p = player[i]
        seat, hand = p * SEAT_WIDTH, _hand(n, p)
        if f[i, pile + SWAPPING_AT]:
            for given in range(NUM_RANKS):
                if f[i, hand + given]:
                    for taken in range(NUM_RANKS):
                        if taken != given and f[i, seat + FACE_UP_AT + taken]:
                            mask[i, SWAP_BASE + NUM_RANKS * given + taken] = 1
            mask[i, SWAP_DONE] = 1
            continue
        top = f[i, pile + TOP_AT]  # rank + 1
        if f[i, seat + HAND_SIZE_AT]:
            for r in range(NUM_RANKS):
                if _PLAYABLE[top, r]:
                    for k in range(f[i, hand + r]):
                        mask[i, NUM_RANKS * k + r] = 1
        elif face_up_size[i, p]:
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
    rest the draw pile (the next card last)."""
    n = cfg.num_players
    f, face_down, draw = s.facts, s.face_down, s.draw
    pile = _pile(n)
    deck = np.empty(DECK_SIZE, np.int64)
    for i in slots:
        deck[:] = _RANK_DECK
        shuffle(rngs[rng_of[i]], deck)
        f[i, :] = 0
        for q in range(n):
            seat, hand = q * SEAT_WIDTH, _hand(n, q)
            for k in range(DEAL_EACH):
                face_down[i, q, k] = deck[9 * q + k]
                f[i, seat + FACE_UP_AT + deck[9 * q + DEAL_EACH + k]] += 1
                f[i, hand + deck[9 * q + 2 * DEAL_EACH + k]] += 1
            f[i, seat + HAND_SIZE_AT] = DEAL_EACH
            f[i, seat + FACE_DOWN_AT] = DEAL_EACH
            s.face_up_size[i, q] = DEAL_EACH
            s.finished[i, q] = 0
        left = DECK_SIZE - 9 * n
        for k in range(left):
            draw[i, k] = deck[DECK_SIZE - 1 - k]
        f[i, pile + DRAW_AT] = left
        f[i, pile + SWAPPING_AT] = cfg.swap_phase
        s.current_player[i] = 0
        s.num_out[i] = 0
        s.loser[i] = -1
        s.head[i] = 0
    _update_masks(s, cfg, slots)


@njit(cache=True)
def step(s, cfg, slots, actions, rngs, rng_of):  # pragma: no cover - compiled
    """Palace._apply in each game of ``slots``, then the next seat's legal mask."""
    _play(s, cfg, slots, actions, rngs, rng_of, -1, 0)
    _update_masks(s, cfg, slots)


@njit(cache=True)
def observe(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r: seat seats[r]'s observation of game rows[r], DefaultEncoder (encoding 0,
    "default": the encoder's own gather of the facts and its table) or OriginalEncoder (1)."""
    n = cfg.num_players
    f, heads, gather, tables, base = s.facts, s.head, cfg.gather, cfg.tables, cfg.base
    history = _history(n)
    size = out.shape[1]
    for r in range(len(rows)):
        i, q = rows[r], seats[r]
        head = heads[i]
        if encoding == 0:
            for j in range(size):
                out[r, j] = tables[q, base[j] + f[i, gather[q, head, j]]]
            continue
        for j in range(size):
            out[r, j] = 0.0
        for age in range(3):  # the last three plays, the newest last
            row = history + ((head - age) % (n + 1)) * ROW_WIDTH
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
        hand = _hand(n, q)
        for k in range(NUM_RANKS):
            out[r, 3 * NUM_RANKS + k] = f[i, hand + k]
        if q == s.current_player[i] and not (s.terminated[i] or s.truncated[i]):
            for a in range(PICK_UP + 1):
                out[r, 4 * NUM_RANKS + a] = s.mask[i, a]


LOWEST_FIRST, HEURISTIC = 1, 2


@njit(cache=True)
def act(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """LowestFirstAgent (agent 1) or HeuristicAgent (2) for the seat to act in games ``rows``."""
    n = cfg.num_players
    f, face_up_size, mask, player = s.facts, s.face_up_size, s.mask, s.current_player
    pile = _pile(n)
    world = _allocate(n, cfg.num_actions, 2 if agent == HEURISTIC else 0)
    pool = np.empty(DECK_SIZE, np.int64)
    choices = np.empty(MAX_CHOICES, np.int64)
    totals = np.empty(MAX_CHOICES)
    for r in range(len(rows)):
        i = rows[r]
        p = player[i]
        seat, hand = p * SEAT_WIDTH, _hand(n, p)
        if f[i, pile + SWAPPING_AT]:
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
        rule = _lowest_first(f, face_up_size, i, n, p)
        if agent == LOWEST_FIRST:
            out[r] = rule
            continue
        # the heuristic: lowest_first's play, unless a four-of-a-kind burn is on offer
        top, run = f[i, pile + TOP_AT] - 1, f[i, pile + RUN_AT]
        if top >= 0 and f[i, seat + HAND_SIZE_AT] and mask[i, top]:
            held = f[i, hand + top]
            if run + held >= BURN_RUN:
                rule = NUM_RANKS * (held - 1) + top
        elif top >= 0 and mask[i, FACE_UP_BASE + top] and run + 1 >= BURN_RUN:
            rule = FACE_UP_BASE + top
        if f[i, pile + DRAW_AT]:
            out[r] = rule
            continue
        # the endgame: the distinct plays worth comparing
        count = 0
        if mask[i, BLIND]:
            choices[0] = BLIND
            count = 1
        else:
            for rank in range(NUM_RANKS):
                if mask[i, rank]:
                    held = f[i, hand + rank]
                    choices[count] = NUM_RANKS * (held - 1) + rank
                    count += 1
                    if held > 1:
                        choices[count] = rank
                        count += 1
                elif mask[i, FACE_UP_BASE + rank]:
                    choices[count] = FACE_UP_BASE + rank
                    count += 1
        if mask[i, PICK_UP]:
            choices[count] = PICK_UP
            count += 1
        if count < 2:
            out[r] = rule
            continue
        out[r] = _search(s, cfg, i, rngs, rng_of[i], world, pool, choices[:count], rule,
                         totals[:count])


@njit(cache=True)
def _search(s, cfg, i, rngs, g, world, pool, choices, rule, totals):  # pragma: no cover
    """HeuristicAgent._search for the seat to act in game i: each choice played, then rolled
    out by lowest_first, on the same imagined deals (world slot 0, copied into slot 1 per
    choice); the choice of the best total (ties: the rule's, else the first)."""
    me = s.current_player[i]
    one = np.ones(1, np.int64)
    action = np.empty(1, np.int64)
    world_rng = np.full(2, g, np.int64)
    totals[:] = 0.0
    for _ in range(cfg.samples):
        _imagine(s, cfg, i, rngs[g], world, pool)
        for c in range(len(choices)):
            _copy_world(world)
            action[0] = choices[c]
            totals[c] += _play(world, cfg, one, action, rngs, world_rng, me, cfg.rollout_cap)
    best = 0
    for c in range(1, len(choices)):
        if totals[c] > totals[best] or (totals[c] == totals[best] and choices[c] == rule
                                        and choices[best] != rule):
            best = c
    return choices[best]


@njit(cache=True)
def _imagine(s, cfg, i, rng, world, pool):  # pragma: no cover - compiled
    """HeuristicAgent.imagine into world slot 0: the cards the seat to act in game i cannot see
    (agents.deal_unseen: shuffled, then dealt to the other hands after their known cards, the
    face-down stacks seat by seat, the rest the draw pile), dealt by Palace.deal with the
    pile of agents.pile_order. Reads only what that seat sees."""
    n = cfg.num_players
    f, g = s.facts, world.facts
    pile = _pile(n)
    me = s.current_player[i]
    size = 0
    for r in range(NUM_RANKS):
        seen = f[i, _hand(n, me) + r] + f[i, pile + r] + f[i, pile + OUT_CARDS_AT + r]
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
        seat, hand = q * SEAT_WIDTH, _hand(n, q)
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
    g[0, pile + DRAW_AT] = size - at
    for r in range(NUM_RANKS):
        g[0, pile + r] = f[i, pile + r]
        g[0, pile + OUT_CARDS_AT + r] = f[i, pile + OUT_CARDS_AT + r]
    g[0, pile + PILE_SIZE_AT] = f[i, pile + PILE_SIZE_AT]
    top = f[i, pile + TOP_AT] - 1
    g[0, pile + TOP_AT] = top + 1
    if top >= 0:  # the run Palace.deal reads off pile_order's pile: the whole pile if one rank
        alone = f[i, pile + PILE_SIZE_AT] == f[i, pile + top]
        g[0, pile + RUN_AT] = f[i, pile + top] if alone else f[i, pile + RUN_AT]
    out = 0
    for q in range(n):
        seat = q * SEAT_WIDTH
        if g[0, seat + HAND_SIZE_AT] + world.face_up_size[0, q] + g[0, seat + FACE_DOWN_AT] == 0:
            g[0, seat + OUT_AT] = 1
            world.finished[0, out] = q
            out += 1
    world.num_out[0] = out
    world.loser[0] = -1
    world.terminated[0] = False
    world.truncated[0] = False
    world.steps[0] = 0
    world.current_player[0] = me
    world.head[0] = 0


@njit(cache=True)
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
    n = cfg.num_players
    for r in range(len(rows)):
        i = rows[r]
        for q in range(n):
            payoffs[r, q] = 0.0
            scores[r, q] = 0.0
        if s.terminated[i] or s.truncated[i]:
            _result_payoffs(s.facts, s.face_up_size, i, n, s.loser[i], s.truncated[i],
                            payoffs, r)


@njit(cache=True)
def places(s, cfg, rows, out):  # pragma: no cover - compiled
    """Row r: Palace.place of every seat of game rows[r] (1 = first out, ..., n = the loser;
    at the step cap the players still holding cards follow, fewest cards first, sharing a
    place on equal counts; 0 while undecided): ``BatchedGame.places``, what evaluation
    reports per seat."""
    n = cfg.num_players
    f, finished, face_up_size = s.facts, s.finished, s.face_up_size
    for r in range(len(rows)):
        i = rows[r]
        for q in range(n):
            out[r, q] = 0
        for k in range(s.num_out[i]):
            out[r, finished[i, k]] = k + 1
        for q in range(n):
            at = q * SEAT_WIDTH
            if f[i, at + OUT_AT]:
                continue
            if s.terminated[i]:
                out[r, q] = n
            elif s.truncated[i]:
                mine = f[i, at + HAND_SIZE_AT] + face_up_size[i, q] + f[i, at + FACE_DOWN_AT]
                fewer = 0
                for o in range(n):
                    held = (f[i, o * SEAT_WIDTH + HAND_SIZE_AT] + face_up_size[i, o]
                            + f[i, o * SEAT_WIDTH + FACE_DOWN_AT])
                    if f[i, o * SEAT_WIDTH + OUT_AT] == 0 and held < mine:
                        fewer += 1
                out[r, q] = s.num_out[i] + fewer + 1


def load(game: Palace, cfg: Config, s: Arrays, i: int, state: PalaceState) -> None:
    """Slot ``i`` as the scalar ``state`` (its facts with every number, observed or not)."""
    s.current_player[i] = state.player
    s.terminated[i], s.truncated[i], s.steps[i] = state.terminal, state.truncated, state.steps
    s.rewards[i] = 0.0
    s.mask[i] = game.legal_mask(state)
    facts = state.facts.copy()
    game.copy_numbers(state, facts)
    s.facts[i, : len(facts)] = facts
    for q, hand in enumerate(state.hand):
        s.facts[i, _hands(game.num_players) + NUM_RANKS * q:][:NUM_RANKS] = hand
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
            agents=("lowest_first", "heuristic"), places=places)
