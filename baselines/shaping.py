"""Potential-based reward shaping for training (Ng, Harada & Russell, 1999).

A setting may add ``shaping: {potential: NAME, scale: K}`` in configs/games.yaml: every step
the learner also gets ``K * (gamma * phi(s') - phi(s))``, with phi(s) computed from the
learner's own view and 0 once the episode ends. Shaping of this form leaves the optimal
policy unchanged; it only tells the learner sooner which moves help. Evaluation always
uses the game's own results.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym


def _lives_lead(view) -> float:
    """Thirty-One: my lives minus the others' average, in units of a full stock of lives."""
    others = [view.lives[q] for q in view.opponents] or [0]
    full = max(max(view.lives), 1)
    return (view.lives[view.player] - sum(others) / len(others)) / full


def _pile_room(view) -> float:
    """98 Cards: how far the piles can still move (ascending to 99, descending to 2), in
    units of 5 points: a jump of 5 costs as much as one card played earns."""
    room = 0
    for pile, top in enumerate(view.piles.tolist()):
        room += 99 - top if pile < 2 else top - 2
    return room / 5.0


def _half_suit_lead(view) -> float:
    """Literature: half-suits my team has scored minus the opponents', / 8."""
    mine = view.score[view.player % 2]
    return (mine - view.score[1 - view.player % 2]) / 8.0


# potential name -> function of the learner's view
POTENTIALS: dict[str, Callable] = {
    # 98 Cards: the room left on the piles, which every jump spends and a tens trick wins back
    "pile_room": _pile_room,
    # Thirty-One: how good my hand is (a hand's score is what a showdown compares)
    "hand_score": lambda view: view.score() / 31.0,
    # Thirty-One: the lives race, paid at every showdown rather than only at the match's end
    "lives_lead": _lives_lead,
    "lives_lead_and_hand": lambda view: _lives_lead(view) + view.score() / 31.0,
    # Literature: the half-suit race, paid at every claim rather than only at the game's end
    "half_suit_lead": _half_suit_lead,
}


class PotentialShaping(gym.Wrapper):
    """Adds ``scale * (gamma * phi(next) - phi(now))`` to every reward of the learner."""

    def __init__(self, env: gym.Env, potential: str, scale: float, gamma: float):
        super().__init__(env)
        if potential not in POTENTIALS:
            raise ValueError(f"unknown potential {potential!r}; choose one of "
                             f"{', '.join(POTENTIALS)}")
        self.phi = POTENTIALS[potential]
        self.scale = scale
        self.gamma = gamma
        self.last = 0.0

    def _potential(self) -> float:
        base = self.env.unwrapped
        return self.scale * self.phi(base.game.view(base.game_state, base.seat))

    def reset(self, **kwargs):
        out = self.env.reset(**kwargs)
        self.last = self._potential()
        return out

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        now = 0.0 if terminated or truncated else self._potential()
        reward += self.gamma * now - self.last
        self.last = now
        return obs, reward, terminated, truncated, info


class ResultBonus(gym.Wrapper):
    """Adds ``scale`` times the game's result (``info["payoff"]``, e.g. +1 for winning a
    Thirty-One match) to the learner's last reward of an episode.

    For a game trained on a shaped reward that never mentions the final result (Thirty-One's
    ``reward="original"`` pays per round), this puts the result back into what is learned.
    Episodes cut by the step cap add nothing.
    """

    def __init__(self, env: gym.Env, scale: float):
        super().__init__(env)
        self.scale = scale

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated and "payoff" in info:
            reward += self.scale * info["payoff"]
        return obs, reward, terminated, truncated, info
