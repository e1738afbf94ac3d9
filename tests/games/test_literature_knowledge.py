"""The Literature knowledge engine: hand-built event sequences with the facts they prove, and
properties over random games (every fact true, nothing taken from unseen cards, the fast bit
boards equal to a plain reference of the same rules)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.literature import deck
from card_envs.literature.knowledge import ALL_PENDING, Engine, public_engine
from card_envs.literature.rules import Literature, replay
from tests.games.literature_cards import card, cards

RNG = np.random.default_rng(0)


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
        self.sizes = [a - b for a, b in zip(self.sizes, held, strict=True)]
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
    every = np.frombuffer(eng.tables(s.know), np.uint8)
    every = every.reshape(3, 8, eng.num_observers, game.num_players)
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


# --- hand-built event sequences ----------------------------------------------------------

LOW_S, HIGH_S, LOW_H = 0, 1, 2


def public_facts(engine, k):
    """(holds, lacks, least) of a public engine's one observer."""
    t = np.frombuffer(engine.tables(k), np.uint8).reshape(3, 8, 1, engine.num_seats)[:, :, 0]
    table = lambda bits: deck.BYTE_CARDS[bits.T].reshape(engine.num_seats, 48)  # noqa: E731
    return table(t[0]), table(t[1]), t[2].T.astype(int)


def fresh_public(sizes=(12, 12, 12, 12)):
    engine = public_engine(len(sizes))
    k = engine.start(list(sizes))
    engine.close(k, ALL_PENDING)
    return engine, k


def test_nothing_is_known_before_any_event():
    engine, k = fresh_public()
    holds, lacks, least = public_facts(engine, k)
    assert not holds.any() and not lacks.any() and not least.any()


def test_a_failed_ask_proves_two_lacks_and_one_least_count_only():
    engine, k = fresh_public()
    engine.ask(k, 0, 1, card("4S"), False)
    holds, lacks, least = public_facts(engine, k)
    assert not holds.any()
    assert np.flatnonzero(lacks.ravel()).tolist() == [card("4S"), 48 + card("4S")]
    assert least[0, LOW_S] == 1 and least.sum() == 1


def test_a_successful_ask_moves_the_facts_with_the_card():
    engine, k = fresh_public()
    engine.ask(k, 0, 1, card("4S"), True)
    holds, lacks, least = public_facts(engine, k)
    assert np.flatnonzero(holds.ravel()).tolist() == [card("4S")]
    assert lacks[1:, card("4S")].all() and lacks.sum() == 3, "one holder (rule 1)"
    assert least[0, LOW_S] == 2 and least[1, LOW_S] == 0


def test_last_candidate_is_known_only_by_those_who_can_see_the_others_lack_it():
    game = Literature(num_players=4)
    s = game.deal(full_hands(p0=cards("AC"), p2=cards("2C"), p3=cards("5C")))
    game.apply(s, card("5C"), RNG)  # seat 0 asks seat 1 (its opponent 0) for 5C: no
    for observer, expected in ((0, 0), (1, 0), (2, 1), (3, 1)):
        holds = game.view(s, observer).holds()
        assert holds[3, card("5C")] == expected, observer


def test_holds_the_rest_when_five_cards_of_a_half_suit_are_lacked():
    engine, k = fresh_public()
    for name in ("AS", "2S", "3S", "4S", "5S"):  # seat 0 asks for five low spades in vain
        engine.ask(k, 0, 1, card(name), False)
    holds, lacks, least = public_facts(engine, k)
    assert holds[0, card("6S")] and lacks[1:, card("6S")].all()


def test_a_full_hand_lacks_everything_outside_its_least_counts():
    engine, k = fresh_public((1, 15, 16, 16))
    engine.ask(k, 0, 1, card("2S"), False)  # the one card of seat 0 is a low spade
    holds, lacks, least = public_facts(engine, k)
    outside = [c for c in range(48) if deck.half_suit_of(c) != LOW_S]
    assert lacks[0, outside].all() and lacks[0, card("2S")]
    assert not lacks[0, cards("AS 3S 4S 5S 6S")].any() and not holds[0].any()


