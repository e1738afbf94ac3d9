"""Self-play: a pool of frozen snapshots of the learner, and teammates that are the learner.

- ``SnapshotPool``: every checkpoint (``eval_freq`` steps) a frozen copy of the learner's
  policy joins the pool (the oldest leaves past ``size``; the first, untrained snapshot is
  only there until the second arrives). Before it joins, the learner plays a tournament
  against the pool's newest snapshot, both sampling their actions (greedy play of two
  policies can loop for ever); games cut by the step cap count as losses for both sides.
  The result goes into the learning curve; it does not gate anything, so the pool always
  moves on (a "king of the hill" that a deterministic loop never dethrones trained one of
  our earlier Literature runs against its untrained self all run long).
- ``PoolOpponent``: an opponent seat that, at the start of every game, is a rule agent with
  probability ``mix_fraction`` (``--mix AGENT:FRACTION``), otherwise a snapshot drawn
  uniformly from the pool.
- ``LearnerTeammate``: a teammate seat in team games played by the learner's own current
  policy (sampling), so teammates are in sync with the learner at every rollout.

On the batched twin (baselines/envs.py) the same seats are ``Player``s of
``card_envs.vector``: a policy over all the games where that seat is to act, one forward pass
per call. ``PoolPlayer`` draws a snapshot (or the rule agent) per game and slot and plays
every slot of a snapshot in one pass; ``LearnerPlayer`` is the learner's current policy.
A slot's game is new when its step count went back since the player's last move there.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch as th

from baselines.evaluation import evaluate
from card_envs.core.agents import BaseAgent, make_agent
from card_envs.rl.policy_agent import PolicyAgent, policy_actions
from card_envs.vector.selfplay import Player


class LiveLearner:
    """A late-bound reference to the learner's policy (the model is made after its envs)."""

    def __init__(self):
        self.policy = None


class SnapshotPool:
    """Frozen snapshots of the learner (see the module docstring)."""

    def __init__(self, spec, game, encoder, algo: str, size: int = 8, games: int = 100,
                 seed: int = 0, team: bool = False):
        self.spec, self.game, self.encoder, self.algo = spec, game, encoder, algo
        self.size, self.games, self.seed, self.team = size, games, seed, team
        self.members: list = []  # frozen policies, oldest first
        self.added = 0  # snapshots added so far (the pool's version)
        self.history: list[dict] = []

    def add(self, policy) -> None:
        """Freeze a copy of ``policy`` into the pool (dropping the oldest past ``size``)."""
        frozen = _frozen_copy(policy)
        if self.added == 1 and self.members:
            self.members.pop(0)  # the untrained first snapshot: only a stand-in
        self.members.append(frozen)
        del self.members[: -self.size]
        self.added += 1

    def agent(self, index: int, label: str = "snapshot") -> PolicyAgent:
        return PolicyAgent(self.game, self.encoder, self.members[index], self.algo, False, label)

    def tournament(self, policy, timesteps: int) -> dict:
        """The learner (sampling) against the newest snapshot (sampling); cap games are
        losses for both. Returns the record (also kept in ``history``)."""
        learner = PolicyAgent(self.game, self.encoder, policy, self.algo, False, "learner")
        newest = self.agent(-1, "newest")
        seed = 500_000 + self.seed * 1000 + len(self.history)
        result = evaluate(self.spec, self.game, learner, newest, self.games, seed,
                          duplicate=True, team=self.team)
        tally = result.tallies[0]
        capped = result.truncated
        # a game cut by the cap paid 0 (a draw); count it a loss for the learner instead
        payoff = (tally.payoff_sum - capped) / max(tally.games, 1)
        record = {"timesteps": timesteps, "pool_payoff": payoff, "pool_capped": capped,
                  "pool_version": self.added}
        self.history.append(record)
        return record

    def state(self) -> dict:
        return {"members": [m.state_dict() for m in self.members], "added": self.added,
                "history": self.history}

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        th.save(self.state(), tmp)
        tmp.replace(path)

    def load(self, path: Path, template) -> None:
        """Restore a saved pool; ``template`` is a policy of the right shape."""
        data = th.load(path, weights_only=False)
        self.members = [_frozen_copy(template, weights) for weights in data["members"]]
        self.added, self.history = data["added"], data["history"]


def _frozen_copy(policy, weights=None):
    """A new policy of ``policy``'s class and shape holding ``weights`` (default: its own),
    in evaluation mode and without gradients. (Made afresh rather than deep-copied: a
    policy that just trained may hold tensors of its last update, which do not copy.)"""
    frozen = type(policy)(**policy._get_constructor_parameters())
    frozen.load_state_dict(policy.state_dict() if weights is None else weights)
    frozen.set_training_mode(False)
    for p in frozen.parameters():
        p.requires_grad_(False)
    return frozen


