"""Rules of Palace (source 000; the rules and decisions of docs/games/palace.md).

52 cards, suits ignored; ranks 2..A are indexed 0..12. Each player has 3 face-down
cards, 3 face-up cards and 3 in hand; the rest is the draw pile. Players play cards
of one rank onto the pile, beating its top card, or pick the pile up. 2, 3, 7 and 10
are wild: a 2 resets, a 3 lets only 3s follow, a 7 asks for 7 or lower, a 10 burns
the pile (and so do four cards of one rank in a row); a burner acts again. Hands
refill to 3 from the draw pile; with the hand gone a player plays face-up cards, then
face-down cards blind. Players who run out of cards are out; the last one holding
cards loses.

Actions (79, the source's layout): 0-51 play k = 1..4 cards of rank r from hand
(13 * (k - 1) + r); 52-64 play a face-up card of rank r; 65 play a face-down card
blind (66-77 are never legal: the player cannot choose a card it cannot see);
78 pick up the pile. With ``swap_phase=True`` come 169 swap actions
(79 + 13 * hand rank + face-up rank) and "done swapping" (248).

The state keeps its counts in one int8 vector, ``facts`` (see ``FactIndex``): every
public count and flag by absolute seat, the last plays, then each seat's hand. The count
arrays (hands, face-up, known cards, pile, cards out) are views into it, and the few numbers
kept elsewhere (hand sizes, the top card, ...) are copied into it as they change, so that an
encoder reads a whole observation in one gather (and scales it: the rules keep no
observation).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from card_envs.core.cards import DECK_SIZE, NUM_RANKS, RANK_NAMES, parse_rank, shuffled
from card_envs.core.dtypes import INT8
from card_envs.core.game import (
    AliasedState,
    Game,
    State,
    View,
    check_choice,
    check_int,
    read_only,
)

TWO, THREE, SEVEN, TEN = 0, 1, 5, 8
WILDS = (TWO, THREE, SEVEN, TEN)
HAND_TARGET = 3  # hands are refilled to this many cards while the draw pile lasts
DEAL_EACH = 3  # face-down, face-up and hand cards dealt to each player
BURN_RUN = 4  # this many cards of one rank in a row on top burn the pile

# Action layout (source 000) and the swap-phase extension after it.
FACE_UP_BASE = 52
BLIND = 65
PICK_UP = 78
NUM_PLAY_ACTIONS = 79
SWAP_BASE = 79
SWAP_DONE = SWAP_BASE + NUM_RANKS * NUM_RANKS  # 248

# Kinds of play in the history.
FROM_HAND, FROM_FACE_UP, BLIND_PLAY, BLIND_FAIL, PICKED_UP = range(5)
KIND_NAMES = ("hand", "face-up", "blind", "failed blind", "pick-up")
PLACED = (FROM_HAND, FROM_FACE_UP, BLIND_PLAY)  # kinds that put cards on the pile


def _playable_table() -> np.ndarray:
    """PLAYABLE[top + 1, rank]: whether ``rank`` may go on a pile topped by ``top`` (-1: empty)."""
    table = np.zeros((NUM_RANKS + 1, NUM_RANKS), dtype=bool)
    table[0] = True
    for top in range(NUM_RANKS):
        for rank in range(NUM_RANKS):
            if top == THREE:
                ok = rank == THREE
            elif top == TWO or rank in WILDS:
                ok = True
            elif top == SEVEN:
                ok = rank <= SEVEN
            else:
                ok = rank >= top
            table[top + 1, rank] = ok
    return table


PLAYABLE = _playable_table()
RANK_DECK = [rank for rank in range(NUM_RANKS) for _ in range(4)]  # four of each
# (rank, cards played) of hand actions 0..51, and the source's step bonus for playing them.
HAND_ACTIONS = tuple((a % NUM_RANKS, a // NUM_RANKS + 1) for a in range(FACE_UP_BASE))
HAND_BONUS = (0.0, 0.25, 0.5, 0.75, 2.0)  # by cards played: k / 4, but 2 for four of a kind

# Play-phase legal masks are memoised by an int key that says all they depend on: the
# cards per rank the player may play from (their int8 bytes read as one little-endian
# int, byte r = rank r), with the bytes of ranks the top forbids cleared (& PLAYABLE_BYTES
# [top + 1]), and flag bits above them: the cards are face-up ones, the player plays
# blind, the pile can be picked up (KEY_PILE[top + 1]).
PLAYABLE_BYTES = tuple(sum(0xFF << (8 * rank) for rank in range(NUM_RANKS) if PLAYABLE[t, rank])
                       for t in range(NUM_RANKS + 1))
KEY_COUNTS = (1 << (8 * NUM_RANKS)) - 1
KEY_FACE_UP = 1 << (8 * NUM_RANKS)
KEY_BLIND = 2 << (8 * NUM_RANKS)
KEY_PILE = (0,) + (4 << (8 * NUM_RANKS),) * NUM_RANKS
# A mask is built as an int, byte a = action a. Hand action 13 * k + r is legal when more
# than k cards of rank r are playable: the count bytes copied into 4 blocks of 13 (* SPREAD)
# plus 127 - k in each byte of block k (+ OVER) have bit 7 set exactly there (& HIGH); counts
# are at most 4, so no byte carries into the next. Block 0 alone does the face-up cards.
SPREAD = sum(1 << (8 * NUM_RANKS * k) for k in range(4))
OVER = sum((0x7F - k) << (8 * (NUM_RANKS * k + r)) for k in range(4) for r in range(NUM_RANKS))
HIGH = sum(0x80 << (8 * a) for a in range(FACE_UP_BASE))
# Swap actions that exchange a rank for itself change nothing; they are never legal.
SWAP_USEFUL = ~np.eye(NUM_RANKS, dtype=bool)
# The source's pickup penalty weighs a picked-up rank r by 13 - r (2s cost most, aces least).
PICKUP_WEIGHT = (NUM_RANKS - np.arange(NUM_RANKS)).astype(np.float64)
PICKUP_WEIGHT[[THREE, SEVEN]] = 0.0

# Offsets inside one seat's block of the facts.
SEAT_WIDTH = 29
HAND_SIZE_AT, FACE_UP_AT, FACE_DOWN_AT, KNOWN_AT, OUT_AT = 0, 1, 14, 15, 28
# Offsets inside one history row of the facts (see FactIndex).
ROW_SEAT, ROW_KIND, ROW_RANK, ROW_PLACED, ROW_TAKEN, ROW_BURNED = range(6)


class Play(NamedTuple):
    """One entry of the public history: who did what.

    kind: FROM_HAND, FROM_FACE_UP, BLIND_PLAY, BLIND_FAIL or PICKED_UP. rank: the card
    played (a blind card by the rank it revealed; -1 for a pick-up). count: cards put on
    the pile, or cards taken into the hand for BLIND_FAIL and PICKED_UP. burned: the
    play burned the pile.
    """

    seat: int
    kind: int
    rank: int
    count: int
    burned: bool


class FactIndex:
    """Where each fact sits in a state's ``facts`` (int8), for ``n`` players (absolute seats).

    Seat q's block starts at ``29 * q``: hand size, face-up cards per rank (13), face-down
    cards, cards publicly known to be in the hand per rank (13), 1 if out. Then the pile per
    rank (13), pile size, top rank + 1 (0: empty pile), run, cards out of the game per rank
    (13), cards in the draw pile, 1 in the swap phase. Then a ring of ``n + 1`` history rows
    (``head`` is the newest), 6 numbers each: seat + 1 (0: no play yet), kind + 1, rank + 1
    (0: none), cards placed, cards taken into the hand, 1 if it burned. All of that is public;
    each seat's hand per rank (private) is an array of its own, outside the facts, so that no
    view can reach another seat's hand through its arrays. ``hand(q)`` is where seat q's hand
    follows the facts when an encoder reads the facts and that hand as one vector.
    """

    def __init__(self, n: int):
        self.n = n
        common = n * SEAT_WIDTH
        self.pile = common
        self.pile_size = common + 13
        self.top = common + 14
        self.run = common + 15
        self.out_cards = common + 16
        self.draw = common + 29
        self.swapping = common + 30
        self.history = common + 31
        self.history_rows = n + 1
        self.row_width = 6
        self.public = self.history + self.history_rows * self.row_width
        self.size = self.public

    def seat(self, q: int) -> int:
        return q * SEAT_WIDTH

    def hand(self, q: int) -> int:
        """Where seat q's hand starts in the facts followed by that one hand."""
        return self.public


