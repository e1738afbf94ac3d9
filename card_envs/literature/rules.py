"""Rules of Literature: 4, 6 or 8 players in two teams, 48 cards (no 7s), 8 half-suits.

Teams alternate: even seats against odd seats. Seat 0 starts. On your turn you ask an
opponent who has cards for a card of a half-suit still in play of which you hold a card but
not that card: a success moves the card to you and you ask again; a failure passes the turn to
the asked player. Or you claim a half-suit: declare it, then name a teammate (or yourself) as
the holder of each of its six cards, one decision per card. All six with your team and named
right: your team scores it; all six with your team but misnamed: it is discarded; any with the
opponents: they score it. The claimed cards leave the hands (their holders are shown). The
game ends when all eight half-suits are resolved; more half-suits wins.

rules="original" (source 002, 4 players): asks only; whenever a player's own knowledge proves
who holds all six cards of a half-suit within his team, that half-suit is claimed for him at
once (always correctly). The game also ends when either team has no cards left.

Every player's knowledge of every hand is kept by ``knowledge.Engine`` from the player's own
hand and public events only; the views carry it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.cards import shuffled
from card_envs.core.dtypes import INT8, UINT8
from card_envs.core.game import Game, State, View, check_choice, check_int
from card_envs.literature import deck
from card_envs.literature.deck import (
    ALL_CARD_BITS,
    CARD_BIT,
    HALF_BITS,
    HALF_SUIT_SIZE,
    NUM_CARDS,
    NUM_HALF_SUITS,
    card_label,
    half_suit_label,
)
from card_envs.literature.knowledge import (
    ALL_PENDING,
    Engine,
    Knowledge,
    first_order_engine,
    public_engine,
    standard_engine,
)

PLAYER_COUNTS = (4, 6, 8)
SLOT = deck.SLOT_BITS  # bits of a hand in slot form
LIVE, DISCARDED = -1, 2  # a half-suit's outcome: LIVE, the scoring team (0 or 1), or DISCARDED
LAST_ASKS = 4  # asks kept in the view (newest last)
MASK_CACHE = 4096  # legal masks remembered per (players, rules), then start over
# the memoised legal masks of every Literature game in this process, by (players, original rules)
_MASKS: dict[tuple[int, bool], dict[int, np.ndarray]] = {}
# BIT_ROWS[b]: bits 0-7 of byte b as eight bytes 0/1: the declare rows of the legal masks.
# ASK_ROWS[b]: the six cards one may ask for in a half-suit of which one holds the cards of
# slot byte b (none when b is 0): the ask rows.
BIT_ROWS = tuple(bytes((b >> k) & 1 for k in range(8)) for b in range(256))
ASK_ROWS = tuple(BIT_ROWS[~b & 0x3F if b else 0][:HALF_SUIT_SIZE] for b in range(256))
NO_CARDS = bytes(NUM_CARDS)
POSITIONS = tuple(tuple(k for k in range(8) if b >> k & 1) for b in range(256))  # bits of a byte


class LiteratureState(State):
    """A game in progress.

    hands: each seat's cards in slot form (see ``deck``); sizes: their counts; know: every
    player's knowledge tables (``knowledge.Knowledge``); live: bit h set while half-suit h is
    in play; outcome / declarer: per half-suit, LIVE / scoring team / DISCARDED and who
    claimed it; score: half-suits scored per team; claim_half / claim_names: the claim being
    named (-1: none) and the seats named so far; last_asks: the latest asks as (asker,
    respondent, card, success); log: every public event, ("ask", asker, respondent, card,
    success) or ("claim", declarer, half_suit, holders, names, outcome).
    """

    __slots__ = ("hands", "sizes", "know", "live", "outcome", "declarer", "score", "claim_half",
                 "claim_names", "last_asks", "log")

    def copy(self) -> LiteratureState:
        new = LiteratureState(self.player)
        new.terminal, new.truncated, new.steps = self.terminal, self.truncated, self.steps
        new.hands, new.sizes = list(self.hands), list(self.sizes)
        new.know = self.know.copy()
        new.live = self.live
        new.outcome, new.declarer = list(self.outcome), list(self.declarer)
        new.score = list(self.score)
        new.claim_half, new.claim_names = self.claim_half, list(self.claim_names)
        new.last_asks = self.last_asks
        new.log = list(self.log)  # events are tuples: sharing them is safe
        return new


class LiteratureView(View):
    """What one seat knows: its hand, every public fact, and its knowledge tables.

    Seats are absolute (0..n-1); ``turn`` is the seat to act (or that acted last, once the
    game is over). ``tables`` is uint8 (3, n, 8): for each seat s and half-suit h, the bits
    (card positions 0-5) this seat knows s holds ``[0, s, h]`` and lacks ``[1, s, h]`` (cards
    out of play count as lacked), and the least number of cards of h that s holds
    ``[2, s, h]``; ``holds()``, ``lacks()`` and ``least()`` give them per card. ``raw`` is the
    same as bytes. ``believed[i]`` (original rules) is the raw tables of what this seat can
    tell that seat i knows.
    """

    __slots__ = ("num_players", "to_act", "turn", "original", "hand", "sizes", "live", "outcome",
                 "declarer", "score", "claim_half", "claim_names", "last_asks", "raw", "believed")

    @property
    def tables(self) -> np.ndarray:
        return np.frombuffer(self.raw, UINT8).reshape(3, self.num_players, NUM_HALF_SUITS)

    def believed_tables(self, i: int) -> np.ndarray:
        """Like ``tables``, for what this seat can tell that seat i knows (original rules)."""
        raw = np.frombuffer(self.believed[i], UINT8)
        return raw.reshape(3, self.num_players, NUM_HALF_SUITS)

    @property
    def team(self) -> int:
        return self.player % 2

    def teammates(self) -> list[int]:
        """This seat's team, itself first, then clockwise: the order of the naming actions."""
        n = self.num_players
        return [(self.player + 2 * t) % n for t in range(n // 2)]

    def opponents(self) -> list[int]:
        """The opposing seats, clockwise from the left: the order of the ask actions."""
        n = self.num_players
        return [(self.player + 2 * j + 1) % n for j in range(n // 2)]

    def holds(self) -> np.ndarray:
        """int8 (n, 48): 1 where this seat knows that seat holds the card."""
        return card_table(self.tables[0])

    def lacks(self) -> np.ndarray:
        """int8 (n, 48): 1 where this seat knows that seat lacks the card (or it is out of play)."""
        return card_table(self.tables[1])

    def least(self) -> np.ndarray:
        """int (n, 8): the least number of cards each seat holds in each half-suit."""
        return self.tables[2].astype(np.int64)

    def hand_cards(self) -> list[int]:
        return deck.cards_in(self.hand)


def card_table(seat_bytes: np.ndarray) -> np.ndarray:
    """uint8 (n, 8) card bits per seat and half-suit as an int8 (n, 48) card table."""
    return deck.BYTE_CARDS[seat_bytes].reshape(len(seat_bytes), NUM_CARDS)


class Literature(Game):
    """Literature (see the module docstring and docs/games/literature.md)."""

    name = "literature"
    score_name = "half-suits won by the team"

    def __init__(self, num_players: int | None = None, rules: str = "standard",
                 max_steps: int = 400):
        check_choice("rules", rules, ("standard", "original"))
        if num_players is None:  # the default: 6 players, or the source's 4 under its rules
            num_players = 4 if rules == "original" else 6
        self.num_players = n = check_int("num_players", num_players, 4, 8, choices=PLAYER_COUNTS)
        if rules == "original" and n != 4:
            raise ValueError(
                f"num_players={n!r} is not valid with rules='original'; choose one of 4")
        self.max_steps = check_int("max_steps", max_steps, 1, 10_000)
        self.rules = rules
        self.original = rules == "original"
        self.team_size = n // 2
        self.num_asks = self.team_size * NUM_CARDS
        self.declare_base = self.num_asks
        self.name_base = self.num_asks + NUM_HALF_SUITS
        self.num_actions = self.num_asks if self.original else self.name_base + self.team_size
        self.hand_size = NUM_CARDS // n
        self._config = {"num_players": n, "rules": rules, "max_steps": self.max_steps}
        self.engine = first_order_engine(n) if self.original else standard_engine(n)
        self._self_observer = [k * n + k if self.original else k for k in range(n)]
        self._build_mask_tables()
        self._link_masks()
        self._zero_mask = np.zeros(self.num_actions, INT8)
        self._zero_mask.flags.writeable = False

    def _build_mask_tables(self) -> None:
        """The pieces of the legal masks: per player the opponents in ask order, the mask of
        the naming steps (only "name teammate t" legal), the declare rows."""
        self._opponents = [[self.opponent(p, j) for j in range(self.team_size)]
                           for p in range(self.num_players)]
        self._all_asked = ((1 << self.team_size) - 1) << (SLOT + NUM_HALF_SUITS)  # key bits
        naming = bytes(self.name_base) + b"\x01" * self.team_size
        self._naming_mask = np.frombuffer(naming, INT8) if not self.original else None
        # the declare and naming actions after the asks, by live half-suits (none: original)
        self._declare_rows = [b"" if self.original else BIT_ROWS[live] + bytes(self.team_size)
                              for live in range(256)]

    # --- seats --------------------------------------------------------------------------
    def opponent(self, player: int, j: int) -> int:
        """The seat of ``player``'s opponent number j (clockwise from the left)."""
        return (player + 2 * j + 1) % self.num_players

    def teammate(self, player: int, t: int) -> int:
        """The seat of ``player``'s teammate number t (0 is the player itself)."""
        return (player + 2 * t) % self.num_players

    def self_observer(self, player: int) -> int:
        """The knowledge engine's observer that is ``player`` itself."""
        return self._self_observer[player]

    def team_cards(self, s: LiteratureState, team: int) -> int:
        return sum(s.sizes[team::2])

    # --- dealing ------------------------------------------------------------------------
    def init(self, rng: np.random.Generator) -> LiteratureState:
        order = shuffled(range(NUM_CARDS), rng)
        n = self.num_players
        return self.deal([order[p::n] for p in range(n)])

    def deal(self, hands: list[list[int]], player: int = 0) -> LiteratureState:
        """A state with the given hands (card indices) and ``player`` to act; for tests."""
        if len(hands) != self.num_players:
            raise ValueError(f"give {self.num_players} hands, got {len(hands)}")
        s = LiteratureState(player)
        s.hands = [deck.slot_bits(h) for h in hands]
        s.sizes = [len(h) for h in hands]
        s.know = self.engine.deal(s.hands)
        s.live = (1 << NUM_HALF_SUITS) - 1
        s.outcome = [LIVE] * NUM_HALF_SUITS
        s.declarer = [-1] * NUM_HALF_SUITS
        s.score = [0, 0]
        s.claim_half = -1
        s.claim_names = []
        s.last_asks = ()
        s.log = []
        if self.original:
            self._claim_what_is_proven(s)
        self._settle_turn(s)
        return s

    # --- the legal actions --------------------------------------------------------------
    def _legal_mask(self, s: LiteratureState) -> np.ndarray:
        if s.claim_half >= 0:
            return self._naming_mask
        # key: the hand (slot form), the live half-suits, which opponents have cards
        key = s.hands[s.player]
        if not self.original:
            key |= s.live << SLOT
        sizes = s.sizes
        if all(sizes):  # as usual: every opponent has cards
            key |= self._all_asked
        else:
            bit = 1 << (SLOT + NUM_HALF_SUITS)
            for seat in self._opponents[s.player]:
                if sizes[seat]:
                    key |= bit
                bit <<= 1
        mask = self._masks.get(key)
        if mask is None:
            # The same few patterns come back again and again: keep them (read-only) for reuse.
            if len(self._masks) >= MASK_CACHE:
                self._masks.clear()
            mask = self._masks[key] = self._build_mask(key)
        return mask

    def _build_mask(self, key: int) -> np.ndarray:
        """The read-only legal mask of an ask-or-declare decision, from ``_legal_mask``'s key."""
        # the hand's byte of each of the 8 half-suits (written out: far cheaper than a map)
        h0, h1, h2, h3, h4, h5, h6, h7 = (key & ALL_CARD_BITS).to_bytes(8, "little")
        rows = ASK_ROWS
        asks = b"".join((rows[h0], rows[h1], rows[h2], rows[h3],
                         rows[h4], rows[h5], rows[h6], rows[h7]))
        asked = key >> (SLOT + NUM_HALF_SUITS)  # bit j: opponent j has cards
        if asked == (1 << self.team_size) - 1:
            asks *= self.team_size
        else:
            asks = b"".join([asks if asked >> j & 1 else NO_CARDS for j in range(self.team_size)])
        return np.frombuffer(asks + self._declare_rows[key >> SLOT & 0xFF], INT8)

    def _link_masks(self) -> None:
        """Share the memoised masks with every game of the same players and rules, so new envs
        start warm."""
        self._masks: dict[int, np.ndarray] = _MASKS.setdefault(
            (self.num_players, self.original), {})

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_masks"]  # a cache: not worth pickling
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._link_masks()

    # --- playing ------------------------------------------------------------------------
    def _apply(self, s: LiteratureState, action: int,
               rng: np.random.Generator) -> np.ndarray | None:
        p = s.player
        if action < self.num_asks:
            j, card = divmod(action, NUM_CARDS)
            self._ask(s, p, self.opponent(p, j), card)
            if self.original:
                self._claim_what_is_proven(s)
        elif s.claim_half < 0:
            s.claim_half = action - self.declare_base
            return None
        else:
            s.claim_names.append(self.teammate(p, action - self.name_base))
            if len(s.claim_names) < HALF_SUIT_SIZE:
                return None
            h, names = s.claim_half, tuple(s.claim_names)
            s.claim_half, s.claim_names = -1, []
            scored = self._resolve_claim(s, p, h, names)
            after = self._next_player(s, p, keep=scored)
            s.player = after if after >= 0 else p  # nobody has cards: the game is over
        self._settle_turn(s)
        if s.terminal:
            return self.payoffs(s)
        return None

    def _ask(self, s: LiteratureState, asker: int, respondent: int, card: int) -> None:
        """``asker`` asks ``respondent`` for ``card``: the card moves, or the turn does."""
        bit = 1 << CARD_BIT[card]
        success = bool(s.hands[respondent] & bit)
        if success:
            s.hands[respondent] &= ~bit
            s.hands[asker] |= bit
            s.sizes[respondent] -= 1
            s.sizes[asker] += 1
        else:
            s.player = respondent
        self.engine.ask(s.know, asker, respondent, card, success)
        s.last_asks = (*s.last_asks[1 - LAST_ASKS:], (asker, respondent, card, success))
        s.log.append(("ask", asker, respondent, card, success))

    def _resolve_claim(self, s: LiteratureState, declarer: int, h: int,
                       names: tuple[int, ...]) -> bool:
        """Settle a claim of half-suit h naming ``names``; True if the declarer's team scored it."""
        n, at = self.num_players, 8 * h
        holders, held = [-1] * HALF_SUIT_SIZE, [0] * n
        for q in range(n):
            mine = s.hands[q] >> at & 0x3F
            if mine:
                for pos in POSITIONS[mine]:
                    holders[pos] = q
                held[q] = len(POSITIONS[mine])
                s.hands[q] &= ~HALF_BITS[h]
                s.sizes[q] -= held[q]
        holders = tuple(holders)
        if -1 in holders:
            raise AssertionError(f"a card of {half_suit_label(h, False)} is in no hand")
        team = declarer % 2
        if any(q % 2 != team for q in holders):
            outcome = 1 - team
        elif holders == names:
            outcome = team
        else:
            outcome = DISCARDED
        self.engine.claim(s.know, h, held)
        s.live &= ~(1 << h)
        s.outcome[h] = outcome
        s.declarer[h] = declarer
        if outcome != DISCARDED:
            s.score[outcome] += 1
        s.log.append(("claim", declarer, h, holders, names, outcome))
        return outcome == team

    def _next_player(self, s: LiteratureState, p: int, keep: bool) -> int:
        """Who plays after p's claim: p's team first after a success, else the opponents first.

        Within a team the turn goes to the first seat clockwise (from p itself, or from p's
        left for the opponents) that still holds cards; -1 when nobody does.
        """
        n = self.num_players
        own = [(p + 2 * t) % n for t in range(self.team_size)]
        other = [(p + 2 * t + 1) % n for t in range(self.team_size)]
        for q in (own + other) if keep else (other + own):
            if s.sizes[q]:
                return q
        return -1

    def _settle_turn(self, s: LiteratureState) -> None:
        """End the game when it is over; otherwise make sure the player to act holds cards."""
        if not s.live or (self.original and not (self.team_cards(s, 0) and self.team_cards(s, 1))):
            s.terminal = True
            return
        if not s.sizes[s.player]:
            # A player with no cards passes to the next teammate who has some.
            s.player = self._next_player(s, s.player, keep=True)

    def _claim_what_is_proven(self, s: LiteratureState) -> None:
        """Original rules: claim, for every player, each half-suit his knowledge fully proves."""
        found = True
        while found and s.live:
            found = False
            for k in range(self.num_players):
                for h, names in self.proven_claims(s, k):
                    self._resolve_claim(s, k, h, names)
                    found = True

    def proven_claims(self, s: LiteratureState, k: int) -> list[tuple[int, tuple[int, ...]]]:
        """(half-suit, holders) of every live half-suit whose six holders k knows in k's team."""
        o, eng = self._self_observer[k], self.engine
        rows = [eng.block(s.know.holds[h], o) for h in range(NUM_HALF_SUITS)]
        return proven_in_team(rows, k, self.num_players, s.live)

    # --- what a seat sees ---------------------------------------------------------------
    def view(self, s: LiteratureState, player: int) -> LiteratureView:
        v = LiteratureView()
        v.player = player
        v.to_act = s.player == player and not s.done
        v.turn = s.player
        v.legal = self.legal_mask(s) if v.to_act else self._zero_mask
        v.num_players = self.num_players
        v.original = self.original
        v.hand = s.hands[player]
        v.sizes = tuple(s.sizes)
        v.live = s.live
        v.outcome = tuple(s.outcome)
        v.declarer = tuple(s.declarer)
        v.score = tuple(s.score)
        v.claim_half = s.claim_half
        v.claim_names = tuple(s.claim_names)
        v.last_asks = s.last_asks
        eng, k = self.engine, s.know
        v.raw = eng.observer_bytes(k, self._self_observer[player])
        n = self.num_players
        v.believed = tuple(eng.observer_bytes(k, player * n + i) for i in range(n)) \
            if self.original else ()
        return v

    # --- results ------------------------------------------------------------------------
    def payoffs(self, s: LiteratureState) -> np.ndarray:
        """+1 to every player of the team with more half-suits, -1 to the other; 0 on a tie."""
        out = np.zeros(self.num_players)
        if s.terminal and s.score[0] != s.score[1]:
            out[:] = -1.0
            out[(0 if s.score[0] > s.score[1] else 1)::2] = 1.0
        return out

    def scores(self, s: LiteratureState) -> np.ndarray:
        """The half-suits each seat's team scored."""
        return np.array([s.score[p % 2] for p in range(self.num_players)], dtype=np.float64)

    def teams(self) -> list[list[int]]:
        """The even seats and the odd seats."""
        return [list(range(0, self.num_players, 2)), list(range(1, self.num_players, 2))]

    def results(self, s: LiteratureState) -> list[dict[str, Any]]:
        infos = super().results(s)
        discarded = s.outcome.count(DISCARDED)
        for player, info in enumerate(infos):
            info["opponent_score"] = float(s.score[1 - player % 2])
            info["discarded"] = discarded
        return infos

    # --- names --------------------------------------------------------------------------
    def action_name(self, action: int) -> str:
        if action < self.num_asks:
            j, card = divmod(action, NUM_CARDS)
            return f"ask +{2 * j + 1} for {card_label(card, False)}"
        if action < self.name_base:
            return f"declare {half_suit_label(action - self.declare_base, False)}"
        t = action - self.name_base
        return "name myself" if t == 0 else f"name +{2 * t}"

    def action_table(self) -> list[tuple[str, str]]:
        t, a = self.team_size, self.num_asks
        rows = [(f"0-{a - 1}", f"ask opponent j (0..{t - 1}), the player 2j+1 seats to the left, "
                               f"for card c (0..47): action 48j + c; c = 6 * half-suit + position")]
        if not self.original:
            d, m = self.declare_base, self.name_base
            rows.append((f"{d}-{d + 7}", f"declare (start claiming) half-suit h: action {d} + h"))
            rows.append((f"{m}-{m + t - 1}",
                         f"during a claim, name teammate t (0..{t - 1}; 0 = myself, t = the player "
                         f"2t seats to the left) as the holder of the next card of the half-suit"))
        return rows

    # --- checks and determinization -----------------------------------------------------
    def check_invariants(self, s: LiteratureState) -> None:
        live_cards = sum(HALF_BITS[h] for h in range(NUM_HALF_SUITS) if s.live >> h & 1)
        seen = 0
        for q, hand in enumerate(s.hands):
            assert not hand & seen, "no card is in two hands"
            assert hand.bit_count() == s.sizes[q], "hand sizes agree"
            seen |= hand
        assert seen == live_cards, "every card of a live half-suit is in exactly one hand"
        for h in range(NUM_HALF_SUITS):
            assert (s.outcome[h] == LIVE) == bool(s.live >> h & 1), "outcomes agree with play"
        assert s.score == [s.outcome.count(0), s.outcome.count(1)], "scores count the outcomes"
        assert s.know.live == s.live, "the knowledge knows what is in play"
        problem = self.engine.sound(s.know, s.hands)
        assert problem is None, problem
        for q, hand in enumerate(s.hands):  # the encoders read a hand from its owner's tables
            mine = self.engine.observer_bytes(s.know, self._self_observer[q])[8 * q:8 * q + 8]
            assert mine == hand.to_bytes(8, "little"), "every player knows its own hand"
        if not s.done:
            assert s.sizes[s.player] > 0, "the player to act holds cards"
        if s.claim_half >= 0:
            assert s.live >> s.claim_half & 1 and len(s.claim_names) < HALF_SUIT_SIZE

    def randomize_hidden(self, s: LiteratureState, player: int,
                         rng: np.random.Generator) -> LiteratureState:
        """A copy with the cards ``player`` cannot place swapped between other hands, and every
        other player's knowledge rebuilt from the public events and its new hand."""
        new = s.copy()
        self._swap_unknown_cards(new, player, rng)
        self._rebuild_other_knowledge(new, player)
        return new

    def _swap_unknown_cards(self, s: LiteratureState, player: int,
                            rng: np.random.Generator) -> None:
        """Random swaps between other hands that keep every fact ``player`` knows true."""
        v = self.view(s, player)
        held, lacks, least = v.holds(), v.lacks(), v.least()
        placed = held.any(axis=0)  # cards whose holder ``player`` knows stay where they are
        movable = [(q, c) for q in range(self.num_players) if q != player
                   for c in deck.cards_in(s.hands[q]) if not placed[c]]
        if len(movable) < 2:
            return
        for _ in range(4 * len(movable)):
            i, j = rng.integers(len(movable), size=2)
            (a, ca), (b, cb) = movable[i], movable[j]
            if a == b or lacks[b, ca] or lacks[a, cb]:
                continue
            ha, hb = ca // HALF_SUIT_SIZE, cb // HALF_SUIT_SIZE
            if ha != hb and (self._count(s, a, ha) <= least[a, ha]
                             or self._count(s, b, hb) <= least[b, hb]):
                continue
            for q, gone, got in ((a, ca, cb), (b, cb, ca)):
                s.hands[q] = (s.hands[q] & ~(1 << CARD_BIT[gone])) | (1 << CARD_BIT[got])
            movable[i], movable[j] = (b, ca), (a, cb)

    @staticmethod
    def _count(s: LiteratureState, seat: int, h: int) -> int:
        return (s.hands[seat] & HALF_BITS[h]).bit_count()

    def _rebuild_other_knowledge(self, s: LiteratureState, player: int) -> None:
        """Every observer not belonging to ``player``: public knowledge plus what it sees."""
        n, eng, k = self.num_players, self.engine, s.know
        public = self.public_knowledge(s)
        alone = public_engine(n)
        # Players' own tables first: the first-order ones are built from them.
        order = sorted(range(eng.num_observers), key=lambda o: o not in self._self_observer)
        for o in order:
            owner, about = divmod(o, n) if self.original else (o, o)
            if owner == player:
                continue
            mind = public.copy()
            at = 8 * about
            for h in range(NUM_HALF_SUITS):
                if not s.live >> h & 1:
                    continue
                if owner == about:
                    mine = (s.hands[owner] >> (8 * h)) & 0x3F
                    facts = (mine, 0x3F & ~mine, mine.bit_count())
                else:  # what ``owner`` knows about seat ``about``, from owner's rebuilt tables
                    source = self._self_observer[owner]
                    facts = tuple((eng.block(x[h], source) >> at) & 0xFF
                                  for x in (k.holds, k.lacks, k.least))
                mind.holds[h] |= facts[0] << at
                mind.lacks[h] |= facts[1] << at
                mind.least[h] = alone.max(mind.least[h], facts[2] << at)
            alone.refresh(mind)
            alone.close(mind, ALL_PENDING)
            for h in range(NUM_HALF_SUITS):
                k.holds[h] = eng.with_block(k.holds[h], o, mind.holds[h])
                k.lacks[h] = eng.with_block(k.lacks[h], o, mind.lacks[h])
                k.least[h] = eng.with_block(k.least[h], o, mind.least[h])
        eng.refresh(k)

    def public_knowledge(self, s: LiteratureState) -> Knowledge:
        """What anyone can infer from the public events alone (replays the log)."""
        return replay(public_engine(self.num_players), [self.hand_size] * self.num_players, s.log)


def replay(engine: Engine, sizes: list[int], log: list[tuple],
           hands: list[int] | None = None) -> Knowledge:
    """Knowledge rebuilt from scratch: the deal (``hands`` for observers that see one), then
    every logged event. Used for the public tables and, in tests, to show that a player's
    tables depend only on its own hand and the public events."""
    if hands is None:
        k = engine.start(sizes)
        engine.close(k, ALL_PENDING)
    else:
        k = engine.deal(hands, sizes)
    n = len(sizes)
    for event in log:
        if event[0] == "ask":
            _, asker, respondent, card, success = event
            engine.ask(k, asker, respondent, card, success)
        else:
            _, _, h, holders, _, _ = event
            engine.claim(k, h, [holders.count(q) for q in range(n)])
    return k


def proven_in_team(rows: list[int], k: int, n: int, live: int) -> list[tuple[int, tuple[int, ...]]]:
    """(half-suit, holders) of each live half-suit whose six cards ``rows`` place in k's team.

    ``rows[h]`` has, in byte s, the cards of half-suit h that the knower knows seat s holds.
    """
    team = [(k + 2 * t) % n for t in range(n // 2)]
    out = []
    for h in range(NUM_HALF_SUITS):
        if not live >> h & 1:
            continue
        together = 0
        for q in team:
            together |= (rows[h] >> (8 * q)) & 0x3F
        if together == 0x3F:
            names = tuple(next(q for q in team if rows[h] >> (8 * q + pos) & 1)
                          for pos in range(HALF_SUIT_SIZE))
            out.append((h, names))
    return out
