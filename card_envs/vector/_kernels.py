"""Compiled loops over the games of a batch (the numba extra), one game's rules per function.

Imported only by an engine whose backend is "numba" (never by ``import card_envs``). Each
kernel runs the scalar rules for each slot it is given, on the same state arrays as the numpy
code, so the two backends are interchangeable and the same differential tests check both.
Helpers that take arrays loop over the slots themselves and are called once per kernel: a
call that passes arrays counts references to each (some 10 ns per array with numba 0.68), which
per game would cost more than the rules. Rows are written in explicit loops for the same reason.
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
    """out[i]: the legal action of rank floor(uniform[i] * count) in row i (0 if none).

    Branch-free: the legal actions are listed by always writing and advancing only past a
    legal one (a loop that stops at the pick mispredicts on every row: 5x slower)."""
    width = mask.shape[1]
    legal = np.zeros(width + 1, np.int64)
    for i in range(mask.shape[0]):
        count = 0
        for a in range(width):
            legal[count] = a
            count += mask[i, a] != 0
        out[i] = legal[int(uniform[i] * count)] if count else 0
    return out


@njit(cache=True)
def count_steps(steps, terminated, truncated, mask, live, max_steps):  # pragma: no cover
    """Count the step of each game of ``live`` and apply the cap (Game.apply); zero the mask of
    a game that is over."""
    width = mask.shape[1]
    for i in live:
        steps[i] += 1
        if not terminated[i] and steps[i] >= max_steps:
            truncated[i] = True
        if terminated[i] or truncated[i]:
            for j in range(width):
                mask[i, j] = 0


# --- simple tricks ----------------------------------------------------------------------------
@njit(cache=True)
def tricks_masks(planes, lead, player, mask, slots, n):  # pragma: no cover - compiled
    """SimpleTricks._legal_mask for each of ``slots``: the hand, or the led colour's cards."""
    for i in slots:
        p = player[i]
        start, stop = 0, 2 * n
        if lead[i] >= 0:
            colour = (lead[i] // n) * n
            for j in range(colour, colour + n):
                if planes[i, p, j]:
                    start, stop = colour, colour + n
                    break
        for j in range(2 * n):
            mask[i, j] = planes[i, p, j] if start <= j < stop else 0


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
    tricks_masks(planes, lead, player, mask, live, n)
    count_steps(steps, terminated, truncated, mask, live, max_steps)


@njit(cache=True)
def tricks_deal(planes, deal_pos, lead, leader, tricks, player, mask, slots, deck,
                n):  # pragma: no cover - compiled
    """SimpleTricks.init for each of ``slots`` from its shuffled deck (a row of ``deck``)."""
    c = 2 * n
    for r in range(len(slots)):
        i = slots[r]
        for j_ in range(planes.shape[1]):
            for k_ in range(planes.shape[2]):
                planes[i, j_, k_] = 0
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
    tricks_masks(planes, lead, player, mask, slots, n)


@njit(cache=True)
def tricks_observe(planes, lead, leader, tricks, player, done, rows, seats, n, default,
                   obs):  # pragma: no cover - compiled
    """Row r: game rows[r]'s observation for seats[r], in the default or original encoding."""
    c = 2 * n
    for r in range(len(rows)):
        i, q = rows[r], seats[r]
        if default:
            for j in range(4 * c):
                obs[r, j] = planes[i, q, j]
            for j in range(4 * c, 5 * c):
                obs[r, j] = 0.0
            if lead[i] >= 0:
                obs[r, 4 * c + lead[i]] = 1.0
            obs[r, 5 * c] = 1.0 if player[i] == q and not done[i] else 0.0
            obs[r, 5 * c + 1] = tricks[i, q] / n
            obs[r, 5 * c + 2] = tricks[i, 1 - q] / n
        else:
            for j in range(c):
                obs[r, j] = planes[i, q, 2 * c + j] + planes[i, q, 3 * c + j]
                obs[r, c + j] = planes[i, q, j]
                obs[r, 2 * c + j] = 0.0
            if lead[i] >= 0 and leader[i] != q:
                obs[r, 2 * c + lead[i]] = 1.0
    return obs


# --- 98 Cards ---------------------------------------------------------------------------------
@njit(cache=True)
def cards_refills(deck, deck_pos, hand, hand_size, in_draw, slots, flags):  # pragma: no cover
    """Draw the hand of each of ``slots`` whose flag is set back up to 8 cards, keeping it
    sorted (NinetyEightCards._refill)."""
    num_cards = deck.shape[1]
    for i in slots:
        if not flags[i]:
            continue
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
def cards_masks(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, slots,
                standard):  # pragma: no cover - compiled
    """NinetyEightCards._update_legal for each of ``slots``: the mask, and the end when nothing
    is legal or every card is played."""
    for i in slots:
        any_legal = False
        for pile in range(4):
            top = tops[i, pile]
            for slot in range(8):
                legal = fits[pile, top, hand[i, slot]]
                mask[i, 8 * pile + slot] = legal
                any_legal |= legal != 0
        if standard:
            need = (2 if deck_pos[i] < 98 else 1) - turn_played[i]
            end = need <= 0
            mask[i, 32] = end
            any_legal |= end
        if not any_legal or (hand_size[i] == 0 and deck_pos[i] == 98):
            terminated[i] = True
            for j in range(mask.shape[1]):
                mask[i, j] = 0


@njit(cache=True)
def cards_step(fits, deck, deck_pos, hand, hand_size, tops, in_draw, played, turn_played,
               terminated, truncated, rewards, steps, mask, live, actions, standard, shaped,
               max_steps):  # pragma: no cover - compiled
    """NinetyEightCards._apply (and the step count) for each game of ``live``."""
    refill = np.zeros(len(mask), np.bool_)
    for i in live:
        a = actions[i]
        if a == 32:  # the end of the turn (standard rules)
            turn_played[i] = 0
            refill[i] = True
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
                refill[i] = True
            rewards[i, 0] = played[i] - 1 if shaped else 1.0
    cards_refills(deck, deck_pos, hand, hand_size, in_draw, live, refill)
    cards_masks(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, live,
                standard)
    count_steps(steps, terminated, truncated, mask, live, max_steps)


@njit(cache=True)
def cards_deal(fits, deck, deck_pos, hand, hand_size, tops, in_draw, played, turn_played,
               terminated, mask, slots, perms, standard):  # pragma: no cover - compiled
    """NinetyEightCards.init for each of ``slots``: the cards 2..99 in its row's order."""
    refill = np.zeros(len(mask), np.bool_)
    for r in range(len(slots)):
        i = slots[r]
        for j in range(98):
            deck[i, j] = perms[r, j] + 2
            in_draw[i, j] = 1.0
        deck_pos[i] = 0
        for j in range(8):
            hand[i, j] = 0
        hand_size[i] = 0
        tops[i, 0] = 1
        tops[i, 1] = 1
        tops[i, 2] = 100
        tops[i, 3] = 100
        played[i] = 0
        turn_played[i] = 0
        refill[i] = True
    cards_refills(deck, deck_pos, hand, hand_size, in_draw, slots, refill)
    cards_masks(fits, deck_pos, hand, hand_size, tops, turn_played, terminated, mask, slots,
                standard)


@njit(cache=True)
def cards_observe(per_100, jump_features, deck_pos, hand, tops, in_draw, played, turn_played,
                  standard, rows, default, obs):  # pragma: no cover - compiled
    """Row r: game rows[r]'s observation in the default or the original encoding."""
    board = np.empty(12, np.int64)
    for r in range(len(rows)):
        i = rows[r]
        if default:
            for pile in range(4):
                top = tops[i, pile]
                obs[r, pile] = per_100[top]
                for slot in range(8):
                    obs[r, 12 + 8 * pile + slot] = jump_features[pile, top, hand[i, slot]]
            for slot in range(8):
                obs[r, 4 + slot] = per_100[hand[i, slot]]
            obs[r, 44] = (98 - deck_pos[i]) / 90
            obs[r, 45] = played[i] / 98
            obs[r, 46] = turn_played[i] / 8
            need = (2 if deck_pos[i] < 98 else 1) - turn_played[i]
            obs[r, 47] = max(need, 0) / 2.0 if standard else 0.0
            for j in range(98):
                obs[r, 48 + j] = in_draw[i, j]
        else:
            obs[r, 0] = 99 - played[i]
            for pile in range(4):
                board[pile] = tops[i, pile]
            for slot in range(8):
                board[4 + slot] = hand[i, slot]
            board.sort()
            for j in range(12):
                obs[r, 1 + j] = board[j]
    return obs


# --- Thirty-One -------------------------------------------------------------------------------
# Dealing draws from the batch's Dealer, which the kernels cannot call: a step flags the games
# whose deck must be reshuffled or whose next round must be dealt, and the engine draws their
# permutations and hands them to ``match_reshuffle`` / ``match_deal`` before ``match_finish``.
# A call that passes arrays counts two atomic references per array: the rounds to settle are
# collected and settled in one call (_settle_all), not one call per game.
@njit(cache=True)
def _settle_all(codes, lives, hands, knocker, rounds, terminated, winner, player, opener,
                first_turn, slots, count, settled, n, full_lives,
                shaped):  # pragma: no cover - compiled
    """ThirtyOne._settle for games slots[0..count-1]; game slots[r]'s shaped rewards go to row
    r of ``settled`` when asked for."""
    inside = np.zeros(n, np.bool_)
    score = np.zeros(n, np.int64)
    for r_ in range(count):
        i = slots[r_]
        low = 999
        has_31 = False
        for q in range(n):
            inside[q] = lives[i, q] > 0
            score[q] = 0
            if inside[q]:
                score[q] = codes[(hands[i, q, 0] * 52 + hands[i, q, 1]) * 52 + hands[i, q, 2]]
                low = min(low, score[q])
                has_31 |= score[q] == 62
        knocked_out = False
        for q in range(n):
            if inside[q] and ((has_31 and score[q] != 62) or (not has_31 and score[q] == low)):
                loss = 2 if q == knocker[i] else 1
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
        if shaped:  # from the lives after any revival, as ThirtyOne._settle
            low_score = low / 2
            for q in range(n):
                settled[r_, q] = 0.0
                if inside[q]:
                    sc = score[q] / 2
                    r = 0.5 * (sc - low_score)
                    if sc == low_score:
                        r -= 5.0 if q == knocker[i] else 2.0
                    elif sc == 31.0:
                        r += 10.0
                    elif q == knocker[i]:
                        r += 0.3 * (sc - low_score)
                    r -= 0.3 * (full_lives - lives[i, q])
                    r += -2.0 if lives[i, q] <= 0 else 0.5
                    settled[r_, q] = r
        rounds[i] += 1
        left, last = 0, -1
        for q in range(n):
            if lives[i, q] > 0:
                left += 1
                last = q
        if left == 1:
            terminated[i] = True
            winner[i] = last
            player[i] = last
            opener[i] = last
            knocker[i] = -1
            first_turn[i] = False
        else:
            p = opener[i]  # the next seat still in
            for d in range(1, n):
                if lives[i, (p + d) % n] > 0:
                    opener[i] = (p + d) % n
                    break


@njit(cache=True)
def match_step(codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size,
               in_discard, discard_values, opener, knocker, first_turn, phase, drawn,
               from_discard, round_turns, rounds, winner, player, terminated, rewards,
               need_reshuffle, need_deal, live, actions, n, full_lives, max_round_turns,
               instant_31, shaped):  # pragma: no cover - compiled
    """ThirtyOne._apply for each game of ``live`` up to the deals and reshuffles it needs."""
    showdowns = np.empty(len(live), np.int64)
    settling = 0
    for i in live:
        p = player[i]
        a = actions[i]
        end_turn = False
        showdown = False
        if phase[i] == 0:
            if a == 2:  # knock
                knocker[i] = p
                if first_turn[i]:
                    first_turn[i] = False
                    round_turns[i] += 1
                    showdown = True
                else:
                    end_turn = True
            else:
                first_turn[i] = False
                if a == 0:  # draw
                    deck_size[i] -= 1
                    drawn[i] = deck[i, deck_size[i]]
                    from_discard[i] = False
                else:  # take the top discard
                    discard_size[i] -= 1
                    card = discard[i, discard_size[i]]
                    in_discard[i, card] = 0.0
                    for s in range(4):
                        discard_values[i, s] -= card_value[card, s]
                    drawn[i] = card
                    from_discard[i] = True
                phase[i] = 1
        else:
            card = drawn[i]
            gone = card
            if a != 6:
                slot = a - 3
                gone = hands[i, p, slot]
                hands[i, p, slot] = card
                shown[i, p, slot] = card if from_discard[i] else -1
            discard[i, discard_size[i]] = gone
            discard_size[i] += 1
            in_discard[i, gone] = 1.0
            for s in range(4):
                discard_values[i, s] += card_value[gone, s]
            drawn[i] = -1
            phase[i] = 0
            end_turn = True
        if end_turn:
            round_turns[i] += 1
            if deck_size[i] == 0:
                need_reshuffle[i] = True
            hand_code = codes[(hands[i, p, 0] * 52 + hands[i, p, 1]) * 52 + hands[i, p, 2]]
            if instant_31 and hand_code == 62:
                showdown = True
            else:
                nxt = p
                for d in range(1, n):  # the next seat still in
                    if lives[i, (p + d) % n] > 0:
                        nxt = (p + d) % n
                        break
                if nxt == knocker[i] or (knocker[i] < 0 and round_turns[i] >= max_round_turns):
                    showdown = True
                else:
                    player[i] = nxt
        if showdown:
            showdowns[settling] = i
            settling += 1
    settled = np.empty((settling, n))
    _settle_all(codes, lives, hands, knocker, rounds, terminated, winner, player, opener,
                first_turn, showdowns, settling, settled, n, full_lives, shaped)
    for r in range(settling):
        i = showdowns[r]
        if shaped:
            for q in range(n):
                rewards[i, q] = settled[r, q]
        if not terminated[i]:
            need_deal[i] = True


@njit(cache=True)
def match_reshuffle(deck, deck_size, discard, discard_size, in_discard, discard_values,
                    card_value, slots, perms):  # pragma: no cover - compiled
    """ThirtyOne._reshuffle: the discard pile but its top card, in a row's order, is the deck."""
    for r in range(len(slots)):
        i = slots[r]
        below = discard_size[i] - 1
        top = discard[i, below]
        for j in range(below):
            deck[i, j] = discard[i, perms[r, j]]
        deck_size[i] = below
        discard[i, 0] = top
        discard_size[i] = 1
        for j_ in range(in_discard.shape[1]):
            in_discard[i, j_] = 0.0
        in_discard[i, top] = 1.0
        for s in range(4):
            discard_values[i, s] = card_value[top, s]


@njit(cache=True)
def match_deal(codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size,
               in_discard, discard_values, opener, knocker, first_turn, phase, drawn,
               from_discard, round_turns, rounds, winner, player, terminated, chain, has_chain,
               need_deal, slots, perms, n, full_lives, instant_31,
               shaped):  # pragma: no cover - compiled
    """Deal each of ``slots`` a round from its row of ``perms`` (ThirtyOne._start_round's deal
    and _open_round); with instant_31 a dealt 31 settles the round at once, its shaped rewards
    added to ``chain``, and the game is flagged for another deal unless the match is over."""
    dealt_31 = np.empty(len(slots), np.int64)
    settling = 0
    for r in range(len(slots)):
        i = slots[r]
        need_deal[i] = False
        count = 0
        for d in range(n):
            q = (opener[i] + d) % n
            if lives[i, q] > 0:
                for k in range(3):
                    hands[i, q, k] = perms[r, 3 * count + k]
                count += 1
            else:
                for k in range(3):
                    hands[i, q, k] = -1
        top = 3 * count
        size = 52 - top - 1
        for j in range(size):
            deck[i, j] = perms[r, top + 1 + j]
        deck_size[i] = size
        up = perms[r, top]
        discard[i, 0] = up
        discard_size[i] = 1
        for j_ in range(in_discard.shape[1]):
            in_discard[i, j_] = 0.0
        in_discard[i, up] = 1.0
        for s in range(4):
            discard_values[i, s] = card_value[up, s]
        for j_ in range(shown.shape[1]):
            for k_ in range(shown.shape[2]):
                shown[i, j_, k_] = -1
        player[i] = opener[i]
        knocker[i] = -1
        first_turn[i] = True
        phase[i] = 0
        drawn[i] = -1
        from_discard[i] = False
        round_turns[i] = 0
        if instant_31:
            for q in range(n):
                if lives[i, q] > 0 and codes[(hands[i, q, 0] * 52 + hands[i, q, 1]) * 52
                                             + hands[i, q, 2]] == 62:
                    dealt_31[settling] = i
                    settling += 1
                    break
    settled = np.empty((settling, n))
    _settle_all(codes, lives, hands, knocker, rounds, terminated, winner, player, opener,
                first_turn, dealt_31, settling, settled, n, full_lives, shaped)
    for r in range(settling):
        i = dealt_31[r]
        if shaped:
            for q in range(n):
                chain[i, q] = settled[r, q] if not has_chain[i] else chain[i, q] + settled[r, q]
            has_chain[i] = True
        if not terminated[i]:
            need_deal[i] = True


@njit(cache=True)
def match_finish(knocker, phase, from_discard, winner, terminated, truncated, rewards, pending,
                 has_pending, chain, has_chain, steps, mask, live, n, shaped,
                 max_steps):  # pragma: no cover - compiled
    """The end of a step for each game of ``live``: the rewards (settled round, then the rounds
    settled at its deals; the payoffs at a match's end; what the last deal settled first), the
    mask and the step count."""
    for i in live:
        if has_chain[i]:
            for q in range(n):
                rewards[i, q] = rewards[i, q] + chain[i, q]
            has_chain[i] = False
        if terminated[i] and not shaped:
            for q in range(n):
                rewards[i, q] = 1.0 if q == winner[i] else -1.0 / (n - 1)
        if has_pending[i]:
            for q in range(n):
                rewards[i, q] = pending[i, q] + rewards[i, q]
            has_pending[i] = False
        # ThirtyOne._legal_mask (count_steps zeroes it once the game is over)
        placing = phase[i] == 1
        for a in range(3):
            mask[i, a] = not placing
            mask[i, 3 + a] = placing
        if not placing and knocker[i] >= 0:
            mask[i, 2] = 0
        mask[i, 6] = placing and not from_discard[i]
    count_steps(steps, terminated, truncated, mask, live, max_steps)


@njit(cache=True)
def match_observe(codes, card_11, card_31, card_value, card_source, score_31, unseen_f32,
                  lives_f32, source_place, lives, hands, shown, discard, discard_size,
                  in_discard, discard_values, deck_size, opener, knocker, first_turn, phase,
                  drawn, from_discard, round_turns, player, done, rows, seats, n, max_round_turns,
                  default, obs):  # pragma: no cover - compiled
    """Row r: game rows[r]'s observation for seats[r], in the default or original encoding (the
    numpy engine's ``_default`` / ``_original``, game by game)."""
    places = np.zeros(n, np.int64)
    seen = np.zeros(4, np.int64)
    acc = np.zeros(4, np.float32)
    ev = np.zeros(4)
    inv_turns = 1.0 / max_round_turns
    for r in range(len(rows)):
        i, me = rows[r], seats[r]
        acting = player[i]
        to_act = acting == me and not done[i]
        drawn_v = drawn[i] if to_act and phase[i] == 1 else -1
        taken = drawn[i] if phase[i] == 1 and from_discard[i] else -1
        top = discard[i, discard_size[i] - 1] if discard_size[i] > 0 else -1
        a, b, c = hands[i, me, 0], hands[i, me, 1], hands[i, me, 2]
        has_hand = a >= 0
        count = 0  # places[q]: q's place from me (0 me, k the k-th next seat in, -1 out)
        places[me] = 0
        for d in range(1, n):
            q = (me + d) % n
            if lives[i, q] > 0:
                count += 1
                places[q] = count
            else:
                places[q] = -1
        for j_ in range(obs.shape[1]):
            obs[r, j_] = 0.0
        if default:
            # card tables have a row of 0s at 52, which card -1 reads as (-1) % 53: fewer
            # branches, which random games mispredict
            ha, hb, hc = a % 53, b % 53, c % 53
            td, tt = drawn_v % 53, top % 53
            for s in range(4):
                obs[r, s] = card_11[ha, s]
                obs[r, 4 + s] = card_11[hb, s]
                obs[r, 8 + s] = card_11[hc, s]
                obs[r, 12 + s] = card_11[tt, s]
                obs[r, 16 + s] = card_11[td, s]
                obs[r, 20 + s] = (card_31[ha, s] + card_31[hb, s]) + card_31[hc, s]
                seen[s] = (discard_values[i, s] + card_value[td, s] + card_value[ha, s]
                           + card_value[hb, s] + card_value[hc, s])
            if has_hand:
                obs[r, 24] = score_31[codes[(a * 52 + b) * 52 + c]]
                card = drawn_v if drawn_v >= 0 else top
                if card >= 0:
                    obs[r, 25] = score_31[codes[(card * 52 + b) * 52 + c]]
                    obs[r, 26] = score_31[codes[(a * 52 + card) * 52 + c]]
                    obs[r, 27] = score_31[codes[(a * 52 + b) * 52 + card]]
            for j in range(52):
                obs[r, 28 + j] = in_discard[i, j]
            for q in range(n):
                if places[q] <= 0:
                    continue
                for s in range(4):
                    acc[s] = 0.0
                for k in range(4):
                    card = shown[i, q, k] if k < 3 else (taken if q == acting else -1)
                    card %= 53
                    for s in range(4):
                        acc[s] = acc[s] + card_31[card, s]
                        seen[s] += card_value[card, s]
                for s in range(4):
                    obs[r, 84 + 4 * (places[q] - 1) + s] = acc[s]
            for s in range(4):
                obs[r, 80 + s] = unseen_f32[seen[s]]
            start = 84 + 4 * (n - 1)
            for q in range(n):
                if places[q] >= 0:
                    obs[r, start + places[q]] = lives_f32[lives[i, q]]
            if knocker[i] >= 0 and places[knocker[i]] >= 0:
                obs[r, start + n + places[knocker[i]]] = 1.0
            if places[acting] >= 0:
                obs[r, start + 2 * n + places[acting]] = 1.0
            if places[opener[i]] >= 0:
                obs[r, start + 3 * n + places[opener[i]]] = 1.0
            start += 4 * n
            obs[r, start] = phase[i]
            obs[r, start + 1] = 1.0 if phase[i] == 1 and taken >= 0 else 0.0
            obs[r, start + 2] = first_turn[i]
            obs[r, start + 3] = deck_size[i] * (1.0 / 52)
            obs[r, start + 4] = 0.0 if first_turn[i] else min(round_turns[i] * inv_turns, 1.0)
            continue
        # the original encoding: source 001's ActionNN or SwapNN input
        unseen = 52 - discard_size[i] - (3 if has_hand else 0)
        for s in range(4):
            seen[s] = discard_values[i, s]
            if has_hand:
                seen[s] += card_value[a, s] + card_value[b, s] + card_value[c, s]
        for q in range(n):
            if places[q] > 0:
                for k in range(3):
                    card = shown[i, q, k]
                    if card >= 0:
                        unseen -= 1
                        for s in range(4):
                            seen[s] += card_value[card, s]
        if taken >= 0 and places[acting] >= 0:
            unseen -= 1
            for s in range(4):
                seen[s] += card_value[taken, s]
        for s in range(4):
            ev[source_place[s]] = (95 - seen[s]) / unseen if unseen > 0 else 0.0
        left = right = -1
        for q in range(n):
            if places[q] == 1:
                left = q
            if count >= 1 and places[q] == count:
                right = q
        if drawn_v >= 0:
            obs[r, 0] = 1.0
            for k in range(3):
                for s in range(4):
                    obs[r, 47 + 4 * k + s] = card_source[hands[i, me, k], s]
                    if left >= 0 and shown[i, left, k] >= 0:
                        obs[r, 67 + 4 * k + s] = card_source[shown[i, left, k], s]
            for s in range(4):
                obs[r, 59 + s] = card_source[drawn_v, s]
                obs[r, 63 + s] = ev[s]
            continue
        for k in range(3):
            for s in range(4):
                if has_hand:
                    obs[r, 1 + 4 * k + s] = card_source[hands[i, me, k], s]
                if left >= 0 and shown[i, left, k] >= 0:
                    obs[r, 23 + 4 * k + s] = card_source[shown[i, left, k], s]
                if right >= 0 and shown[i, right, k] >= 0:
                    obs[r, 35 + 4 * k + s] = card_source[shown[i, right, k], s]
        for s in range(4):
            if top >= 0:
                obs[r, 13 + s] = card_source[top, s]
            obs[r, 17 + s] = ev[s]
        obs[r, 21] = 1.0 if first_turn[i] else 0.0
        if knocker[i] >= 0:
            index_knocker = index_opener = m = 0
            for q in range(n):
                if lives[i, q] > 0:
                    if q == knocker[i]:
                        index_knocker = m
                    if q == opener[i]:
                        index_opener = m
                    m += 1
            obs[r, 22] = (index_knocker - index_opener) % m
        else:
            obs[r, 22] = -1.0
    return obs


# --- Thirty-One's VectorEnv step against random opponents, in one call -----------------------
# CardVectorEnv.step's Python loop (the learner's move, the opponents' moves wave by wave until
# every learner is to act, the new games of the matches that ended) for Thirty-One with every
# other seat random, on a BatchDealer. It makes the same calls in the same order as that loop,
# and draws what it draws from the same generators: each wave a uniform per waiting game from
# the env's generator for the random actions, a seat per new game from it (unless the
# learner's seat is fixed). Only the shuffles differ: they are drawn here, from the dealer's
# generator, each row's permutation by ``_shuffle_rows`` (the BatchDealer's pool would cost a
# call into Python and a slower shuffle).
# Inside, ``g`` is ThirtyOneVector._compiled_args; ``x`` the arrays the step adds to it:
# (rewards, need_reshuffle, need_deal, truncated, pending, has_pending, chain, has_chain, steps,
# mask); ``scratch`` (slots, lengths, perms, flags) sized for the batch.
@njit(cache=True)
def _shuffle_rows(rng, perms, lengths, count):  # pragma: no cover - compiled
    """Rows 0..count-1 of ``perms``: range(width) with the first lengths[r] items shuffled by
    Fisher-Yates from the end, one ``rng.random()`` u per swap (index int(u * (j + 1)))."""
    width = perms.shape[1]
    for r in range(count):
        for j in range(width):
            perms[r, j] = j
        for j in range(lengths[r] - 1, 0, -1):
            k = int(rng.random() * (j + 1))
            t = perms[r, j]
            perms[r, j] = perms[r, k]
            perms[r, k] = t


@njit(cache=True)
def _match_deals(g, x, deal_rng, scratch, flagged, n, full_lives, instant_31,
                 shaped):  # pragma: no cover - compiled
    """ThirtyOneVector._compiled_deals: the flagged reshuffles, then the flagged deals (only
    games of ``flagged``, a sorted array of slots, can be)."""
    (codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size, in_discard,
     discard_values, opener, knocker, first_turn, phase, drawn, from_discard, round_turns,
     rounds, winner, player, terminated) = g
    need_reshuffle, need_deal, chain, has_chain = x[1], x[2], x[6], x[7]
    slots, lengths, perms = scratch[0], scratch[1], scratch[2]
    count = 0
    for i in flagged:
        if need_reshuffle[i]:
            slots[count] = i
            lengths[count] = discard_size[i] - 1
            count += 1
    if count:
        _shuffle_rows(deal_rng, perms, lengths, count)
        match_reshuffle(deck, deck_size, discard, discard_size, in_discard, discard_values,
                        card_value, slots[:count], perms[:count])
        for r in range(count):
            need_reshuffle[slots[r]] = False
    while True:
        count = 0
        for i in flagged:
            if need_deal[i]:
                slots[count] = i
                lengths[count] = 52
                count += 1
        if count == 0:
            return
        _shuffle_rows(deal_rng, perms, lengths, count)
        match_deal(codes, card_value, lives, hands, shown, deck, deck_size, discard,
                   discard_size, in_discard, discard_values, opener, knocker, first_turn, phase,
                   drawn, from_discard, round_turns, rounds, winner, player, terminated, chain,
                   has_chain, need_deal, slots[:count], perms[:count], n, full_lives,
                   instant_31, shaped)


@njit(cache=True)
def _match_moves(g, x, deal_rng, scratch, live, actions, n, full_lives, max_round_turns,
                 instant_31, shaped, max_steps):  # pragma: no cover - compiled
    """VectorGame.step on the numba backend for the games ``live``: every row's rewards zeroed,
    then match_step, the deals and match_finish."""
    (codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size, in_discard,
     discard_values, opener, knocker, first_turn, phase, drawn, from_discard, round_turns,
     rounds, winner, player, terminated) = g
    (rewards, need_reshuffle, need_deal, truncated, pending, has_pending, chain, has_chain,
     steps, mask) = x
    rewards[:] = 0.0
    match_step(codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size,
               in_discard, discard_values, opener, knocker, first_turn, phase, drawn,
               from_discard, round_turns, rounds, winner, player, terminated, rewards,
               need_reshuffle, need_deal, live, actions, n, full_lives, max_round_turns,
               instant_31, shaped)
    _match_deals(g, x, deal_rng, scratch, live, n, full_lives, instant_31, shaped)
    match_finish(knocker, phase, from_discard, winner, terminated, truncated, rewards, pending,
                 has_pending, chain, has_chain, steps, mask, live, n, shaped, max_steps)


@njit(cache=True)
def _match_opponents(g, x, rng, deal_rng, scratch, seat, active, earned, n, full_lives,
                     max_round_turns, instant_31, shaped,
                     max_steps):  # pragma: no cover - compiled
    """CardVectorEnv._play_opponents with random opponents: waves of random legal moves in the
    games of ``active`` where the learner is not to act; the learner's rewards to ``earned``."""
    player, terminated = g[20], g[21]
    rewards, truncated, mask = x[0], x[3], x[9]
    b = len(seat)
    waiting = np.empty(b, np.int64)
    actions = np.zeros(b, np.int64)
    width = mask.shape[1]
    legal = np.zeros(width + 1, np.int64)
    for i in range(b):
        earned[i] = 0.0
    candidates = np.flatnonzero(active)  # a game waits only while it waited the wave before
    while True:
        count = 0
        for i in candidates:
            if not (terminated[i] or truncated[i]) and player[i] != seat[i]:
                waiting[count] = i
                count += 1
        if count == 0:
            return
        candidates = waiting[:count].copy()
        for r in range(count):  # random_legal_actions: one uniform per waiting game, in order
            i = waiting[r]
            legal_count = 0
            for a in range(width):
                legal[legal_count] = a
                legal_count += mask[i, a] != 0
            u = rng.random()
            actions[i] = legal[int(u * legal_count)] if legal_count else 0
        _match_moves(g, x, deal_rng, scratch, waiting[:count], actions, n, full_lives,
                     max_round_turns, instant_31, shaped, max_steps)
        for r in range(count):
            i = waiting[r]
            earned[i] += rewards[i, seat[i]]


@njit(cache=True)
def match_new_games(g, x, rng, deal_rng, scratch, seat, env_pending, slots, learner_seat, n,
                    full_lives, max_round_turns, instant_31, shaped, max_steps,
                    max_redeals):  # pragma: no cover - compiled
    """CardVectorEnv._new_games with random opponents: new matches in ``slots`` (seats drawn
    unless ``learner_seat`` >= 0), the opponents played to each learner's first decision,
    re-dealt while a match ends first. False if some slot needed more than ``max_redeals``."""
    (codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size, in_discard,
     discard_values, opener, knocker, first_turn, phase, drawn, from_discard, round_turns,
     rounds, winner, player, terminated) = g
    (rewards, need_reshuffle, need_deal, truncated, pending, has_pending, chain, has_chain,
     steps, mask) = x
    b = len(seat)
    active = np.zeros(b, np.bool_)
    earned = np.zeros(b)
    slots = slots.copy()
    count = len(slots)
    for _ in range(max_redeals):
        for r in range(count):
            i = slots[r]
            seat[i] = learner_seat if learner_seat >= 0 else rng.integers(0, n)
        for r in range(count):  # reset_slots and ThirtyOneVector._deal
            i = slots[r]
            terminated[i] = False
            truncated[i] = False
            steps[i] = 0
            for q in range(n):
                lives[i, q] = full_lives
            opener[i] = 0
            rounds[i] = 0
            winner[i] = -1
            has_pending[i] = False
            need_deal[i] = True
            has_chain[i] = False
        _match_deals(g, x, deal_rng, scratch, slots[:count], n, full_lives, instant_31, shaped)
        for r in range(count):
            i = slots[r]
            for q in range(n):
                pending[i, q] = chain[i, q]
            has_pending[i] = has_chain[i]
            has_chain[i] = False
            placing = phase[i] == 1  # ThirtyOneVector._update_mask
            for a in range(3):
                mask[i, a] = not placing and not terminated[i]
                mask[i, 3 + a] = placing and not terminated[i]
            if not placing and knocker[i] >= 0:
                mask[i, 2] = 0
            mask[i, 6] = placing and not from_discard[i] and not terminated[i]
            env_pending[i] = 0.0
            active[i] = True
        _match_opponents(g, x, rng, deal_rng, scratch, seat, active, earned, n, full_lives,
                         max_round_turns, instant_31, shaped, max_steps)
        for i in range(b):
            env_pending[i] += earned[i]
        left = 0
        for r in range(count):
            i = slots[r]
            active[i] = False
            if terminated[i] or truncated[i]:
                slots[left] = i
                left += 1
        count = left
        if count == 0:
            return True
    return False


@njit(cache=True)
def match_env_step(codes, card_value, lives, hands, shown, deck, deck_size, discard,
                   discard_size, in_discard, discard_values, opener, knocker, first_turn, phase,
                   drawn, from_discard, round_turns, rounds, winner, player, terminated,
                   rewards, need_reshuffle, need_deal, truncated, pending, has_pending, chain,
                   has_chain, steps, mask, card_11, card_31, card_source, score_31, unseen_f32,
                   lives_f32, source_place, default, rng, deal_rng, slots, lengths, perms, done,
                   seat, env_pending, actions, learner_seat, obs, reward, term, trunc,
                   final_obs, payoff, score, n, full_lives, max_round_turns, instant_31, shaped,
                   max_steps, max_redeals):  # pragma: no cover - compiled
    """CardVectorEnv.step with random opponents, up to the observations: the learners' (legal)
    ``actions`` in every game, the opponents to each learner's next decision, ``reward``,
    ``term`` and ``trunc``; for the games that ended, their last observations in
    ``final_obs`` (their rows), ``payoff`` and ``score``, then new games; each learner's
    observation in ``obs``. False if a re-deal limit was hit. (Its arguments are plain arrays:
    a tuple of arrays costs the call some 10 us to type.)"""
    g = (codes, card_value, lives, hands, shown, deck, deck_size, discard, discard_size,
         in_discard, discard_values, opener, knocker, first_turn, phase, drawn, from_discard,
         round_turns, rounds, winner, player, terminated)
    x = (rewards, need_reshuffle, need_deal, truncated, pending, has_pending, chain, has_chain,
         steps, mask)
    scratch = (slots, lengths, perms, done)
    b = len(seat)
    everything = np.arange(b)
    _match_moves(g, x, deal_rng, scratch, everything, actions, n, full_lives, max_round_turns,
                 instant_31, shaped, max_steps)
    for i in range(b):
        reward[i] = env_pending[i] + rewards[i, seat[i]]
        env_pending[i] = 0.0
    active = np.ones(b, np.bool_)
    earned = np.zeros(b)
    _match_opponents(g, x, rng, deal_rng, scratch, seat, active, earned, n, full_lives,
                     max_round_turns, instant_31, shaped, max_steps)
    count = 0
    for i in range(b):
        reward[i] += earned[i]
        term[i] = terminated[i]
        trunc[i] = truncated[i]
        payoff[i] = 0.0
        score[i] = 0.0
        if terminated[i] or truncated[i]:
            slots[count] = i
            count += 1
            if terminated[i]:
                payoff[i] = 1.0 if seat[i] == winner[i] else -1.0 / (n - 1)
            score[i] = lives[i, seat[i]]
    ok = True
    if count:
        for i in range(b):
            done[i] = terminated[i] or truncated[i]
        rows = slots[:count].copy()
        seats = np.empty(count, np.int64)
        for r in range(count):
            seats[r] = seat[rows[r]]
        last = np.empty((count, final_obs.shape[1]), np.float32)
        match_observe(codes, card_11, card_31, card_value, card_source, score_31, unseen_f32,
                      lives_f32, source_place, lives, hands, shown, discard, discard_size,
                      in_discard, discard_values, deck_size, opener, knocker, first_turn,
                      phase, drawn, from_discard, round_turns, player, done, rows, seats, n,
                      max_round_turns, default, last)
        for r in range(count):
            final_obs[rows[r]] = last[r]
        ok = match_new_games(g, x, rng, deal_rng, scratch, seat, env_pending, rows,
                             learner_seat, n, full_lives, max_round_turns, instant_31, shaped,
                             max_steps, max_redeals)
    for i in range(b):
        done[i] = terminated[i] or truncated[i]
    match_observe(codes, card_11, card_31, card_value, card_source, score_31, unseen_f32,
                  lives_f32, source_place, lives, hands, shown, discard, discard_size,
                  in_discard, discard_values, deck_size, opener, knocker, first_turn, phase,
                  drawn, from_discard, round_turns, player, done, everything, seat, n,
                  max_round_turns, default, obs)
    return ok