@functools.cache
def fact_index(n: int) -> FactIndex:
    """The FactIndex of ``n`` players (one per process: states relink through it)."""
    return FactIndex(n)


class PalaceState(AliasedState, State):
    """A game in progress.

    hand: per seat an int8 array of cards per rank (hidden from others); hand_size,
    face_up_size, face_down_size: per-seat counts (public); face_up: (n, 13) int8
    (public); face_down: per seat the list of face-down ranks (hidden from everyone,
    the owner included); known: (n, 13) int8 cards each seat is publicly known to hold
    in hand; draw: the draw pile's ranks, the next card last (hidden); pile: int8 per
    rank, with pile_size, top (-1 when empty) and run (cards of the top rank in a row
    on top); out_cards: int8 per rank of cards out of the game; is_out, finished
    (seats in the order they went out), loser (-1 until the end); history: the last
    plays (``Play``), newest last; swapping: the swap phase is on; facts/head: every public
    count as one int8 vector and its newest history row (see ``FactIndex``): face_up, known,
    pile and out_cards are views into it (each hand is an array of its own); observed: the
    numbers kept outside it are copied into it too (False in the states a search imagines:
    faster, but not to be observed); aliases: see AliasedState.
    """

    __slots__ = ("hand", "hand_size", "face_up", "face_up_size", "face_down", "face_down_size",
                 "known", "draw", "pile", "pile_size", "top", "run", "out_cards", "is_out",
                 "finished", "loser", "history", "swapping", "facts", "head", "observed",
                 "aliases")
    _derived = ("face_up", "known", "pile", "out_cards", "aliases")

    def _relink(self) -> None:
        """Make the public count arrays views into ``facts`` again (see FactIndex)."""
        facts, n = self.facts, len(self.hand_size)
        ix = fact_index(n)
        seats = facts[: n * SEAT_WIDTH].reshape(n, SEAT_WIDTH)
        self.face_up = seats[:, FACE_UP_AT : FACE_UP_AT + NUM_RANKS]
        self.known = seats[:, KNOWN_AT : KNOWN_AT + NUM_RANKS]
        self.pile = facts[ix.pile : ix.pile + NUM_RANKS]
        self.out_cards = facts[ix.out_cards : ix.out_cards + NUM_RANKS]
        self.aliases = None

    def copy(self) -> PalaceState:
        """An independent copy (written out field by field: searches copy states often)."""
        new = PalaceState.__new__(PalaceState)
        new.player, new.terminal, new.truncated = self.player, self.terminal, self.truncated
        new.steps, new.mask = self.steps, None
        new.hand_size = self.hand_size[:]
        new.face_up_size = self.face_up_size[:]
        new.face_down = [f[:] for f in self.face_down]
        new.face_down_size = self.face_down_size[:]
        new.draw = self.draw[:]
        new.pile_size, new.top, new.run = self.pile_size, self.top, self.run
        new.is_out = self.is_out[:]
        new.finished = self.finished[:]
        new.loser = self.loser
        new.history = self.history[:]
        new.swapping = self.swapping
        new.facts = self.facts.copy()
        new.hand = [h.copy() for h in self.hand]
        new.head, new.observed = self.head, self.observed
        new._relink()  # the public count arrays, views into the new facts
        return new


