"""Self-play against frozen snapshots of the learner, refreshed by "king of the hill".

Source 000 trained its Palace agents this way: after every generation a
tournament is played with greedy actions; the reigning king keeps its title
unless a challenger does better, and the king's frozen weights are what the
learners face next. Here the challenger is the current learner and the king a
frozen copy of an earlier learner. Every ``every`` steps they play a tournament
(``games`` games, the challenger in one seat and the king in the others, seats
rotated; duplicate deals for two-player games); the challenger is crowned when
its mean payoff in the tournament exceeds ``margin``, i.e. it beat the king. The
opponents the learner faces in training are the king, or with probability
``mix_fraction`` per seat and episode a rule-based agent (``mix``).
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch as th

from baselines.common import evaluate_agent
from card_envs.core.agents import BaseAgent, make_agent
from card_envs.rl.policy_agent import PolicyAgent


class KingOfTheHill:
    """Holds the king (a frozen policy) and runs the challenger-vs-king tournaments."""

    def __init__(
        self,
        spec,
        game,
        encoder,
        algo: str,
        games: int = 200,
        margin: float = 0.05,
        seed: int = 0,
        team: bool = False,
    ):
        self.spec, self.game, self.encoder, self.algo = spec, game, encoder, algo
        self.games, self.margin, self.seed, self.team = games, margin, seed, team
        self.king = None  # set by crown() once the learner exists
        self.reign = 0  # how many times the title changed hands
        self.history: list[dict] = []

    def crown(self, policy) -> None:
        """Make a frozen copy of ``policy`` the king (or copy its weights into the king)."""
        if self.king is None:
            self.king = copy.deepcopy(policy)
            self.king.set_training_mode(False)
        else:
            self.king.load_state_dict(policy.state_dict())

    def king_agent(self, deterministic: bool = False) -> PolicyAgent:
        if self.king is None:
            raise RuntimeError("no king yet: crown() the learner first")
        return PolicyAgent(self.game, self.encoder, self.king, self.algo, deterministic, "king")

    def tournament(self, policy, timesteps: int) -> dict:
        """Challenger (``policy``) against the king; crown it if it won. Returns the record."""
        challenger = PolicyAgent(self.game, self.encoder, policy, self.algo, True, "challenger")
        king = self.king_agent(deterministic=True)
        seed = self.seed * 1000 + len(self.history)
        result = evaluate_agent(
            self.spec, self.game, challenger, king, self.games, seed, duplicate=True, team=self.team
        )
        score = result.tallies[0].mean_payoff
        crowned = score > self.margin
        if crowned:
            self.crown(policy)
            self.reign += 1
        record = {
            "timesteps": timesteps,
            "challenger_payoff": score,
            "crowned": crowned,
            "reign": self.reign,
        }
        self.history.append(record)
        return record

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        th.save(
            {"state_dict": self.king.state_dict(), "reign": self.reign, "history": self.history},
            tmp,
        )
        tmp.replace(path)

    def load(self, path: Path) -> None:
        data = th.load(path, weights_only=False)
        self.king.load_state_dict(data["state_dict"])
        self.reign, self.history = data["reign"], data["history"]


class SelfPlayOpponent(BaseAgent):
    """An opponent seat in self-play: the king, or (with probability ``mix_fraction``, drawn
    at the start of every game) the rule agent ``mix``."""

    name = "self"

    def __init__(
        self, hill: KingOfTheHill, mix: str | None = None, mix_fraction: float = 0.0, seed: int = 0
    ):
        super().__init__(hill.game)
        self.hill = hill
        self.king: PolicyAgent | None = None  # built on first use: the king comes later
        self.rule = make_agent(hill.spec, mix, hill.game) if mix else None
        self.mix_fraction = mix_fraction
        self.rng = np.random.default_rng(seed)
        self.current: BaseAgent | None = None

    def reset(self) -> None:
        if self.king is None:
            self.king = self.hill.king_agent(deterministic=False)
        use_rule = self.rule is not None and self.rng.random() < self.mix_fraction
        self.current = self.rule if use_rule else self.king
        if hasattr(self.current, "reset"):
            self.current.reset()

    def act(self, view, rng):
        return self.current.act(view, rng)


def parse_mix(text: str | None) -> tuple[str | None, float]:
    """``"heuristic:0.3"`` -> ("heuristic", 0.3); None -> (None, 0.0)."""
    if not text:
        return None, 0.0
    name, _, fraction = text.partition(":")
    value = float(fraction) if fraction else 0.5
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"--mix fraction must be in 0..1, got {value}")
    return name, value
