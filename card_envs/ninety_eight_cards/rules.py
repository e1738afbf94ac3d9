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

import bisect

import numpy as np

from card_envs.core.game import Game, State, View, check_choice

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
FITS_FLAT = FITS.reshape(-1)
JUMP_FEATURES_FLAT = JUMP_FEATURES.reshape(-1)
# Flat index of FITS[pile, top, card] (and JUMPS) = PILE_BASE[pile] + 101 * top + card.
PILE_BASE = (np.arange(NUM_PILES) * 101 * 101)[:, None]
PER_100 = (_VALUES / 100.0).astype(np.float32)
ONE_CARD = np.ones(1)  # the default reward of every play (never written)
ONE_CARD.flags.writeable = False
# Offsets in CardsState.board.
BOARD_PILES, BOARD_HAND, BOARD_JUMPS, BOARD_SIZE = 0, 4, 12, 44


class CardsState(State):
    """A game in progress, kept up to date move by move.

    deck: the draw pile in order (hidden), drawn from position ``deck_pos``; hand: sorted
    values (up to 8); slots: the hand as an int array of 8 (0 = empty); piles: the four tops;
    pile_rows: (4, 1) each pile's row offset in the flat FITS/JUMPS tables; move_index:
    (4, 8) flat table index of every pile x slot move; plays: int8 (32,) the playable
    pile*8 + slot moves; board: float32 (44,) what the player sees of piles and hand, as
    [tops / 100 | slots / 100 | the JUMP_FEATURES of the 32 moves]; in_draw: float32 (98,), 1 for
    each card (value - 2) still in the draw pile; played: cards on the piles; turn_played:
    cards played this turn (standard rules).
    """

    __slots__ = (
        "deck",
        "deck_pos",
        "hand",
        "slots",
        "piles",
        "pile_rows",
        "move_index",
        "plays",
        "board",
        "in_draw",
        "played",
        "turn_played",
        "last_play",
    )
    # the deck is never written after the deal, so copies share it
    _deep = ("hand", "slots", "piles", "pile_rows", "move_index", "plays", "board", "in_draw")


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
    num_players = 1

    def __init__(self, rules: str = "standard", reward: str = "default"):
        check_choice("rules", rules, ("standard", "original"))
        check_choice("reward", reward, ("default", "original"))
        self.rules = rules
        self.reward = reward
        self.standard = rules == "standard"
        self.num_actions = END_TURN + 1 if self.standard else END_TURN
        # each turn plays at least one card, so 98 plays and 98 end-turns bound a game
        self.max_steps = 2 * NUM_CARDS + 1
        self.min_payoff, self.max_payoff = -1.0, 1.0
        self._config = {"rules": rules, "reward": reward}

    # --- dealing and drawing ------------------------------------------------------------
    def init(self, rng: np.random.Generator) -> CardsState:
        return self.deal(rng.permutation(np.arange(LOWEST, HIGHEST + 1)))

    def deal(self, deck, piles=START_TOPS, played: int = 0) -> CardsState:
        """A state with the first 8 cards of ``deck`` in hand and the rest to draw (for tests)."""
        s = CardsState(0)
        s.deck = np.asarray(deck, dtype=np.int64)
        s.deck_pos = 0
        s.hand = []
        s.slots = np.zeros(HAND_SIZE, dtype=np.int64)
        s.piles = np.array(piles, dtype=np.int64)
        s.pile_rows = PILE_BASE + 101 * s.piles[:, None]
        s.move_index = np.empty((NUM_PILES, HAND_SIZE), dtype=np.int64)
        s.board = np.zeros(BOARD_SIZE, dtype=np.float32)
        s.board[BOARD_PILES:BOARD_HAND] = PER_100.take(s.piles)
        s.played = played
        s.turn_played = 0
        s.in_draw = np.zeros(NUM_CARDS, dtype=np.float32)
        s.in_draw[s.deck - LOWEST] = 1.0
        s.last_play = None
        self._refill(s)
        self._check_end(s)
        return s

    def _refill(self, s: CardsState) -> None:
        while len(s.hand) < HAND_SIZE and s.deck_pos < len(s.deck):
            card = int(s.deck[s.deck_pos])
            bisect.insort(s.hand, card)
            s.in_draw[card - LOWEST] = 0.0
            s.deck_pos += 1
        self._update_slots(s)

    def _update_slots(self, s: CardsState) -> None:
        """Rewrite the slots from the hand, then the moves' table indices, plays and jumps."""
        slots = s.slots
        slots[:] = 0
        slots[: len(s.hand)] = s.hand
        np.add(s.pile_rows, slots, out=s.move_index)
        moves = s.move_index.reshape(-1)
        s.plays = FITS_FLAT.take(moves)
        JUMP_FEATURES_FLAT.take(moves, out=s.board[BOARD_JUMPS:])
        PER_100.take(slots, out=s.board[BOARD_HAND:BOARD_JUMPS])

    def draw_pile_size(self, s: CardsState) -> int:
        return len(s.deck) - s.deck_pos

    def min_play(self, s: CardsState) -> int:
        """Cards still to play this turn before it may end (standard rules)."""
        need = (2 if s.deck_pos < len(s.deck) else 1) - s.turn_played
        return need if need > 0 else 0

    # --- the rules ----------------------------------------------------------------------
    def _legal_mask(self, s: CardsState) -> np.ndarray:
        if not self.standard:
            return s.plays.copy()
        mask = np.empty(self.num_actions, dtype=np.int8)
        mask[:END_TURN] = s.plays
        mask[END_TURN] = self.min_play(s) == 0
        return mask

    def _apply(self, s: CardsState, action: int, rng: np.random.Generator) -> np.ndarray | None:
        if action == END_TURN:
            s.turn_played = 0
            self._refill(s)
            self._check_end(s)
            return None
        pile, slot = divmod(action, HAND_SIZE)
        card = s.hand.pop(slot)
        s.last_play = (card, pile, int(s.piles[pile]))
        s.piles[pile] = card
        s.pile_rows[pile, 0] = PILE_BASE[pile, 0] + 101 * card
        s.board[BOARD_PILES + pile] = PER_100[card]
        s.played += 1
        if self.standard:
            s.turn_played += 1
            self._update_slots(s)
        else:
            self._refill(s)
        self._check_end(s)
        if self.reward == "default":
            return ONE_CARD
        return np.array([float(s.played - 1)])

    def _check_end(self, s: CardsState) -> None:
        """End the game when every card is played or the player can't go on."""
        if not s.hand and s.deck_pos == len(s.deck):
            s.terminal = True
        elif not s.plays.any() and (not self.standard or self.min_play(s) > 0):
            s.terminal = True

    def check_invariants(self, s: CardsState) -> None:
        draw = s.deck[s.deck_pos :].tolist()
        assert (np.flatnonzero(s.in_draw) + LOWEST).tolist() == sorted(draw), "draw-pile table"
        assert len(set(draw) | set(s.hand)) == len(draw) + len(s.hand), "no card twice"
        assert len(draw) + len(s.hand) + s.played == NUM_CARDS, "every card is in one place"
        assert s.hand == sorted(s.hand) and len(s.hand) <= HAND_SIZE, "hand sorted, at most 8"
        assert s.slots[: len(s.hand)].tolist() == s.hand and not s.slots[len(s.hand) :].any()
        assert np.array_equal(s.plays, FITS[_PILE_INDEX, s.piles[:, None], s.slots].reshape(-1))
        assert np.array_equal(s.pile_rows, PILE_BASE + 101 * s.piles[:, None])
        jumps = JUMP_FEATURES[_PILE_INDEX, s.piles[:, None], s.slots].reshape(-1)
        board = np.concatenate([s.piles / 100, s.slots / 100, jumps]).astype(np.float32)
        assert np.allclose(s.board, board), "the board vector agrees with piles and hand"
        for pile, top in enumerate(s.piles.tolist()):
            played_card = (
                LOWEST <= top <= HIGHEST and not s.in_draw[top - LOWEST] and top not in s.hand
            )
            assert top == START_TOPS[pile] or played_card, "a pile top is a played card"

    def randomize_hidden(self, s: CardsState, player: int, rng: np.random.Generator) -> CardsState:
        # Only the order of the draw pile is hidden.
        new = s.copy()
        new.deck = s.deck.copy()
        new.deck[s.deck_pos :] = rng.permutation(s.deck[s.deck_pos :])
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
        v.hand = s.hand
        v.slots = s.slots
        v.piles = s.piles
        v.board = s.board
        v.played = s.played
        v.turn_played = s.turn_played
        v.draw_pile = self.draw_pile_size(s)
        v.min_play = self.min_play(s) if self.standard else 0
        v.in_draw = s.in_draw
        v.last_play = s.last_play
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
