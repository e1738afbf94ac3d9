"""98 Cards' shaping potentials (baselines' ``shaping: {potential: NAME}``): functions of
the default encoding's named pieces, a batch of the learner's observations at a time."""

from __future__ import annotations

import numpy as np

from card_envs.core.encoding import Layout
from card_envs.ninety_eight_cards.expert import HOME_COST

_HOME_COST = np.array(HOME_COST)


def pile_room(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """How far the piles can still move (ascending to 99, descending to 2), in units of 5
    points: a jump of 5 costs as much as one card played earns."""
    tops = np.round(layout.batch(obs, "piles") * 100)
    return ((99 - tops[:, :2]).sum(1) + (tops[:, 2:] - 2).sum(1)) / 5.0


def homes(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """Minus the expert's cost of the cards still to play (draw pile and hand) by their homes,
    the piles that still take each directly: a card with four costs nothing, one with none
    the most (expert.HOME_COST; the expert's TurnPlanner counts a play's cost as the change
    of this sum)."""
    tops = np.round(layout.batch(obs, "piles") * 100)
    hand = np.round(layout.batch(obs, "hand") * 100).astype(np.int64)
    live = np.zeros((len(obs), 102))
    live[:, 2:100] = layout.batch(obs, "in_draw_pile")
    np.put_along_axis(live, hand, 1.0, axis=1)
    live[:, 0] = 0.0
    values = np.arange(102)
    count = ((values > tops[:, 0:1]).astype(np.int64) + (values > tops[:, 1:2])
             + (values < tops[:, 2:3]) + (values < tops[:, 3:4]))
    return -(live * _HOME_COST[count]).sum(1)


POTENTIALS = {
    # the room left on the piles, which every jump spends and a tens trick wins back
    "pile_room": pile_room,
    # the cards still to play by how many piles take each (the expert's counting)
    "homes": homes,
}
