"""Rules of simple tricks: 2 players, 2 colours x N values, all cards dealt, N tricks.

Card index = colour * N + value (values 0..N-1). Player 0 leads the first trick;
the trick winner leads the next. The follower must follow the led colour if
able. Same colour: the higher value wins; otherwise the leader wins.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import shuffled
from card_envs.core.dtypes import INT8
from card_envs.core.game import AliasedState, Game, State, View, check_int, read_only

NUM_PLAYERS = 2


class TricksState(AliasedState, State):
    """A deal in progress.

    hands: each seat's remaining cards in dealt order. cards: (4, 2N) int8 by absolute seat,
    1 where row HELD + p: seat p holds the card, row PLAYED + p: seat p played it in a
    completed trick (the card led in the trick in progress is in neither). lead/leader: the
    card led in the current trick (-1: none) and who led it; tricks: tricks won per seat;
    last_trick: (leader, led card, followed card, winner) of the last completed trick, or
    None; aliases: a read-only view of ``cards``, made by the first view (see AliasedState).
    """

    __slots__ = ("hands", "cards", "lead", "leader", "tricks", "last_trick", "aliases")

    def copy(self) -> TricksState:
        """An independent copy (field by field: searches copy states often)."""
        new = TricksState.__new__(TricksState)
        new.player, new.terminal, new.truncated = self.player, self.terminal, self.truncated
        new.steps, new.mask = self.steps, None
        new.hands = [h[:] for h in self.hands]
        new.cards = self.cards.copy()
        new.lead, new.leader = self.lead, self.leader
        new.tricks = self.tricks[:]
        new.last_trick = self.last_trick
        new.aliases = None
        return new


# Rows of TricksState.cards (+ seat): the cards each seat holds, and those it played.
HELD, PLAYED = 0, 2
# A view's four card planes (``TricksView.plane``), as seen from its seat.
HAND, OPPONENT_HAND, MY_PLAYED, OPPONENT_PLAYED = 0, 1, 2, 3


class TricksView(View):
    """What one seat knows: its own hand (in order), every played card, the trick in progress.

    ``cards`` is the state's table of who holds and who played each card (see TricksState,
    read-only): the opponent's remaining cards are known by elimination (every card is
    dealt); their order is hidden. ``plane(which)`` reads it from this seat.
    """

    __slots__ = ("num_values", "hand", "cards", "lead", "leader", "tricks", "last_trick", "to_act")

    def plane(self, which: int) -> np.ndarray:
        """One of the seat's card planes (HAND, OPPONENT_HAND, MY_PLAYED, OPPONENT_PLAYED)."""
        return self.cards[PLANE_ROWS[self.player][which]]


# PLANE_ROWS[seat][which]: the row of TricksState.cards that is that seat's plane ``which``.
PLANE_ROWS = ((HELD, HELD + 1, PLAYED, PLAYED + 1), (HELD + 1, HELD, PLAYED + 1, PLAYED))


