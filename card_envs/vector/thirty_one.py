"""Thirty-One over a batch of matches (the rules of ``card_envs.thirty_one.rules``).

State (B matches, n players): ``lives`` (B, n); ``hands`` (B, n, 3) cards by slot, -1 for a
seat without a hand (out of the match since the last deal); ``shown`` (B, n, 3) the card in
each slot if it was taken from the discard pile, else -1; ``deck`` (B, 52) the draw pile,
next card at ``deck_size - 1``; ``discard`` (B, 52) the discard pile, top at
``discard_size - 1``; ``in_discard`` (B, 52) float32 membership and ``discard_values`` (B, 4)
the pile's value per suit; ``opener``, ``knocker`` (-1: none), ``first_turn``, ``phase``,
``drawn`` (-1: none), ``from_discard``, ``round_turns``, ``rounds`` and ``winner`` (-1) per
match; ``pending`` (B, n) rewards of rounds settled at a deal, paid with the next step.
Seats still in the match are those with lives; turn order skips the others.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_SUITS
from card_envs.thirty_one.agents import ExpectedValueAgent
from card_envs.thirty_one.encoding import SCORE_31, SOURCE_SUIT_PLACE, UNSEEN
from card_envs.thirty_one.rules import (
    DRAW,
    HAND_SIZE,
    KNOCK,
    MASK_PLACE_DRAWN,
    MASK_PLACE_TAKEN,
    MASK_TURN,
    MASK_TURN_AFTER_KNOCK,
    PLACE,
    SCORE_CODES,
    SCORE_TABLES,
    SUIT_TOTAL,
    SUITS,
    TAKE,
    THROW,
    TWICE_31,
    VALUES,
    ThirtyOne,
)
from card_envs.vector.base import Dealer, VectorGame, VectorState, random_actions

C = DECK_SIZE
_INV_11, _INV_31, _INV_C = 1.0 / 11.0, 1.0 / 31.0, 1.0 / C


def _card_table(values: np.ndarray, places: np.ndarray, dtype) -> np.ndarray:
    """(53, 4): per card its value at its suit's place; row 52 (card -1) all 0."""
    table = np.zeros((C + 1, NUM_SUITS), dtype)
    table[np.arange(C), places] = values
    return table


# Card vectors the encoders use, indexed by card (-1 reads row 52: no card).
CARD_11 = _card_table((VALUES * _INV_11).astype(np.float32), SUITS, np.float32)
CARD_31 = _card_table((VALUES * _INV_31).astype(np.float32), SUITS, np.float32)
CARD_VALUE = _card_table(VALUES, SUITS, np.int64)
CARD_SOURCE = _card_table(VALUES, np.array(SOURCE_SUIT_PLACE)[SUITS], np.float32)
VALUE = np.append(VALUES, 0)  # by card, -1: 0
SUIT = np.append(SUITS, 0)
# by score code; codes past 62 (made-up hands with a card twice, masked out where read) read 0
SCORE_31_F32 = np.pad(np.array(SCORE_31, np.float32), (0, 256 - len(SCORE_31)))
UNSEEN_F32 = np.array(UNSEEN, np.float32)
SOURCE_PLACE = np.array(SOURCE_SUIT_PLACE, np.int64)
# the masks by (phase, from_discard or knocked): rows 0-1 phase 1 (drawn, taken), 2-3 phase 0
MASKS = np.stack([MASK_PLACE_DRAWN, MASK_PLACE_TAKEN, MASK_TURN, MASK_TURN_AFTER_KNOCK])


class MatchBatch(VectorState):
    """B matches of Thirty-One in progress (see the module docstring)."""

    lives: np.ndarray
    hands: np.ndarray
    shown: np.ndarray
    deck: np.ndarray
    deck_size: np.ndarray
    discard: np.ndarray
    discard_size: np.ndarray
    in_discard: np.ndarray
    discard_values: np.ndarray
    opener: np.ndarray
    knocker: np.ndarray
    first_turn: np.ndarray
    phase: np.ndarray
    drawn: np.ndarray
    from_discard: np.ndarray
    round_turns: np.ndarray
    rounds: np.ndarray
    winner: np.ndarray
    pending: np.ndarray
    has_pending: np.ndarray


