"""The knowledge engine: what each player can infer about every hand, exact and incremental.

For every *observer* the engine keeps, about every seat and card, whether the observer knows
that the seat holds the card, knows that it lacks it, or does not know; the least number of
cards each seat must hold in each half-suit; and every seat's hand size (public). Facts come
only from the observer's own hand at the deal and from public events (asks and their outcome,
claims). After each event the inference rules run to a fixed point:

1. *one holder*: a seat known to hold a card means every other seat lacks it.
2. *last candidate*: every seat but one lacks a card, so that one holds it.
3. *least from holds*: a seat holds at least as many cards of a half-suit as it is known to.
4. *holds the rest*: if its least count plus the cards it lacks make six, it holds the others.
5. *full hand*: if a seat's least counts add up to its hand size, it holds exactly those
   counts; in a half-suit where all of them are known, it lacks the rest.
6. *least from room*: a seat holds at least (hand size - the most it could hold elsewhere)
   cards of a half-suit; the most it could hold in a half-suit is the cards it does not lack.
7. *half-suit total*: if the least counts of all seats in a half-suit add up to six, each seat
   holds exactly its count; a seat whose cards there are all known lacks the rest.
8. (first-order observers only) *what they know of themselves*: the observer standing for
   "what k can tell that i knows" learns every fact that k knows about i's own hand.

An ask adds "the asker lacks the card and holds another card of its half-suit"; a success
then moves the card (asker holds it, respondent lacks it, asker's least count +1, the
respondent's -1); a failure adds "the respondent lacks it". A claim takes its half-suit out of
play and lowers the hand sizes by the cards each seat had there. Every rule adds only facts
that follow from true facts, so no inferred fact is ever false; the tests check this against
the real hands over many random games, and check the result against a plain reference.

Layout (for speed): each half-suit h has three Python ints, ``holds[h]``, ``lacks[h]`` and
``least[h]``, with one byte per (observer o, seat s) at byte ``o * n + s``: card bits 0-5
(position in the half-suit) or the least count. ``sizes`` has the hand size of seat s in every
observer's byte s. A rule is then a few whole-int operations (shifts, masks, byte-wise
popcount and compare) over every observer and seat at once, and an event only touches its
half-suit; the cross-half-suit rules 5 and 6 run on byte sums and usually stop at a cheap test.
"""

from __future__ import annotations

from collections.abc import Sequence

from card_envs.literature.deck import HALF_SUIT_SIZE, NUM_HALF_SUITS

HOLDS, LACKS, LEAST = 1, 2, 4
EVERYTHING = HOLDS | LACKS | LEAST
ALL_HALVES = (1 << NUM_HALF_SUITS) - 1
ALL_PENDING = dict.fromkeys(range(NUM_HALF_SUITS), EVERYTHING)  # "everything changed"
# per slot byte (the cards of one half-suit): the other cards of the half-suit, the card count
_OTHER_CARDS = bytes(0x3F & ~b for b in range(256))
_CARD_COUNTS = bytes(b.bit_count() for b in range(256))


def _repeat(byte: int, nbytes: int) -> int:
    """An int whose ``nbytes`` low bytes all equal ``byte``."""
    return int.from_bytes(bytes([byte]) * nbytes, "little")


