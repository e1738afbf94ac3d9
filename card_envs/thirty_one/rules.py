"""Rules of Thirty-One (31): 2-7 players, 3 lives each; the episode is the whole match.

Cards are the standard ints ``suit * 13 + rank`` of ``card_envs.core.cards`` (ranks 2..A,
suits S H D C). Values: 2-10 face value, J/Q/K 10, A 11. A hand is three cards in slots 0-2;
its score is the best sum of values in one suit (at most 31). With ``three_of_a_kind`` three
equal ranks score 30.5.

A turn is two decisions by the same player. Phase 1: draw from the deck (0), take the top
discard (1) or knock (2). Phase 2, after a draw or a take: put the card into slot 0-2 (3-5),
the replaced card going face up on the discard pile, or discard a drawn card (6; not after a
take). Only the drawer sees a card drawn from the deck, and only in phase 2.

Knocking is illegal once someone has knocked. A knock as the round's very first action
("under the gun") ends the round at once; otherwise every other player has one more turn.
Showdown: if anyone holds 31 everyone else loses a life; otherwise everyone tied at the lowest
score does. A knocker who loses loses 2. If every player in the round would be at 0, all
return to 1. Players at 0 are out; the last one in wins. The next round opens with the next
player still in after the previous opener. An empty deck is refilled at the end of the turn by
shuffling the discard pile except its top card. A round without a knock ends in a showdown
without a knocker after ``max_round_turns`` turns; the match is cut at ``max_steps`` steps.
"""

from __future__ import annotations

import functools
import struct
from typing import NamedTuple

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_RANKS, NUM_SUITS, card_name, shuffled
from card_envs.core.game import Game, State, View, check_choice, check_int

DRAW, TAKE, KNOCK = 0, 1, 2
PLACE = 3  # PLACE + k puts the card into slot k
THROW = 6  # discard the drawn card
NUM_ACTIONS = 7
HAND_SIZE = 3
NO_CARD = -1
THIRTY_ONE = 31.0
TWICE_31 = 62  # a score code (twice the score, see SCORE_CODES) of 31
THREE_OF_A_KIND = 30.5
SUIT_TOTAL = 95  # 2 + 3 + ... + 9 + 4 * 10 + 11: the value of one whole suit

RANKS = np.arange(DECK_SIZE) % NUM_RANKS
SUITS = np.arange(DECK_SIZE) // NUM_RANKS
VALUES = np.where(RANKS == NUM_RANKS - 1, 11, np.minimum(RANKS + 2, 10))
VALUE = VALUES.tolist()  # Python ints: faster than numpy scalars in the per-step code
SUIT = SUITS.tolist()
# Values per suit packed in one int, a byte per suit (S lowest): adding two packs adds suit by
# suit (a whole suit is worth 95). CARD_PACK[card]: the card's value in its suit's byte.
CARD_PACK = [VALUE[card] << 8 * SUIT[card] for card in range(DECK_SIZE)] + [0]  # [-1]: no card
# The discard pile's membership as one int, bit c for card c (see ThirtyOneState.discard_bits).
CARD_BIT = [1 << card for card in range(DECK_SIZE)]
SUIT_MASK = (1 << NUM_RANKS) - 1


@functools.cache
def pile_chunks() -> tuple[bytes, ...]:
    """Discard bits as float32 bytes, 13 cards (a suit) at a time: ``pile_chunks()[x]`` holds
    the 13 bits of x as 0.0 / 1.0 (bit j: card j of the suit); built once per process (8,192
    entries, for the encoder's discard_pile piece and ``bits_array``)."""
    return tuple(struct.pack(f"{NUM_RANKS}f", *[(x >> j) & 1 for j in range(NUM_RANKS)])
                 for x in range(1 << NUM_RANKS))


def bits_array(bits: int) -> np.ndarray:
    """The 0/1 membership of every card in a discard pile's bits, as a new read-only float32
    array (one number per card)."""
    chunks = pile_chunks()
    return np.frombuffer(chunks[bits & SUIT_MASK] + chunks[bits >> 13 & SUIT_MASK]
                         + chunks[bits >> 26 & SUIT_MASK] + chunks[bits >> 39], np.float32)