class PalaceView(View):
    """What one seat knows: its hand, every public count, the pile, the history.

    Never the ranks of any face-down card (its own included), other hands beyond the
    cards publicly known to be there, or the draw pile's order. The arrays are the
    state's own: read them, never write them.
    """

    __slots__ = ("num_players", "to_act", "hand", "hand_size", "face_up", "face_up_size",
                 "face_down_size", "known", "pile", "pile_size", "top", "run", "out_cards",
                 "draw_size", "is_out", "finished", "history", "swapping", "public", "head")


# The memoised legal masks (by action count) and plays (by number of players) of every Palace
# game in this process (see Palace._link_caches). The masks start over past 200,000; the plays
# are bounded by the game (a few thousand).
_MASKS: dict[int, dict[int, np.ndarray]] = {}
_PLAYS: dict[int, dict[tuple, tuple[Play, np.ndarray]]] = {}


class Palace(Game):
    """Palace for 2-5 players (see the module docstring and docs/games/palace.md)."""

    name = "palace"
    result_note = ("the last player left holding cards (at the step cap, the players holding "
                   "the most share the loss); place 1 = first out")
    max_steps = 1000

    def __init__(self, num_players: int = 3, swap_phase: bool = False, reward: str = "default"):
        self.num_players = check_int("num_players", num_players, 2, 5)
        check_choice("swap_phase", swap_phase, (False, True))
        check_choice("reward", reward, ("default", "original"))
        self.swap_phase = bool(swap_phase)
        self.reward = reward
        self.shaped = reward == "original"
        self.rewards_sum = "shaped" if self.shaped else "payoffs"
        self.num_actions = SWAP_DONE + 1 if self.swap_phase else NUM_PLAY_ACTIONS
        self.index = fact_index(self.num_players)
        self.draw_at_deal = DECK_SIZE - 3 * DEAL_EACH * self.num_players
        self._config = {"num_players": self.num_players, "swap_phase": self.swap_phase,
                        "reward": reward}
        self._zero_mask = np.zeros(self.num_actions, INT8)
        self._zero_mask.flags.writeable = False
        self._link_caches()
        self._next_seat = [(q + 1) % self.num_players for q in range(self.num_players)]
        ix = self.index
        self._row_slices = [slice(ix.history + row * ix.row_width,
                                  ix.history + (row + 1) * ix.row_width)
                            for row in range(ix.history_rows)]
        self._public = slice(0, ix.public)

    def _link_caches(self) -> None:
        """Share the memoised masks and plays with every game of the same shape, so new envs
        (a vector of them, one per evaluation) start warm."""
        # masks by _legal_mask key (they depend only on the action count)
        self._masks: dict[int, np.ndarray] = _MASKS.setdefault(self.num_actions, {})
        # every Play made so far with its history row, by its fields (see _record)
        self._plays: dict[tuple, tuple[Play, np.ndarray]] = _PLAYS.setdefault(
            self.num_players, {})

    def __getstate__(self) -> dict[str, Any]:
        # The caches stay behind: pickled envs (sent to subprocesses) travel light.
        state = self.__dict__.copy()
        del state["_masks"], state["_plays"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._link_caches()

    # --- dealing ------------------------------------------------------------------------
    def init(self, rng: np.random.Generator) -> PalaceState:
        ranks = shuffled(RANK_DECK, rng)
        n, d = self.num_players, DEAL_EACH
        # As in the source: each player takes 9 cards in a row (face-down, face-up, hand).
        seats = [ranks[9 * q : 9 * q + 9] for q in range(n)]
        return self.deal(hands=[c[2 * d :] for c in seats], face_up=[c[d : 2 * d] for c in seats],
                         face_down=[c[:d] for c in seats], draw=ranks[9 * n :], out=())

    def deal(self, hands, face_up, face_down, draw=(), pile=(), out=None, player: int = 0,
             swapping: bool | None = None, known=None, observed: bool = True) -> PalaceState:
        """A state built from rank lists per seat (for tests and scenarios).

        ``draw`` lists the draw pile from the next card drawn; ``pile`` from bottom to
        top. Cards not placed anywhere are out of the game unless ``out`` lists exactly
        which are. Seats dealt no card at all are out already. ``swapping`` defaults to
        the game's ``swap_phase``. ``known`` lists per seat the hand cards the table knows
        of (default: none). ``observed=False`` does not copy the numbers kept outside the
        facts into them (for states an agent imagines in a search: faster, but they cannot be
        observed).
        """
        n = self.num_players
        s = PalaceState(player)
        s.hand_size = [len(h) for h in hands]
        s.facts = np.zeros(self.index.size, INT8)
        s.hand = [np.zeros(NUM_RANKS, INT8) for _ in range(n)]
        s._relink()
        for q in range(n):
            s.hand[q][:] = _counts(hands[q])
            s.face_up[q] = _counts(face_up[q])
            if known is not None:
                s.known[q] = _counts(known[q])
        s.face_up_size = [len(u) for u in face_up]
        s.face_down = [list(f) for f in face_down]
        s.face_down_size = [len(f) for f in face_down]
        s.draw = list(reversed(list(draw)))
        s.pile[:] = _counts(pile)
        s.pile_size = len(pile)
        s.top = int(pile[-1]) if len(pile) else -1
        s.run = 0
        for rank in reversed(list(pile)):
            if rank != s.top:
                break
            s.run += 1
        placed = s.pile + sum(s.hand) + s.face_up.sum(axis=0) + _counts(draw)
        placed = placed + sum(_counts(f) for f in face_down)
        s.out_cards[:] = 4 - placed if out is None else _counts(out)
        if (s.out_cards + placed != 4).any():
            raise ValueError("a deal must hold each rank exactly 4 times")
        s.is_out = [s.hand_size[q] + s.face_up_size[q] + s.face_down_size[q] == 0 for q in range(n)]
        s.finished = [q for q in range(n) if s.is_out[q]]
        s.loser = -1
        s.history = []
        s.swapping = self.swap_phase if swapping is None else swapping
        s.head = 0
        s.observed = observed
        if observed:
            self.copy_numbers(s, s.facts)
        return s

    def copy_numbers(self, s: PalaceState, facts: np.ndarray) -> None:
        """Write into ``facts`` the numbers ``s`` keeps outside its facts (sizes, flags, the top
        card, the history ring): what ``_apply`` keeps up to date in ``s.facts`` change by
        change when ``s.observed``."""
        ix = self.index
        for q in range(self.num_players):
            at = ix.seat(q)
            facts[at + HAND_SIZE_AT] = s.hand_size[q]
            facts[at + FACE_DOWN_AT] = s.face_down_size[q]
            facts[at + OUT_AT] = s.is_out[q]
        facts[ix.pile_size] = s.pile_size
        facts[ix.top] = s.top + 1
        facts[ix.run] = s.run
        facts[ix.draw] = len(s.draw)
        facts[ix.swapping] = s.swapping
        rows = ix.history_rows
        facts[ix.history : ix.public] = 0
        for age, play in enumerate(reversed(s.history[-rows:])):
            facts[self._row_slices[(s.head - age) % rows]] = self._history_row(play)

    # --- legal actions ------------------------------------------------------------------
    def _legal_mask(self, s: PalaceState) -> np.ndarray:
        if s.swapping:
            return self._swap_mask(s)
        p, top = s.player, s.top
        # The player plays from the hand, else from face-up, else blind.
        if s.hand_size[p]:
            key = int.from_bytes(s.hand[p].tobytes(), "little") & PLAYABLE_BYTES[top + 1]
        elif s.face_up_size[p]:
            key = int.from_bytes(s.face_up[p].tobytes(), "little") & PLAYABLE_BYTES[top + 1]
            key |= KEY_FACE_UP
        else:
            key = KEY_BLIND
        key |= KEY_PILE[top + 1]
        mask = self._masks.get(key)
        if mask is None:
            if len(self._masks) > 200_000:
                self._masks.clear()
            mask = self._masks[key] = self._mask_of_key(key)
        return mask

    def _mask_of_key(self, key: int) -> np.ndarray:
        """The (read-only) play-phase mask that a ``_legal_mask`` key stands for."""
        counts = key & KEY_COUNTS  # playable cards per rank
        if key & KEY_BLIND:
            # Never restricted by the top card: the player can't see its card.
            mask = 1 << (8 * BLIND)
        elif key & KEY_FACE_UP:
            mask = ((counts + (OVER & KEY_COUNTS)) & HIGH & KEY_COUNTS) << (8 * FACE_UP_BASE - 7)
        else:
            mask = ((counts * SPREAD + OVER) & HIGH) >> 7
        if key & KEY_PILE[-1]:
            mask |= 1 << (8 * PICK_UP)
        return np.frombuffer(mask.to_bytes(self.num_actions, "little"), INT8)

    def _swap_mask(self, s: PalaceState) -> np.ndarray:
        """Swap-phase mask: any hand rank for any other face-up rank, or done."""
        p = s.player
        pairs = np.outer(s.hand[p] > 0, s.face_up[p] > 0) & SWAP_USEFUL
        mask = np.zeros(self.num_actions, INT8)
        mask[SWAP_BASE:SWAP_DONE] = pairs.reshape(-1)
        mask[SWAP_DONE] = 1
        mask.setflags(write=False)  # masks are read-only (Game._legal_mask)
        return mask

    def playable(self, top: int, rank: int) -> bool:
        """Whether a card of ``rank`` may go on a pile whose top rank is ``top`` (-1: empty)."""
        return bool(PLAYABLE[top + 1, rank])

    # --- playing ------------------------------------------------------------------------
    def _apply(self, s: PalaceState, action: int, rng: np.random.Generator) -> np.ndarray | None:
        if action >= SWAP_BASE:
            self._swap(s, action)
            if s.steps + 1 < self.max_steps:
                return None
            return self._shaped_rewards(s, s.player, 0.0, False, True) if self.shaped else \
                self._result_payoffs(s, True)
        p = s.player
        if action < FACE_UP_BASE:
            kind = FROM_HAND
            rank, count = HAND_ACTIONS[action]
            self._take_from_hand(s, p, rank, count)
            burned = self._place(s, rank, count)
            bonus = HAND_BONUS[count]
        elif action < BLIND:
            kind, rank, count = FROM_FACE_UP, action - FACE_UP_BASE, 1
            self._take_face_up(s, p, rank)
            burned = self._place(s, rank, 1)
            bonus = 5.0
        elif action == BLIND:
            kind, rank, count, burned = self._play_blind(s, p, rng)
            bonus = 10.0 if kind == BLIND_PLAY else -5.0
        else:
            kind, rank, burned = PICKED_UP, -1, False
            count, bonus = self._pick_up(s, p)
        self._record(s, p, kind, rank, count, burned)
        if s.draw and s.hand_size[p] < HAND_TARGET:
            self._draw_up(s, p)
        went_out = not (s.hand_size[p] or s.face_up_size[p] or s.face_down_size[p])
        if went_out:
            self._go_out(s, p)
        # A burner acts again; otherwise (or if it went out) the next player still in acts.
        if (went_out or not burned) and not s.terminal:
            after = self._next_seat
            q = after[p]
            while s.is_out[q]:
                q = after[q]
            s.player = q
        capped = not s.terminal and s.steps + 1 >= self.max_steps  # this step hits the cap
        if not self.shaped:
            return self._result_payoffs(s, capped) if s.terminal or capped else None
        return self._shaped_rewards(s, p, bonus, went_out, capped)

    def _take_from_hand(self, s: PalaceState, p: int, rank: int, count: int) -> None:
        """Remove ``count`` cards of ``rank`` from p's hand."""
        # Per-step code reads array entries with .item(): arithmetic on numpy scalars is slow.
        hand = s.hand[p]
        hand[rank] = hand.item(rank) - count
        size = s.hand_size[p] = s.hand_size[p] - count
        if s.observed:
            s.facts[p * SEAT_WIDTH + HAND_SIZE_AT] = size
        known = s.known.item(p, rank)
        if known:
            # Others knew of `known` such cards; those played may have been unknown ones,
            # so what stays certain is the rest.
            s.known[p, rank] = max(0, known - count)

    def _take_face_up(self, s: PalaceState, p: int, rank: int) -> None:
        s.face_up[p, rank] = s.face_up.item(p, rank) - 1
        s.face_up_size[p] -= 1

    def _place(self, s: PalaceState, rank: int, count: int) -> bool:
        """Put ``count`` cards of ``rank`` on the pile; a 10 or a fourth in a row burns it
        (returns whether it burned)."""
        if rank == TEN:
            s.out_cards[TEN] = s.out_cards.item(TEN) + count
            self._burn(s)
            return True
        pile = s.pile
        pile[rank] = pile.item(rank) + count
        size = s.pile_size = s.pile_size + count
        if rank == s.top:
            run = s.run = s.run + count
        else:
            s.top = rank
            run = s.run = count
        burned = run >= BURN_RUN
        if s.observed:
            facts, ix = s.facts, self.index
            facts[ix.pile_size] = size
            facts[ix.top] = rank + 1
            facts[ix.run] = run
        if burned:
            self._burn(s)
        return burned

    def _burn(self, s: PalaceState) -> None:
        """The whole pile leaves the game."""
        s.out_cards += s.pile
        self._clear_pile(s)

    def _clear_pile(self, s: PalaceState) -> None:
        if s.observed:
            facts, ix = s.facts, self.index
            facts[ix.pile_size] = facts[ix.top] = facts[ix.run] = 0
        s.pile.fill(0)
        s.top = -1
        s.pile_size = 0
        s.run = 0

    def _pick_up(self, s: PalaceState, p: int) -> tuple[int, float]:
        """Move the pile into p's hand (a run of 3s on top leaves the game); the number of
        cards taken and the source's step bonus for it (0 unless shaped)."""
        count = s.pile_size
        if s.top == THREE:
            count -= s.run
            s.pile[THREE] = s.pile.item(THREE) - s.run
            s.out_cards[THREE] = s.out_cards.item(THREE) + s.run
        bonus = -_pickup_penalty(s.pile, count) if self.shaped else 0.0
        self._take_into_hand(s, p, s.pile, count)
        self._clear_pile(s)
        return count, bonus

    def _take_into_hand(self, s: PalaceState, p: int, cards: np.ndarray, count: int) -> None:
        """Add ``cards`` (per rank, ``count`` in all) to p's hand in full view of everyone."""
        hand, known = s.hand[p], s.known[p]
        hand += cards
        known += cards
        s.hand_size[p] += count
        if s.observed:
            s.facts[p * SEAT_WIDTH + HAND_SIZE_AT] = s.hand_size[p]

    def _play_blind(self, s: PalaceState, p: int,
                    rng: np.random.Generator) -> tuple[int, int, int, bool]:
        """Turn up a random face-down card: play it if legal, else take it and the pile.
        Returns the play's kind, rank, count and whether it burned (see ``Play``)."""
        cards = s.face_down[p]
        rank = cards.pop(int(rng.random() * len(cards)))
        s.face_down_size[p] -= 1
        if s.observed:
            s.facts[p * SEAT_WIDTH + FACE_DOWN_AT] = s.face_down_size[p]
        if PLAYABLE[s.top + 1, rank]:
            return BLIND_PLAY, rank, 1, self._place(s, rank, 1)
        # docs/games/palace.md: the revealed card and the whole pile (3s included) go to the hand.
        taken = s.pile.copy()
        taken[rank] += 1
        count = s.pile_size + 1
        self._take_into_hand(s, p, taken, count)
        self._clear_pile(s)
        return BLIND_FAIL, rank, count, False

    def _draw_up(self, s: PalaceState, p: int) -> None:
        """Refill p's hand (short of 3 cards) from the draw pile while it lasts."""
        hand, draw = s.hand[p], s.draw
        take = min(HAND_TARGET - s.hand_size[p], len(draw))
        for _ in range(take):
            rank = draw.pop()
            hand[rank] = hand.item(rank) + 1
        s.hand_size[p] += take
        if s.observed:
            s.facts[p * SEAT_WIDTH + HAND_SIZE_AT] = s.hand_size[p]
            s.facts[self.index.draw] = len(draw)

    def _go_out(self, s: PalaceState, p: int) -> None:
        """Mark p, who has no card left, out; end the game when one player still holds cards."""
        s.is_out[p] = True
        s.finished.append(p)
        if s.observed:
            s.facts[p * SEAT_WIDTH + OUT_AT] = 1
        if len(s.finished) == self.num_players - 1:
            s.loser = s.is_out.index(False)
            s.terminal = True

    def _record(self, s: PalaceState, *fields) -> None:
        """Append the ``Play`` of these fields to the history and to the facts' ring of
        recent plays."""
        # The few thousand possible plays are made once each, with their history rows.
        known = self._plays.get(fields)
        if known is None:
            play = Play(*fields)
            known = self._plays[fields] = (play, self._history_row(play))
        play, row = known
        history = s.history
        history.append(play)
        rows = self.index.history_rows
        if len(history) > rows:
            del history[0]
        head = s.head = (s.head + 1) % rows
        if s.observed:
            s.facts[self._row_slices[head]] = row

    def _history_row(self, play: Play) -> np.ndarray:
        """The facts' history row of ``play`` (see ``FactIndex``)."""
        row = np.zeros(self.index.row_width, INT8)
        row[ROW_SEAT] = play.seat + 1
        row[ROW_KIND] = play.kind + 1
        row[ROW_RANK] = play.rank + 1
        row[ROW_PLACED if play.kind in PLACED else ROW_TAKEN] = play.count
        row[ROW_BURNED] = play.burned
        return row

    def _swap(self, s: PalaceState, action: int) -> None:
        """Exchange a hand card for a face-up card, or end this seat's swapping."""
        p = s.player
        if action == SWAP_DONE:
            if p + 1 < self.num_players:
                s.player = p + 1
            else:
                s.swapping = False
                s.player = 0
                if s.observed:
                    s.facts[self.index.swapping] = 0
            return
        given, taken = divmod(action - SWAP_BASE, NUM_RANKS)
        hand, face_up, known = s.hand[p], s.face_up[p], s.known[p]
        hand[given] -= 1
        hand[taken] += 1
        face_up[taken] -= 1
        face_up[given] += 1
        # Everyone saw the face-up card go into the hand.
        known[taken] += 1
        known[given] = max(0, known[given] - 1)

    def _shaped_rewards(self, s: PalaceState, p: int, bonus: float, went_out: bool,
                        capped: bool) -> np.ndarray:
        """Source 000's blog-era step rewards for the actor, plus the final payoffs."""
        if s.terminal or capped:
            rewards = self._result_payoffs(s, capped)
        else:
            rewards = np.zeros(self.num_players)
        rewards[p] += bonus
        if went_out:
            rewards[p] += 20.0 if len(s.finished) == 1 else 10.0
        if capped:
            # The source's stalemate penalty for everyone still holding cards.
            for q in range(self.num_players):
                if not s.is_out[q]:
                    rewards[q] -= 10.0
        return rewards

    # --- what a seat sees ---------------------------------------------------------------
    def view(self, s: PalaceState, player: int) -> PalaceView:
        v = PalaceView()
        v.player = player
        v.to_act = s.player == player and not (s.terminal or s.truncated)
        v.legal = self.legal_mask(s) if v.to_act else self._zero_mask
        v.num_players = self.num_players
        aliases = s.aliases
        if aliases is None:  # read-only views of the state's arrays (changed in place), once
            aliases = s.aliases = self._aliases(s)
        hands, v.face_up, v.known, v.pile, v.out_cards, v.public = aliases
        v.hand = hands[player]
        v.hand_size = tuple(s.hand_size)
        v.face_up_size = tuple(s.face_up_size)
        v.face_down_size = tuple(s.face_down_size)
        v.pile_size = s.pile_size
        v.top = s.top
        v.run = s.run
        v.draw_size = len(s.draw)
        v.is_out = tuple(s.is_out)
        v.finished = tuple(s.finished)
        v.history = tuple(s.history)  # of Play tuples of ints
        v.swapping = s.swapping
        v.head = s.head
        return v

    def _aliases(self, s: PalaceState) -> tuple:
        """Read-only views of the arrays a view hands out: (hands, face_up, known, pile,
        out_cards, the public facts). The rules change these arrays in place and never replace
        them, so the views stay true for the state's life (``copy`` and unpickling drop them)."""
        return (tuple(read_only(h) for h in s.hand), read_only(s.face_up), read_only(s.known),
                read_only(s.pile), read_only(s.out_cards),
                read_only(s.facts[self._public]) if s.observed else None)

    def payoffs(self, s: PalaceState) -> np.ndarray:
        """Loser -1, every other player +1/(n-1); zeros until the game ends.

        At the step cap (truncated) the players still holding the most cards share the
        loss: see ``cap_losers``.
        """
        if not (s.terminal or s.truncated):
            return np.zeros(self.num_players)
        return self._result_payoffs(s, s.truncated)

    def cap_losers(self, s: PalaceState) -> list[int]:
        """The seats that lose a game cut by the step cap: of the players still holding cards,
        those holding the most (hand, face-up and face-down together)."""
        held = {q: self._cards_held(s, q) for q in range(self.num_players) if not s.is_out[q]}
        most = max(held.values())
        return [q for q, count in held.items() if count == most]

    def _cards_held(self, s: PalaceState, q: int) -> int:
        return s.hand_size[q] + s.face_up_size[q] + s.face_down_size[q]

    def _result_payoffs(self, s: PalaceState, capped: bool) -> np.ndarray:
        """The game's result: the loser -1, every other player +1/(n-1). In a game cut by the
        cap with k players tied for the most cards, each of them gets the expected payoff of
        a fair draw for the loss among them, -1/k + (1 - 1/k)/(n-1) (still zero-sum)."""
        n = self.num_players
        pay = np.full(n, 1.0 / (n - 1))
        if capped:
            losers = self.cap_losers(s)
            k = len(losers)
            pay[losers] = -1.0 / k + (1.0 - 1.0 / k) / (n - 1)
        else:
            pay[s.loser] = -1.0
        return pay

    def results(self, s: PalaceState) -> list[dict[str, Any]]:
        infos = super().results(s)
        for player, info in enumerate(infos):
            info["place"] = self.place(s, player)
        return infos

    def place(self, s: PalaceState, player: int) -> int | None:
        """1 for the first player out, ..., n for the loser; None while still undecided.

        In a game cut by the step cap the players still holding cards follow those out,
        fewest cards first; players holding as many cards share the better place.
        """
        if s.is_out[player]:
            return s.finished.index(player) + 1
        if s.terminal:
            return self.num_players
        if s.truncated:
            mine = self._cards_held(s, player)
            fewer = sum(1 for q in range(self.num_players)
                        if not s.is_out[q] and self._cards_held(s, q) < mine)
            return len(s.finished) + fewer + 1
        return None

    # --- consistency --------------------------------------------------------------------
    def check_invariants(self, s: PalaceState) -> None:
        n = self.num_players
        hands = np.stack(s.hand)
        total = hands.sum(axis=0) + s.face_up.sum(axis=0) + s.pile + s.out_cards
        total = total + _counts([r for f in s.face_down for r in f]) + _counts(s.draw)
        assert (total == 4).all(), f"each rank is in the game 4 times: {total}"
        assert (hands >= 0).all() and (s.face_up >= 0).all() and (s.pile >= 0).all()
        assert s.hand_size == hands.sum(axis=1).tolist(), "hand sizes"
        assert s.face_up_size == s.face_up.sum(axis=1).tolist(), "face-up sizes"
        assert s.face_down_size == [len(f) for f in s.face_down], "face-down sizes"
        assert (s.known >= 0).all() and (s.known <= hands).all(), "known cards are held"
        assert s.pile_size == int(s.pile.sum()), "pile size"
        assert (s.top >= 0) == (s.pile_size > 0) and s.top != TEN, "a top card iff a pile; no 10"
        if s.top >= 0:
            assert 1 <= s.run < BURN_RUN and s.run <= s.pile[s.top], "run of the top rank"
        for q in range(n):
            empty = s.hand_size[q] + s.face_up_size[q] + s.face_down_size[q] == 0
            assert s.is_out[q] == empty, f"seat {q} is out iff it has no cards"
            assert s.face_up_size[q] <= DEAL_EACH and s.face_down_size[q] <= DEAL_EACH
        assert sorted(s.finished) == [q for q in range(n) if s.is_out[q]], "finishing order"
        assert len(s.history) <= self.index.history_rows
        if not s.done:
            assert not s.is_out[s.player], "the player to act is still in"
            assert len(s.finished) < n - 1
            if s.draw:
                assert min(s.hand_size) >= HAND_TARGET, "hands are full while the draw pile lasts"
        if s.terminal:
            assert len(s.finished) == n - 1 and not s.is_out[s.loser]
        if s.observed:
            facts = s.facts.copy()
            self.copy_numbers(s, facts)
            assert np.array_equal(facts, s.facts), "the facts hold the state's numbers"

    def randomize_hidden(self, s: PalaceState, player: int,
                         rng: np.random.Generator) -> PalaceState:
        # Hidden from `player`: every face-down card, the draw pile, and the part of each
        # other hand that is not publicly known. Pool them and deal them back out.
        new = s.copy()
        others = [q for q in range(self.num_players) if q != player]
        unknown = [s.hand[q] - s.known[q] for q in others]
        pool = list(s.draw) + [r for f in s.face_down for r in f]
        pool += [r for u in unknown for r in np.repeat(np.arange(NUM_RANKS), u).tolist()]
        pool = shuffled(pool, rng)
        at = len(s.draw)
        new.draw = pool[:at]
        for q in range(self.num_players):
            size = len(s.face_down[q])
            new.face_down[q] = pool[at : at + size]
            at += size
        for q, u in zip(others, unknown, strict=True):
            size = int(u.sum())
            new.hand[q][:] = s.known[q] + _counts(pool[at : at + size])
            at += size
        return new

    # --- names --------------------------------------------------------------------------
    def action_name(self, action: int) -> str:
        if action < FACE_UP_BASE:
            count, rank = divmod(action, NUM_RANKS)
            return "play " + " ".join([RANK_NAMES[rank]] * (count + 1))
        if action < BLIND:
            return f"play face-up {RANK_NAMES[action - FACE_UP_BASE]}"
        if action == BLIND:
            return "play face-down (blind)"
        if action < PICK_UP:
            return f"face-down {RANK_NAMES[action - BLIND]} (never legal)"
        if action == PICK_UP:
            return "pick up the pile"
        if action < SWAP_DONE:
            given, taken = divmod(action - SWAP_BASE, NUM_RANKS)
            return f"swap hand {RANK_NAMES[given]} for face-up {RANK_NAMES[taken]}"
        return "done swapping"

    def action_table(self) -> list[tuple[str, str]]:
        rows = [(f"{13 * k}-{13 * k + 12}",
                 f"play {k + 1} card{'s' if k else ''} of rank 2..A from the hand "
                 f"(index = {13 * k} + rank)") for k in range(4)]
        rows += [
            ("52-64", "play the face-up card of rank 2..A (only with an empty hand)"),
            ("65", "play a face-down card blind (only with no hand and no face-up cards; "
                   "the environment draws one at random)"),
            ("66-77", "never legal (the source's per-rank face-down actions: a player cannot "
                      "choose a card it cannot see)"),
            ("78", "pick up the pile (whenever it is not empty)"),
        ]
        if self.swap_phase:
            rows += [
                (f"{SWAP_BASE}-{SWAP_DONE - 1}", f"swap phase: give a hand card of rank a for the "
                                                 f"face-up card of rank b (index = {SWAP_BASE} + "
                                                 "13 * a + b; a != b)"),
                (str(SWAP_DONE), "swap phase: done swapping (the next seat swaps, or play starts)"),
            ]
        return rows


def _counts(ranks) -> np.ndarray:
    """int8 cards per rank of a list of rank indices."""
    return np.bincount(np.asarray(list(ranks), dtype=np.int64), minlength=NUM_RANKS).astype(np.int8)


def _pickup_penalty(picked: np.ndarray, total: int) -> float:
    """The source's cost of picking up ``picked`` (``total`` cards): size/13 x the mean weight
    of non-3/7 cards."""
    if total == 0:
        return 0.0
    weighed = int(total - picked[THREE] - picked[SEVEN])
    if weighed == 0:
        return 0.5
    return total / NUM_RANKS * float(PICKUP_WEIGHT @ picked) / weighed


def ranks(text: str) -> list[int]:
    """Rank indices from names, e.g. ``ranks("4 9 9 K")``; for tests and scenarios."""
    return [parse_rank(t) for t in text.split()]
