"""Observation encoders for Literature (n players, 48 cards, 8 half-suits)."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from card_envs.core.dtypes import FLOAT32, UINT8
from card_envs.core.encoding import Encoder, Piece
from card_envs.literature.deck import (
    BYTE_CARDS,
    HALF_SUIT_SIZE,
    NUM_CARDS,
    NUM_HALF_SUITS,
)
from card_envs.literature.rules import DISCARDED, LAST_ASKS, LIVE, Literature, LiteratureView

# The source orders cards rank-major (A,2..6,8..K) x suits (C,D,H,S) and half-suits as
# low C,D,H,S then high C,D,H,S; our suits run S,H,D,C, so source suit j is our suit 3 - j.
SOURCE_CARDS = np.array([((3 - j) * 2 + r // HALF_SUIT_SIZE) * HALF_SUIT_SIZE + r % HALF_SUIT_SIZE
                         for r in range(12) for j in range(4)])
SOURCE_HALVES = np.array([(3 - j) * 2 + half for half in range(2) for j in range(4)])
SOURCE_HALF_INDEX = np.argsort(SOURCE_HALVES)  # our half-suit -> the source's index
OUTCOME_CACHE = 4096  # half-suit outcome patterns remembered per encoder, then start over


class DefaultEncoder(Encoder):
    """My hand, my knowledge tables, hand sizes, half-suit outcomes, the claim being named and
    the latest asks. Seats are relative: row r is the player r seats to my left (row 0 is me),
    so one policy can play every seat."""

    name = "default"

    @classmethod
    def pieces(cls, game: Literature) -> list[Piece]:
        n = game.num_players
        return [
            Piece("hand", NUM_CARDS, 0, 1, "1 if the card is in my hand"),
            Piece("holds", n * NUM_CARDS, 0, 1,
                  "48 per seat (row r = r seats to my left): 1 if I know that seat holds the card"),
            Piece("lacks", n * NUM_CARDS, 0, 1,
                  "48 per seat: 1 if I know that seat does not hold the card "
                  "(or it is out of play)"),
            Piece("least", n * NUM_HALF_SUITS, 0, 1,
                  "8 per seat: the least number of cards of the half-suit the seat holds, / 6"),
            Piece("hand_sizes", n, 0, 1, "cards held by each seat (row order), / 48"),
            Piece("half_suits", 3 * NUM_HALF_SUITS, 0, 1,
                  "3 per half-suit: scored by my team, scored by the opponents, discarded"),
            Piece("claim_half", NUM_HALF_SUITS, 0, 1, "one-hot of the half-suit being claimed"),
            Piece("claimer", n, 0, 1, "one-hot of the seat claiming it (relative)"),
            Piece("claim_names", HALF_SUIT_SIZE * n, 0, 1,
                  "n per card of that half-suit: one-hot of the seat named so far (relative)"),
            Piece("last_asks", LAST_ASKS * (2 * n + NUM_CARDS + 1), 0, 1,
                  f"the {LAST_ASKS} latest asks, newest first, {2 * n + NUM_CARDS + 1} each: "
                  "asker one-hot (relative), asked one-hot (relative), card one-hot, "
                  "1 if it succeeded"),
            Piece("my_turn", 1, 0, 1, "1 if I am to act"),
        ]

    def __init__(self, game: Literature):
        super().__init__(game)
        n = game.num_players
        self._ask_size = 2 * n + NUM_CARDS + 1
        lay = self.layout
        self._least = lay.start("least")
        self._halves, self._claim = lay.start("half_suits"), lay.start("claim_half")
        self._claimer, self._names = lay.start("claimer"), lay.start("claim_names")
        self._asks, self._turn = lay.start("last_asks"), lay.start("my_turn")
        self._binary_end = self._least
        # Both paths read one byte buffer: the state's ``Knowledge.seen`` (every observer) or
        # the view's raw tables followed by the hand sizes (one observer). Per player p,
        # ``_state_index[p]`` / ``_view_index[p]`` pick from it, in layout order with seats
        # rotated to p, the bytes of p's hand (p's own holds), holds, lacks (each byte: the
        # bits of six cards), then the least counts and hand sizes (numbers).
        self._num_bit_bytes = 8 + 16 * n
        eng = game.engine
        self._state_index = [self._byte_index(p, *eng.seen_at(game.self_observer(p)))
                             for p in range(n)]
        self._view_index = [self._byte_index(p, 0, 8 * n, 16 * n, 24 * n) for p in range(n)]
        # a byte's six card bits as six float32 0/1: one row per byte value
        self._bit_rows = BYTE_CARDS.astype(FLOAT32)
        self._relative = [[(q - p) % n for q in range(n)] for p in range(n)]
        self._outcomes: dict[tuple, tuple[int, ...]] = {}  # bounded: see _outcome_ones
        self._scale = np.array([1 / 6] * (8 * n) + [1 / 48] * n, dtype=np.float32)
        self._zero_halves = array("f", bytes(4 * (self._claim - self._halves)))
        self._zero_asks = array("f", bytes(4 * (self._turn - self._asks)))
        self._zero_claim = array("f", bytes(4 * (self._asks - self._claim)))
        self._new_caches()

    def _new_caches(self) -> None:
        """Per seat, the observation last encoded (see ``_SeatCache``); the last
        ``Knowledge.seen`` read and a uint8 view of it."""
        self._known = [_SeatCache(self) for _ in range(self.game.num_players)]
        self._seen_of = None
        self._seen = np.zeros(0, UINT8)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_known"], state["_seen"], state["_seen_of"]  # caches: made afresh on loading
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._new_caches()

    def _byte_index(self, p: int, holds: int, lacks: int, least: int,
                    sizes: int) -> tuple[np.ndarray, np.ndarray]:
        """The bytes to read for player p from a buffer with p's tables at these offsets."""
        n = self.game.num_players
        seats = [(p + r) % n for r in range(n)]
        index = [holds + 8 * p + h for h in range(NUM_HALF_SUITS)]
        for start in (holds, lacks, least):
            index += [start + 8 * q + h for q in seats for h in range(NUM_HALF_SUITS)]
        index += [sizes + q for q in seats]
        bits = self._num_bit_bytes  # two index arrays: the bytes of card bits, then numbers
        return np.array(index[:bits], dtype=np.intp), np.array(index[bits:], dtype=np.intp)

    def encode_state(self, s, seat: int) -> np.ndarray:
        """``encode(view(s, seat))`` straight from the state (the knowledge bytes)."""
        seen, known = s.know.seen, self._known[seat]
        # The pieces but the claim and my_turn change only with the knowledge, the asks and the
        # outcomes: the steps of naming a claim reuse them (``last_asks`` is a tuple, so the
        # same object means the same asks).
        if known.asks is not s.last_asks or known.seen != seen or known.outcome != s.outcome:
            # A state keeps its ``seen`` bytearray (rewritten in place, never resized): keep
            # a view of the last one read.
            if self._seen_of is not seen:
                self._seen, self._seen_of = np.frombuffer(seen, UINT8), seen
            self._tables(known.bits, known.numbers, self._seen, self._state_index[seat])
            self._settle(known.obs, seat, s.outcome, s.last_asks, known.outcome != s.outcome)
            known.seen[:] = seen  # copied into the seat's own bytearray (no new object)
            known.asks, known.outcome = s.last_asks, list(s.outcome)
        # the claim being named (or the last one written, to clear) and my_turn
        if s.claim_half >= 0 or known.claim is not None:
            self._claim_pieces(known, seat, s.player, s.claim_half, s.claim_names)
        to_act = s.player == seat and not s.done
        if known.to_act is not to_act:
            known.obs[self._turn] = 1.0 if to_act else 0.0
            known.to_act = to_act
        return known.view.copy()

    def encode(self, v: LiteratureView) -> np.ndarray:
        obs = np.zeros(self.size, FLOAT32)
        self._tables(*self._table_views(obs), np.frombuffer(v.raw + bytes(v.sizes), UINT8),
                     self._view_index[v.player])
        self._settle(obs, v.player, v.outcome, v.last_asks, True)
        self._add_claim_and_turn(obs, v.player, v.turn, v.claim_half, v.claim_names, v.to_act)
        return obs

    def _table_views(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The parts of ``obs`` that ``_tables`` writes: the card bits (one row of six per
        byte), the numbers."""
        bits = obs[: self._binary_end].reshape(self._num_bit_bytes, HALF_SUIT_SIZE)
        return bits, obs[self._least : self._halves]

    def _tables(self, bits: np.ndarray, numbers: np.ndarray, data: np.ndarray,
                index: tuple[np.ndarray, np.ndarray]) -> None:
        """Write the pieces ``hand`` to ``lacks`` into ``bits`` and ``least`` and
        ``hand_sizes`` into ``numbers``, from the bytes ``index`` picks in ``data``."""
        # Each byte's row of six 0/1 floats, straight into ``bits`` ("clip": no bounds check
        # and no buffered output; a uint8 index is always in range).
        self._bit_rows.take(data[index[0]], 0, bits, "clip")
        # uint8 * float32 computes in float32, as a float32 copy times the scale would
        np.multiply(data[index[1]], self._scale, out=numbers)

    def _settle(self, obs: np.ndarray | array, p: int, outcome, last_asks,
                new_outcomes: bool) -> None:
        """Write the pieces after the tables of player p's observation but the claim being
        named and my_turn (which ``obs`` has as 0): ``half_suits`` when ``new_outcomes``
        (else ``obs`` has these outcomes already), then ``last_asks``."""
        n = self.game.num_players
        if new_outcomes:
            obs[self._halves : self._claim] = self._zero_halves
            for i in self._outcome_ones(tuple(outcome), p % 2):
                obs[i] = 1.0
        obs[self._asks : self._turn] = self._zero_asks
        at, seat, two_n = self._asks, self._relative[p], 2 * n
        for asker, asked, card, success in reversed(last_asks):
            obs[at + seat[asker]] = 1.0
            obs[at + n + seat[asked]] = 1.0
            obs[at + two_n + card] = 1.0
            if success:
                obs[at + two_n + NUM_CARDS] = 1.0
            at += self._ask_size

    def _add_claim_and_turn(self, obs: np.ndarray, p: int, turn: int, claim_half: int,
                            claim_names, to_act: bool) -> None:
        """Set the pieces ``claim_half``, ``claimer``, ``claim_names`` and ``my_turn``."""
        if claim_half >= 0:
            self._write_claim(obs, p, turn, claim_half)
            self._write_names(obs, p, claim_names, 0)
        if to_act:
            obs[self._turn] = 1.0

    def _write_claim(self, obs: np.ndarray | array, p: int, turn: int, claim_half: int) -> None:
        """Set the pieces ``claim_half`` and ``claimer`` (the claimer seat ``turn``) for p."""
        obs[self._claim + claim_half] = 1.0
        obs[self._claimer + (turn - p) % len(self._relative)] = 1.0

    def _write_names(self, obs: np.ndarray | array, p: int, claim_names, start: int) -> None:
        """Set the ``claim_names`` piece for p from the ``start``-th name on."""
        n = len(self._relative)
        for k in range(start, len(claim_names)):
            obs[self._names + n * k + (claim_names[k] - p) % n] = 1.0

    def _claim_pieces(self, known: _SeatCache, p: int, turn: int, claim_half: int,
                      claim_names: list[int]) -> None:
        """Bring the pieces ``claim_half``, ``claimer`` and ``claim_names`` of seat p's cached
        observation up to date: while one claim is named, only its new names are written."""
        obs, named = known.obs, known.named
        if known.claim != (claim_half, turn) or claim_names[: len(named)] != named:
            # another claim (or none), or other names: start the claim pieces afresh
            if known.claim is not None:
                obs[self._claim : self._asks] = self._zero_claim
                known.claim = None
                named.clear()
            if claim_half >= 0:
                self._write_claim(obs, p, turn, claim_half)
                known.claim = claim_half, turn
        if len(claim_names) > len(named):
            self._write_names(obs, p, claim_names, len(named))
            named += claim_names[len(named):]

    def _outcome_ones(self, outcome: tuple[int, ...], team: int) -> tuple[int, ...]:
        """The indices of the ``half_suits`` piece set for these outcomes (cached)."""
        key = (outcome, team)
        ones = self._outcomes.get(key)
        if ones is None:
            ones = tuple(self._halves + 3 * h + (2 if o == DISCARDED else 0 if o == team else 1)
                         for h, o in enumerate(outcome) if o != LIVE)
            if len(self._outcomes) >= OUTCOME_CACHE:  # 4^8 x 2 could come: start over
                self._outcomes.clear()
            self._outcomes[key] = ones
        return ones


class _SeatCache:
    """One seat's last observation from ``DefaultEncoder.encode_state`` and what it was
    encoded from, so that the next one rewrites only what changed.

    obs: the observation, an ``array`` (single items are far cheaper to set there than in
    numpy), never handed out (only copies of ``view``, a numpy view of it), so rewritten in
    place; bits / numbers: the views of it that ``_tables`` writes; seen, asks, outcome: the
    knowledge bytes (every observer's), ``last_asks`` and outcomes the pieces up to
    ``last_asks`` were encoded from; claim: (half-suit, claimer seat) of the claim written
    (None: none); named: the names written; to_act: my_turn as written.
    """

    __slots__ = ("obs", "view", "bits", "numbers", "seen", "asks", "outcome", "claim", "named",
                 "to_act")

    def __init__(self, encoder: DefaultEncoder):
        self.obs = array("f", bytes(4 * encoder.size))
        self.view = np.frombuffer(self.obs, FLOAT32)
        self.bits, self.numbers = encoder._table_views(self.view)
        self.seen, self.asks, self.outcome = bytearray(), None, None
        self.claim: tuple[int, int] | None = None
        self.named: list[int] = []
        self.to_act = False


class OriginalEncoder(Encoder):
    """Source 002's serialized player state (1145 values with 4 players under the original
    rules), plus the half-suit outcomes and, under the standard rules, the claim being named."""

    name = "original"

    @classmethod
    def pieces(cls, game: Literature) -> list[Piece]:
        n, block = game.num_players, NUM_CARDS + NUM_HALF_SUITS + 1
        meaning = ("48 card values in the source's order (rank-major A..6, 8..K x suits C, D, H, "
                   "S): 1 does not hold, 2 might hold, 3 holds; then the 8 least counts (low C, D, "
                   "H, S, then high C, D, H, S); then the card count")
        out = [Piece("seat", 1, 0, n - 1, "my seat number")]
        out += [Piece(f"seat_{i}", block, 0, NUM_CARDS,
                      f"what I know of seat {i}: " + (meaning if i == 0 else "as `seat_0`"))
                for i in range(n)]
        if game.original:
            out += [Piece(f"known_by_{k}", 1 + n * block, 0, NUM_CARDS,
                          f"{k}, then for each seat the {block} values as above of what I can tell "
                          f"seat {k} knows (first-order knowledge)") for k in range(n)]
        out.append(Piece("half_suits", NUM_HALF_SUITS, 0, 3,
                         "per half-suit in the source's order: 0 in play, 1 scored by the even "
                         "seats, 2 scored by the odd seats, 3 discarded"))
        if not game.original:
            out.append(Piece("claim", 1 + HALF_SUIT_SIZE, 0, NUM_HALF_SUITS,
                             "the half-suit being claimed (source order) + 1, then the seat named "
                             "for each of its cards + 1 (0: none yet)"))
        return out

    def __init__(self, game: Literature):
        super().__init__(game)
        self._block = NUM_CARDS + NUM_HALF_SUITS + 1

    def _blocks(self, tables: np.ndarray, v: LiteratureView) -> np.ndarray:
        """(n, 57): the source's per-seat blocks from uint8 (3, n, 8) tables."""
        n = self.game.num_players
        holds = BYTE_CARDS[tables[0]].reshape(n, NUM_CARDS)
        lacks = BYTE_CARDS[tables[1]].reshape(n, NUM_CARDS)
        out = np.empty((n, self._block), FLOAT32)
        out[:, :NUM_CARDS] = (2 + holds - lacks)[:, SOURCE_CARDS]
        out[:, NUM_CARDS:-1] = tables[2][:, SOURCE_HALVES]
        out[:, -1] = v.sizes
        return out

    def encode(self, v: LiteratureView) -> np.ndarray:
        n, block = self.game.num_players, self._block
        obs = np.zeros(self.size, FLOAT32)
        obs[0] = v.player
        at = 1 + n * block
        obs[1:at] = self._blocks(v.tables, v).ravel()
        for k in range(len(v.believed)):
            obs[at] = k
            obs[at + 1:at + 1 + n * block] = self._blocks(v.believed_tables(k), v).ravel()
            at += 1 + n * block
        for h, outcome in enumerate(v.outcome):
            if outcome != LIVE:
                obs[at + SOURCE_HALF_INDEX[h]] = 3 if outcome == DISCARDED else 1 + outcome
        at += NUM_HALF_SUITS
        if not self.game.original and v.claim_half >= 0:
            obs[at] = 1 + SOURCE_HALF_INDEX[v.claim_half]
            for k, seat in enumerate(v.claim_names):
                obs[at + 1 + k] = 1 + seat
        return obs


ENCODERS = {"default": DefaultEncoder, "original": OriginalEncoder}