def _score_table(three_of_a_kind: bool) -> np.ndarray:
    """SCORE[a, b, c]: the score of the hand (a, b, c), for every triple of cards."""
    a, b, c = np.ix_(range(DECK_SIZE), range(DECK_SIZE), range(DECK_SIZE))
    best = np.zeros((DECK_SIZE,) * 3, dtype=np.int64)
    for suit in range(NUM_SUITS):
        of_suit = VALUES * (SUITS == suit)
        best = np.maximum(best, of_suit[a] + of_suit[b] + of_suit[c])
    best = best.astype(np.float32)
    if three_of_a_kind:
        # three equal ranks are three suits, so their suit score is at most 11 < 30.5
        same = (RANKS[a] == RANKS[b]) & (RANKS[b] == RANKS[c])
        best[np.broadcast_to(same, best.shape)] = THREE_OF_A_KIND
    return best


SCORE_TABLES = (_score_table(False), _score_table(True))
# twice each score as one byte, flat index (a * 52 + b) * 52 + c: a bytes item is a Python int,
# much faster to read in the per-step code than a numpy scalar
SCORE_CODES = tuple(bytes((2 * table).astype(np.uint8).ravel()) for table in SCORE_TABLES)


def hand_score(hand, three_of_a_kind: bool = False) -> float:
    """The score of a three-card hand: its best one-suit sum, or 30.5 for three of a kind."""
    a, b, c = hand  # twice the score, as a byte of SCORE_CODES: no numpy scalar per call
    return SCORE_CODES[three_of_a_kind][(a * DECK_SIZE + b) * DECK_SIZE + c] / 2


def suit_values(cards) -> list[int]:
    """The value of ``cards`` per suit (S H D C)."""
    sums = [0] * NUM_SUITS
    for card in cards:
        sums[SUIT[card]] += VALUE[card]
    return sums


def unpack_suits(pack: int) -> list[int]:
    """The values per suit (S H D C) of a pack (see CARD_PACK)."""
    return [pack & 0xFF, pack >> 8 & 0xFF, pack >> 16 & 0xFF, pack >> 24]


def _frozen(bits: list[int]) -> np.ndarray:
    mask = np.array(bits, dtype=np.int8)
    mask.flags.writeable = False
    return mask


MASK_TURN = _frozen([1, 1, 1, 0, 0, 0, 0])
MASK_TURN_AFTER_KNOCK = _frozen([1, 1, 0, 0, 0, 0, 0])
MASK_PLACE_DRAWN = _frozen([0, 0, 0, 1, 1, 1, 1])
MASK_PLACE_TAKEN = _frozen([0, 0, 0, 1, 1, 1, 0])
NO_ACTIONS = _frozen([0] * NUM_ACTIONS)


class Showdown(NamedTuple):
    """A settled round (public: every hand is shown at a showdown)."""

    round: int  # 1 for the match's first round
    hands: tuple[tuple[int, ...], ...]  # per seat; () for a player who was out
    scores: tuple[float | None, ...]  # per seat; None for a player who was out
    lost: tuple[int, ...]  # lives lost per seat
    knocker: int  # -1: nobody knocked (turn cap or a shown 31)
    revived: bool  # every player would have been at 0: all returned to 1

    @classmethod
    def of(cls, settled: tuple) -> Showdown:
        """The record of ``ThirtyOneState.settled``: (round, hands, score codes, lost,
        knocker, revived) with hands and score codes as lists per seat."""
        rounds, hands, codes, lost, knocker, revived = settled
        scores = tuple(None if code is None else code / 2 for code in codes)
        return cls(rounds, tuple(map(tuple, hands)), scores, tuple(lost), knocker, revived)


class _PublicRecords:
    """What a state and a view both derive from their ``settled`` and ``discard_pack``."""

    __slots__ = ()
    settled: tuple | None
    discard_pack: int

    @property
    def showdown(self) -> Showdown | None:
        """The last settled round (every hand shown), or None."""
        settled = self.settled
        return None if settled is None else Showdown.of(settled)

    @property
    def discard_values(self) -> list[int]:
        """The value of the discard pile per suit (S H D C), as a new list."""
        return unpack_suits(self.discard_pack)


