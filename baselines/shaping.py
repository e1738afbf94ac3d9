"""Potential-based reward shaping for training (Ng, Harada & Russell, 1999), and a result bonus.

A setting may add ``shaping: {potential: NAME, scale: K}`` in configs/games.yaml: every step
the learner also gets ``K * (gamma * phi(s') - phi(s))``, with phi(s) read from the learner's
own observation (the default encoding's named pieces) and 0 once the episode ends. Shaping of
this form leaves the optimal policy unchanged; it only tells the learner sooner which moves
help. Evaluation always uses the game's own results.

Both wrappers are SB3 ``VecEnvWrapper``s, so the batched path (the game's twin) and the
scalar path (``--scalar``: a DummyVecEnv of ``gym_env()``) shape the same way, from the same
observations, a whole batch per call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from card_envs.core.encoding import Layout


def _piece(layout: Layout, obs: np.ndarray, name: str) -> np.ndarray:
    return obs[:, layout[name]].astype(np.float64)


def _lives_lead(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """Thirty-One: my lives minus the others' average (the seats still in), in units of the
    most lives anyone holds. Places are relative, mine first; 0 lives is out."""
    lives = _piece(layout, obs, "lives")
    mine, others = lives[:, 0], lives[:, 1:]
    still_in = others > 0
    count = still_in.sum(1)
    mean = np.where(count > 0, (others * still_in).sum(1) / np.maximum(count, 1), 0.0)
    full = lives.max(1)
    return np.where(full > 0, (mine - mean) / np.where(full > 0, full, 1.0), 0.0)


def _hand_score(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """Thirty-One: my hand's score / 31 (what a showdown compares)."""
    return _piece(layout, obs, "hand_score")[:, 0]


def _pile_room(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """98 Cards: how far the piles can still move (ascending to 99, descending to 2), in
    units of 5 points: a jump of 5 costs as much as one card played earns."""
    tops = np.round(_piece(layout, obs, "piles") * 100)
    return ((99 - tops[:, :2]).sum(1) + (tops[:, 2:] - 2).sum(1)) / 5.0


# what a live card costs by its homes (piles that take it directly): 0 to 4 homes; each step
# down costs the expert planner's weight for that home (3.0, 1.5, 0.7, 0.3: expert.py)
HOME_COST = np.array([5.5, 2.5, 1.0, 0.3, 0.0])


def _homes(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """98 Cards: minus the expert's cost of the cards still to play (draw pile and hand) by
    their homes, the piles that still take each directly: a card with four costs nothing, one
    with none 5.5 (expert.py's TurnPlanner counts a play's cost as the change of this sum)."""
    tops = np.round(_piece(layout, obs, "piles") * 100)
    hand = np.round(_piece(layout, obs, "hand") * 100).astype(np.int64)
    live = np.zeros((len(obs), 102))
    live[:, 2:100] = _piece(layout, obs, "in_draw_pile")
    np.put_along_axis(live, hand, 1.0, axis=1)
    live[:, 0] = 0.0
    values = np.arange(102)
    homes = ((values > tops[:, 0:1]).astype(np.int64) + (values > tops[:, 1:2])
             + (values < tops[:, 2:3]) + (values < tops[:, 3:4]))
    return -(live * HOME_COST[homes]).sum(1)


def _half_suit_lead(layout: Layout, obs: np.ndarray) -> np.ndarray:
    """Literature: half-suits my team has scored minus the opponents', / 8."""
    outcome = _piece(layout, obs, "half_suits").reshape(len(obs), 8, 3)
    return (outcome[:, :, 0].sum(1) - outcome[:, :, 1].sum(1)) / 8.0


# potential name -> function of (the encoder's layout, observations (B, D)) -> (B,)
POTENTIALS: dict[str, Callable[[Layout, np.ndarray], np.ndarray]] = {
    # 98 Cards: the room left on the piles, which every jump spends and a tens trick wins back
    "pile_room": _pile_room,
    # 98 Cards: the cards still to play by how many piles take each (the expert's counting)
    "homes": _homes,
    # Thirty-One: how good my hand is (a hand's score is what a showdown compares)
    "hand_score": _hand_score,
    # Thirty-One: the lives race, paid at every showdown rather than only at the match's end
    "lives_lead": _lives_lead,
    "lives_lead_and_hand": lambda layout, obs: _lives_lead(layout, obs) + _hand_score(layout,
                                                                                      obs),
    # Literature: the half-suit race, paid at every claim rather than only at the game's end
    "half_suit_lead": _half_suit_lead,
}


def check_potential(name: str) -> None:
    """ValueError naming the potentials unless ``name`` is one."""
    if name not in POTENTIALS:
        raise ValueError(f"unknown potential {name!r}; choose one of {', '.join(POTENTIALS)}")


class PotentialShaping(VecEnvWrapper):
    """Adds ``scale * (gamma * phi(next) - phi(now))`` to every learner's reward, phi read
    from the flat observations (``layout``: the encoder's)."""

    def __init__(self, venv: VecEnv, layout: Layout, potential: str, scale: float,
                 gamma: float):
        super().__init__(venv)
        check_potential(potential)
        self.phi = POTENTIALS[potential]
        self.layout, self.scale, self.gamma = layout, scale, gamma
        self.last = np.zeros(self.num_envs)

    def _potential(self, obs: np.ndarray) -> np.ndarray:
        return self.scale * self.phi(self.layout, obs)

    def reset(self):
        obs = self.venv.reset()
        self.last = self._potential(obs)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        # a game that ended was reset in the same step: obs is already the next game's
        now = self._potential(obs)
        shaped = rewards + (np.where(dones, 0.0, self.gamma * now) - self.last)
        self.last = now
        return obs, shaped.astype(np.float32), dones, infos


class ResultBonus(VecEnvWrapper):
    """Adds ``scale`` times the game's result (``infos[i]["payoff"]``, e.g. +1 for winning a
    Thirty-One match) to the learner's last reward of an episode.

    For a game trained on a shaped reward that never mentions the final result (Thirty-One's
    ``reward="original"`` pays per round), this puts the result back into what is learned.
    Episodes cut by the step cap add nothing.
    """

    def __init__(self, venv: VecEnv, scale: float):
        super().__init__(venv)
        self.scale = scale

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        rewards = rewards.copy()
        for i in np.flatnonzero(dones).tolist():
            info = infos[i]
            if "payoff" in info and not info.get("TimeLimit.truncated", False):
                rewards[i] += self.scale * info["payoff"]
        return obs, rewards, dones, infos
