"""Imitation before reinforcement: start a policy from a rule or search agent.

A setting may say ``pretrain: {agent: NAME, decisions: N, epochs: E}`` in configs/games.yaml.
Before its first PPO update, the run plays N decisions of NAME in the learner's seat of the
run's own training environments (same opponents, same encoding, same shaping), then fits the
policy to NAME's choices (cross-entropy over the legal actions) and the value head to the
discounted returns those games paid, for E passes over the data. A masked DQN (where its
configs say ``imitate: true``) fits its q-values instead, as DQfD does (``fit_q``): the
chosen action's to the return, every other legal action's a margin below it.

Collection is batched where it can be: an agent of the game's twin plays every learner seat
of the run's batched games in one compiled call (``twin_actor``); an agent with no batched
form (the searches: 98 Cards' ``expert``, ``ismcts``) plays scalar games on every core
(``collect_parallel``; reproduce shares what it collects between a setting's PPO and DQN
runs), or, where the opponents are the learner itself, the run's own scalar
games (``scalar_actor``). Reinforcement learning then goes on
from there. The agent reads only its seat's view, as every agent does; the learner still
sees only its observation.

``pretrain: {records: FILE, agent: NAME, epochs: E}`` (or ``--pretrain records:FILE[,EPOCHS]``)
imitates recorded games instead (``card-envs evaluate|ladder|play --record FILE``; see
docs/records.md): every decision of the seats that NAME played (every seat without ``agent``),
read in the run's encoding by ``from_records``.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch as th
from stable_baselines3.common.vec_env import VecEnv
from torch.nn import functional as F

from card_envs.core.agents import make_agent
from card_envs.rl.policy_agent import scoring_legal_only

# actor() -> (n_envs,) the expert's action for every game's learner, read from the games
Actor = Callable[[], np.ndarray]


def collect(venv: VecEnv, actor: Actor, decisions: int, gamma: float,
            player: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
            best: Callable[[], np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Play the expert (``actor``) in the learner's seat of every game of ``venv`` until at
    least ``decisions`` decisions of finished games are in; returns their observations,
    masks, actions, discounted returns (of the rewards ``venv`` pays: shaping included) and
    ``turn``, the decision's index in its game (0 for the first).
    The games still going at the end are left out (their returns are not known).
    With ``player(obs, masks)``, the player's moves are played and the expert's only
    recorded (DAgger's labels, baselines/expert_iteration.py); with ``best()`` ((n_envs,
    actions) bool: every move the expert rates best, for an expert with ties) those sets
    are kept too, as ``best``."""
    from baselines.envs import vec_masks

    obs = _flat(venv.reset())
    steps: list[tuple[np.ndarray, ...]] = []
    since_end = np.zeros(venv.num_envs, np.int64)  # each game's decisions so far
    finished = 0
    while finished < decisions:
        masks = vec_masks(venv)
        actions = actor()
        ties = masks if best is None else best()  # read before the step changes the games
        played = actions if player is None else np.asarray(player(obs, masks))
        next_obs, rewards, dones, _ = venv.step(played)
        steps.append((obs, masks, actions, rewards.astype(np.float32), dones, ties,
                      since_end.copy()))
        since_end += 1
        finished += int(since_end[dones].sum())
        since_end[dones] = 0
        obs = _flat(next_obs)
    data = _with_returns(steps, gamma)
    if best is None:
        del data["best"]
    return data


def _flat(obs):
    """The observation array of a batch (DQN's environments give it with the masks, in a
    dict; the masks are collected apart)."""
    from card_envs.rl.masked_dqn import OBS_KEY

    return obs[OBS_KEY] if isinstance(obs, dict) else obs


