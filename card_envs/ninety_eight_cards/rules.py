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
# 0 for an empty slot).
_VALUES = np.arange(101)
JUMPS = np.zeros((NUM_PILES, 101, 101), dtype=np.int64)
for _pile, _up in enumerate(ASCENDING):
    JUMPS[_pile, :, 1:] = (_VALUES[None, 1:] - _VALUES[:, None]) * (1 if _up else -1)
_PILE_INDEX = np.arange(NUM_PILES)[:, None]
ONE_CARD = np.ones(1)  # the default reward of every play (never written)
ONE_CARD.flags.writeable = False

# --- byte tables for the per-step code ----------------------------------------------------
# The hot path works on bytes, where bytes.translate is a table lookup per byte in C: a state
# keeps its 8 hand slots as bytes (card values, 0 = empty); translated through
# FIT_TABLES[pile][top] they give that pile's 8 legality bytes, so the 32 move bytes are four
# translates and a join.
FIT_TABLES = [
    [bytes(FITS[_pile, _top].tolist()) + bytes(256 - 101) for _top in range(101)]
    for _pile in range(NUM_PILES)
]
EMPTY_SLOTS = [bytes(_k) for _k in range(HAND_SIZE + 1)]  # k empty slots
FULL_DRAW = b"\x01" * NUM_CARDS  # in_draw of a whole deck: every card still to draw
END_BYTE = (b"\x00", b"\x01")  # the end-turn byte of the standard mask: min_play == 0


class CardsState(State):
    """A game in progress, kept up to date move by move.

    deck: the draw pile in order (hidden), a list drawn from position ``deck_pos``; hand:
    sorted values (up to 8); tops: the four pile tops; slot_bytes: the 8 hand slots as bytes
    (card values, 0 = an empty slot); legal: the legal mask as bytes (32, or 33 with the end
    turn under standard rules); in_draw: bytearray of 98, 1 for each card (value - 2) still
    in the draw pile; played: cards on the piles; turn_played: cards played this turn
    (standard rules). ``piles`` and ``slots`` give tops and slots as numpy arrays (fresh
    each time).
    """

    __slots__ = (
        "deck",
        "deck_pos",
        "hand",
        "tops",
        "slot_bytes",
        "legal",
        "in_draw",
        "played",
        "turn_played",
        "last_play",
    )
    # the deck is never written after the deal, so copies share it (bytes are immutable)
    _deep = ("hand", "tops", "in_draw")

    @property
    def piles(self) -> np.ndarray:
        """The four pile tops, (4,) int64."""
        return np.array(self.tops, dtype=np.int64)

    @property
    def slots(self) -> np.ndarray:
        """The hand as 8 slots, (8,) int64 (0 = empty)."""
        return np.array(self.hand + [0] * (HAND_SIZE - len(self.hand)), dtype=np.int64)


class CardsView(View):
    """Everything the player sees: hand, pile tops, counts; never the draw pile's order."""

    __slots__ = (
        "hand",
        "slots",
        "piles",
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
        s.slot_bytes = EMPTY_SLOTS[HAND_SIZE]
        s.tops = tops
        s.played = played
        s.turn_played = 0
        if len(deck) == NUM_CARDS:  # the whole deck
            s.in_draw = bytearray(FULL_DRAW)
        else:
            s.in_draw = bytearray(NUM_CARDS)
            for card in deck:
                s.in_draw[card - LOWEST] = 1
        s.last_play = None
        self._refill(s)
        self._update_legal(s)
        return s

    def _refill(self, s: CardsState) -> None:
        """Draw back up to 8 cards (as many as the draw pile has)."""
        hand, pos = s.hand, s.deck_pos
        drawn = s.deck[pos : pos + HAND_SIZE - len(hand)]
        if drawn:
            in_draw = s.in_draw
            for card in drawn:
                in_draw[card - LOWEST] = 0
            hand += drawn
            hand.sort()
            s.deck_pos = pos + len(drawn)
            s.slot_bytes = bytes(hand) + EMPTY_SLOTS[HAND_SIZE - len(hand)]

    def _update_legal(self, s: CardsState) -> None:
        """Rewrite the legal-move bytes after a change; end the game if it cannot go on."""
        slots = s.slot_bytes
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
        slots = s.slot_bytes
        s.slot_bytes = slots[:slot] + slots[slot + 1 :] + EMPTY_SLOTS[1]
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
        assert list(s.slot_bytes) == slots.tolist(), "slot bytes agree with the hand"
        plays = FITS[_PILE_INDEX, piles[:, None], slots].reshape(-1).tolist()
        end_turn = [self.min_play(s) == 0] if self.standard else []
        assert list(s.legal) == plays + end_turn, "the legal bytes agree with hand and piles"
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

    def sample_world(self, view: CardsView, rng: np.random.Generator) -> CardsState:
        """A state consistent with ``view``: its hand, piles and counts, and the cards it
        knows are still to draw (``in_draw``) in a random order, the only thing it cannot see.
        Reads only the view. The step count, which the view does not hold, is the cards
        played (it only bounds the game at ``max_steps``)."""
        if not view.legal.any():
            raise ValueError("the view's game is over: there is no world to sample")
        s = CardsState(0)
        s.deck = shuffled((np.flatnonzero(view.in_draw) + LOWEST).tolist(), rng)
        s.deck_pos = 0
        s.hand = [int(card) for card in view.hand]
        s.slot_bytes = bytes(s.hand) + EMPTY_SLOTS[HAND_SIZE - len(s.hand)]
        s.tops = [int(top) for top in view.piles]
        s.played, s.turn_played = int(view.played), int(view.turn_played)
        s.in_draw = bytearray(np.asarray(view.in_draw, np.int8).tobytes())
        s.last_play = view.last_play
        s.steps = s.played
        self._update_legal(s)
        return s

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
        v.played = s.played
        v.turn_played = s.turn_played
        v.draw_pile = self.draw_pile_size(s)
        v.min_play = self.min_play(s) if self.standard else 0
        v.in_draw = np.frombuffer(bytes(s.in_draw), INT8)  # read-only: over immutable bytes
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