class PoolOpponent(BaseAgent):
    """An opponent seat: a pool snapshot, or with probability ``mix_fraction`` (drawn at the
    start of every game) the rule agent ``mix``."""

    name = "pool"

    def __init__(self, pool: SnapshotPool, mix: str | None = None, mix_fraction: float = 0.0,
                 seed: int = 0):
        super().__init__(pool.game)
        self.pool = pool
        self.rule = make_agent(pool.spec, mix, pool.game) if mix else None
        self.mix_fraction = mix_fraction
        self.rng = np.random.default_rng(seed)
        self.current: BaseAgent | None = None
        self.version = -1  # the pool version the current snapshot was drawn from

    def reset(self) -> None:
        if self.rule is not None and self.rng.random() < self.mix_fraction:
            self.current = self.rule
        else:
            index = int(self.rng.integers(len(self.pool.members)))
            self.current = self.pool.agent(index)
            self.version = self.pool.added
        if hasattr(self.current, "reset"):
            self.current.reset()

    def act(self, view, rng):
        return self.current.act(view, rng)


class LearnerTeammate(BaseAgent):
    """A teammate seat played by the learner's current policy, sampling its actions."""

    name = "learner"

    def __init__(self, game, encoder, learner: LiveLearner, algo: str):
        super().__init__(game)
        self.encoder, self.learner, self.algo = encoder, learner, algo

    def act(self, view, rng):
        agent = PolicyAgent(self.game, self.encoder, self.learner.policy, self.algo, False,
                            "learner")
        return agent.act(view, rng)


def learner_player(learner: LiveLearner, algo: str, encoding: str, seed: int) -> Player:
    """A batched seat played by the learner's current policy, sampling (teammates)."""
    rng = np.random.default_rng(seed)

    def policy(obs, mask, rows, state):
        return policy_actions(learner.policy, algo, obs, mask, False, rng)

    return Player(policy, encoding, name="learner")


def model_player(spec, name: str, game, seed: int) -> Player:
    """A batched seat played by a trained model (``best`` or ``model:PATH``), greedy or
    sampling as its metadata says."""
    from card_envs.rl.policy_agent import load_model_agent

    agent = load_model_agent(spec, name, game)
    rng = np.random.default_rng(seed)
    encoding = agent.encoder.name

    def policy(obs, mask, rows, state):
        return policy_actions(agent.policy, agent.algo, obs, mask, agent.deterministic, rng)

    return Player(policy, encoding, name=name)


class PoolPlayer:
    """A batched opponent seat: in each game, a snapshot drawn uniformly from the pool, or
    with probability ``mix_fraction`` the batched rule agent ``mix`` (see the module doc)."""

    def __init__(self, pool: SnapshotPool, engine, encoding: str, mix: str | None = None,
                 mix_fraction: float = 0.0, seed: int = 0):
        if mix is not None:
            engine.agent_index(mix)  # raises, naming the twin's agents
        self.pool, self.engine, self.mix, self.mix_fraction = pool, engine, mix, mix_fraction
        self.rng = np.random.default_rng(seed)
        self.member: np.ndarray | None = None  # per slot: pool index, -1 the rule agent
        self.last_steps: np.ndarray | None = None
        self.player = Player(self.act, encoding, name="pool")

    def _draw(self, count: int) -> np.ndarray:
        members = self.rng.integers(len(self.pool.members), size=count)
        if self.mix is not None:
            members[self.rng.random(count) < self.mix_fraction] = -1
        return members

    def act(self, obs: np.ndarray, mask: np.ndarray, rows: np.ndarray, state) -> np.ndarray:
        if self.member is None:
            b = state.num_envs
            self.member, self.last_steps = self._draw(b), np.full(b, -1, np.int64)
        steps = state.steps[rows]
        new = steps <= self.last_steps[rows]  # the step count went back: a new game
        new |= self.member[rows] >= len(self.pool.members)  # the pool shrank past it
        if new.any():
            self.member[rows[new]] = self._draw(int(new.sum()))
        self.last_steps[rows] = steps
        out = np.empty(len(rows), np.int64)
        chosen = self.member[rows]
        for index in np.unique(chosen).tolist():  # one forward pass per snapshot in play
            mine = np.flatnonzero(chosen == index)
            if index < 0:
                out[mine] = self.engine.act(state, self.mix, rows[mine])
            else:
                out[mine] = policy_actions(self.pool.members[index], self.pool.algo, obs[mine],
                                           mask[mine], False, self.rng)
        return out


def parse_mix(text: str | None) -> tuple[str | None, float]:
    """``"heuristic:0.3"`` -> ("heuristic", 0.3); None -> (None, 0.0)."""
    if not text:
        return None, 0.0
    name, _, fraction = text.rpartition(":")
    if not name:
        name, fraction = fraction, ""
    value = float(fraction) if fraction else 0.5
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"--mix fraction must be in 0..1, got {value}")
    return name, value