class SimpleTricks(Game):
    """The trick game of source 003 (see the module docstring and docs/games/simple_tricks.md)."""

    name = "simple_tricks"
    score_name = "tricks won"
    num_players = NUM_PLAYERS

    def __init__(self, num_values: int = 10):
        self.num_values = check_int("num_values", num_values, 2, 26)
        self.num_cards = 2 * self.num_values
        self.num_actions = self.num_cards
        self.max_steps = self.num_cards  # every deal ends after exactly N tricks
        self._config = {"num_values": self.num_values}
        self._zero_mask = np.zeros(self.num_actions, INT8)
        self._zero_mask.flags.writeable = False
        self._no_cards = bytes(self.num_values)  # an all-zero colour plane, as bytes

    def colour(self, card: int) -> int:
        return card // self.num_values

    def value(self, card: int) -> int:
        return card % self.num_values

    def init(self, rng: np.random.Generator) -> TricksState:
        deck = shuffled(range(self.num_cards), rng)
        return self.deal([deck[: self.num_values], deck[self.num_values :]])

    def deal(self, hands: list[list[int]], player: int = 0) -> TricksState:
        """A state with the given hands (in order) and ``player`` to lead (for tests)."""
        c = self.num_cards
        s = TricksState(player)
        s.hands = [list(h) for h in hands]
        s.cards = np.zeros((4, c), INT8)
        for p, hand in enumerate(s.hands):
            s.cards[HELD + p, hand] = 1
        s.lead = -1
        s.leader = player
        s.tricks = [0, 0]
        s.last_trick = None
        s.aliases = None
        return s

    def _legal_mask(self, s: TricksState) -> np.ndarray:
        hand = s.cards[HELD + s.player]
        if s.lead < 0:
            mask = hand.copy()
        else:
            n = self.num_values
            start = (s.lead // n) * n
            same = hand[start : start + n]
            if same.tobytes() == self._no_cards:  # void in the led colour (cheaper than .any())
                mask = hand.copy()
            else:
                mask = np.zeros(self.num_cards, INT8)
                mask[start : start + n] = same
        mask.setflags(write=False)
        return mask

    def _apply(self, s: TricksState, card: int, rng: np.random.Generator) -> np.ndarray | None:
        p = s.player
        s.hands[p].remove(card)
        cards = s.cards
        cards[HELD + p, card] = 0
        if s.lead < 0:
            s.lead, s.leader, s.player = card, p, 1 - p
            return None
        n = self.num_values
        lead, leader = s.lead, s.leader
        follows = card // n == lead // n
        winner = p if follows and card % n > lead % n else leader
        cards[PLAYED + leader, lead] = 1
        cards[PLAYED + p, card] = 1
        s.tricks[winner] += 1
        s.last_trick = (leader, lead, card, winner)
        s.lead = -1
        s.leader = s.player = winner
        if s.tricks[0] + s.tricks[1] == n:
            s.terminal = True
            return self.payoffs(s)
        return None

    def view(self, s: TricksState, player: int) -> TricksView:
        v = TricksView()
        v.player = player
        v.to_act = s.player == player and not s.done
        v.legal = self.legal_mask(s) if v.to_act else self._zero_mask
        v.num_values = self.num_values
        v.hand = tuple(s.hands[player])
        aliases = s.aliases
        if aliases is None:  # the cards change in place: one read-only view serves all views
            aliases = s.aliases = read_only(s.cards)
        v.cards = aliases
        v.lead = s.lead
        v.leader = s.leader
        v.tricks = (s.tricks[player], s.tricks[1 - player])
        v.last_trick = s.last_trick  # a tuple of ints (or None)
        return v

    def check_invariants(self, s: TricksState) -> None:
        c = self.num_cards
        played = [s.cards[PLAYED + p] for p in range(NUM_PLAYERS)]
        seen = [card for hand in s.hands for card in hand]
        seen += np.flatnonzero(played[0] + played[1]).tolist()
        if s.lead >= 0:
            seen.append(s.lead)
        assert sorted(seen) == list(range(c)), "every card is in one place"
        for p in range(NUM_PLAYERS):
            assert sorted(s.hands[p]) == np.flatnonzero(s.cards[HELD + p]).tolist(), "held cards"
        assert s.cards.max() <= 1 and (s.cards.sum(axis=0) <= 1).all(), "one place per card"
        assert sum(s.tricks) == int(played[0].sum() + played[1].sum()) // 2, "one per trick"
        sizes = sorted(len(h) for h in s.hands)
        assert sizes[1] - sizes[0] <= 1, "hands shrink one card per play"

    def randomize_hidden(
        self, s: TricksState, player: int, rng: np.random.Generator
    ) -> TricksState:
        # Every card is dealt, so the only thing hidden is the order of the opponent's hand.
        new = s.copy()
        other = new.hands[1 - player]
        new.hands[1 - player] = shuffled(other, rng)
        return new

    def payoffs(self, s: TricksState) -> np.ndarray:
        if not s.terminal:
            return np.zeros(NUM_PLAYERS)
        diff = np.sign(s.tricks[0] - s.tricks[1])
        return np.array([diff, -diff], dtype=np.float64)

    def scores(self, s: TricksState) -> np.ndarray:
        return np.array(s.tricks, dtype=np.float64)

    def action_name(self, action: int) -> str:
        return f"play {card_label(action, self.num_values)}"

    def action_table(self) -> list[tuple[str, str]]:
        n = self.num_values
        return [
            (f"0-{n - 1}", f"play the colour-0 card of value 0..{n - 1} (index = value)"),
            (
                f"{n}-{2 * n - 1}",
                f"play the colour-1 card of value 0..{n - 1} (index = {n} + value)",
            ),
        ]


COLOUR_SYMBOLS = ("\u2660", "\u2665")  # colour 0 shown as spades, colour 1 as hearts
COLOUR_LETTERS = ("S", "H")


def card_label(card: int, num_values: int, unicode: bool = False) -> str:
    """``7S`` / ``7♠`` for value 7 of colour 0."""
    marks = COLOUR_SYMBOLS if unicode else COLOUR_LETTERS
    return f"{card % num_values}{marks[card // num_values]}"