class ThirtyOneState(_PublicRecords, State):
    """A match in progress.

    deck: the draw pile, next card last (hidden); discard: the discard pile, top last;
    discard_bits: its membership as an int (bit c: card c; the ``in_discard`` property gives it
    as an array); discard_pack: the value of the discard pile per suit packed in an int (see
    CARD_PACK; the ``discard_values`` property lists them S H D C), kept up to date like the
    bits; hands: per seat its three cards by slot ([] once out); shown: per seat a tuple, per
    slot the card if it was taken from the discard pile (public), else -1 (a changed row is a
    new tuple); epochs: per seat and slot the reshuffle count of the round when the slot was
    filled unseen (lets ``randomize_hidden`` redraw only consistent cards), or None before the
    round's first reshuffle (every slot 0: made at the reshuffle); lives: per seat (a tuple);
    seating: the seats still in, ascending; opponents: per seat, the seats still in, in turn
    order after it; places: per seat, every seat's place counted from it; deals: per seat, where
    each hand lies in the deck it deals (both see ``_seat_tables``); opener: who opened the
    round; knocker: -1 or the seat that knocked; first_turn: no action yet this round; phase: 0
    (draw/take/knock) or 1 (place the card); drawn/from_discard: the card to place and whether
    it was taken from the discard pile; round_turns: turns played this round; rounds: rounds
    settled; epoch: reshuffles this round; pending: rewards of rounds settled at a deal (a dealt
    31), paid with the next step; settled: the last settled round as (round, hands, score codes,
    lost, knocker, revived), made of tuples, or None; the ``showdown`` property makes it a
    Showdown when read (most never are); winner: the last player in, or -1.
    """

    __slots__ = ("deck", "discard", "discard_bits", "discard_pack", "hands", "shown",
                 "epochs", "lives", "seating", "opponents", "places", "deals", "opener", "knocker",
                 "first_turn", "phase", "drawn", "from_discard", "round_turns", "rounds", "epoch",
                 "pending", "settled", "winner")

    @property
    def in_discard(self) -> np.ndarray:
        """1.0 for every card in the discard pile, 0.0 for the others (a new read-only float32
        array, from ``discard_bits``)."""
        return bits_array(self.discard_bits)

    def copy(self) -> ThirtyOneState:
        """An independent copy (lists copied by hand: much faster than deepcopy)."""
        new = super().copy()
        new.deck = self.deck[:]
        new.discard = self.discard[:]
        new.hands = [h[:] for h in self.hands]
        new.shown = self.shown[:]  # of tuples
        if self.epochs is not None:
            new.epochs = [h[:] for h in self.epochs]
        new.lives = self.lives  # a tuple
        return new


class ThirtyOneView(_PublicRecords, View):
    """What one seat may know: its own hand, the card it must place (its phase 2 only), the
    discard pile, the cards each player took from the discard pile and still holds, lives, the
    knocker, whose turn, the phase and the last showdown. Never the deck or unseen cards.

    ``taken`` is the card the player to act took from the discard pile and has not placed yet
    (public); ``drawn`` is the card this seat must place now (-1 unless it is in phase 2).
    ``discard_pack`` is the value of the discard pile per suit as a pack (see CARD_PACK), which
    ``discard_values`` lists (S H D C). ``opponents`` lists the other seats still in the match
    in turn order after this seat;
    ``places[seat]`` is that seat's place from this one (0 itself, k the k-th next still in,
    -1 out; ``places[-1]`` is -1).
    """

    __slots__ = ("three_of_a_kind", "to_act",
                 "hand", "drawn", "taken", "top", "discard_bits", "discard_pack", "discard_size",
                 "deck_size", "shown", "lives", "seating", "opponents", "places", "acting",
                 "knocker", "first_turn", "phase", "opener", "round_turns", "rounds", "settled",
                 "winner")

    @property
    def in_discard(self) -> np.ndarray:
        """1.0 for every card in the discard pile, 0.0 for the others (a new read-only float32
        array, from ``discard_bits``)."""
        return bits_array(self.discard_bits)

    def score(self) -> float:
        """This seat's hand score (0 once out of the match)."""
        return hand_score(self.hand, self.three_of_a_kind) if self.hand else 0.0

    def known_cards(self, seat: int) -> list[int]:
        """The cards ``seat`` is publicly known to hold (taken from the discard pile)."""
        cards = [c for c in self.shown[seat] if c >= 0]
        if seat == self.acting and self.taken >= 0:
            cards.append(self.taken)
        return cards