def _with_returns(steps: list[tuple[np.ndarray, ...]], gamma: float) -> dict[str, np.ndarray]:
    """The decisions of the finished games, with their discounted returns."""
    obs, masks, actions, rewards, dones, best, turn = (np.stack(x)
                                                       for x in zip(*steps, strict=True))
    running = np.zeros(rewards.shape[1], np.float32)
    returns = np.zeros_like(rewards)
    for t in range(len(rewards) - 1, -1, -1):  # backwards over time, all games at once
        running = rewards[t] + gamma * running * (1 - dones[t])
        returns[t] = running
    keep = np.flip(np.cumsum(np.flip(dones, 0), 0), 0) > 0  # (T, n): games that ended
    return {"obs": obs[keep].astype(np.float32), "masks": masks[keep].astype(bool),
            "actions": actions[keep].astype(np.int64), "returns": returns[keep],
            "best": best[keep].astype(bool), "turn": turn[keep]}


def twin_actor(parts: list, agent: str) -> Actor:
    """The twin's batched rule agent ``agent`` acting for the learners of batched envs
    ``parts`` (``card_envs.vector.sb3`` VecEnvs, in order): one compiled call per part."""
    for part in parts:
        part.env.engine.agent_index(agent)  # raises, naming the twin's agents

    def actor() -> np.ndarray:
        return np.concatenate([p.env.engine.act(p.env.state, agent) for p in parts])

    return actor


def scalar_actor(venv, agent_name: str, seed: int) -> Actor:
    """Scalar agent ``agent_name`` (one object per game) acting from each learner's view of
    the scalar games of a DummyVecEnv, one game at a time."""
    envs = [e.unwrapped for e in venv.envs]
    spec, game = envs[0].spec_, envs[0].game
    agents = [make_agent(spec, agent_name, game) for _ in envs]
    rng = np.random.default_rng(seed)
    seen: list[Any] = [None] * len(envs)

    def actor() -> np.ndarray:
        out = np.empty(len(envs), np.int64)
        for i, env in enumerate(envs):
            if env.game_state is not seen[i]:  # a new game: agents with memory start over
                seen[i] = env.game_state
                if hasattr(agents[i], "reset"):
                    agents[i].reset()
            out[i] = agents[i].act(game.view(env.game_state, env.acting), rng)
        return out

    return actor


def batch_actor(venv, agent, seed: int) -> Actor:
    """``agent`` (one with ``act_many(views, rng)``: batched PIMC,
    card_envs.core.batched_search) acting from every learner's view of the scalar games of a
    DummyVecEnv at once: one call a step for all the games."""
    if not hasattr(agent, "act_many"):
        raise ValueError(f"{agent!r} has no act_many(views, rng): it acts one view at a time "
                         "(use scalar_actor)")
    envs = [e.unwrapped for e in venv.envs]
    game = envs[0].game
    rng = np.random.default_rng(seed)

    def actor() -> np.ndarray:
        return agent.act_many([game.view(env.game_state, env.acting) for env in envs], rng)

    return actor


def _scalar_job(job: tuple) -> dict[str, np.ndarray]:
    cfg, agent_name, decisions, gamma, seed = job
    from baselines.envs import rule_seats, scalar_env, wrap

    th.set_num_threads(1)
    venv = wrap(scalar_env(cfg, lambda i: rule_seats(cfg, i)), cfg)
    venv.seed(seed)
    return collect(venv, scalar_actor(venv.unwrapped, agent_name, seed), decisions, gamma)


