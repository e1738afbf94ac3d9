"""Imitation before reinforcement: start a MaskablePPO policy from a rule or search agent.

A setting may say ``pretrain: {agent: NAME, decisions: N, epochs: E}`` in configs/games.yaml.
Before its first PPO update, the run plays N decisions of NAME in the learner's seat of the
run's own training environments (same opponents, same encoding), then fits the policy to
NAME's choices (cross-entropy over the legal actions) and the value head to the discounted
returns those games paid, for E passes over the data. Reinforcement learning then goes on
from there. The agent reads only its seat's view, as every agent does; the learner still
sees only its observation.

``pretrain: {records: FILE, agent: NAME, epochs: E}`` (or ``--pretrain records:FILE[,EPOCHS]``)
imitates recorded games instead (``card-envs evaluate|ladder|play --record FILE``; see
docs/records.md): every decision of the seats that NAME played (every seat without ``agent``),
read in the run's encoding by ``from_records``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from torch.nn import functional as F

from card_envs.core.agents import make_agent


def collect(env, agent_name: str, decisions: int, gamma: float, seed: int
            ) -> dict[str, np.ndarray]:
    """Play ``decisions`` decisions of the agent in ``env``'s learner seat (a single-agent
    Gymnasium view, unwrapped), returning observations, masks, actions and returns."""
    base = env.unwrapped
    agent = make_agent(base.spec_, agent_name, base.game)
    rng = np.random.default_rng(seed)
    obs_list, masks, actions, returns = [], [], [], []
    episode = 0
    while len(actions) < decisions:
        obs, info = env.reset(seed=seed * 1_000_003 + episode)
        episode += 1
        if hasattr(agent, "reset"):
            agent.reset()
        rewards = []
        done = False
        while not done:
            view = base.game.view(base.game_state, base.seat)
            action = agent.act(view, rng)
            obs_list.append(np.asarray(obs, dtype=np.float32))
            masks.append(np.asarray(info["action_mask"], dtype=bool))
            actions.append(action)
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        running, backwards = 0.0, []
        for r in reversed(rewards):
            running = r + gamma * running
            backwards.append(running)
        returns.extend(reversed(backwards))
    return {"obs": np.array(obs_list), "masks": np.array(masks),
            "actions": np.array(actions), "returns": np.array(returns, dtype=np.float32)}


def from_records(path: str, env, gamma: float, agent: str | None = None
                 ) -> dict[str, np.ndarray]:
    """The decisions of a records file as ``collect`` gives them: observations in ``env``'s
    encoding (a single-agent Gymnasium view, unwrapped), masks, actions and discounted returns.
    The records must be of the env's game and rules."""
    from card_envs.records import imitation_data, read_records

    base = env.unwrapped
    records = read_records(path)
    if records[0].env != base.spec_.env_name or records[0].rules != base.game.config():
        raise ValueError(f"{path}: its games are {records[0].env} {records[0].rules}, not the "
                         f"run's {base.spec_.env_name} {base.game.config()}")
    data = imitation_data(records, base.encoder.name, agent=agent, gamma=gamma)
    if not len(data["actions"]):
        raise ValueError(f"{path}: no decisions of agent {agent!r} in it")
    return {k: data[k] for k in ("obs", "masks", "actions", "returns")}


def fit(policy, data: dict[str, np.ndarray], epochs: int, batch_size: int = 256,
        lr: float = 1e-3, seed: int = 0) -> dict[str, Any]:
    """Fit a MaskablePPO policy to the data: masked cross-entropy for the actor, squared
    error for the critic. Returns the last epoch's losses and the training accuracy."""
    obs = th.as_tensor(data["obs"])
    masks = th.as_tensor(data["masks"])
    actions = th.as_tensor(data["actions"], dtype=th.long)
    returns = th.as_tensor(data["returns"])
    optimizer = th.optim.Adam(policy.parameters(), lr=lr)
    gen = th.Generator().manual_seed(seed)
    policy.set_training_mode(True)
    n = len(actions)
    stats: dict[str, Any] = {}
    for _ in range(epochs):
        order = th.randperm(n, generator=gen)
        total_pi = total_v = 0.0
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            features = policy.extract_features(obs[idx])
            latent_pi, latent_vf = policy.mlp_extractor(features)
            logits = policy.action_net(latent_pi).masked_fill(~masks[idx], -1e8)
            loss_pi = F.cross_entropy(logits, actions[idx])
            loss_v = F.mse_loss(policy.value_net(latent_vf).squeeze(1), returns[idx])
            optimizer.zero_grad()
            (loss_pi + 0.5 * loss_v).backward()
            optimizer.step()
            total_pi += loss_pi.item() * len(idx)
            total_v += loss_v.item() * len(idx)
        stats = {"policy_loss": total_pi / n, "value_loss": total_v / n}
    policy.set_training_mode(False)
    with th.no_grad():
        features = policy.extract_features(obs)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
        chosen = logits.masked_fill(~masks, -1e8).argmax(1)
    stats["accuracy"] = float((chosen == actions).float().mean())
    stats["decisions"] = n
    return stats