class Knowledge:
    """The tables of every observer of one game (see the module docstring for the layout).

    holds / lacks / least: one int per half-suit; room: per half-suit, the cards each
    (observer, seat) does not lack; least_total / room_total: their sums over the half-suits
    (room and the totals are caches for rules 5 and 6); sizes: hand sizes; live: bit h set
    while half-suit h is in play; seen: the same tables as bytes in observer order, index
    ``((kind * observers + o) * n + s) * 8 + h`` for kinds holds, lacks (out-of-play cards
    lacked), least, so that one observer's tables are three slices (kept up to date by the
    engine, half-suit by half-suit), then ``sizes`` as bytes (index ``3 * 8 * observers * n +
    o * n + s``; see ``Engine.seen_at``); stale: half-suits whose bytes must be rewritten;
    spare_seen / full_seen / rule5_seen: what rules 5 and 6 last looked at (bytes whose spare
    room, "least counts fill the hand" and rule-5 eligibility were so), so that they only
    revisit what changed.
    """

    __slots__ = ("holds", "lacks", "least", "room", "least_total", "room_total", "sizes", "live",
                 "seen", "stale", "spare_seen", "full_seen", "rule5_seen")

    def copy(self) -> Knowledge:
        new = Knowledge()
        new.holds, new.lacks, new.least = list(self.holds), list(self.lacks), list(self.least)
        new.room = list(self.room)
        new.least_total, new.room_total = self.least_total, self.room_total
        new.sizes, new.live = self.sizes, self.live
        new.seen, new.stale = bytearray(self.seen), self.stale
        new.spare_seen, new.full_seen = self.spare_seen, self.full_seen
        new.rule5_seen = self.rule5_seen
        return new

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Knowledge) and self.__getstate__() == other.__getstate__()

    def __getstate__(self):
        return tuple(getattr(self, f) for f in self.__slots__)

    def __setstate__(self, values) -> None:
        for f, v in zip(self.__slots__, values, strict=True):
            setattr(self, f, v)


