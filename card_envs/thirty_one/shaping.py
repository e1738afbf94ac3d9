"""Thirty-One's shaping potentials (baselines' ``shaping: {potential: NAME}``): functions of
the default encoding's named pieces, a batch of the learner's observations at a time."""

from __future__ import annotations

import numpy as np

from card_envs.core.encoding import Layout


def lives_lead(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """My lives minus the others' average (the seats still in), in units of the most lives
    anyone holds. Places are relative, mine first; 0 lives is out."""
    lives = layout.batch(obs, "lives")
    mine, others = lives[:, 0], lives[:, 1:]
    still_in = others > 0
    count = still_in.sum(1)
    mean = np.where(count > 0, (others * still_in).sum(1) / np.maximum(count, 1), 0.0)
    full = lives.max(1)
    return np.where(full > 0, (mine - mean) / np.where(full > 0, full, 1.0), 0.0)


def hand_score(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """My hand's score / 31 (what a showdown compares)."""
    return layout.batch(obs, "hand_score")[:, 0]


POTENTIALS = {
    # how good my hand is (a hand's score is what a showdown compares)
    "hand_score": hand_score,
    # the lives race, paid at every showdown rather than only at the match's end
    "lives_lead": lives_lead,
    "lives_lead_and_hand": lambda layout, obs: lives_lead(layout, obs) + hand_score(layout, obs),
}
