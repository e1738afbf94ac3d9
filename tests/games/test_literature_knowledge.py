"""The Literature knowledge engine: hand-built event sequences with the facts they prove, and
properties over random games (every fact true, nothing taken from unseen cards, the fast bit
boards equal to a plain reference of the same rules)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.literature import deck
from card_envs.literature.knowledge import first_order_engine, public_engine, standard_engine
from card_envs.literature.rules import Literature, replay

RNG = np.random.default_rng(0)


def card(name: str) -> int:
    """A card from its name: '5S' (low spades), 'QH' (high hearts), '10C'."""
    rank, suit = name[:-1], "SHDC".index(name[-1])
    if rank in deck.LOW_RANKS:
        return (2 * suit) * 6 + deck.LOW_RANKS.index(rank)
    return (2 * suit + 1) * 6 + deck.HIGH_RANKS.index(rank)


def cards(names: str) -> list[int]:
    return [card(x) for x in names.split()]


class Reference:
    """The inference rules written plainly for one observer: tables of -1 (lacks), 0, 1 (holds)."""

    def __init__(self, n: int, sizes: list[int], seat: int | None = None, hand: list[int] = ()):
        self.n = n
        self.known = np.zeros((n, 48), int)
        self.least = np.zeros((n, 8), int)
        self.sizes = list(sizes)
        self.live = [True] * 8
        if seat is not None:
            self.known[seat] = -1
            self.known[seat, list(hand)] = 1
            for c in hand:
                self.least[seat, c // 6] += 1
        self.close()

    def cells(self, s: int, h: int) -> np.ndarray:
        return self.known[s, 6 * h : 6 * h + 6]

    def close(self) -> None:
        while True:
            before = self.known.copy(), self.least.copy()
            self.rules()
            if np.array_equal(before[0], self.known) and np.array_equal(before[1], self.least):
                return

    def rules(self) -> None:
        n, live = self.n, [h for h in range(8) if self.live[h]]
        for c in (c for h in live for c in range(6 * h, 6 * h + 6)):
            column = self.known[:, c]
            if (column == 1).any():
                column[column != 1] = -1  # 1: one holder
            maybe = np.flatnonzero(column != -1)
            if len(maybe) == 1:
                column[maybe[0]] = 1  # 2: last candidate
        for s in range(n):
            for h in live:
                cells = self.cells(s, h)
                self.least[s, h] = max(self.least[s, h], (cells == 1).sum())  # 3
                if self.least[s, h] + (cells == -1).sum() == 6:
                    cells[cells == 0] = 1  # 4: holds the rest
            if self.least[s].sum() == self.sizes[s]:  # 5: full hand
                for h in live:
                    cells = self.cells(s, h)
                    if (cells == 1).sum() == self.least[s, h]:
                        cells[cells == 0] = -1
            room = [(self.cells(s, h) != -1).sum() if self.live[h] else 0 for h in range(8)]
            for h in live:  # 6: least from room
                self.least[s, h] = max(self.least[s, h], self.sizes[s] - (sum(room) - room[h]))
        for h in live:  # 7: half-suit total
            if self.least[:, h].sum() == 6:
                for s in range(n):
                    cells = self.cells(s, h)
                    if (cells == 1).sum() == self.least[s, h]:
                        cells[cells == 0] = -1

    def ask(self, asker: int, respondent: int, c: int, success: bool) -> None:
        h = c // 6
        self.known[asker, c] = -1
        self.least[asker, h] = max(self.least[asker, h], 1)
        if not success:
            self.known[respondent, c] = -1
            self.close()
            return
        self.known[respondent, c] = 1
        self.close()
        self.known[:, c] = -1
        self.known[asker, c] = 1
        self.least[asker, h] += 1
        self.least[respondent, h] -= 1
        self.sizes[asker] += 1
        self.sizes[respondent] -= 1
        self.close()

    def claim(self, h: int, held: list[int]) -> None:
        self.known[:, 6 * h : 6 * h + 6] = 0
        self.least[:, h] = 0
        self.live[h] = False
        self.sizes = [a - b for a, b in zip(self.sizes, held)]
        self.close()

    def learn_about(self, seat: int, other: Reference) -> bool:
        """Rule 8: take every fact ``other`` knows about ``seat``; True if anything was new."""
        row, least = self.known[seat], self.least[seat]
        new = (row == 0) & (other.known[seat] != 0)
        raised = other.least[seat] > least
        row[new] = other.known[seat][new]
        least[raised] = other.least[seat][raised]
        return bool(new.any() or raised.any())


def engine_tables(game: Literature, s, observer: int) -> tuple[np.ndarray, np.ndarray]:
    """(known as -1/0/1, least) of one engine observer."""
    eng = game.engine
    every = np.frombuffer(eng.tables(s.know), np.uint8).reshape(3, 8, eng.num_observers, game.num_players)
    mine = every[:, :, observer]
    holds = deck.BYTE_CARDS[mine[0].T].reshape(game.num_players, 48)
    lacks = deck.BYTE_CARDS[mine[1].T].reshape(game.num_players, 48)
    return holds.astype(int) - lacks, mine[2].T.astype(int)


def random_game(game: Literature, seed: int, declare: float = 0.02):
    """Yield (state, events) after the deal (events = None) and after every step of a random
    legal game that mostly asks, so knowledge piles up: a claim starts with probability
    ``declare`` per turn. ``events`` are the public events the step logged."""
    rng = np.random.default_rng(seed)
    s = game.init(rng)
    yield s, None
    while not s.done:
        logged = len(s.log)
        legal = np.flatnonzero(game.legal_mask(s))
        asks = legal[legal < game.num_asks]
        if len(asks) and rng.random() > declare:
            legal = asks
        game.apply(s, int(legal[rng.integers(len(legal))]), rng)
        yield s, s.log[logged:]


def reference_observers(game: Literature, s) -> list[Reference]:
    """A Reference for every engine observer of ``game`` at the deal ``s``."""
    n = game.num_players
    hands = [deck.cards_in(h) for h in s.hands]
    sizes = [len(h) for h in hands]
    if not game.original:
        return [Reference(n, sizes, p, hands[p]) for p in range(n)]
    return [Reference(n, sizes, k, hands[k]) if i == k else Reference(n, sizes)
            for k in range(n) for i in range(n)]


def play_reference(game: Literature, refs: list[Reference], events: list[tuple]) -> None:
    """Feed the logged events to every reference observer."""
    n = game.num_players
    for event in events:
        for r in refs:
            if event[0] == "ask":
                r.ask(*event[1:])
            else:
                r.claim(event[2], [event[3].count(q) for q in range(n)])
        tell_first_order(game, refs)


def tell_first_order(game: Literature, refs: list[Reference]) -> None:
    """Rule 8 to a fixed point: "what k can tell i knows" takes k's facts about i."""
    n, changed = game.num_players, game.original
    while changed:
        changed = False
        for k in range(n):
            for i in range(n):
                if i != k and refs[k * n + i].learn_about(i, refs[k * n + k]):
                    refs[k * n + i].close()
                    changed = True


@pytest.mark.parametrize("config,seed", [({"num_players": 4}, 1), ({"num_players": 6}, 2),
                                         ({"num_players": 8}, 3),
                                         ({"num_players": 4, "rules": "original"}, 4)])
def test_the_bit_boards_equal_a_plain_reference_of_the_rules(config, seed):
    game = Literature(**config)
    refs: list[Reference] = []
    for s, events in random_game(game, seed):
        if events is None:
            refs = reference_observers(game, s)
            tell_first_order(game, refs)
            play_reference(game, refs, s.log)  # original rules: claims proven at the deal
        else:
            play_reference(game, refs, events)
        for o, r in enumerate(refs):
            known, least = engine_tables(game, s, o)
            assert np.array_equal(known, r.known), (config, o, events)
            assert np.array_equal(least, r.least), (config, o, events)