class Engine:
    """Inference for a fixed set of observers of an ``num_seats``-player game.

    ``own[o]`` is the seat whose hand observer ``o`` sees at the deal (None: only public
    events). ``inject`` lists ``(observer, source, seat)``: the observer learns every fact that
    ``source`` knows about ``seat`` (first-order knowledge, rule 8).
    """

    def __init__(self, num_seats: int, own: Sequence[int | None],
                 inject: Sequence[tuple[int, int, int]] = ()):
        n = self.num_seats = num_seats
        self.own = tuple(own)
        self.num_observers = len(self.own)
        self.nbytes = nb = self.num_observers * n
        self._m55, self._m33, self._m0f = _repeat(0x55, nb), _repeat(0x33, nb), _repeat(0x0F, nb)
        self._h80, self._low, self._all = _repeat(0x80, nb), _repeat(0x01, nb), _repeat(0xFF, nb)
        self._sixes, self.cards = _repeat(0x06, nb), _repeat(0x3F, nb)
        self._columns = [self._low << pos for pos in range(HALF_SUIT_SIZE)]  # a card position
        self._observer_rep = sum(1 << (8 * o * n) for o in range(self.num_observers))
        self._first_seat = self._observer_rep * 0xFF
        self._first_seat_one = self._observer_rep
        self._first_seat_two = self._observer_rep * 2
        self._first_seat_high = self._observer_rep * 0x80
        self._first_seat_six = self._observer_rep * 0x06
        self._first_seat_cards = self._observer_rep * 0x3F
        self._seat_rep = sum(1 << (8 * s) for s in range(n))
        self._last_seat = 8 * (n - 1)
        self.unit = [self._observer_rep << (8 * s) for s in range(n)]
        self._fact = [[u << k for k in range(HALF_SUIT_SIZE)] for u in self.unit]
        groups: dict[int, int] = {}
        for dst, src, seat in inject:
            shift = 8 * n * (src - dst)
            groups[shift] = groups.get(shift, 0) | 0xFF << (8 * (src * n + seat))
        self._inject = tuple(groups.items())

    # --- byte-wise arithmetic -----------------------------------------------------------
    def counts(self, x: int) -> int:
        """The number of set bits in every byte of ``x`` (bits 6 and 7 clear)."""
        x = x - ((x >> 1) & self._m55)
        x = (x & self._m33) + ((x >> 2) & self._m33)
        return (x + (x >> 4)) & self._m0f

    def at_least(self, a: int, b: int) -> int:
        """0xFF in every byte where a >= b (byte values below 128)."""
        return ((((a | self._h80) - b) & self._h80) >> 7) * 0xFF

    def equal(self, a: int, b: int) -> int:
        """0xFF in every byte where a == b (byte values below 128)."""
        nonzero = (((a ^ b) | self._h80) - self._low) & self._h80
        return ((nonzero ^ self._h80) >> 7) * 0xFF

    def max(self, a: int, b: int) -> int:
        """The byte-wise maximum of a and b (byte values below 128)."""
        keep = self.at_least(a, b)
        return (a & keep) | (b & ~keep)

    # --- events -------------------------------------------------------------------------
    def start(self, sizes: Sequence[int]) -> Knowledge:
        """Tables that know only the hand sizes."""
        k = Knowledge()
        k.holds = [0] * NUM_HALF_SUITS
        k.lacks = [0] * NUM_HALF_SUITS
        k.least = [0] * NUM_HALF_SUITS
        k.room = [self._sixes] * NUM_HALF_SUITS
        k.least_total, k.room_total = 0, NUM_HALF_SUITS * self._sixes
        k.live = ALL_HALVES
        k.seen = bytearray(3 * 8 * self.nbytes + self.nbytes)
        self._set_sizes(k, sum(size * u for size, u in zip(sizes, self.unit, strict=True)))
        k.stale = ALL_HALVES
        k.spare_seen = k.full_seen = k.rule5_seen = 0
        return k

    def deal(self, hands: Sequence[int], sizes: Sequence[int] | None = None) -> Knowledge:
        """The closed tables right after the deal; ``hands`` are slot-form bit sets (see deck).

        Only the hands of seats some observer sees are read; ``sizes`` gives the hand sizes
        when the other hands are not given."""
        k = self.start([h.bit_count() for h in hands] if sizes is None else sizes)
        # Each observer's facts about the hand it sees, written as bytes: half-suit h's int is
        # bytes [h * nb, (h + 1) * nb) of each buffer, so a hand's 8 half-suit bytes go every
        # nb-th byte from the (observer, seat) byte on.
        nb = self.nbytes
        holds, lacks, least = bytearray(8 * nb), bytearray(8 * nb), bytearray(8 * nb)
        for o, seat in enumerate(self.own):
            if seat is not None:
                mine = hands[seat].to_bytes(NUM_HALF_SUITS, "little")
                at = o * self.num_seats + seat
                holds[at::nb] = mine
                lacks[at::nb] = mine.translate(_OTHER_CARDS)
                least[at::nb] = mine.translate(_CARD_COUNTS)
        for x, facts in ((k.holds, holds), (k.lacks, lacks), (k.least, least)):
            x[:] = [int.from_bytes(facts[at:at + nb], "little") for at in range(0, 8 * nb, nb)]
        if self._inject:
            self.refresh(k)
            self.close(k, ALL_PENDING)
            return k
        # Inside a half-suit, these facts close with rule 1 (the other seats lack the cards
        # an observer holds): the observer knows every card there, and each card it does not
        # hold has three or more other seats left, so rules 2, 4 and 7 add nothing. Only the
        # rules across half-suits remain.
        for h in range(NUM_HALF_SUITS):
            k.lacks[h] |= self._one_holder(k.holds[h])
        self.refresh(k)
        self.close(k, {}, touched=ALL_HALVES)
        return k

    def ask(self, k: Knowledge, asker: int, respondent: int, card: int, success: bool) -> None:
        """Learn from ``asker`` asking ``respondent`` for ``card``; a success moves the card."""
        h, pos = divmod(card, HALF_SUIT_SIZE)
        take, give = self._fact[asker][pos], self._fact[respondent][pos]
        if success:
            # Before the move the asker lacked the card and held another of the half-suit, and
            # the respondent held it: the asker's least count after the move is at least 2
            # and the respondent's can drop by one without going below 0.
            least = self.max(k.least[h], self.unit[asker] | self.unit[respondent])
            self._set_least(k, h, least + self.unit[asker] - self.unit[respondent])
            k.holds[h] = (k.holds[h] & ~give) | take
            k.lacks[h] = (k.lacks[h] & ~take) | give
            self._set_room(k, h, self.counts(self.cards & ~k.lacks[h]))
            self._set_sizes(k, k.sizes + self.unit[asker] - self.unit[respondent])
            changed = EVERYTHING
        else:
            old = k.lacks[h]
            lacks = old | take | give
            # the asker holds a card of h: its least count there is at least 1 (``max`` for
            # a bound of 0 or 1: set 1 in the asker's bytes that are 0)
            least = k.least[h]
            least |= self.unit[asker] & ~((((least | self._h80) - self._low) >> 7) & self._low)
            if lacks == old and least == k.least[h]:
                return  # every observer knew it already: the tables are still closed
            k.lacks[h] = lacks
            # the new facts are all at card position pos: one less card of room for each
            self._set_room(k, h, k.room[h] - ((lacks ^ old) >> pos))
            changed = LACKS
            if least != k.least[h]:
                self._set_least(k, h, least)
                changed |= LEAST
        # ``close(k, {h: changed}, 1 << pos)`` unrolled for its first round (h is in play)
        self._close_half_suit(k, h, changed, 1 << pos)
        pending = self._across_half_suits(k, 1 << h)
        if pending is None:
            self._write_seen(k)
        else:
            self.close(k, pending)

    def claim(self, k: Knowledge, h: int, held: Sequence[int]) -> None:
        """Take half-suit ``h`` out of play; ``held[s]`` is how many of its cards seat s had."""
        self._set_least(k, h, 0)
        self._set_room(k, h, 0)
        k.holds[h] = k.lacks[h] = 0
        k.live &= ~(1 << h)
        k.stale |= 1 << h
        # seat s's count in byte s of every observer (counts are below 256)
        self._set_sizes(k, k.sizes - int.from_bytes(bytes(held), "little") * self._observer_rep)
        self.close(k, {})

    # --- the fixed point ----------------------------------------------------------------
    def close(self, k: Knowledge, pending: dict[int, int], positions: int = 0x3F,
              touched: int = 0) -> None:
        """Apply the rules until nothing changes; ``pending[h]`` says what changed in half-suit h
        (and ``positions`` which card positions got new "lacks" facts there); ``touched``:
        half-suits that changed but are already closed inside."""
        while True:
            for h, changed in pending.items():
                if k.live >> h & 1:
                    self._close_half_suit(k, h, changed, positions)
                    touched |= 1 << h
            pending = self._across_half_suits(k, touched)
            if pending is None:
                self._write_seen(k)
                return
            positions, touched = 0x3F, 0

    def _write_seen(self, k: Knowledge) -> None:
        """Rewrite the bytes of ``k.seen`` of every stale half-suit (one strided copy each)."""
        # Half-suit h's bytes of the three kinds are every 8th byte from h on: one slice.
        end, nb, seen, stale = 3 * 8 * self.nbytes, self.nbytes, k.seen, k.stale
        lacks_at, least_at = 8 * nb, 16 * nb
        while stale:
            h = (stale & -stale).bit_length() - 1
            stale &= stale - 1
            lacks = k.lacks[h] if k.live >> h & 1 else self.cards
            kinds = k.holds[h] | lacks << lacks_at | k.least[h] << least_at
            seen[h:end:8] = kinds.to_bytes(3 * nb, "little")
        k.stale = 0

    def _close_half_suit(self, k: Knowledge, h: int, dirty: int, positions: int) -> None:
        """Rules 1-4, 7 and 8 inside half-suit h, to a fixed point (``k.room[h]`` must count
        the cards not lacked in ``k.lacks[h]``, as it always does between events)."""
        holds, lacks, least = k.holds[h], k.lacks[h], k.least[h]
        cards, counts = self.cards, self.counts
        room, room_of = k.room[h], lacks  # room_of: the lacks it counts
        while dirty:
            holds0, lacks0, least0 = holds, lacks, least
            if dirty & HOLDS:
                lacks |= self._one_holder(holds)
                least = self.max(least, counts(holds))
            maybe = cards & ~lacks
            if dirty & LACKS:
                holds |= self._last_candidate(maybe, positions)
            if dirty & (LACKS | LEAST):
                if room_of != lacks:
                    room, room_of = counts(maybe), lacks
                # rule 4: least count + cards lacked = 6 means least count = room
                holds |= self.equal(least, room) & maybe
            if dirty & (HOLDS | LEAST):
                six = self._half_suit_total(least)
                if six:
                    lacks |= six & self._exact(holds, least)
            if self._inject:
                holds, lacks, least = self._what_they_know(holds, lacks, least)
            dirty = 0
            if holds != holds0:
                dirty = HOLDS
            if least != least0:
                dirty |= LEAST
            if lacks != lacks0:
                dirty |= LACKS
                positions = self._positions(lacks & ~lacks0)
        if room_of != lacks:
            room = counts(cards & ~lacks)
        if room != k.room[h]:
            self._set_room(k, h, room)
        if least != k.least[h]:
            self._set_least(k, h, least)
        k.holds[h], k.lacks[h] = holds, lacks
        k.stale |= 1 << h

    @staticmethod
    def _set_least(k: Knowledge, h: int, least: int) -> None:
        # Subtract first: every byte of the total is at least the old byte, so nothing borrows.
        k.least_total = k.least_total - k.least[h] + least
        k.least[h] = least

    def _set_sizes(self, k: Knowledge, sizes: int) -> None:
        k.sizes = sizes
        k.seen[24 * self.nbytes:] = sizes.to_bytes(self.nbytes, "little")

    @staticmethod
    def _set_room(k: Knowledge, h: int, room: int) -> None:
        k.room_total = k.room_total - k.room[h] + room
        k.room[h] = room

    def _positions(self, bits: int) -> int:
        """The card positions (0-5) set in any byte of ``bits``, as a 6-bit mask."""
        out = 0
        for pos, column in enumerate(self._columns):
            if bits & column:
                out |= 1 << pos
        return out

    def _across_seats(self, x: int) -> int:
        """The sum over each observer's seats of the bytes of x, in its first seat's byte
        (sums below 256; for card bits, only where no two seats share a card)."""
        return ((x * self._seat_rep) >> self._last_seat) & self._first_seat

    def _exact(self, holds: int, least: int) -> int:
        """The unknown cards of every byte whose known holdings equal its least count."""
        return self.equal(self.counts(holds), least) & self.cards & ~holds

    def _one_holder(self, holds: int) -> int:
        """Rule 1: "lacks" for every seat but the known holder of a card."""
        # A card has one holder, so adding the seats' bytes cannot carry.
        return (self._across_seats(holds) * self._seat_rep) & ~holds

    def _last_candidate(self, maybe: int, positions: int) -> int:
        """Rule 2 for the card positions in ``positions`` (or all six, when that is cheaper):
        "holds" for the one seat not known to lack the card (``maybe``: the cards not lacked)."""
        found, seat_rep, low, last = 0, self._seat_rep, self._low, self._last_seat
        if positions.bit_count() > 2:  # then all six at once is cheaper
            # Per observer, the cards not lacked by at least one / at least two seats, in the
            # first seat's byte: one pass over the seats instead of one per position.
            one = two = 0
            first_cards = self._first_seat_cards
            for at in range(0, last + 8, 8):
                column = (maybe >> at) & first_cards
                two |= one & column
                one |= column
            return ((one & ~two) * seat_rep) & maybe
        first, high, two = self._first_seat, self._first_seat_high, self._first_seat_two
        while positions:
            pos = (positions & -positions).bit_length() - 1
            positions &= positions - 1
            column = (maybe >> pos) & low
            count = ((column * seat_rep) >> last) & first
            # The holder is never lacked, so each count is at least 1: alone means below 2.
            alone = ((((count | high) - two) & high) ^ high) >> 7
            found |= (alone * seat_rep << pos) & maybe
        return found

    def _half_suit_total(self, least: int) -> int:
        """Rule 7: every byte of the observers whose least counts here add up to six."""
        total = ((least * self._seat_rep) >> self._last_seat) & self._first_seat
        off_six = total ^ self._first_seat_six
        high = self._first_seat_high
        six = ((((off_six | high) - self._first_seat_one) & high) ^ high) >> 7
        return six * self._seat_rep * 0xFF

    def _what_they_know(self, holds: int, lacks: int, least: int) -> tuple[int, int, int]:
        """Rule 8: copy each source's facts about a seat into the observer standing for it."""
        told = 0
        for shift, mask in self._inject:
            if shift > 0:
                holds |= (holds & mask) >> shift
                lacks |= (lacks & mask) >> shift
                told |= (least & mask) >> shift
            else:
                holds |= (holds & mask) << -shift
                lacks |= (lacks & mask) << -shift
                told |= (least & mask) << -shift
        return holds, lacks, self.max(least, told)

    def _across_half_suits(self, k: Knowledge, touched: int) -> dict[int, int] | None:
        """Rules 5 and 6; returns what they changed per half-suit (None: nothing).

        A byte's result in half-suit h depends only on that half-suit's tables and on the
        byte's spare room and whether its least counts fill its hand, so only half-suits in
        ``touched`` (changed since the last call) need every byte; the others only the bytes
        whose spare room or fullness changed since.
        """
        h80, low, sizes = self._h80, self._low, k.sizes
        spare = k.room_total - sizes  # >= 0 in every byte: a hand always fits where it may be
        # 0x80 in every byte whose least counts do not fill the hand / that has spare room /
        # that has spare room for six (byte-wise tests as in ``equal`` and ``at_least``)
        unfilled = (((k.least_total ^ sizes) | h80) - low) & h80
        spare_80 = spare | h80
        roomy = (spare_80 - low) & h80
        roomy_six = (spare_80 - self._sixes) & h80
        full = ((unfilled ^ h80) >> 7) * 0xFF
        # Rule 5 can only add facts where the least counts fill the hand but the room is larger.
        rule5 = (((unfilled ^ h80) & roomy) >> 7) * 0xFF
        # Rule 6 can only raise a count where the spare room is under six, unless the room is
        # exactly the hand and the counts already fill it (then every count equals its room).
        rule6 = (roomy_six ^ h80) & (roomy | unfilled)  # 0x80 per byte, made 0xFF below
        spare_seen, full_seen, rule5_seen = k.spare_seen, k.full_seen, k.rule5_seen
        k.spare_seen, k.full_seen, k.rule5_seen = spare, full, rule5
        if not (rule5 or rule6):
            return None
        rule6 = (rule6 >> 7) * 0xFF
        fresh5 = rule5 & ~rule5_seen
        moved = (((spare ^ spare_seen) | h80) - low) & h80  # 0x80 where the spare room changed
        fresh6 = rule6 & (((moved >> 7) * 0xFF) | (full ^ full_seen))
        if not (fresh5 or fresh6 or touched):
            return None
        changed: dict[int, int] = {}
        halves = k.live if fresh5 or fresh6 else touched & k.live
        while halves:
            h = (halves & -halves).bit_length() - 1
            halves &= halves - 1
            near = touched >> h & 1
            bytes5 = rule5 if near else fresh5
            if bytes5:
                new = bytes5 & self._exact(k.holds[h], k.least[h]) & ~k.lacks[h]
                if new:
                    k.lacks[h] |= new
                    k.stale |= 1 << h
                    self._set_room(k, h, self.counts(self.cards & ~k.lacks[h]))
                    changed[h] = LACKS
            bytes6 = rule6 if near else fresh6
            if bytes6:
                gap = (k.room[h] | h80) - spare
                bound = gap & (((gap & h80) >> 7) * 0x7F) & bytes6
                # some least count below its bound (``at_least`` inline)
                if bound and ((k.least[h] | h80) - bound) & h80 != h80:
                    self._set_least(k, h, self.max(k.least[h], bound))
                    k.stale |= 1 << h
                    changed[h] = changed.get(h, 0) | LEAST
        return changed or None

    # --- reading and checking -----------------------------------------------------------
    def tables(self, k: Knowledge) -> bytes:
        """holds, lacks and least of every half-suit as bytes, shape (3, 8, observers, seats)."""
        nb = self.nbytes
        return b"".join(x.to_bytes(nb, "little") for x in (*k.holds, *k.lacks, *k.least))

    def observer_bytes(self, k: Knowledge, o: int) -> bytes:
        """Observer ``o``'s holds, lacks and least as bytes, shape (3, seats, 8 half-suits);
        the cards of a half-suit out of play count as lacked by every seat."""
        span, size = 8 * self.nbytes, 8 * self.num_seats
        at, seen = o * size, k.seen
        return b"".join((seen[at:at + size], seen[span + at:span + at + size],
                         seen[2 * span + at:2 * span + at + size]))

    def seen_at(self, o: int) -> tuple[int, int, int, int]:
        """Where observer ``o``'s bytes start in ``Knowledge.seen``: its holds, lacks and least
        (seat s, half-suit h at ``start + 8 * s + h``), and the hand sizes (seat s at
        ``start + s``)."""
        span, size = 8 * self.nbytes, 8 * self.num_seats
        return o * size, span + o * size, 2 * span + o * size, 3 * span + o * self.num_seats

    def block(self, x: int, o: int) -> int:
        """Observer ``o``'s bytes of a half-suit int: seat s in byte s."""
        n = self.num_seats
        return (x >> (8 * n * o)) & ((1 << (8 * n)) - 1)

    def with_block(self, x: int, o: int, block: int) -> int:
        """``x`` with observer ``o``'s bytes replaced by ``block``."""
        n = self.num_seats
        at = 8 * n * o
        return (x & ~(((1 << (8 * n)) - 1) << at)) | (block << at)

    def refresh(self, k: Knowledge) -> None:
        """Recompute the caches after the tables were changed from outside the engine."""
        k.room = [self.counts(self.cards & ~k.lacks[h]) if k.live >> h & 1 else 0
                  for h in range(NUM_HALF_SUITS)]
        k.least_total, k.room_total = sum(k.least), sum(k.room)
        k.stale = ALL_HALVES
        self._write_seen(k)

    def sound(self, k: Knowledge, hands: Sequence[int]) -> str | None:
        """None if every fact in ``k`` is true of ``hands`` (slot form); else what is wrong."""
        for h in range(NUM_HALF_SUITS):
            truth = sum(((hand >> (8 * h)) & 0x3F) << (8 * s) for s, hand in enumerate(hands))
            truth *= self._observer_rep
            if k.holds[h] & ~truth:
                return "a seat is said to hold a card it does not hold"
            if k.lacks[h] & truth:
                return "a seat is said to lack a card it holds"
            if self.at_least(self.counts(truth), k.least[h]) != self._all:
                return "a least count is above the real count"
            if not k.live >> h & 1 and (k.holds[h] or k.lacks[h] or k.least[h] or truth):
                return "a half-suit out of play still has cards or facts"
            if k.room[h] != (self.counts(self.cards & ~k.lacks[h]) if k.live >> h & 1 else 0):
                return "the room cache is stale"
        if (k.least_total, k.room_total) != (sum(k.least), sum(k.room)):
            return "the totals are stale"
        fresh = k.copy()
        fresh.stale = ALL_HALVES
        self._write_seen(fresh)
        self._set_sizes(fresh, k.sizes)
        if k.stale or fresh.seen != k.seen:
            return "the observer bytes are stale"
        if k.sizes != sum(hand.bit_count() * u for hand, u in zip(hands, self.unit, strict=True)):
            return "hand sizes disagree"
        return None


def standard_engine(n: int) -> Engine:
    """One observer per seat: observer k sees seat k's hand."""
    return Engine(n, list(range(n)))


def first_order_engine(n: int) -> Engine:
    """n * n observers: k * n + i is "what k can tell that i knows"; k * n + k is k itself."""
    own = [k if i == k else None for k in range(n) for i in range(n)]
    inject = [(k * n + i, k * n + k, i) for k in range(n) for i in range(n) if i != k]
    return Engine(n, own, inject)


def public_engine(n: int) -> Engine:
    """One observer who sees no hand: what anyone can infer from public events alone."""
    return Engine(n, [None])
