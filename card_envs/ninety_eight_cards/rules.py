"""Rules of 98 Cards: cards 2..99, two ascending piles from 1, two descending piles from 100.

A card goes on an ascending pile if it is higher than the top or exactly 10
lower; on a descending pile if it is lower or exactly 10 higher. The hand holds
8 cards, kept sorted by value so a slot means the same card in the observation
and in the action.

rules="standard" (The Game, solo): play at least 2 cards per turn (1 once the
draw pile is empty), then end the turn (action 32) to draw back up to 8; the game
ends when the player cannot meet the minimum. rules="original" (source 004): one
card per step and an immediate refill, no end-turn action; the game ends when no
card can be played.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import shuffled
from card_envs.core.dtypes import INT8
from card_envs.core.game import Game, State, View, check_choice, frozen

LOWEST, HIGHEST = 2, 99
NUM_CARDS = HIGHEST - LOWEST + 1  # 98
HAND_SIZE = 8
NUM_PILES = 4
ASCENDING = (True, True, False, False)
START_TOPS = (1, 1, 100, 100)
END_TURN = NUM_PILES * HAND_SIZE  # 32

# FITS[pile, top, card]: card (0 = empty slot) may go on pile with that top.
FITS = np.zeros((NUM_PILES, 101, 101), dtype=np.int8)
for _pile, _up in enumerate(ASCENDING):
    for _top in range(101):
        for _card in range(LOWEST, HIGHEST + 1):
            if _up:
                FITS[_pile, _top, _card] = _card > _top or _card == _top - 10
            else:
                FITS[_pile, _top, _card] = _card < _top or _card == _top + 10
# JUMPS[pile, top, card]: how far playing card moves the pile (negative for the tens trick,
# 0 for an empty slot). JUMP_FEATURES: the same on a log scale in [-1, 1],
# sign * ln(1 + |jump|) / ln(101), which spreads the small jumps that matter; the default
# observation and the board vector carry it.
_VALUES = np.arange(101)
JUMPS = np.zeros((NUM_PILES, 101, 101), dtype=np.int64)
for _pile, _up in enumerate(ASCENDING):
    JUMPS[_pile, :, 1:] = (_VALUES[None, 1:] - _VALUES[:, None]) * (1 if _up else -1)
JUMP_FEATURES = (np.sign(JUMPS) * np.log1p(np.abs(JUMPS)) / np.log(101)).astype(np.float32)
_PILE_INDEX = np.arange(NUM_PILES)[:, None]
PER_100 = (_VALUES / 100.0).astype(np.float32)
ONE_CARD = np.ones(1)  # the default reward of every play (never written)
ONE_CARD.flags.writeable = False

# --- byte tables for the per-step code ----------------------------------------------------
# The hot path works on bytes, where bytes.translate is a table lookup per byte in C:
# the 8 hand slots as bytes (card values, 0 = empty) translated through FIT_TABLES[pile][top]
# give that pile's 8 legality bytes, so the 32 move bytes are four translates and a join.
FIT_TABLES = [
    [bytes(FITS[_pile, _top].tolist()) + bytes(256 - 101) for _top in range(101)]
    for _pile in range(NUM_PILES)
]
# The default observation is FEATURES[codes] for int64 codes built from bytes. Each
# feature value sits at code 256 * segment + low byte:
#   segment 0: value / 100 for 0..100 (pile tops; 0 / 1 = PER_100[0 / 100] for in_draw)
#   JUMP_SEGMENT: JUMP_FEATURES of jump j at low byte _JUMP_LOW + j; low byte 0 = empty slot
#   DRAW..MIN_SEGMENT: draw pile / 90, played / 98, turn_played / 8, min_play / 2
#   HAND_MARK: value / 100 again, for the hand slots
# A state keeps its hand as hand_codes: 8 little-endian int64 codes HAND_MARK * 256 + card,
# i.e. the bytes (card, HAND_MARK, 0, ..., 0). HAND_MARK is no card value, so
# JUMP_TABLES[pile][top] can map each card byte to its jump's low byte and HAND_MARK to
# JUMP_SEGMENT: one translate turns the 8 hand codes into that pile's 8 jump codes.
JUMP_SEGMENT, DRAW_SEGMENT, PLAYED_SEGMENT, TURN_SEGMENT, MIN_SEGMENT = 1, 2, 3, 4, 5
HAND_MARK = 100
_JUMP_LOW = 128
FEATURES = np.zeros(256 * (HAND_MARK + 1), dtype=np.float32)
FEATURES[:101] = PER_100
FEATURES[256 * HAND_MARK : 256 * HAND_MARK + 101] = PER_100
JUMP_TABLES: list[list[bytes]] = [[] for _pile in range(NUM_PILES)]
for _pile in range(NUM_PILES):
    for _top in range(101):
        _low = _JUMP_LOW + JUMPS[_pile, _top, LOWEST : HIGHEST + 1]  # 29..227, never 0
        FEATURES[256 * JUMP_SEGMENT + _low] = JUMP_FEATURES[_pile, _top, LOWEST : HIGHEST + 1]
        _table = bytearray(256)
        _table[LOWEST : HIGHEST + 1] = _low.tolist()
        _table[HAND_MARK] = JUMP_SEGMENT
        JUMP_TABLES[_pile].append(bytes(_table))
for _segment, _count, _scale in (
    (DRAW_SEGMENT, NUM_CARDS - HAND_SIZE, NUM_CARDS - HAND_SIZE),
    (PLAYED_SEGMENT, NUM_CARDS, NUM_CARDS),
    (TURN_SEGMENT, HAND_SIZE, HAND_SIZE),
    (MIN_SEGMENT, 2, 2.0),
):
    # the same float64 division as writing count / scale into a float32 array
    FEATURES[256 * _segment : 256 * _segment + _count + 1] = [
        _k / _scale for _k in range(_count + 1)
    ]


def _codes(segment: int, count: int) -> list[bytes]:
    """The int64 FEATURES codes 256 * segment + 0..count-1, as bytes."""
    return [(256 * segment + _k).to_bytes(8, "little") for _k in range(count)]


TOP_CODE = _codes(0, 101)
HAND_CODE = _codes(HAND_MARK, 101)
EMPTY_CODES = [HAND_CODE[0] * _k for _k in range(HAND_SIZE + 1)]
DRAW_CODE = _codes(DRAW_SEGMENT, NUM_CARDS - HAND_SIZE + 1)
PLAYED_CODE = _codes(PLAYED_SEGMENT, NUM_CARDS + 1)
TURN_CODE = _codes(TURN_SEGMENT, HAND_SIZE + 1)
MIN_CODE = _codes(MIN_SEGMENT, 3)
# in_draw codes: 100 (1.0) for a card in the draw pile, 0 once drawn (its low byte at 8 * i)
FULL_DRAW = TOP_CODE[100] * NUM_CARDS
END_BYTE = (b"\x00", b"\x01")  # the end-turn byte of the standard mask: min_play == 0
# Offsets in the board vector (CardsState.board, the first 44 values of the default encoding).
BOARD_PILES, BOARD_HAND, BOARD_JUMPS, BOARD_SIZE = 0, 4, 12, 44


class CardsState(State):
    """A game in progress, kept up to date move by move.

    deck: the draw pile in order (hidden), a list drawn from position ``deck_pos``; hand:
    sorted values (up to 8); tops: the four pile tops; hand_codes: the 8 hand slots as the
    int64 FEATURES codes (bytes, see HAND_MARK); legal: the legal mask as bytes (32, or 33
    with the end turn under standard rules); in_draw_codes: bytearray of 98 int64 FEATURES
    codes, 1.0 for each card (value - 2) still in the draw pile; played: cards on the
    piles; turn_played: cards played this turn (standard rules). ``piles``, ``slots``,
    ``board`` and ``in_draw`` give the same as numpy arrays (fresh each time).
    """

    __slots__ = (
        "deck",
        "deck_pos",
        "hand",
        "tops",
        "hand_codes",
        "legal",
        "in_draw_codes",
        "played",
        "turn_played",
        "last_play",
    )
    # the deck is never written after the deal, so copies share it (bytes are immutable)
    _deep = ("hand", "tops", "in_draw_codes")

    @property
    def piles(self) -> np.ndarray:
        """The four pile tops, (4,) int64."""
        return np.array(self.tops, dtype=np.int64)

    @property
    def slots(self) -> np.ndarray:
        """The hand as 8 slots, (8,) int64 (0 = empty)."""
        return np.array(self.hand + [0] * (HAND_SIZE - len(self.hand)), dtype=np.int64)

    @property
    def board(self) -> np.ndarray:
        """float32 (44,): [tops / 100 | slots / 100 | the JUMP_FEATURES of the 32 moves]."""
        return FEATURES[np.frombuffer(board_codes(self), np.int64)]

    @property
    def in_draw(self) -> np.ndarray:
        """float32 (98,), 1 for each card (value - 2) still in the draw pile."""
        return FEATURES[np.frombuffer(self.in_draw_codes, np.int64)]


def board_codes(s: CardsState) -> bytes:
    """The FEATURES codes of the board: pile tops, hand slots and the 32 moves' jumps."""
    top0, top1, top2, top3 = s.tops
    hand_codes = s.hand_codes
    return b"".join(
        (
            TOP_CODE[top0],
            TOP_CODE[top1],
            TOP_CODE[top2],
            TOP_CODE[top3],
            hand_codes,
            hand_codes.translate(JUMP_TABLES[0][top0]),
            hand_codes.translate(JUMP_TABLES[1][top1]),
            hand_codes.translate(JUMP_TABLES[2][top2]),
            hand_codes.translate(JUMP_TABLES[3][top3]),
        )
    )


