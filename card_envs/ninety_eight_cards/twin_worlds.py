"""98 Cards worlds dealt again inside the batched twin: batched PIMC's worlds at compiled speed.

The one thing a 98 Cards player cannot see is the order of the draw pile (which cards are in
it follows from what was played). ``redeal_hidden`` shuffles the undrawn part of each given
twin slot's deck (``deck[deck_pos:]``), which is how ``NinetyEightCards.sample_world`` orders
a view's draw pile: a copied world dealt again is drawn as a sampled one is, whatever order
it was copied with. Imported only where a batched search runs (numba).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from card_envs.core.batched_loops import shuffle


def redeal_hidden(arrays: Any, slots: np.ndarray, rng: np.random.Generator) -> None:
    """In each of ``slots`` of the twin's ``arrays`` (card_envs.ninety_eight_cards.batched),
    the draw pile shuffled again; draws from ``rng``."""
    _redeal(arrays.deck, arrays.deck_pos, np.asarray(slots, np.int64), rng)


@njit(cache=True)
def _redeal(deck, deck_pos, slots, rng):  # pragma: no cover - compiled
    for i in slots:
        shuffle(rng, deck[i, deck_pos[i]:])
