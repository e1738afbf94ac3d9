"""Compiled loops over the games of a batch (the numba extra), one game's rules per function.

Imported only by an engine whose backend is "numba" (never by ``import card_envs``). Each
kernel runs the scalar rules for each slot it is given, on the same state arrays as the numpy
code, so the two backends are interchangeable and the same differential tests check both.
"""

from __future__ import annotations

import numpy as np
from numba import njit


# --- shared ---------------------------------------------------------------------------------
@njit(cache=True)
def first_illegal(mask, live, actions):  # pragma: no cover - compiled
    """The first slot of ``live`` whose action is out of range or illegal, or -1."""
    num_actions = mask.shape[1]
    for i in live:
        a = actions[i]
        if a < 0 or a >= num_actions or mask[i, a] == 0:
            return i
    return -1


@njit(cache=True)
def random_legal(mask, uniform, out):  # pragma: no cover - compiled
    """out[i]: the legal action of rank floor(uniform[i] * count) in row i (0 if none)."""
    for i in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[i, a] != 0
        pick = int(uniform[i] * count)
        out[i] = 0
        for a in range(mask.shape[1]):
            if mask[i, a] != 0:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1
    return out


@njit(cache=True)
def count_step(steps, terminated, truncated, mask, i, max_steps):  # pragma: no cover
    """Count the step of game i and apply the cap (Game.apply); zero the mask of an ended game."""
    steps[i] += 1
    if not terminated[i] and steps[i] >= max_steps:
        truncated[i] = True
    if terminated[i] or truncated[i]:
        mask[i, :] = 0