class ThirtyOneVector(VectorGame):
    """Batched Thirty-One; takes the rules arguments of ``ThirtyOne`` (2-7 players)."""

    name = "thirty_one"
    numba_kernels = "match"

    def __init__(self, num_players: int = 3, lives: int = 3, three_of_a_kind: bool = False,
                 instant_31: bool = False, reward: str = "default", max_round_turns: int = 100,
                 max_steps: int = 10_000):
        super().__init__(ThirtyOne(num_players=num_players, lives=lives,
                                   three_of_a_kind=three_of_a_kind, instant_31=instant_31,
                                   reward=reward, max_round_turns=max_round_turns,
                                   max_steps=max_steps))
        game = self.game
        self.n = game.num_players
        self.lives = game.lives
        self.shaped = game.reward == "original"
        self.codes = np.frombuffer(SCORE_CODES[game.three_of_a_kind], np.uint8).astype(np.int64)
        # the kernels' copy: 140 KB stays in a core's cache, the int64 one (1.1 MB) does not
        self.codes8 = self.codes.astype(np.uint8)
        self.table = SCORE_TABLES[game.three_of_a_kind].reshape(-1)
        self.seat = np.arange(self.n)
        self.lives_f32 = (np.arange(self.lives + 1) / self.lives).astype(np.float32)

    def observation_size(self, encoding: str = "default") -> int:
        return 85 + 8 * self.n if encoding == "default" else 79

    def code(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Twice the score of the hands (a, b, c) (cards >= 0)."""
        return self.codes[(a * C + b) * C + c]

    # --- seats ----------------------------------------------------------------------------
    def _next_in(self, lives: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The first seat after ``p`` in turn order that is still in (rows of ``lives``)."""
        n = self.n
        rel = (self.seat - p[:, None]) % n
        rel = np.where((lives > 0) & (rel > 0), rel, n)
        return (p + rel.min(axis=1)) % n

    def _places(self, lives: np.ndarray, me: np.ndarray) -> np.ndarray:
        """(k, n): each seat's place from ``me``: 0 for me, k for the k-th next seat still
        in, -1 for a seat that is out (ThirtyOne._seat_tables)."""
        n = self.n
        rot = (me[:, None] + self.seat) % n  # the seat at distance d from me
        rows = np.arange(len(me))[:, None]
        inside = lives[rows, rot] > 0
        inside[:, 0] = False
        count = np.cumsum(inside, axis=1)
        places = np.full((len(me), n), -1, np.int64)
        places[rows, rot] = np.where(inside, count, -1)
        places[np.arange(len(me)), me] = 0
        return places

    # --- dealing --------------------------------------------------------------------------
    def _new_state(self, num_envs: int, dealer: Dealer) -> MatchBatch:
        n = self.n
        s = MatchBatch()
        s.dealer = dealer
        s.current_player = np.zeros(num_envs, np.int64)
        s.terminated = np.zeros(num_envs, bool)
        s.truncated = np.zeros(num_envs, bool)
        s.rewards = np.zeros((num_envs, n))
        s.steps = np.zeros(num_envs, np.int64)
        s.mask = np.zeros((num_envs, self.num_actions), np.int8)
        s.lives = np.zeros((num_envs, n), np.int64)
        s.hands = np.full((num_envs, n, HAND_SIZE), -1, np.int64)
        s.shown = np.full((num_envs, n, HAND_SIZE), -1, np.int64)
        s.deck = np.zeros((num_envs, C), np.int64)
        s.deck_size = np.zeros(num_envs, np.int64)
        s.discard = np.zeros((num_envs, C), np.int64)
        s.discard_size = np.zeros(num_envs, np.int64)
        s.in_discard = np.zeros((num_envs, C), np.float32)
        s.discard_values = np.zeros((num_envs, NUM_SUITS), np.int64)
        for name in ("opener", "round_turns", "rounds", "phase"):
            setattr(s, name, np.zeros(num_envs, np.int64))
        for name in ("knocker", "drawn", "winner"):
            setattr(s, name, np.full(num_envs, -1, np.int64))
        s.first_turn = np.zeros(num_envs, bool)
        s.from_discard = np.zeros(num_envs, bool)
        s.pending = np.zeros((num_envs, n))
        s.has_pending = np.zeros(num_envs, bool)
        # the numba backend's hand-over between a step and the deals it needs
        s.need_reshuffle = np.zeros(num_envs, bool)
        s.need_deal = np.zeros(num_envs, bool)
        s.chain = np.zeros((num_envs, n))
        s.has_chain = np.zeros(num_envs, bool)
        return s

    def _deal(self, s: MatchBatch, slots: np.ndarray) -> None:
        # ThirtyOne.init: every seat with full lives, seat 0 opens; the first round's deal
        s.lives[slots] = self.lives
        s.opener[slots] = 0
        s.rounds[slots] = 0
        s.winner[slots] = -1
        s.has_pending[slots] = False
        if self.backend == "numba":
            s.need_deal[slots] = True
            s.has_chain[slots] = False
            self._compiled_deals(s)
            s.pending[slots] = s.chain[slots]
            s.has_pending[slots] = s.has_chain[slots]
            s.has_chain[slots] = False
            self._update_mask(s, slots)
            return
        rewards, paid = self._start_round(s, slots)
        if paid.any():
            s.pending[slots[paid]] = rewards[paid]
            s.has_pending[slots[paid]] = True
        self._update_mask(s, slots)

    def _start_round(self, s: MatchBatch, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Deal the next round in ``slots`` (re-dealing while a dealt 31 settles a round at
        once, with instant_31); the rewards of the rounds so settled and where there were any."""
        rewards = np.zeros((len(slots), self.n))
        paid = np.zeros(len(slots), bool)
        todo = np.arange(len(slots))
        while len(todo):
            at = slots[todo]
            self._deal_round(s, at)
            if not self.game.instant_31:
                break
            hands = s.hands[at]
            dealt_31 = ((self.code(hands[..., 0], hands[..., 1], hands[..., 2]) == TWICE_31)
                        & (hands[..., 0] >= 0)).any(axis=1)
            todo = todo[dealt_31]
            if not len(todo):
                break
            settled = self._settle(s, slots[todo])
            if self.shaped:
                rewards[todo] += settled
                paid[todo] = True
            todo = todo[~s.terminated[slots[todo]]]
        return rewards, paid

    def _deal_round(self, s: MatchBatch, slots: np.ndarray) -> None:
        """Shuffle, deal three cards to each seat still in from the opener on, turn the next
        card up, and open the round (ThirtyOne._start_round's deal and _open_round)."""
        k = len(slots)
        cards = s.dealer.permutations(slots, C)
        lives = s.lives[slots]
        places = self._places(lives, s.opener[slots])
        take = np.where(places >= 0, HAND_SIZE * places, 0)[:, :, None] + np.arange(HAND_SIZE)
        rows = np.arange(k)[:, None, None]
        s.hands[slots] = np.where((places >= 0)[:, :, None], cards[rows, take], -1)
        top = HAND_SIZE * (lives > 0).sum(axis=1)
        rows = np.arange(k)
        upturned = cards[rows, top]
        # the deck is the rest after the upturned card; its next card is the shuffle's last
        size = C - top - 1
        at = np.minimum(top[:, None] + 1 + np.arange(C), C - 1)
        s.deck[slots] = cards[rows[:, None], at]
        s.deck_size[slots] = size
        s.discard[slots, 0] = upturned
        s.discard_size[slots] = 1
        s.in_discard[slots] = 0.0
        s.in_discard[slots, upturned] = 1.0
        s.discard_values[slots] = CARD_VALUE[upturned]
        s.shown[slots] = -1
        s.current_player[slots] = s.opener[slots]
        s.knocker[slots] = -1
        s.first_turn[slots] = True
        s.phase[slots] = 0
        s.drawn[slots] = -1
        s.from_discard[slots] = False
        s.round_turns[slots] = 0

    # --- the rules ------------------------------------------------------------------------
    def _update_mask(self, s: MatchBatch, slots: np.ndarray) -> None:
        row = np.where(s.phase[slots] == 1, s.from_discard[slots].astype(np.int64),
                       2 + (s.knocker[slots] >= 0))
        mask = MASKS[row]
        mask[s.terminated[slots]] = 0
        s.mask[slots] = mask

    def _compiled_args(self, s: MatchBatch) -> tuple:
        return (self.codes8, CARD_VALUE, s.lives, s.hands, s.shown, s.deck, s.deck_size,
                s.discard, s.discard_size, s.in_discard, s.discard_values, s.opener, s.knocker,
                s.first_turn, s.phase, s.drawn, s.from_discard, s.round_turns, s.rounds,
                s.winner, s.current_player, s.terminated)

    def _compiled_deals(self, s: MatchBatch) -> None:
        """The reshuffles, then the deals, that the kernels flagged (in that order: a game's
        shuffles come from its dealer in the order the scalar rules make them)."""
        kernels, game = self.kernels, self.game
        again = np.flatnonzero(s.need_reshuffle)
        if len(again):
            perms = s.dealer.ragged_permutations(again, s.discard_size[again] - 1, C)
            kernels.match_reshuffle(s.deck, s.deck_size, s.discard, s.discard_size,
                                    s.in_discard, s.discard_values, CARD_VALUE, again, perms)
            s.need_reshuffle[again] = False
        deal = np.flatnonzero(s.need_deal)
        while len(deal):
            perms = s.dealer.permutations(deal, C)
            kernels.match_deal(*self._compiled_args(s), s.chain, s.has_chain, s.need_deal, deal,
                               perms, self.n, self.lives, game.instant_31, self.shaped)
            deal = np.flatnonzero(s.need_deal)

    def _apply_compiled(self, s: MatchBatch, live: np.ndarray, action: np.ndarray) -> None:
        kernels, game = self.kernels, self.game
        kernels.match_step(*self._compiled_args(s), s.rewards, s.need_reshuffle, s.need_deal,
                           live, action, self.n, self.lives, game.max_round_turns,
                           game.instant_31, self.shaped)
        self._compiled_deals(s)
        kernels.match_finish(s.knocker, s.phase, s.from_discard, s.winner, s.terminated,
                             s.truncated, s.rewards, s.pending, s.has_pending, s.chain,
                             s.has_chain, s.steps, s.mask, live, self.n, self.shaped,
                             self.max_steps)

    def _env_arrays(self, s: MatchBatch) -> tuple:
        """The state arrays the compiled VectorEnv step adds to ``_compiled_args``, and its
        scratch arrays (kept on the state: slots, lengths, permutations, flags)."""
        scratch = getattr(s, "env_scratch", None)
        b = s.num_envs
        if scratch is None or len(scratch[0]) != b:
            scratch = (np.empty(b, np.int64), np.empty(b, np.int64), np.empty((b, C), np.int64),
                       np.empty(b, bool))
            s.env_scratch = scratch
        return (s.rewards, s.need_reshuffle, s.need_deal, s.truncated, s.pending, s.has_pending,
                s.chain, s.has_chain, s.steps, s.mask), scratch

    def random_opponents_step(self, s: MatchBatch, actions: np.ndarray, seat: np.ndarray,
                              env_pending: np.ndarray, learner_seat: int | None, encoding: str,
                              rng: np.random.Generator, max_redeals: int) -> tuple:
        """CardVectorEnv.step against random opponents in one compiled call (numba backend,
        a BatchDealer): the learners' legal ``actions`` in every game, then the opponents' moves
        and the new games, as the env's Python loop makes them; shuffles are drawn in the call
        from the dealer's generator. Returns (obs, reward, terminated, truncated,
        final_obs, payoff, score), or None if a slot needed more than ``max_redeals`` deals."""
        b = s.num_envs
        game = self.game
        x, scratch = self._env_arrays(s)
        tables = (CARD_11, CARD_31, CARD_SOURCE, SCORE_31_F32, UNSEEN_F32, self.lives_f32,
                  SOURCE_PLACE, encoding == "default")  # passed one by one: tuples type slowly
        obs = np.empty((b, self.observation_size(encoding)), np.float32)
        reward = np.empty(b)
        terminated = np.empty(b, bool)
        truncated = np.empty(b, bool)
        final_obs = np.zeros((b, self.observation_size(encoding)), np.float32)
        payoff = np.empty(b)
        score = np.empty(b)
        ok = self.kernels.match_env_step(
            *self._compiled_args(s), *x, *tables, rng, s.dealer.rng, *scratch, seat, env_pending,
            actions, -1 if learner_seat is None else learner_seat, obs, reward, terminated,
            truncated, final_obs, payoff, score, self.n, self.lives, game.max_round_turns,
            game.instant_31, self.shaped, self.max_steps, max_redeals)
        return (obs, reward, terminated, truncated, final_obs, payoff, score) if ok else None

    def _apply(self, s: MatchBatch, live: np.ndarray, action: np.ndarray) -> None:
        k = len(live)
        rewards = np.zeros((k, self.n))
        has = np.zeros(k, bool)  # rewards is not "None"
        p = s.current_player[live]
        phase0 = s.phase[live] == 0
        # phase 1 draw or take
        draw = np.flatnonzero(phase0 & (action == DRAW))
        if len(draw):
            at = live[draw]
            s.first_turn[at] = False
            s.deck_size[at] -= 1
            s.drawn[at] = s.deck[at, s.deck_size[at]]
            s.from_discard[at] = False
            s.phase[at] = 1
        take = np.flatnonzero(phase0 & (action == TAKE))
        if len(take):
            at = live[take]
            s.first_turn[at] = False
            s.discard_size[at] -= 1
            card = s.discard[at, s.discard_size[at]]
            s.in_discard[at, card] = 0.0
            s.discard_values[at] -= CARD_VALUE[card]
            s.drawn[at] = card
            s.from_discard[at] = True
            s.phase[at] = 1
        # a knock: under the gun the showdown comes at once, else the turn ends
        knock = np.flatnonzero(phase0 & (action == KNOCK))
        under = s.first_turn[live[knock]]
        gun, knock_ends = knock[under], knock[~under]
        if len(knock):
            s.knocker[live[knock]] = p[knock]
            s.first_turn[live[gun]] = False
            s.round_turns[live[gun]] += 1
        # phase 2: place the card (or throw a drawn one)
        place = np.flatnonzero(~phase0)
        if len(place):
            at, a, q = live[place], action[place], p[place]
            card = s.drawn[at]
            swap = np.flatnonzero(a != THROW)
            out = card.copy()
            if len(swap):
                sa, sq, slot = at[swap], q[swap], a[swap] - PLACE
                out[swap] = s.hands[sa, sq, slot]
                s.hands[sa, sq, slot] = card[swap]
                s.shown[sa, sq, slot] = np.where(s.from_discard[sa], card[swap], -1)
            size = s.discard_size[at]
            s.discard[at, size] = out
            s.discard_size[at] = size + 1
            s.in_discard[at, out] = 1.0
            s.discard_values[at] += CARD_VALUE[out]
            s.drawn[at] = -1
            s.phase[at] = 0
        ends = np.concatenate([knock_ends, place])
        showdown = [gun]
        if len(ends):
            showdown.append(self._end_turn(s, live, ends, p[ends]))
        showdown = np.concatenate(showdown)
        if len(showdown):
            settled, paid = self._showdown(s, live[showdown])
            rewards[showdown] = settled
            has[showdown] = paid
        pending = s.has_pending[live]
        if pending.any():  # rounds settled at the last deal are paid now, first
            at = live[pending]
            rewards[pending] = s.pending[at] + rewards[pending]
            s.has_pending[at] = False
        s.rewards[live] = rewards
        self._update_mask(s, live)

    def _end_turn(self, s: MatchBatch, live: np.ndarray, ends: np.ndarray,
                  p: np.ndarray) -> np.ndarray:
        """Refill an empty deck, then pass the turn; the indices of ``ends`` (into ``live``)
        whose round goes to the showdown."""
        at = live[ends]
        s.round_turns[at] += 1
        empty = s.deck_size[at] == 0
        if empty.any():
            self._reshuffle(s, at[empty])
        to_show = np.zeros(len(at), bool)
        if self.game.instant_31:
            hands = s.hands[at, p]
            to_show |= self.code(hands[:, 0], hands[:, 1], hands[:, 2]) == TWICE_31
        nxt = self._next_in(s.lives[at], p)
        knocker = s.knocker[at]
        to_show |= (nxt == knocker) | (
            (knocker < 0) & (s.round_turns[at] >= self.game.max_round_turns))
        go_on = ~to_show
        s.current_player[at[go_on]] = nxt[go_on]
        return ends[to_show]

    def _reshuffle(self, s: MatchBatch, slots: np.ndarray) -> None:
        """The discard pile but its top card, shuffled, becomes the deck."""
        below = s.discard_size[slots] - 1
        top = s.discard[slots, below]
        perm = s.dealer.ragged_permutations(slots, below, C)
        s.deck[slots] = s.discard[slots[:, None], perm]
        s.deck_size[slots] = below
        s.discard[slots, 0] = top
        s.discard_size[slots] = 1
        s.in_discard[slots] = 0.0
        s.in_discard[slots, top] = 1.0
        s.discard_values[slots] = CARD_VALUE[top]

    def _showdown(self, s: MatchBatch, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Settle the rounds of ``slots`` and deal the next; (rewards, whether any)."""
        rewards = self._settle(s, slots)
        paid = np.full(len(slots), self.shaped)
        going = np.flatnonzero(~s.terminated[slots])
        if len(going):
            dealt, dealt_paid = self._start_round(s, slots[going])
            if dealt_paid.any():
                rewards[going[dealt_paid]] = rewards[going[dealt_paid]] + dealt[dealt_paid]
                paid[going[dealt_paid]] = True
        if not self.shaped:
            over = s.terminated[slots]
            n = self.n
            payoff = np.where(self.seat == s.winner[slots][:, None], 1.0, -1.0 / (n - 1))
            rewards[over] = payoff[over]
            paid |= over
        return rewards, paid

    def _settle(self, s: MatchBatch, slots: np.ndarray) -> np.ndarray:
        """Show the hands, take lives, revive or eliminate (ThirtyOne._settle); the shaped
        rewards (zeros unless reward="original")."""
        n = self.n
        lives = s.lives[slots]
        inside = lives > 0
        hands = s.hands[slots]
        codes = np.where(inside, self.code(hands[..., 0], hands[..., 1], hands[..., 2]), 999)
        low = codes.min(axis=1)
        losers = inside & (codes == low[:, None])
        has_31 = (codes == TWICE_31).any(axis=1)
        losers = np.where(has_31[:, None], inside & (codes != TWICE_31), losers)
        knocker = s.knocker[slots]
        loss = np.where(self.seat == knocker[:, None], 2, 1)
        out = losers & (lives <= loss)
        lives = np.where(losers, np.where(lives > loss, lives - loss, 0), lives)
        knocked_out = out.any(axis=1)
        revived = knocked_out & ~(inside & (lives > 0)).any(axis=1)
        lives = np.where(revived[:, None] & inside, 1, lives)
        if self.shaped:  # from the lives after any revival, as ThirtyOne._settle
            rewards = self._round_rewards(codes, low, inside, knocker, lives)
        else:
            rewards = np.zeros((len(slots), n))
        s.lives[slots] = lives
        s.rounds[slots] += 1
        left = (lives > 0).sum(axis=1)
        over = left == 1
        if over.any():
            at = slots[over]
            winner = (lives[over] > 0).argmax(axis=1)
            s.terminated[at] = True
            s.winner[at] = winner
            s.current_player[at] = winner
            s.opener[at] = winner
            s.knocker[at] = -1
            s.first_turn[at] = False
        going = slots[~over]
        s.opener[going] = self._next_in(lives[~over], s.opener[going])
        return rewards

    def _round_rewards(self, codes, low, inside, knocker, lives) -> np.ndarray:
        """ThirtyOne.round_rewards for every seat still in (0 for the others)."""
        score = codes / 2
        low = (low / 2)[:, None]
        is_knocker = self.seat == knocker[:, None]
        r = 0.5 * (score - low)
        lowest = score == low
        r = np.where(lowest, r - np.where(is_knocker, 5.0, 2.0), r)
        r = np.where(~lowest & (score == 31.0), r + 10.0, r)
        r = np.where(~lowest & (score != 31.0) & is_knocker, r + 0.3 * (score - low), r)
        r = r - 0.3 * (self.lives - lives)
        r = r + np.where(lives <= 0, -2.0, 0.5)
        return np.where(inside, r, 0.0)

    def payoffs(self, s: MatchBatch) -> np.ndarray:
        n = self.n
        out = np.where(self.seat == s.winner[:, None], 1.0, -1.0 / (n - 1))
        return np.where(s.terminated[:, None], out, 0.0)

    def scores(self, s: MatchBatch) -> np.ndarray:
        """Lives left per seat."""
        return s.lives.astype(np.float64)

    # --- observations ---------------------------------------------------------------------
    def _observe_compiled(self, s: MatchBatch, encoding: str, rows: np.ndarray,
                          seats: np.ndarray) -> np.ndarray:
        obs = np.empty((len(rows), self.observation_size(encoding)), np.float32)
        return self.kernels.match_observe(
            self.codes8, CARD_11, CARD_31, CARD_VALUE, CARD_SOURCE, SCORE_31_F32, UNSEEN_F32,
            self.lives_f32, SOURCE_PLACE, s.lives, s.hands, s.shown, s.discard, s.discard_size,
            s.in_discard, s.discard_values, s.deck_size, s.opener, s.knocker, s.first_turn,
            s.phase, s.drawn, s.from_discard, s.round_turns, s.current_player,
            s.terminated | s.truncated, rows, seats, self.n, self.game.max_round_turns,
            encoding == "default", obs)

    def _observe(self, s: MatchBatch, encoding: str, seats: np.ndarray) -> np.ndarray:
        k = len(seats)
        rows = np.arange(k)
        live = ~(s.terminated | s.truncated)
        phase = s.phase == 1
        to_act = (s.current_player == seats) & live
        drawn = np.where(to_act & phase, s.drawn, -1)
        taken = np.where(phase & s.from_discard, s.drawn, -1)
        size = s.discard_size
        top = np.where(size > 0, s.discard[rows, np.maximum(size - 1, 0)], -1)
        hand = s.hands[rows, seats]  # (k, 3), -1s without a hand
        places = self._places(s.lives, seats)
        if encoding == "default":
            return self._default(s, seats, hand, drawn, taken, top, places)
        return self._original(s, seats, hand, drawn, taken, top, places)

    def _known(self, s: MatchBatch, taken: np.ndarray) -> np.ndarray:
        """(k, n, 4) cards each seat is known to hold: its shown slots, then the card it took
        and has not placed (the player to act only), -1 elsewhere."""
        known = np.concatenate([s.shown, np.full(s.shown.shape[:2] + (1,), -1)], axis=2)
        acting = np.arange(len(taken))
        known[acting, s.current_player, HAND_SIZE] = taken
        return known

    def _default(self, s, seats, hand, drawn, taken, top, places) -> np.ndarray:
        k, n = len(seats), self.n
        rows = np.arange(k)
        obs = np.zeros((k, self.observation_size()), np.float32)
        has_hand = hand[:, 0] >= 0
        obs[:, 0:12] = CARD_11[hand].reshape(k, 12)
        obs[:, 12:16] = CARD_11[top]
        obs[:, 16:20] = CARD_11[drawn]
        a, b, c = hand[:, 0], hand[:, 1], hand[:, 2]
        obs[:, 20:24] = (CARD_31[a] + CARD_31[b]) + CARD_31[c]
        obs[:, 24] = np.where(has_hand, SCORE_31_F32[self.code(a, b, c)], 0.0)
        card = np.where(drawn >= 0, drawn, top)
        option = has_hand & (card >= 0)
        for slot in range(HAND_SIZE):
            trial = hand.copy()
            trial[:, slot] = card
            code = self.code(trial[:, 0], trial[:, 1], trial[:, 2])
            obs[:, 25 + slot] = np.where(option, SCORE_31_F32[code], 0.0)
        obs[:, 28:80] = s.in_discard
        # what I have seen per suit: the discard pile, the card I must place, my hand, and
        # the cards known in the others' hands (those still in)
        known = self._known(s, taken)
        others = (places > 0)
        known_seen = np.where(others[:, :, None], known, -1)
        seen = (s.discard_values + CARD_VALUE[drawn] + CARD_VALUE[hand].sum(axis=1)
                + CARD_VALUE[known_seen].sum(axis=(1, 2)))
        obs[:, 80:84] = UNSEEN_F32[seen]
        # opponent_known, block by place
        sums = CARD_31[known[..., 0]]
        for j in range(1, HAND_SIZE + 1):
            sums = sums + CARD_31[known[..., j]]
        block = np.zeros((k, n, NUM_SUITS), np.float32)
        r, q = np.nonzero(others)
        block[r, places[r, q] - 1] = sums[r, q]
        start = 84
        obs[:, start : start + 4 * (n - 1)] = block[:, : n - 1].reshape(k, 4 * (n - 1))
        start += 4 * (n - 1)
        # lives, knocker, acting, opener by place
        r, q = np.nonzero(places >= 0)
        lives_by_place = np.zeros((k, n), np.float32)
        lives_by_place[r, places[r, q]] = self.lives_f32[s.lives[r, q]]
        obs[:, start : start + n] = lives_by_place
        for j, who in enumerate((s.knocker, s.current_player, s.opener), 1):
            place = np.where(who >= 0, places[rows, np.maximum(who, 0)], -1)
            hit = np.flatnonzero(place >= 0)
            obs[hit, start + j * n + place[hit]] = 1.0
        start += 4 * n
        obs[:, start] = s.phase
        obs[:, start + 1] = (s.phase == 1) & (taken >= 0)
        obs[:, start + 2] = s.first_turn
        obs[:, start + 3] = s.deck_size * _INV_C
        turns = np.minimum(s.round_turns * (1.0 / self.game.max_round_turns), 1.0)
        obs[:, start + 4] = np.where(s.first_turn, 0.0, turns)
        return obs

    def _expected_values(self, s, seats, hand, taken, places) -> np.ndarray:
        """(k, 4) float64: source 001's expected value per suit in the source's order."""
        k = len(seats)
        sums = s.discard_values + CARD_VALUE[hand].sum(axis=1)
        seen = s.discard_size + (hand[:, 0] >= 0) * HAND_SIZE
        others = places > 0
        shown = np.where(others[:, :, None], s.shown, -1)
        sums = sums + CARD_VALUE[shown].sum(axis=(1, 2))
        seen = seen + (shown >= 0).sum(axis=(1, 2))
        rows = np.arange(k)
        acting_seen = places[rows, s.current_player] >= 0  # acting == me or in my opponents
        counted = (taken >= 0) & acting_seen
        sums = sums + np.where(counted[:, None], CARD_VALUE[taken], 0)
        seen = seen + counted
        unseen = C - seen
        ev = np.where(unseen[:, None] > 0, (SUIT_TOTAL - sums) / np.maximum(unseen, 1)[:, None],
                      0.0)
        out = np.empty_like(ev)
        out[:, list(SOURCE_SUIT_PLACE)] = ev
        return out

    def _original(self, s, seats, hand, drawn, taken, top, places) -> np.ndarray:
        k = len(seats)
        rows = np.arange(k)
        obs = np.zeros((k, 79), np.float32)
        ev = self._expected_values(s, seats, hand, taken, places).astype(np.float32)
        # the next and the previous seat still in (my first and last opponent)
        count = places.max(axis=1)
        has_left = count >= 1
        left_seat = np.argmax(places == 1, axis=1)
        right_seat = np.argmax(places == np.maximum(count, 1)[:, None], axis=1)
        left = np.where(has_left[:, None], s.shown[rows, left_seat], -1)
        right = np.where(has_left[:, None], s.shown[rows, right_seat], -1)
        swap = drawn >= 0
        w = np.flatnonzero(swap)
        obs[w, 0] = 1.0
        obs[w, 47:59] = CARD_SOURCE[hand[w]].reshape(len(w), 12)
        obs[w, 59:63] = CARD_SOURCE[drawn[w]]
        obs[w, 63:67] = ev[w]
        obs[w, 67:79] = CARD_SOURCE[left[w]].reshape(len(w), 12)
        a = np.flatnonzero(~swap)
        obs[a, 1:13] = CARD_SOURCE[hand[a]].reshape(len(a), 12)
        obs[a, 13:17] = CARD_SOURCE[top[a]]
        obs[a, 17:21] = ev[a]
        obs[a, 21] = s.first_turn[a]
        # called: the knocker's place in the round's turn order from the opener (seat order
        # of the seats still in), -1 if nobody knocked
        inside = s.lives[a] > 0
        index = np.cumsum(inside, axis=1) - 1
        knocker, opener = s.knocker[a], s.opener[a]
        ra = np.arange(len(a))
        called = (index[ra, np.maximum(knocker, 0)] - index[ra, opener]) % inside.sum(axis=1)
        obs[a, 22] = np.where(knocker >= 0, called, -1)
        obs[a, 23:35] = CARD_SOURCE[left[a]].reshape(len(a), 12)
        obs[a, 35:47] = CARD_SOURCE[right[a]].reshape(len(a), 12)
        return obs


# --- batched rule agents: each reads only what the acting seat may know ------------------------
def _trials(engine: ThirtyOneVector, hand: np.ndarray, card: np.ndarray) -> np.ndarray:
    """(k, 3) twice the score of the hand with ``card`` in slot 0, 1, 2."""
    out = np.empty(hand.shape, np.int64)
    for slot in range(HAND_SIZE):
        trial = hand.copy()
        trial[:, slot] = card
        out[:, slot] = engine.code(trial[:, 0], trial[:, 1], trial[:, 2])
    return out


def greedy(engine: ThirtyOneVector, s: MatchBatch, rng: np.random.Generator) -> np.ndarray:
    """GreedyAgent for every match: knock with 31, else draw; place for the best score."""
    rows = np.arange(s.num_envs)
    hand = s.hands[rows, s.current_player]
    safe = np.maximum(hand, 0)
    now = engine.code(safe[:, 0], safe[:, 1], safe[:, 2])
    mask = s.mask
    phase1 = np.where((mask[:, KNOCK] != 0) & (now == TWICE_31), KNOCK, DRAW)
    trials = _trials(engine, safe, np.maximum(s.drawn, 0))
    best_slot = np.full(s.num_envs, -1)
    best = now.copy()
    for slot in range(HAND_SIZE):  # the first slot with the strictly best score above now
        better = trials[:, slot] > best
        best_slot = np.where(better, slot, best_slot)
        best = np.where(better, trials[:, slot], best)
    least_bad = PLACE + trials.argmax(axis=1)
    phase2 = np.where(best_slot >= 0, PLACE + best_slot,
                      np.where(mask[:, THROW] != 0, THROW, least_bad))
    return np.where(s.phase == 1, phase2, phase1)


def expected_value(engine: ThirtyOneVector, s: MatchBatch,
                   rng: np.random.Generator) -> np.ndarray:
    """ExpectedValueAgent for every match: knock on a strong hand, take the discard when it
    beats the expected draw, place for the best score (ties: the higher other cards)."""
    b = s.num_envs
    rows = np.arange(b)
    me = s.current_player
    hand = np.maximum(s.hands[rows, me], 0)
    mask = s.mask
    drawn = np.maximum(s.drawn, 0)
    # phase 2: the best of keeping (throw) or placing in a slot by (score, other cards, -slot)
    trial_values = VALUE[hand].sum(axis=1)[:, None] - VALUE[hand] + VALUE[drawn][:, None]
    keys = _trials(engine, hand, drawn) * 1000 + trial_values * 10 + (2 - np.arange(HAND_SIZE))
    now = engine.code(hand[:, 0], hand[:, 1], hand[:, 2])
    keep = now * 1000 + VALUE[hand].sum(axis=1) * 10 + 3
    keep = np.where(mask[:, THROW] != 0, keep, -1)
    best = keys.argmax(axis=1)
    place = np.where(keep > keys.max(axis=1), THROW, PLACE + best)
    # phase 1
    level = np.minimum(31.0, ExpectedValueAgent.knock_at
                       + s.round_turns // ExpectedValueAgent.knock_every)
    knock = (mask[:, KNOCK] != 0) & (now / 2 >= level)
    top = s.discard[rows, np.maximum(s.discard_size - 1, 0)]
    taken = _trials(engine, hand, top).max(axis=1) / 2
    unseen = s.in_discard == 0
    unseen[rows[:, None], hand] = False
    places = engine._places(s.lives, me)
    others = np.where((places > 0)[:, :, None], s.shown, -1).reshape(b, -1)
    shown_rows = np.repeat(rows, others.shape[1])
    hit = others.reshape(-1) >= 0
    unseen[shown_rows[hit], others.reshape(-1)[hit]] = False
    table = engine.table
    h0, h1, h2 = hand[:, 0:1], hand[:, 1:2], hand[:, 2:3]
    cards = np.arange(C)[None, :]
    best_draw = np.maximum(
        np.maximum(table[(cards * C + h1) * C + h2], table[(h0 * C + cards) * C + h2]),
        np.maximum(table[(h0 * C + h1) * C + cards], (now / 2)[:, None].astype(np.float32)))
    count = unseen.sum(axis=1)
    total = np.where(unseen, best_draw, 0.0).sum(axis=1)  # exact: halves summing to < 2**12
    mean = (total / np.maximum(count, 1)).astype(np.float32)
    draw_or_take = np.where((count == 0) | (taken >= mean), TAKE, DRAW)
    phase1 = np.where(knock, KNOCK, draw_or_take)
    return np.where(s.phase == 1, place, phase1)


AGENTS = {"random": random_actions, "greedy": greedy, "expected_value": expected_value}


def vector_env(num_envs: int = 1, **kwargs: Any):
    """The Gymnasium VectorEnv of Thirty-One (the registry's vector entry point)."""
    from card_envs.vector.gym_env import make_vector_env

    return make_vector_env("thirty_one", num_envs=num_envs, **kwargs)