def collect_parallel(cfg: dict[str, Any], agent_name: str, decisions: int, gamma: float,
                     seed: int, jobs: int, cache: Path | None = None
                     ) -> tuple[dict[str, np.ndarray], str | None]:
    """``collect`` of a scalar-only agent (a search, say) on ``jobs`` processes, each with
    its own scalar games (rule-agent opponents only), the data joined.

    With ``cache`` (a folder), the data is saved there under a name made of everything it
    depends on, and a later call with the same inputs reads it back instead of playing the
    games again; returns the data and the file it was read from (None when collected).
    """
    work = [({**cfg, "n_envs": 8}, agent_name, -(-decisions // jobs), gamma, seed * 1000 + k)
            for k in range(jobs)]
    path = None
    if cache is not None:
        path = Path(cache) / f"{cfg['setting']}-{agent_name.replace(':', '_')}-{_key(work)}.npz"
        if path.exists():
            with np.load(path) as saved:
                return {key: saved[key] for key in saved.files}, str(path)
    if jobs == 1 or mp.current_process().daemon:  # a daemon may not start processes
        parts = [_scalar_job(job) for job in work]
    else:
        with mp.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_scalar_job, work, chunksize=1)
    data = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # written whole, then renamed; a name of its own per process: a setting's PPO and DQN
        # runs, side by side, may both have missed the cache and both write it
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
        np.savez(tmp, **data)
        os.replace(tmp, path)
    return data, None


def _key(work: list[tuple]) -> str:
    """A digest of what scalar collection ``work`` plays: the games (rules, encoding,
    opponents, shaping) and the agent, decisions, discount and seeds; not the learner's
    algorithm or network, which the data does not depend on."""
    game_keys = ("env", "env_kwargs", "obs_encoding", "opponent", "teammate", "shaping",
                 "result_bonus")
    parts = [({k: cfg.get(k) for k in game_keys}, *rest) for cfg, *rest in work]
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


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


def fit_q(policy, data: dict[str, np.ndarray], epochs: int, batch_size: int = 256,
          lr: float = 1e-3, seed: int = 0, margin: float = 0.2) -> dict[str, Any]:
    """Fit a masked DQN policy to the data as DQfD does before its own interaction (Hester
    et al., 2018): the expert's action's q-value regresses to the return its game paid, and
    a large-margin loss keeps every other legal action's q-value ``margin`` below it. Both
    are measured in units of the returns' spread where it exceeds 1 (98 Cards pays a point a
    card: its returns reach 90), so that the regression does not drown the ranking. The
    target network then starts from the fitted one. Returns the last epoch's losses and the
    training accuracy (greedy legal action = the expert's)."""
    from card_envs.rl.masked_dqn import MASK_KEY, OBS_KEY, masked_argmax

    obs = th.as_tensor(data["obs"], device=policy.device)
    masks = th.as_tensor(data["masks"], device=policy.device)
    actions = th.as_tensor(data["actions"], dtype=th.long, device=policy.device)
    returns = th.as_tensor(data["returns"], device=policy.device)
    scale = max(1.0, float(returns.std())) if len(returns) > 1 else 1.0
    q_net = policy.q_net

    def losses(idx: th.Tensor) -> tuple[th.Tensor, dict[str, th.Tensor]]:
        legal = masks[idx]
        q = q_net({OBS_KEY: obs[idx], MASK_KEY: legal.float()})
        chosen = q.gather(1, actions[idx, None]).squeeze(1)
        bumped = (q + margin * scale).scatter(1, actions[idx, None], chosen[:, None])
        loss_m = (bumped.masked_fill(~legal, -th.inf).max(1).values - chosen).mean() / scale
        loss_v = F.mse_loss(chosen / scale, returns[idx] / scale)
        return loss_m + loss_v, {"margin_loss": loss_m, "value_loss": loss_v}

    policy.set_training_mode(True)
    stats = _minibatches(q_net.parameters(), len(actions), epochs, batch_size, lr, seed, losses)
    policy.set_training_mode(False)
    policy.q_net_target.load_state_dict(q_net.state_dict())
    picked = _in_chunks(len(actions), lambda idx: masked_argmax(
        q_net({OBS_KEY: obs[idx], MASK_KEY: masks[idx].float()}), masks[idx].float()))
    stats["accuracy"] = float((picked == actions).float().mean())
    stats["decisions"] = len(actions)
    return stats


def _in_chunks(n: int, fn: Callable[[th.Tensor], th.Tensor], size: int = 4096) -> th.Tensor:
    """``fn`` over the indices ``0..n-1`` in chunks of ``size``, without gradients, joined:
    per-action networks hold (rows x actions x hidden) values, too many for every label at
    once (200k Literature labels took over 20 GB in one pass)."""
    with th.no_grad():
        return th.cat([fn(th.arange(start, min(start + size, n)))
                       for start in range(0, n, size)])


def greedy_actions(policy, obs: th.Tensor, masks: th.Tensor) -> th.Tensor:
    """A MaskablePPO policy's most likely legal action in every position (in chunks)."""
    def greedy(idx: th.Tensor) -> th.Tensor:
        with scoring_legal_only(policy, masks[idx]):
            latent = policy.mlp_extractor.forward_actor(policy.extract_features(obs[idx]))
        return policy.action_net(latent).masked_fill(~masks[idx], -1e8).argmax(1)

    return _in_chunks(len(obs), greedy)


def _minibatches(parameters, n: int, epochs: int, batch_size: int, lr: float, seed: int,
                 losses: Callable[[th.Tensor], tuple[th.Tensor, dict[str, th.Tensor]]]
                 ) -> dict[str, Any]:
    """``epochs`` passes of Adam over ``n`` samples in shuffled minibatches, minimising the
    first value of ``losses(indices)``; returns the last epoch's mean of each named part."""
    optimizer = th.optim.Adam(parameters, lr=lr)
    gen = th.Generator().manual_seed(seed)
    stats: dict[str, Any] = {}
    for _ in range(epochs):
        order = th.randperm(n, generator=gen)
        totals: dict[str, float] = {}
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            loss, parts = losses(idx)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for key, value in parts.items():
                totals[key] = totals.get(key, 0.0) + value.item() * len(idx)
        stats = {key: total / n for key, total in totals.items()}
    return stats


def fit(policy, data: dict[str, np.ndarray], epochs: int, batch_size: int = 256,
        lr: float = 1e-3, seed: int = 0, value_weight: float = 0.5) -> dict[str, Any]:
    """Fit a MaskablePPO policy to the data: masked cross-entropy for the actor, squared
    error for the critic (weighted by ``value_weight``; 0 fits the actor alone and leaves
    the critic's own layers as they are). Returns the last epoch's losses and the training
    accuracy.
    Where the data has ``best`` (every move the expert rates best), the actor's loss is the
    log-probability of playing any of them, and accuracy counts a move in the set."""
    obs = th.as_tensor(data["obs"], device=policy.device)
    masks = th.as_tensor(data["masks"], device=policy.device)
    actions = th.as_tensor(data["actions"], dtype=th.long, device=policy.device)
    returns = th.as_tensor(data["returns"], device=policy.device)
    best = th.as_tensor(data["best"], device=policy.device) if "best" in data else None

    def losses(idx: th.Tensor) -> tuple[th.Tensor, dict[str, th.Tensor]]:
        features = policy.extract_features(obs[idx])
        with scoring_legal_only(policy, masks[idx]):
            latent_pi, latent_vf = policy.mlp_extractor(features)
        logits = policy.action_net(latent_pi).masked_fill(~masks[idx], -1e8)
        if best is None:
            loss_pi = F.cross_entropy(logits, actions[idx])
        else:  # the probability of playing one of the expert's best moves
            loss_pi = (th.logsumexp(logits, 1)
                       - th.logsumexp(logits.masked_fill(~best[idx], -1e8), 1)).mean()
        if not value_weight:
            return loss_pi, {"policy_loss": loss_pi}
        loss_v = F.mse_loss(policy.value_net(latent_vf).squeeze(1), returns[idx])
        return loss_pi + value_weight * loss_v, {"policy_loss": loss_pi, "value_loss": loss_v}

    policy.set_training_mode(True)
    stats = _minibatches(policy.parameters(), len(actions), epochs, batch_size, lr, seed, losses)
    policy.set_training_mode(False)
    chosen = greedy_actions(policy, obs, masks)
    right = (chosen == actions) if best is None else best[th.arange(len(chosen)), chosen]
    stats["accuracy"] = float(right.float().mean())
    stats["decisions"] = len(actions)
    return stats
