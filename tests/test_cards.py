"""card_envs.core.cards: the shuffle every game deals with."""

import numpy as np
import pytest

from card_envs.core.cards import shuffled


@pytest.mark.parametrize("items", [range(52), list(range(2, 100)), [3, 3, 1, 0, 7], [5], []])
def test_shuffled_draws_the_order_of_numpy_permutation(items):
    # the games' seeded deals rely on it: same order, same draws left in the generator
    ours, numpys = np.random.default_rng(11), np.random.default_rng(11)
    for _ in range(200):
        got = shuffled(items, ours)
        assert got == np.asarray(numpys.permutation(np.array(list(items), dtype=np.int64))).tolist()
        assert all(type(x) is int for x in got)
    assert ours.random() == numpys.random()


def test_shuffled_leaves_its_input_alone():
    items = [1, 2, 3, 4, 5]
    orders = {tuple(shuffled(items, np.random.default_rng(seed))) for seed in range(30)}
    assert items == [1, 2, 3, 4, 5] and len(orders) > 10