class CardsView(View):
    """Everything the player sees: hand, pile tops, counts; never the draw pile's order."""

    __slots__ = (
        "hand",
        "slots",
        "piles",
        "board",
        "played",
        "turn_played",
        "draw_pile",
        "min_play",
        "in_draw",
        "last_play",
        "standard",
    )


def fits(pile: int, top: int, card: int) -> bool:
    """Whether ``card`` may be played on ``pile`` whose top card is ``top``."""
    return bool(FITS[pile, top, card])


class NinetyEightCards(Game):
    """98 Cards (see the module docstring and docs/games/ninety_eight_cards.md)."""

    name = "ninety_eight_cards"
    score_name = "cards played"
    num_players = 1

    def __init__(self, rules: str = "standard", reward: str = "default"):
        check_choice("rules", rules, ("standard", "original"))
        check_choice("reward", reward, ("default", "original"))
        self.rules = rules
        self.reward = reward
        self.rewards_sum = "scores" if reward == "default" else "shaped"  # a point a card
        self.standard = rules == "standard"
        self.num_actions = END_TURN + 1 if self.standard else END_TURN
        # each turn plays at least one card, so 98 plays and 98 end-turns bound a game
        self.max_steps = 2 * NUM_CARDS + 1
        self.min_payoff, self.max_payoff = -1.0, 1.0
        self._config = {"rules": rules, "reward": reward}

    # --- dealing and drawing ------------------------------------------------------------
    def init(self, rng: np.random.Generator) -> CardsState:
        return self._start(shuffled(range(LOWEST, HIGHEST + 1), rng), list(START_TOPS), 0)

    def deal(self, deck, piles=START_TOPS, played: int = 0) -> CardsState:
        """A state with the first 8 cards of ``deck`` in hand and the rest to draw (for tests)."""
        return self._start([int(card) for card in deck], [int(top) for top in piles], played)

    def _start(self, deck: list[int], tops: list[int], played: int) -> CardsState:
        s = CardsState(0)
        s.deck = deck
        s.deck_pos = 0
        s.hand = []
        s.hand_codes = EMPTY_CODES[HAND_SIZE]
        s.tops = tops
        s.played = played
        s.turn_played = 0
        if len(deck) == NUM_CARDS:  # the whole deck
            s.in_draw_codes = bytearray(FULL_DRAW)
        else:
            s.in_draw_codes = bytearray(8 * NUM_CARDS)
            for card in deck:
                s.in_draw_codes[8 * (card - LOWEST)] = 100
        s.last_play = None
        self._refill(s)
        self._update_legal(s)
        return s

    def _refill(self, s: CardsState) -> None:
        """Draw back up to 8 cards (as many as the draw pile has)."""
        hand, pos = s.hand, s.deck_pos
        drawn = s.deck[pos : pos + HAND_SIZE - len(hand)]
        if drawn:
            in_draw_codes = s.in_draw_codes
            for card in drawn:
                in_draw_codes[8 * (card - LOWEST)] = 0
            hand += drawn
            hand.sort()
            s.deck_pos = pos + len(drawn)
            s.hand_codes = (
                b"".join(map(HAND_CODE.__getitem__, hand)) + EMPTY_CODES[HAND_SIZE - len(hand)]
            )

    def _update_legal(self, s: CardsState) -> None:
        """Rewrite the legal-move bytes after a change; end the game if it cannot go on."""
        slots = s.hand_codes[::8]  # the 8 slots' card values (0 = empty) as bytes
        top0, top1, top2, top3 = s.tops
        legal = b"".join(
            (
                slots.translate(FIT_TABLES[0][top0]),
                slots.translate(FIT_TABLES[1][top1]),
                slots.translate(FIT_TABLES[2][top2]),
                slots.translate(FIT_TABLES[3][top3]),
            )
        )
        if self.standard:
            legal += END_BYTE[self.min_play(s) == 0]
        s.legal = legal
        # over when every card is played, or when no card fits and the turn may not end
        if 1 not in legal or (not s.hand and s.deck_pos == len(s.deck)):
            s.terminal = True

    def draw_pile_size(self, s: CardsState) -> int:
        return len(s.deck) - s.deck_pos

    def min_play(self, s: CardsState) -> int:
        """Cards still to play this turn before it may end (standard rules)."""
        need = (2 if s.deck_pos < len(s.deck) else 1) - s.turn_played
        return need if need > 0 else 0

    # --- the rules ----------------------------------------------------------------------
    def _legal_mask(self, s: CardsState) -> np.ndarray:
        # a read-only array over the state's bytes (core caches it and copies it for users)
        return np.frombuffer(s.legal, INT8)

    def _apply(self, s: CardsState, action: int, rng: np.random.Generator) -> np.ndarray | None:
        if action == END_TURN:
            s.turn_played = 0
            self._refill(s)
            self._update_legal(s)
            return None
        pile, slot = divmod(action, HAND_SIZE)
        card = s.hand.pop(slot)
        codes, at = s.hand_codes, 8 * slot
        s.hand_codes = codes[:at] + codes[at + 8 :] + EMPTY_CODES[1]
        tops = s.tops
        s.last_play = (card, pile, tops[pile])
        tops[pile] = card
        s.played += 1
        if self.standard:
            s.turn_played += 1
        else:
            self._refill(s)
        self._update_legal(s)
        if self.reward == "default":
            return ONE_CARD
        return np.array([float(s.played - 1)])

    def check_invariants(self, s: CardsState) -> None:
        draw = s.deck[s.deck_pos :]
        assert (np.flatnonzero(s.in_draw) + LOWEST).tolist() == sorted(draw), "draw-pile table"
        assert len(set(draw) | set(s.hand)) == len(draw) + len(s.hand), "no card twice"
        assert len(draw) + len(s.hand) + s.played == NUM_CARDS, "every card is in one place"
        assert s.hand == sorted(s.hand) and len(s.hand) <= HAND_SIZE, "hand sorted, at most 8"
        piles, slots = s.piles, s.slots
        codes = np.frombuffer(s.hand_codes, np.int64)
        assert np.array_equal(codes, HAND_MARK * 256 + slots), "hand codes agree with the hand"
        plays = FITS[_PILE_INDEX, piles[:, None], slots].reshape(-1).tolist()
        end_turn = [self.min_play(s) == 0] if self.standard else []
        assert list(s.legal) == plays + end_turn, "the legal bytes agree with hand and piles"
        jumps = JUMP_FEATURES[_PILE_INDEX, piles[:, None], slots].reshape(-1)
        board = np.concatenate([piles / 100, slots / 100, jumps]).astype(np.float32)
        assert np.array_equal(s.board, board), "the board vector agrees with piles and hand"
        for pile, top in enumerate(s.tops):
            played_card = (
                LOWEST <= top <= HIGHEST and not s.in_draw[top - LOWEST] and top not in s.hand
            )
            assert top == START_TOPS[pile] or played_card, "a pile top is a played card"

    def randomize_hidden(self, s: CardsState, player: int, rng: np.random.Generator) -> CardsState:
        # Only the order of the draw pile is hidden.
        new = s.copy()
        new.deck = s.deck[: s.deck_pos] + shuffled(s.deck[s.deck_pos :], rng)
        return new

    # --- what the player sees -----------------------------------------------------------
    def jumps(self, s_or_view) -> np.ndarray:
        """How far each pile*8+slot move would move its pile (negative: the tens trick), (32,)."""
        v = s_or_view
        return JUMPS[_PILE_INDEX, v.piles[:, None], v.slots].reshape(-1)

    def view(self, s: CardsState, player: int = 0) -> CardsView:
        v = CardsView()
        v.player = 0
        v.legal = self.legal_mask(s)
        v.hand = frozen(s.hand)
        v.slots = frozen(s.slots)
        v.piles = frozen(s.piles)
        v.board = frozen(s.board)
        v.played = s.played
        v.turn_played = s.turn_played
        v.draw_pile = self.draw_pile_size(s)
        v.min_play = self.min_play(s) if self.standard else 0
        v.in_draw = frozen(s.in_draw)
        v.last_play = frozen(s.last_play)
        v.standard = self.standard
        return v

    def payoffs(self, s: CardsState) -> np.ndarray:
        """+1 for a won game (all 98 cards played), -1 for a lost one, 0 while unfinished."""
        if not s.terminal:
            return np.zeros(1)
        return np.array([1.0 if s.played == NUM_CARDS else -1.0])

    def scores(self, s: CardsState) -> np.ndarray:
        return np.array([float(s.played)])

    def action_name(self, action: int) -> str:
        if action == END_TURN:
            return "end turn"
        pile, slot = divmod(action, HAND_SIZE)
        arrow = "up" if ASCENDING[pile] else "down"
        return f"slot {slot} on pile {pile} ({arrow})"

    def action_table(self) -> list[tuple[str, str]]:
        rows = [
            (
                f"{p * HAND_SIZE}-{p * HAND_SIZE + HAND_SIZE - 1}",
                f"play hand slot 0..7 on pile {p} "
                f"({'ascending from 1' if ASCENDING[p] else 'descending from 100'})",
            )
            for p in range(NUM_PILES)
        ]
        if self.standard:
            rows.append((str(END_TURN), "end the turn and draw back up to 8 (standard rules only)"))
        return rows
