"""Palace worlds dealt again inside the batched twin: the search's worlds at compiled speed.

``BatchedPIMC`` (card_envs.core.batched_search) plays a search's worlds out on the twin. A
world from ``search.sample_world`` costs some 0.1 ms of Python, and loading it into a slot as
much again: most of a batched search's time at 25 worlds a view. ``redeal_hidden`` makes the
other worlds of a view from its first one, in the twin: in each slot, the cards that the seat
to act cannot see (the other hands' cards beyond those publicly known, every face-down stack,
its own included, and the draw pile) are pooled and shuffled back into the same places, as
many into each as before. ``sample_world`` deals exactly such a pool into exactly those places
(``agents.deal_unseen``: the pool shuffled, then dealt out), so a world dealt again is drawn as
``sample_world`` draws one, independently of the world it was copied from; and it reads only
what that world shows its seat, which is what the view showed.

Imported only where a batched search runs (numba).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from card_envs.core.batched_loops import shuffle
from card_envs.core.cards import DECK_SIZE, NUM_RANKS
from card_envs.palace.rules import FACE_DOWN_AT, KNOWN_AT, Palace


def redeal_hidden(game: Palace, arrays: Any, slots: np.ndarray, rng: np.random.Generator
                  ) -> None:
    """In each of ``slots`` of the twin's ``arrays`` (``card_envs.palace.batched``), every card
    the seat to act cannot see dealt again at random into the places it cannot see (see the
    module docstring); draws from ``rng``."""
    ix = game.index
    _redeal(arrays.facts, arrays.face_down, arrays.draw, arrays.current_player,
            np.asarray(slots, np.int64), game.num_players, ix.seat(1) - ix.seat(0), ix.public,
            ix.draw, rng)


@njit(cache=True)
def _redeal(facts, face_down, draw, current_player, slots, n, seat_width, hands, draw_at,
            rng):  # pragma: no cover - compiled
    """``redeal_hidden`` with the facts' layout (``FactIndex``: a seat's block every
    ``seat_width``; seat q's hand per rank at ``hands + 13 q``; the draw pile's size at
    ``draw_at``)."""
    pool = np.empty(DECK_SIZE, np.int64)
    for i in slots:
        me = current_player[i]
        size = 0
        for q in range(n):  # the pool: what ``me`` cannot see, in its places
            seat = q * seat_width
            if q != me:
                for r in range(NUM_RANKS):
                    for _ in range(facts[i, hands + NUM_RANKS * q + r]
                                   - facts[i, seat + KNOWN_AT + r]):
                        pool[size] = r
                        size += 1
            for k in range(facts[i, seat + FACE_DOWN_AT]):
                pool[size] = face_down[i, q, k]
                size += 1
        for k in range(facts[i, draw_at]):
            pool[size] = draw[i, k]
            size += 1
        shuffle(rng, pool[:size])
        at = 0
        for q in range(n):  # dealt back: as many into each place as it held
            seat = q * seat_width
            if q != me:
                unknown = 0
                for r in range(NUM_RANKS):
                    unknown += facts[i, hands + NUM_RANKS * q + r] - facts[i, seat + KNOWN_AT + r]
                    facts[i, hands + NUM_RANKS * q + r] = facts[i, seat + KNOWN_AT + r]
                for k in range(unknown):
                    facts[i, hands + NUM_RANKS * q + pool[at + k]] += 1
                at += unknown
            for k in range(facts[i, seat + FACE_DOWN_AT]):
                face_down[i, q, k] = pool[at + k]
            at += facts[i, seat + FACE_DOWN_AT]
        for k in range(facts[i, draw_at]):
            draw[i, k] = pool[at + k]