def test_least_from_room():
    engine, k = fresh_public()
    # six half-suits leave play; seats keep 2, 4, 3 and 3 cards of low and high spades
    for h, held in ((2, [6, 0, 0, 0]), (3, [4, 2, 0, 0]), (4, [0, 6, 0, 0]), (5, [0, 0, 6, 0]),
                    (6, [0, 0, 3, 3]), (7, [0, 0, 0, 6])):
        engine.claim(k, h, held)
    # (one deal that fits: seat 0 5S KS; seat 1 3S 4S 10S JS; seat 2 6S 9S QS; seat 3 AS 2S 8S)
    for asker, names in ((1, "AS 2S 8S 9S"), (3, "3S 4S 10S JS QS")):
        for name in names.split():
            engine.ask(k, asker, 0, card(name), False)
    holds, lacks, least = public_facts(engine, k)
    # seat 0 may hold only 5S, 6S and KS: at most one of its two cards is high
    assert least[0, LOW_S] == 1 and least[0, HIGH_S] == 0
    assert not holds[0].any() and not lacks[0, cards("5S 6S KS")].any()


def test_half_suit_total():
    engine, k = fresh_public()
    engine.ask(k, 0, 1, card("AS"), True)
    engine.ask(k, 2, 3, card("2S"), True)
    engine.ask(k, 0, 3, card("3S"), True)
    engine.ask(k, 2, 1, card("4S"), True)
    holds, lacks, least = public_facts(engine, k)
    assert least[0, LOW_S] == least[2, LOW_S] == 3, "three low spades each: all six"
    assert lacks[1, half(LOW_S)].all() and lacks[3, half(LOW_S)].all()
    assert not holds[:, cards("5S 6S")].any(), "but not which of the two has 5S"


def test_a_claim_takes_the_half_suit_out_and_shrinks_the_hands():
    engine, k = fresh_public()
    engine.ask(k, 0, 1, card("AS"), True)
    engine.claim(k, LOW_S, [2, 0, 4, 0])
    holds, lacks, least = public_facts(engine, k)
    assert not holds.any() and not lacks.any() and not least.any()
    assert k.sizes == sum(size * u for size, u in zip([11, 11, 8, 12], engine.unit, strict=True))


def test_first_order_knowledge_the_source_example():
    """Seat 2 holds 2H; seat 0 asks seat 1 for it. Seat 2 learns nothing new about the hands,
    but now knows that seat 0 knows that seat 1 lacks 2H (the source's addendum)."""
    game = Literature(num_players=4, rules="original")
    s = game.deal(full_hands(p0=cards("AH"), p2=cards("2H")))
    before = game.view(s, 2)
    assert before.lacks()[1, card("2H")], "seat 2 holds 2H, so it knows seat 1 lacks it"
    believed = deck.BYTE_CARDS[before.believed_tables(0)[1]].reshape(4, 48)
    assert not believed[1, card("2H")]
    game.apply(s, card("2H"), RNG)  # seat 0 asks its opponent 0 (seat 1) for 2H: no
    after = game.view(s, 2)
    column = card("2H")
    assert np.array_equal(after.lacks()[:, column], before.lacks()[:, column]), "nothing new on 2H"
    assert np.array_equal(after.holds()[:, column], before.holds()[:, column])
    believed = deck.BYTE_CARDS[after.believed_tables(0)[1]].reshape(4, 48)
    assert believed[1, card("2H")] and believed[0, card("2H")]
    # what seat 2 can tell seat 0 knows about seat 0's own hand includes "lacks 2H" from the start
    first = deck.BYTE_CARDS[before.believed_tables(0)[1]].reshape(4, 48)
    assert first[0, card("2H")]


def full_hands(n: int = 4, **given: list[int]) -> list[list[int]]:
    """Hands of 48/n cards: ``p0=[...]`` etc. are in the given hands, every other card is dealt
    one at a time round the seats that still need cards."""
    hands = [list(given.get(f"p{q}", [])) for q in range(n)]
    free = [c for c in range(48) if not any(c in h for h in hands)]
    q = 0
    for c in free:
        while len(hands[q % n]) >= 48 // n:
            q += 1
        hands[q % n].append(c)
        q += 1
    return hands


def half(h: int) -> list[int]:
    return list(deck.cards_of_half_suit(h))


