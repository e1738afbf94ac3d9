"""Literature cards by name, for hand-built test scenarios."""

from __future__ import annotations

from card_envs.literature import deck


def card(name: str) -> int:
    """A card from its name: '5C' (5 of clubs, low), 'QH' (high hearts), '10D', 'AS'."""
    rank, suit = name[:-1], "SHDC".index(name[-1])
    if rank in deck.LOW_RANKS:
        return (2 * suit) * 6 + deck.LOW_RANKS.index(rank)
    return (2 * suit + 1) * 6 + deck.HIGH_RANKS.index(rank)


def cards(names: str) -> list[int]:
    return [card(x) for x in names.split()]


def hands_with(n: int = 4, **given: list[int]) -> list[list[int]]:
    """Hands for n seats: ``p0=[...]`` etc. as given, the other cards dealt round the rest."""
    hands = [list(given.get(f"p{q}", [])) for q in range(n)]
    free = [c for c in range(48) if not any(c in h for h in hands)]
    open_seats = [q for q in range(n) if f"p{q}" not in given]
    for i, c in enumerate(free):
        hands[open_seats[i % len(open_seats)]].append(c)
    return hands