# --- simple tricks ----------------------------------------------------------------------------
@njit(cache=True)
def tricks_mask(planes, lead, player, mask, i, n):  # pragma: no cover - compiled
    """SimpleTricks._legal_mask for game i: the hand, or the led colour's cards if any."""
    p = player[i]
    if lead[i] >= 0:
        start = (lead[i] // n) * n
        follows = False
        for j in range(start, start + n):
            if planes[i, p, j]:
                follows = True
                break
        if follows:
            mask[i, :] = 0
            for j in range(start, start + n):
                mask[i, j] = planes[i, p, j]
            return
    for j in range(2 * n):
        mask[i, j] = planes[i, p, j]


@njit(cache=True)
def tricks_step(planes, lead, leader, tricks, player, terminated, truncated, rewards, steps,
                mask, live, actions, n, max_steps):  # pragma: no cover - compiled
    """SimpleTricks._apply (and the step count) for each game of ``live``."""
    c = 2 * n
    for i in live:
        p = player[i]
        card = actions[i]
        planes[i, p, card] = 0
        planes[i, 1 - p, c + card] = 0
        if lead[i] < 0:
            lead[i] = card
            leader[i] = p
            player[i] = 1 - p
        else:
            led, first = lead[i], leader[i]
            winner = p if card // n == led // n and card % n > led % n else first
            planes[i, first, 2 * c + led] = 1
            planes[i, 1 - first, 3 * c + led] = 1
            planes[i, p, 2 * c + card] = 1
            planes[i, 1 - p, 3 * c + card] = 1
            tricks[i, winner] += 1
            lead[i] = -1
            leader[i] = winner
            player[i] = winner
            if tricks[i, 0] + tricks[i, 1] == n:
                terminated[i] = True
                diff = np.sign(tricks[i, 0] - tricks[i, 1])
                rewards[i, 0] = diff
                rewards[i, 1] = -diff
        if not terminated[i]:
            tricks_mask(planes, lead, player, mask, i, n)
        count_step(steps, terminated, truncated, mask, i, max_steps)


@njit(cache=True)
def tricks_deal(planes, deal_pos, lead, leader, tricks, player, mask, slots, deck,
                n):  # pragma: no cover - compiled
    """SimpleTricks.init for each of ``slots`` from its shuffled deck (a row of ``deck``)."""
    c = 2 * n
    for r in range(len(slots)):
        i = slots[r]
        planes[i, :, :] = 0
        for j in range(c):
            card = deck[r, j]
            seat = 0 if j < n else 1
            planes[i, seat, card] = 1
            planes[i, 1 - seat, c + card] = 1
            deal_pos[i, card] = j % n
        lead[i] = -1
        leader[i] = 0
        player[i] = 0
        tricks[i, 0] = 0
        tricks[i, 1] = 0
        tricks_mask(planes, lead, player, mask, i, n)


@njit(cache=True)
def tricks_observe(planes, lead, leader, tricks, player, done, seats, n, default,
                   obs):  # pragma: no cover - compiled
    """Each game's observation for ``seats`` in the default or the original encoding."""
    c = 2 * n
    for i in range(len(seats)):
        q = seats[i]
        if default:
            for j in range(4 * c):
                obs[i, j] = planes[i, q, j]
            for j in range(4 * c, 5 * c):
                obs[i, j] = 0.0
            if lead[i] >= 0:
                obs[i, 4 * c + lead[i]] = 1.0
            obs[i, 5 * c] = 1.0 if player[i] == q and not done[i] else 0.0
            obs[i, 5 * c + 1] = tricks[i, q] / n
            obs[i, 5 * c + 2] = tricks[i, 1 - q] / n
        else:
            for j in range(c):
                obs[i, j] = planes[i, q, 2 * c + j] + planes[i, q, 3 * c + j]
                obs[i, c + j] = planes[i, q, j]
                obs[i, 2 * c + j] = 0.0
            if lead[i] >= 0 and leader[i] != q:
                obs[i, 2 * c + lead[i]] = 1.0
    return obs


# --- 98 Cards ---------------------------------------------------------------------------------
@njit(cache=True)
def cards_refill(deck, deck_pos, hand, hand_size, in_draw, i):  # pragma: no cover - compiled
    """Draw game i's hand back up to 8 cards, keeping it sorted (NinetyEightCards._refill)."""
    num_cards = deck.shape[1]
    while hand_size[i] < 8 and deck_pos[i] < num_cards:
        card = deck[i, deck_pos[i]]
        deck_pos[i] += 1
        in_draw[i, card - 2] = 0.0
        j = hand_size[i]
        while j > 0 and hand[i, j - 1] > card:
            hand[i, j] = hand[i, j - 1]
            j -= 1
        hand[i, j] = card
        hand_size[i] += 1


@njit(cache=True)
def cards_min_play(deck_pos, turn_played, i, num_cards):  # pragma: no cover - compiled
    need = (2 if deck_pos[i] < num_cards else 1) - turn_played[i]
    return need if need > 0 else 0


@njit(cache=True)
def cards_mask(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, i,
               standard):  # pragma: no cover - compiled
    """NinetyEightCards._update_legal for game i: the mask, and the end when nothing is legal
    or every card is played."""
    any_legal = False
    for pile in range(4):
        top = tops[i, pile]
        for slot in range(8):
            legal = fits[pile, top, hand[i, slot]]
            mask[i, 8 * pile + slot] = legal
            any_legal |= legal != 0
    if standard:
        end = cards_min_play(deck_pos, turn_played, i, 98) == 0
        mask[i, 32] = end
        any_legal |= end
    if not any_legal or (hand_size[i] == 0 and deck_pos[i] == 98):
        terminated[i] = True
        mask[i, :] = 0


@njit(cache=True)
def cards_step(fits, deck, deck_pos, hand, hand_size, tops, in_draw, played, turn_played,
               terminated, truncated, rewards, steps, mask, live, actions, standard, shaped,
               max_steps):  # pragma: no cover - compiled
    """NinetyEightCards._apply (and the step count) for each game of ``live``."""
    for i in live:
        a = actions[i]
        if a == 32:  # the end of the turn (standard rules)
            turn_played[i] = 0
            cards_refill(deck, deck_pos, hand, hand_size, in_draw, i)
        else:
            pile, slot = a // 8, a % 8
            card = hand[i, slot]
            for j in range(slot, 7):
                hand[i, j] = hand[i, j + 1]
            hand[i, 7] = 0
            hand_size[i] -= 1
            tops[i, pile] = card
            played[i] += 1
            if standard:
                turn_played[i] += 1
            else:
                cards_refill(deck, deck_pos, hand, hand_size, in_draw, i)
            rewards[i, 0] = played[i] - 1 if shaped else 1.0
        cards_mask(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, i,
                   standard)
        count_step(steps, terminated, truncated, mask, i, max_steps)


@njit(cache=True)
def cards_deal(fits, deck, deck_pos, hand, hand_size, tops, in_draw, played, turn_played,
               terminated, mask, slots, perms, standard):  # pragma: no cover - compiled
    """NinetyEightCards.init for each of ``slots``: the cards 2..99 in its row's order."""
    for r in range(len(slots)):
        i = slots[r]
        for j in range(98):
            deck[i, j] = perms[r, j] + 2
            in_draw[i, j] = 1.0
        deck_pos[i] = 0
        hand[i, :] = 0
        hand_size[i] = 0
        tops[i, 0] = 1
        tops[i, 1] = 1
        tops[i, 2] = 100
        tops[i, 3] = 100
        played[i] = 0
        turn_played[i] = 0
        cards_refill(deck, deck_pos, hand, hand_size, in_draw, i)
        cards_mask(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, i,
                   standard)


@njit(cache=True)
def cards_observe(per_100, jump_features, deck_pos, hand, tops, in_draw, played, turn_played,
                  standard, default, obs):  # pragma: no cover - compiled
    """Each game's observation in the default or the original encoding."""
    board = np.empty(12, np.int64)
    for i in range(obs.shape[0]):
        if default:
            for pile in range(4):
                top = tops[i, pile]
                obs[i, pile] = per_100[top]
                for slot in range(8):
                    obs[i, 12 + 8 * pile + slot] = jump_features[pile, top, hand[i, slot]]
            for slot in range(8):
                obs[i, 4 + slot] = per_100[hand[i, slot]]
            obs[i, 44] = (98 - deck_pos[i]) / 90
            obs[i, 45] = played[i] / 98
            obs[i, 46] = turn_played[i] / 8
            obs[i, 47] = cards_min_play(deck_pos, turn_played, i, 98) / 2.0 if standard else 0.0
            for j in range(98):
                obs[i, 48 + j] = in_draw[i, j]
        else:
            obs[i, 0] = 99 - played[i]
            for pile in range(4):
                board[pile] = tops[i, pile]
            for slot in range(8):
                board[4 + slot] = hand[i, slot]
            board.sort()
            for j in range(12):
                obs[i, 1 + j] = board[j]
    return obs