# --- properties over random games --------------------------------------------------------

CONFIGS = [{"num_players": 4}, {"num_players": 6}, {"num_players": 8},
           {"num_players": 4, "rules": "original"}]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_every_inferred_fact_is_true_of_the_real_hands(config):
    game = Literature(**config)
    for seed in range(6):
        for s, _ in random_game(game, 100 + seed, declare=0.01 * seed):
            assert game.engine.sound(s.know, s.hands) is None


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_tables_depend_only_on_the_own_hand_and_the_public_events(config):
    """Each player's tables equal a replay that is given only that player's starting hand and
    the public log, so they cannot depend on any card the player has not seen."""
    game = Literature(**config)
    n = game.num_players
    for seed in range(3):
        start = None
        for s, _ in random_game(game, 200 + seed):
            if start is None:
                start = list(s.hands)
            if s.steps % 25 and not s.done:
                continue
            for p in range(n):
                if game.original:  # seat p and what it can tell each seat i knows
                    engine = Engine(n, [p if i == p else None for i in range(n)],
                                    [(i, p, i) for i in range(n) if i != p])
                    mine = range(p * n, (p + 1) * n)
                else:
                    engine, mine = Engine(n, [p]), [p]
                hands = [start[q] if q == p else 0 for q in range(n)]
                alone = replay(engine, [48 // n] * n, s.log, hands)
                everyone = np.frombuffer(game.engine.tables(s.know), np.uint8).reshape(
                    3, 8, game.engine.num_observers, n)
                replayed = np.frombuffer(engine.tables(alone), np.uint8).reshape(3, 8, len(mine), n)
                assert np.array_equal(everyone[:, :, list(mine)], replayed), (seed, s.steps, p)


def test_randomize_hidden_redraws_only_what_the_player_cannot_place():
    for config in CONFIGS:
        game = Literature(**config)
        rng = np.random.default_rng(5)
        changed = 0
        for s, _ in random_game(game, 7):
            if s.steps % 10:
                continue
            for p in range(game.num_players):
                other = game.randomize_hidden(s, p, rng)
                game.check_invariants(other)
                a, b = game.view(s, p), game.view(other, p)
                assert a.raw == b.raw and a.believed == b.believed and a.hand == b.hand
                assert np.array_equal(a.legal, b.legal) and a.sizes == b.sizes
                placed = a.holds()
                for q in range(game.num_players):
                    held = deck.card_row(other.hands[q])
                    assert (held >= placed[q]).all(), "known cards stay with their holder"
                changed += other.hands != s.hands
        assert changed, config


@pytest.mark.parametrize("n", [4, 6, 8])
def test_the_deal_shortcut_equals_the_full_fixed_point(n):
    """``Engine.deal`` closes the deal's facts inside each half-suit by rule 1 alone: the same
    tables and caches as running every rule from scratch, for even and uneven deals."""
    engine, rng = Engine(n, list(range(n))), np.random.default_rng(n)
    for t in range(300):
        order = rng.permutation(48)
        cuts = np.sort(rng.choice(49, n - 1)) if t % 2 else np.arange(1, n) * (48 // n)
        hands = [deck.slot_bits(h) for h in np.split(order, cuts)]
        slow = engine.start([h.bit_count() for h in hands])
        for seat, hand in enumerate(hands):
            at = 8 * (seat * n + seat)
            for h in range(8):
                mine = (hand >> (8 * h)) & 0x3F
                slow.holds[h] |= mine << at
                slow.lacks[h] |= (0x3F & ~mine) << at
                slow.least[h] |= mine.bit_count() << at
        engine.refresh(slow)
        engine.close(slow, ALL_PENDING)
        assert engine.deal(hands) == slow, (n, t)


def test_an_ask_everyone_could_foresee_leaves_the_tables_as_they_were():
    """A failed ask whose facts every observer already had returns early: same tables and
    caches as before (and as running the rules again)."""
    engine, k = fresh_public()
    engine.ask(k, 0, 1, card("4S"), False)
    before = k.copy()
    engine.ask(k, 0, 1, card("4S"), False)
    assert k == before
    engine.close(k, ALL_PENDING)
    assert k == before
