"""The Literature deck: 48 cards (no 7s) in 8 half-suits of 6, as indices, labels and bits.

A card is ``half_suit * 6 + position``. Half-suit ``h`` is the low (A-6, ``h`` even) or high
(8-K, ``h`` odd) half of suit ``h // 2``, suits in ``card_envs.core.cards`` order (S, H, D, C).

Hands and knowledge are kept as bit sets in "slot" form: one byte per half-suit, the card in
position ``k`` at bit ``8 * half_suit + k`` (bits 6 and 7 of each byte stay empty). A slot is
64 bits, so counting cards per half-suit is a byte-wise popcount (see ``knowledge.py``).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.cards import suit_symbols
from card_envs.core.dtypes import UINT8

NUM_CARDS = 48
NUM_HALF_SUITS = 8
HALF_SUIT_SIZE = 6
SLOT_BITS = 64
LOW_RANKS = ("A", "2", "3", "4", "5", "6")
HIGH_RANKS = ("8", "9", "10", "J", "Q", "K")
HALF_NAMES = ("low", "high")

# Bit of each card in slot form, and the six card bits of each half-suit.
CARD_BIT = tuple((c // HALF_SUIT_SIZE) * 8 + c % HALF_SUIT_SIZE for c in range(NUM_CARDS))
HALF_BITS = tuple(0x3F << (8 * h) for h in range(NUM_HALF_SUITS))
ALL_CARD_BITS = sum(HALF_BITS)

# BYTE_CARDS[b] is the int8 row of the six card bits of byte b: slot bytes -> card arrays.
BYTE_CARDS = ((np.arange(256)[:, None] >> np.arange(HALF_SUIT_SIZE)) & 1).astype(np.int8)


def half_suit_of(card: int) -> int:
    """The half-suit (0..7) a card belongs to."""
    return card // HALF_SUIT_SIZE


def cards_of_half_suit(h: int) -> range:
    """The six card indices of half-suit ``h``."""
    return range(h * HALF_SUIT_SIZE, (h + 1) * HALF_SUIT_SIZE)


def slot_bits(cards) -> int:
    """The slot-form bit set of some card indices."""
    bits = 0
    for c in cards:
        bits |= 1 << CARD_BIT[c]
    return bits


def cards_in(bits: int) -> list[int]:
    """The card indices of a slot-form bit set, in increasing order."""
    return np.flatnonzero(card_row(bits)).tolist()


def card_row(bits: int) -> np.ndarray:
    """A slot-form bit set as an int8 array over the 48 cards."""
    return BYTE_CARDS[np.frombuffer(bits.to_bytes(8, "little"), UINT8)].reshape(NUM_CARDS)


def half_counts(bits: int) -> list[int]:
    """Cards per half-suit in a slot-form bit set."""
    return [((bits >> (8 * h)) & 0x3F).bit_count() for h in range(NUM_HALF_SUITS)]


def rank_name(card: int) -> str:
    """The rank of a card: A..6 in a low half-suit, 8..K in a high one."""
    ranks = HIGH_RANKS if half_suit_of(card) % 2 else LOW_RANKS
    return ranks[card % HALF_SUIT_SIZE]


def card_label(card: int, unicode: bool | None = None) -> str:
    """A card's short name, e.g. ``10♥`` (``10H`` in ASCII)."""
    return rank_name(card) + suit_symbols(unicode)[half_suit_of(card) // 2]


def half_suit_label(h: int, unicode: bool | None = None) -> str:
    """A half-suit's name, e.g. ``low ♠`` (``low S`` in ASCII)."""
    return f"{HALF_NAMES[h % 2]} {suit_symbols(unicode)[h // 2]}"
