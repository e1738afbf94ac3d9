"""Literature's shaping potentials (baselines' ``shaping: {potential: NAME}``): functions of
the default encoding's named pieces, a batch of the learner's observations at a time."""

from __future__ import annotations

import numpy as np

from card_envs.core.encoding import Layout


def half_suit_lead(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """Half-suits my team has scored minus the opponents', / 8."""
    outcome = layout.batch(obs, "half_suits").reshape(len(obs), 8, 3)
    return (outcome[:, :, 0].sum(1) - outcome[:, :, 1].sum(1)) / 8.0


POTENTIALS = {
    # the half-suit race, paid at every claim rather than only at the game's end
    "half_suit_lead": half_suit_lead,
}