class ThirtyOne(Game):
    """Thirty-One, the match of source 001 (see the module docstring, docs/games/thirty_one.md).

    Args:
        num_players: 2..7 (default 3).
        lives: lives each player starts with, 1..9 (default 3).
        three_of_a_kind: False (default) or True: three equal ranks score 30.5.
        instant_31: False (default) or True: a player holding 31 after their turn, or dealt
            31, shows it at once and the round ends in a showdown.
        reward: ``"default"`` (winner +1, others -1/(n-1), at the end) or ``"original"`` (the
            source's shaped reward for every player at every round's end, instead).
        max_round_turns: turns after which a round without a knock ends in a showdown.
        max_steps: steps after which the match is truncated (pays 0).
    """

    name = "thirty_one"
    score_name = "lives left"
    num_actions = NUM_ACTIONS

    # the bool options default to the int 0 so that they validate like every int argument
    def __init__(self, num_players: int = 3, lives: int = 3, three_of_a_kind: bool = False,
                 instant_31: bool = False, reward: str = "default", max_round_turns: int = 100,
                 max_steps: int = 10_000):
        self.num_players = check_int("num_players", num_players, 2, 7)
        self.lives = check_int("lives", lives, 1, 9)
        check_choice("three_of_a_kind", three_of_a_kind, (False, True))
        check_choice("instant_31", instant_31, (False, True))
        check_choice("reward", reward, ("default", "original"))
        self.three_of_a_kind = bool(three_of_a_kind)
        self.instant_31 = bool(instant_31)
        self.reward = reward
        self.rewards_sum = "shaped" if reward == "original" else "payoffs"
        self.max_round_turns = check_int("max_round_turns", max_round_turns, 1, 10_000)
        self.max_steps = check_int("max_steps", max_steps, 1, 100_000)
        self.min_payoff = -1.0 / (self.num_players - 1)
        self.max_payoff = 1.0
        self._score_codes = SCORE_CODES[self.three_of_a_kind]
        self._seatings: dict[tuple[int, ...], tuple[tuple, tuple, tuple]] = {}
        # a round's fresh shown, per seat and slot (copied into lists at each deal)
        self._no_shown = ((NO_CARD,) * HAND_SIZE,) * self.num_players
        self._config = {"num_players": self.num_players, "lives": self.lives,
                        "three_of_a_kind": self.three_of_a_kind, "instant_31": self.instant_31,
                        "reward": reward, "max_round_turns": self.max_round_turns,
                        "max_steps": self.max_steps}

    def score(self, hand) -> float:
        """The score of a three-card hand under this game's options."""
        return self._score_codes[(hand[0] * DECK_SIZE + hand[1]) * DECK_SIZE + hand[2]] / 2

    # --- dealing --------------------------------------------------------------------------
    def init(self, rng: np.random.Generator) -> ThirtyOneState:
        n = self.num_players
        s = self._empty_state([self.lives] * n)
        s.pending = self._start_round(s, rng)
        return s

    def _empty_state(self, lives: list[int], opener: int = 0) -> ThirtyOneState:
        """A match state without a round: the caller puts the hands and the deck in place and
        calls ``_open_round``."""
        s = ThirtyOneState(opener)
        s.lives = tuple(lives)
        s.opener, s.rounds, s.pending, s.settled, s.winner = opener, 0, None, None, -1
        self._reseat(s)
        return s

    def deal(self, hands: list[list[int]], discard: list[int] | None = None,
             deck: list[int] | None = None, lives: list[int] | None = None,
             opener: int = 0) -> ThirtyOneState:
        """A round-start state with the given hands ([] for a player who is out), for tests.

        ``discard`` is the discard pile, top last (default: the lowest unused card); ``deck``
        the draw pile, next card first; cards given nowhere go under the deck, ascending.
        """
        n = self.num_players
        if lives is None:
            lives = [self.lives if hands[p] else 0 for p in range(n)]
        s = self._empty_state(lives, opener)
        used = [c for hand in hands for c in hand] + list(discard or []) + list(deck or [])
        for card in set(used):
            if used.count(card) > 1:
                raise ValueError(f"deal: {card_name(card, False)} is given twice")
        rest = [c for c in range(DECK_SIZE) if c not in set(used)]
        if discard is None:
            discard, rest = rest[:1], rest[1:]
        draw_order = list(deck or []) + rest
        s.hands = [list(h) for h in hands]
        s.deck = draw_order[::-1]
        self._open_round(s, list(discard))
        return s

    def _start_round(self, s: ThirtyOneState, rng: np.random.Generator) -> np.ndarray | None:
        """The rewards of rounds settled at the deal (instant_31 and a dealt 31), after dealing the
        next round that does not end at once (or up to the match's end)."""
        rewards = None
        while True:
            cards = shuffled(range(DECK_SIZE), rng)
            s.hands = list(map(cards.__getitem__, s.deals[s.opener]))
            top = HAND_SIZE * len(s.seating)
            s.deck = cards[top + 1 :]
            self._open_round(s, [cards[top]])
            if not (self.instant_31 and any(self.score(s.hands[q]) == THIRTY_ONE
                                            for q in s.seating)):
                return rewards
            rewards = _add(rewards, self._settle(s))
            if s.terminal:
                return rewards

    def _open_round(self, s: ThirtyOneState, discard: list[int]) -> None:
        """Reset the per-round fields for hands and deck already in place."""
        s.discard = discard
        _lay_pile(s)
        s.shown = list(self._no_shown)
        s.epochs = None
        s.player = s.opener
        s.knocker, s.first_turn, s.phase = -1, True, 0
        s.drawn, s.from_discard = NO_CARD, False
        s.round_turns, s.epoch = 0, 0

    def _reseat(self, s: ThirtyOneState) -> None:
        """Recompute who is still in and everyone's opponents in turn order."""
        seating = tuple(filter(s.lives.__getitem__, range(self.num_players)))  # lives > 0
        tables = self._seatings.get(seating)
        if tables is None:  # a few seatings per match: build each once per game object
            tables = self._seatings[seating] = self._seat_tables(seating)
        s.seating, (s.opponents, s.places, s.deals) = seating, tables

    def _seat_tables(self, seating: tuple[int, ...]) -> tuple[tuple, tuple, tuple]:
        """Per seat: the seats still in after it in turn order, every seat's place from it, and
        where each seat's hand lies in a shuffled deck when it opens the round.

        A place is 0 for the seat itself, k for the k-th next seat still in, -1 for a seat that
        is out; each places tuple has one more -1 at the end, so ``places[-1]`` (no seat) is -1.
        A deal is a slice per seat: cards 3k to 3k + 3 for place k, none for a seat that is out.
        """
        n = self.num_players
        opponents, places, deals = [], [], []
        for p in range(n):
            after = tuple(q for q in [*range(p + 1, n), *range(p)] if q in seating)
            place = [-1] * (n + 1)
            place[p] = 0
            for k, q in enumerate(after, 1):
                place[q] = k
            opponents.append(after)
            places.append(tuple(place))
            deals.append(tuple(slice(HAND_SIZE * k, HAND_SIZE * k + HAND_SIZE) if k >= 0
                               else slice(0, 0) for k in place[:n]))
        return tuple(opponents), tuple(places), tuple(deals)

    # --- the rules ------------------------------------------------------------------------
    def _legal_mask(self, s: ThirtyOneState) -> np.ndarray:
        if s.phase:
            return MASK_PLACE_TAKEN if s.from_discard else MASK_PLACE_DRAWN
        return MASK_TURN if s.knocker < 0 else MASK_TURN_AFTER_KNOCK

    def _apply(self, s: ThirtyOneState, action: int, rng: np.random.Generator) -> np.ndarray | None:
        pending = s.pending
        if pending is not None:
            s.pending = None
        p = s.player
        if s.phase == 0:
            if action == KNOCK:
                return _add(pending, self._knock(s, p, rng))
            s.first_turn = False
            if action == DRAW:
                s.drawn, s.from_discard = s.deck.pop(), False
            else:
                card = s.discard.pop()
                s.discard_bits ^= CARD_BIT[card]  # the top card leaves the pile
                s.discard_pack -= CARD_PACK[card]
                s.drawn, s.from_discard = card, True
            s.phase = 1
            return pending
        out = card = s.drawn
        if action != THROW:
            slot = action - PLACE
            hand = s.hands[p]
            out = hand[slot]
            hand[slot] = card
            shown, row = card if s.from_discard else NO_CARD, s.shown[p]
            if row[slot] != shown:  # rows are tuples: views hand them out as they are
                s.shown[p] = row[:slot] + (shown,) + row[slot + 1 :]
            if s.epoch:  # before the first reshuffle every slot's epoch is 0
                s.epochs[p][slot] = s.epoch
        s.discard.append(out)  # the card thrown or replaced goes face up
        s.discard_bits |= CARD_BIT[out]
        s.discard_pack += CARD_PACK[out]
        s.drawn, s.phase = NO_CARD, 0
        rewards = self._end_turn(s, p, rng)
        return rewards if pending is None else _add(pending, rewards)

    def _knock(self, s: ThirtyOneState, p: int, rng: np.random.Generator) -> np.ndarray | None:
        """Knock; under the gun (the round's first action) the showdown comes at once."""
        s.knocker = p
        if s.first_turn:
            s.first_turn = False
            s.round_turns += 1
            return self._showdown(s, rng)
        return self._end_turn(s, p, rng)

    def _end_turn(self, s: ThirtyOneState, p: int, rng: np.random.Generator) -> np.ndarray | None:
        """Refill an empty deck, then pass the turn or hold the showdown."""
        s.round_turns += 1
        if not s.deck:
            self._reshuffle(s, rng)
        if self.instant_31 and self.score(s.hands[p]) == THIRTY_ONE:
            return self._showdown(s, rng)
        nxt = s.opponents[p][0]
        if nxt == s.knocker or (s.knocker < 0 and s.round_turns >= self.max_round_turns):
            return self._showdown(s, rng)
        s.player = nxt
        return None

    def _reshuffle(self, s: ThirtyOneState, rng: np.random.Generator) -> None:
        """The discard pile but its top card, shuffled, becomes the deck."""
        top = s.discard.pop()
        below = s.discard
        s.deck = shuffled(below, rng)
        s.discard = [top]
        _lay_pile(s)
        if not s.epoch:
            s.epochs = [[0] * HAND_SIZE for _ in range(self.num_players)]
        s.epoch += 1

    def _showdown(self, s: ThirtyOneState, rng: np.random.Generator) -> np.ndarray | None:
        """Settle the round and deal the next; the rewards this earns."""
        rewards = self._settle(s)
        if not s.terminal:
            rewards = _add(rewards, self._start_round(s, rng))
        if s.terminal and self.reward == "default":
            return self.payoffs(s)
        return rewards

    def _settle(self, s: ThirtyOneState) -> np.ndarray | None:
        """Show the hands, take lives, revive or eliminate; the shaped rewards if asked for."""
        n, seats, hands, knocker = self.num_players, s.seating, s.hands, s.knocker
        lives = list(s.lives)
        codes = self._score_codes  # self.score, inline, as twice the score
        scores = [None] * n  # per seat its score code; None for a player who was out
        low, losers = TWICE_31 + 1, []  # the lowest score code and who holds it
        for q in seats:
            a, b, c = hands[q]
            code = scores[q] = codes[(a * DECK_SIZE + b) * DECK_SIZE + c]
            if code < low:
                low, losers = code, [q]
            elif code == low:
                losers.append(q)
        # who loses a life: everyone without 31 if someone has it, else all tied at the lowest
        if TWICE_31 in scores:
            losers = [q for q in seats if scores[q] != TWICE_31]
        lost = [0] * n
        knocked_out = False
        for q in losers:
            lost[q] = loss = 2 if q == knocker else 1
            if lives[q] > loss:
                lives[q] -= loss
            else:
                lives[q] = 0
                knocked_out = True
        # all at 0 needs someone knocked out (the others kept their lives)
        revived = knocked_out and not any([lives[q] for q in seats])
        if revived:
            for q in seats:
                lives[q] = 1
        s.lives = tuple(lives)
        rewards = None
        if self.reward == "original":  # from the lives after any revival, as the source
            rewards = self.round_rewards({q: scores[q] / 2 for q in seats}, knocker, lives[:])
        s.rounds += 1
        # the record (of tuples: views hand it out as it is), made a Showdown only when read
        s.settled = (s.rounds, tuple(map(tuple, hands)), tuple(scores), tuple(lost), knocker,
                     revived)
        if knocked_out and not revived:
            self._reseat(s)
        if len(s.seating) == 1:
            # the match is over: no round in progress, no knocker; the winner holds the turn
            s.terminal = True
            s.winner = s.player = s.opener = s.seating[0]
            s.knocker, s.first_turn = -1, False
        else:
            s.opener = s.opponents[s.opener][0]  # the next player still in opens
        return rewards

    def round_rewards(self, scores: dict[int, float], knocker: int, lives: list[int]) -> np.ndarray:
        """Source 001's shaped reward per seat for a settled round (0 for players who were out).

        ``lives`` are the lives after the round's losses and after any revival (a revived
        player counts as having 1 life, as in the source).
        """
        out = np.zeros(self.num_players)
        low = min(scores.values())
        for q, sc in scores.items():
            r = 0.5 * (sc - low)
            if sc == low:
                r -= 5.0 if q == knocker else 2.0
            elif sc == THIRTY_ONE:
                r += 10.0
            elif q == knocker:
                r += 0.3 * (sc - low)
            r -= 0.3 * (self.lives - lives[q])
            r += -2.0 if lives[q] <= 0 else 0.5
            out[q] = r
        return out

    # --- what a seat sees -----------------------------------------------------------------
    def view(self, s: ThirtyOneState, player: int) -> ThirtyOneView:
        v = ThirtyOneView()
        v.player = player
        to_act = s.player == player and not (s.terminal or s.truncated)
        v.to_act = to_act
        v.legal = self.legal_mask(s) if to_act else NO_ACTIONS
        v.three_of_a_kind = self.three_of_a_kind
        v.hand = tuple(s.hands[player])
        v.drawn, v.taken, v.top = self.open_cards(s, player)
        v.discard_bits = s.discard_bits
        v.discard_pack = s.discard_pack
        v.discard_size = len(s.discard)
        v.deck_size = len(s.deck)
        v.shown = tuple(s.shown)  # of tuples
        v.lives = s.lives  # a tuple
        v.seating = s.seating
        v.opponents = s.opponents[player]
        v.places = s.places[player]
        v.acting = s.player
        v.knocker = s.knocker
        v.first_turn = s.first_turn
        v.phase = s.phase
        v.opener = s.opener
        v.round_turns = s.round_turns
        v.rounds = s.rounds
        v.settled = s.settled  # made of tuples when a round is settled
        v.winner = s.winner
        return v

    def open_cards(self, s: ThirtyOneState, player: int) -> tuple[int, int, int]:
        """The view's (drawn, taken, top) for ``player``: the card it must place now, the card
        the player to act took from the discard pile, the top discard (each -1 if none)."""
        phase = s.phase
        to_act = s.player == player and not (s.terminal or s.truncated)
        return (s.drawn if to_act and phase else NO_CARD,
                s.drawn if phase and s.from_discard else NO_CARD,
                s.discard[-1] if s.discard else NO_CARD)

    def payoffs(self, s: ThirtyOneState) -> np.ndarray:
        """+1 to the winner, -1/(n-1) to everyone else; zeros until the match is won."""
        n = self.num_players
        if not s.terminal:
            return np.zeros(n)
        out = np.full(n, -1.0 / (n - 1))
        out[s.winner] = 1.0
        return out

    def scores(self, s: ThirtyOneState) -> np.ndarray:
        """Lives left per seat."""
        return np.array(s.lives, dtype=np.float64)

    def results(self, s: ThirtyOneState) -> list[dict]:
        infos = super().results(s)
        for player, info in enumerate(infos):
            info.update(winner=s.winner, lives=int(s.lives[player]), rounds=s.rounds)
        return infos

    def action_name(self, action: int) -> str:
        names = ("draw", "take discard", "knock", "place in slot 0", "place in slot 1",
                 "place in slot 2", "discard drawn card")
        return names[action] if 0 <= action < NUM_ACTIONS else f"action {action}"

    def action_table(self) -> list[tuple[str, str]]:
        return [
            ("0", "phase 1: draw the top card of the deck"),
            ("1", "phase 1: take the top card of the discard pile"),
            ("2", "phase 1: knock (every other player gets one more turn, then the showdown); "
                  "illegal once someone has knocked"),
            ("3-5", "phase 2: put the card into slot 0, 1, 2; the replaced card goes face up on "
                    "the discard pile"),
            ("6", "phase 2: discard the drawn card (illegal after taking the discard)"),
        ]

    # --- checks and determinization -------------------------------------------------------
    def check_invariants(self, s: ThirtyOneState) -> None:
        held = [c for hand in s.hands for c in hand]
        drawn = [s.drawn] if s.phase else []
        everything = sorted(held + s.deck + s.discard + drawn)
        assert everything == list(range(DECK_SIZE)), "every card is in one place"
        assert np.flatnonzero(s.in_discard).tolist() == sorted(s.discard), "discard bits agree"
        assert s.discard_values == suit_values(s.discard), "discard values agree"
        assert all(len(h) in (0, HAND_SIZE) for h in s.hands), "hands hold 3 cards or none"
        for p in range(self.num_players):
            assert all(c == NO_CARD or c == s.hands[p][k] for k, c in enumerate(s.shown[p]))
            assert 0 <= s.lives[p] <= self.lives
        assert (s.drawn >= 0) == (s.phase == 1), "a card to place exactly in phase 2"
        assert s.seating == tuple(q for q in range(self.num_players) if s.lives[q] > 0)
        if s.terminal:
            assert s.seating == (s.winner,) == (s.player,) and s.knocker == -1
            return
        assert len(s.seating) >= 2 and s.player in s.seating and s.opener in s.seating
        assert all(len(s.hands[q]) == HAND_SIZE for q in s.seating)
        assert s.knocker == -1 or s.knocker in s.seating
        assert s.round_turns < self.max_round_turns or s.knocker >= 0
        assert s.discard or s.phase, "a top discard whenever a turn starts"
        assert s.deck or s.phase, "never an empty deck when a turn starts"

    def randomize_hidden(self, s: ThirtyOneState, player: int,
                         rng: np.random.Generator) -> ThirtyOneState:
        # Unseen cards are the deck, other players' slots not taken from the discard pile and a
        # card another player drew. A reshuffle puts only seen cards in the deck, so cards are
        # exchanged only among places filled unseen in the same reshuffle epoch.
        new = s.copy()
        groups: dict[int, list[tuple[list[int], int]]] = {}
        if not s.terminal:  # at the end every hand has been shown
            for q in s.seating:
                if q != player:
                    for k in range(HAND_SIZE):
                        if s.shown[q][k] < 0:
                            epoch = s.epochs[q][k] if s.epochs is not None else 0
                            groups.setdefault(epoch, []).append((new.hands[q], k))
        deck_group = groups.setdefault(s.epoch, [])
        deck_group += [(new.deck, i) for i in range(len(new.deck))]
        if s.phase and not s.from_discard and s.player != player:
            deck_group.append((_DrawnSlot(new), 0))
        for places in groups.values():
            cards = [where[i] for where, i in places]
            for (where, i), card in zip(places, shuffled(cards, rng), strict=True):
                where[i] = card
        return new


class _DrawnSlot:
    """Lets ``randomize_hidden`` treat the card another player drew like a list item."""

    def __init__(self, state: ThirtyOneState):
        self.state = state

    def __getitem__(self, i: int) -> int:
        return self.state.drawn

    def __setitem__(self, i: int, card: int) -> None:
        self.state.drawn = card


def _lay_pile(s: ThirtyOneState) -> None:
    """Set the pile's bits and pack to the cards of ``s.discard`` (a new discard pile)."""
    bits = pack = 0
    for card in s.discard:
        bits |= CARD_BIT[card]
        pack += CARD_PACK[card]
    s.discard_bits, s.discard_pack = bits, pack


def _add(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The sum of two reward arrays where None means all zeros."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def describe(card: int, unicode: bool | None = None) -> str:
    """A card's name, or ``-`` for no card."""
    return card_name(card, unicode) if card >= 0 else "-"
