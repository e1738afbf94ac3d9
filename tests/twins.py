"""Twin worlds: states that differ only in what one seat cannot see (``Game.randomize_hidden``),
the machinery of the leak tests (tests/test_leaks.py, tests/test_text_agents.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from tests.conftest import play_states


def twin_worlds(game, seeds: Iterable[int], every: int,
                rng: np.random.Generator) -> Iterator[tuple[object, int, object]]:
    """``(state, seat, twin)`` for every seat of every ``every``-th state of a random game per
    seed: ``twin`` is ``state`` with everything ``seat`` cannot see redrawn, checked against
    the game's invariants. A test must also count the twins that differ from their state,
    else it may prove nothing."""
    for seed in seeds:
        for s in play_states(game, seed, every=every):
            for p in range(game.num_players):
                twin = game.randomize_hidden(s, p, rng)
                game.check_invariants(twin)
                yield s, p, twin
