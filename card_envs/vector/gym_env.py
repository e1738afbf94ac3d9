"""The single-agent Gymnasium view of a batched engine: B learners, batched opponents.

``CardVectorEnv("simple_tricks", num_envs=B, opponent="first_play")`` (or
``gymnasium.make_vec("card_envs/SimpleTricks-v0", num_envs=B,
vectorization_mode="vector_entry_point")``) is the batched twin of ``gym_env()``: in every
game one learning seat, every other seat played inside ``step`` by a batched rule agent.
Observations and rewards belong to the learner; the reward of a step is everything the
learner's seat earned from its action up to its next decision (opponents' moves included).

Autoreset: ``AutoresetMode.SAME_STEP`` (declared in ``metadata["autoreset_mode"]``). When a
game ends in ``step``, that slot's ``terminated``/``truncated`` is set, its final
observation goes to ``infos["final_obs"]`` (a (B, size) array, rows valid where
``infos["_final_obs"]``) with ``infos["final_info"]`` (the learner's ``payoff`` and
``score`` and ``truncated``, as arrays with the same mask), and the returned observation is
already that of the next game, with the learner to act. ``action_masks()`` is therefore
always the mask of a live game.

Differences from a SyncVectorEnv of ``gym_env()``: an illegal action raises ValueError
(``gym_env(illegal_reward=None)`` behaviour) naming the slot; observations are flat (no
``dict_obs``); there is no rendering.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from card_envs import vector
from card_envs.core.gym_env import opponents_per_seat
from card_envs.vector.base import (
    BatchDealer,
    SeededDealer,
    check_batch_size,
    make_dealer,
    random_actions,
    random_legal_actions,
)

# Deals in which the learner never gets to act are re-dealt; this bounds the retries.
_MAX_REDEALS = 100
ENV_ARGS = ("opponent", "learner_seat", "obs_encoding")


class CardVectorEnv(VectorEnv):
    """B games of one seat against batched opponents; see the module docstring.

    Args:
        game: ``simple_tricks``, ``ninety_eight_cards`` or ``thirty_one`` (or with ``_v0``).
        num_envs: B, the number of games played at once.
        opponent: a batched agent's name for every other seat (``random`` and the game's
            rule agents), or a sequence with one name per other seat, relative to the
            learner (the seat after the learner's first), as in ``gym_env()``.
        learner_seat: the learner's seat, or None for a uniformly random seat each game.
        obs_encoding: ``"default"`` or ``"original"``.
        **rules: the game's rules arguments (over the spec's ``gym_defaults``, as gym_env():
            Thirty-One has 2 players unless told).
    """

    def __init__(self, game: str, num_envs: int = 1, opponent: Any = None,
                 learner_seat: int | None = None, obs_encoding: str = "default",
                 max_episode_steps: int | None = None, render_mode: str | None = None,
                 **rules: Any):
        name = vector.game_name(game)
        self.num_envs = check_batch_size(num_envs)
        if max_episode_steps is not None:
            raise ValueError("max_episode_steps is not supported: every game has its step cap")
        if render_mode is not None:
            raise ValueError(f"render_mode={render_mode!r} is not supported; use None")
        from card_envs.registry import load_spec  # the scalar spec: defaults, encoder

        spec = load_spec(name)
        self.engine = vector.make(name, **{**spec.gym_defaults, **rules})
        engine = self.engine
        if obs_encoding not in engine.encodings:
            raise ValueError(
                f"obs_encoding={obs_encoding!r} is not valid; choose one of "
                + ", ".join(repr(e) for e in engine.encodings)
            )
        self.obs_encoding = obs_encoding
        n = engine.num_players
        if learner_seat is not None and (
            not isinstance(learner_seat, (int, np.integer)) or not 0 <= learner_seat < n
        ):
            raise ValueError(
                f"learner_seat={learner_seat!r} is not valid; it must be an integer in 0..{n - 1}"
            )
        self.learner_seat = learner_seat
        self.agents = vector.module(name).AGENTS
        self.opponents = self._opponents(opponent if opponent is not None
                                         else spec.default_opponent)
        encoder = spec.encoders[obs_encoding](engine.game)
        self.metadata = {
            "name": f"{spec.env_name}_vector",
            "autoreset_mode": AutoresetMode.SAME_STEP,
            "render_modes": [],
        }
        self.render_mode = None
        self.single_observation_space = encoder.space()
        self.single_action_space = spaces.Discrete(engine.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.state = None
        self.seat = np.zeros(self.num_envs, np.int64)
        self._pending = np.zeros(self.num_envs)
        self._rng = np.random.default_rng()

    def _opponents(self, opponent: Any) -> list[str]:
        return opponents_per_seat(opponent, self.engine.num_players - 1, self._known)

    def _known(self, name: Any) -> Any:
        """``name``, if the batched engine has that agent; ValueError listing them otherwise."""
        if name not in self.agents:
            raise ValueError(
                f"unknown opponent {name!r} for the batched {self.engine.name}; choose one of "
                + ", ".join(self.agents)
            )
        return name

    # --- Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        """Deal B new games. ``seed``: an int or None (one generator for the batch: fast), or
        B ints, one per game (each slot then deals as ``gym_env(learner_seat=...)`` reset
        with that seed, and its later games as that env's next resets)."""
        b = self.num_envs
        if seed is not None and not isinstance(seed, (int, np.integer)):
            dealer = make_dealer(b, seeds=seed)
            self._rng = np.random.default_rng([int(s) for s in np.asarray(seed).tolist()])
        else:
            dealer = make_dealer(b, seed=seed)
            self._rng = np.random.default_rng(None if seed is None else [int(seed), 1])
        self.state = self.engine._new_state(b, dealer)
        self.state.num_envs = b
        everything = np.arange(b)
        self._pending[:] = 0.0
        self._new_games(everything)
        return self._observe(), self._infos()

    def step(self, actions: Any):
        state = self.state
        if state is None:
            raise RuntimeError("call reset() before step()")
        engine = self.engine
        if self._compiled_step():
            return self._step_compiled(actions)
        b = self.num_envs
        rows = np.arange(b)
        engine.step(state, actions)
        reward = self._pending + state.rewards[rows, self.seat]
        self._pending[:] = 0.0
        reward += self._play_opponents()
        terminated = state.terminated.copy()
        truncated = state.truncated.copy()
        infos = {}
        ended = np.flatnonzero(terminated | truncated)
        if len(ended):
            done = terminated | truncated
            final_obs = np.zeros((b, self.single_observation_space.shape[0]), np.float32)
            final_obs[ended] = engine.observe(state, self.obs_encoding, self.seat, rows=ended)
            payoff = engine.payoffs(state)[rows, self.seat]
            score = engine.scores(state)[rows, self.seat]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = {
                "payoff": np.where(done, payoff, 0.0), "_payoff": done,
                "score": np.where(done, score, 0.0), "_score": done,
                "truncated": truncated.copy(), "_truncated": done,
            }
            self._new_games(ended)
        infos.update(self._infos())
        return self._observe(), reward, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(B, actions) bool: each learner's legal actions."""
        return self.state.mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        self.state = None

    # --- helpers --------------------------------------------------------------------------
    def _compiled_step(self) -> bool:
        """Whether ``step`` runs in one compiled call: an engine that has it on the numba
        backend (Thirty-One), every opponent random, one generator dealing for the batch."""
        engine, state = self.engine, self.state
        return (engine.backend == "numba" and hasattr(engine, "random_opponents_step")
                and type(state.dealer) is BatchDealer
                and all(name == "random" for name in self.opponents)
                and not (state.terminated | state.truncated).any())

    def _step_compiled(self, actions: Any):
        """``step`` by the engine's ``random_opponents_step``: the same moves, rewards, ends and
        new games as the Python loop, the shuffles drawn in the call."""
        engine, state = self.engine, self.state
        actions = engine._as_actions(state, actions)
        everything = np.arange(self.num_envs)
        if engine.kernels.first_illegal(state.mask, everything, actions) >= 0:
            engine._check_legal(state, actions, np.ones(self.num_envs, bool))  # raises
        out = engine.random_opponents_step(state, actions, self.seat, self._pending,
                                           self.learner_seat, self.obs_encoding, self._rng,
                                           _MAX_REDEALS)
        if out is None:
            raise RuntimeError("the learner never got to act in 100 deals")
        obs, reward, terminated, truncated, final_obs, payoff, score = out
        infos = {}
        done = terminated | truncated
        if done.any():
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = {
                "payoff": payoff, "_payoff": done, "score": score, "_score": done,
                "truncated": truncated.copy(), "_truncated": done,
            }
        infos.update(self._infos())
        return obs, reward, terminated, truncated, infos

    def _new_games(self, slots: np.ndarray) -> None:
        """Deal new games in ``slots`` and play the opponents up to each learner's turn."""
        engine, state = self.engine, self.state
        n = engine.num_players
        for _ in range(_MAX_REDEALS):
            if self.learner_seat is not None:
                self.seat[slots] = self.learner_seat
            elif isinstance(state.dealer, SeededDealer):  # as gym_env: the seat, then the deal
                gens = state.dealer.generators
                self.seat[slots] = [int(gens[i].integers(n)) for i in slots.tolist()]
            else:
                self.seat[slots] = self._rng.integers(n, size=len(slots))
            engine.reset_slots(state, slots)
            self._pending[slots] = 0.0
            self._pending += self._play_opponents(slots)
            slots = slots[(state.terminated | state.truncated)[slots]]
            if not len(slots):
                return
        raise RuntimeError("the learner never got to act in 100 deals")

    def _play_opponents(self, slots: np.ndarray | None = None) -> np.ndarray:
        """Let the other seats act until each learner is to act or its game is over; the
        learner's rewards on the way."""
        engine, state = self.engine, self.state
        earned = np.zeros(self.num_envs)
        rows = np.arange(self.num_envs)
        if slots is None:
            active = np.ones(self.num_envs, bool)
        else:
            active = np.zeros(self.num_envs, bool)
            active[slots] = True
        n = engine.num_players
        while True:
            waiting = active & ~(state.terminated | state.truncated) & (
                state.current_player != self.seat)
            if not waiting.any():
                return earned
            actions = self._opponent_actions(waiting, n)
            engine.step(state, actions, active=waiting)
            earned += np.where(waiting, state.rewards[rows, self.seat], 0.0)

    def _opponent_actions(self, waiting: np.ndarray, n: int) -> np.ndarray:
        state = self.state
        names = self.opponents
        if len(set(names)) == 1:
            return self._agent_actions(names[0], waiting)
        # one call per distinct agent; each slot takes its acting seat's agent's action
        relative = (state.current_player - self.seat) % n - 1
        actions = np.zeros(self.num_envs, np.int64)
        for name in dict.fromkeys(names):
            seats = [k for k, a in enumerate(names) if a == name]
            mine = waiting & np.isin(relative, seats)
            if mine.any():
                actions = np.where(mine, self._agent_actions(name, mine), actions)
        return actions

    def _agent_actions(self, name: str, rows: np.ndarray) -> np.ndarray:
        """(B,) the actions of agent ``name``, of which those of ``rows`` ((B,) bool) count;
        ``random`` draws one uniform for each of those rows only, in slot order."""
        agent = self.agents[name]
        if agent is not random_actions:
            return agent(self.engine, self.state, self._rng)
        at = np.flatnonzero(rows)
        actions = np.zeros(self.num_envs, np.int64)
        actions[at] = random_legal_actions(self.engine, self.state.mask[at], self._rng)
        return actions

    def _observe(self) -> np.ndarray:
        return self.engine.observe(self.state, self.obs_encoding, self.seat)

    def _infos(self) -> dict[str, Any]:
        return {"seat": self.seat.copy()}


def make_vector_env(game: str, num_envs: int = 1, **kwargs: Any) -> CardVectorEnv:
    """``CardVectorEnv(game, num_envs, **kwargs)``; ValueError for an unknown argument."""
    engine_cls = type(vector.make(game))
    rules = [p for p in inspect.signature(engine_cls.__init__).parameters if p != "self"]
    valid = [*ENV_ARGS, *rules]
    for key in kwargs:
        if key not in valid and key not in ("max_episode_steps", "render_mode"):
            raise ValueError(
                f"{vector.game_name(game)} vector env: unknown argument {key!r}; "
                f"valid arguments: {', '.join(valid)}"
            )
    return CardVectorEnv(game, num_envs=num_envs, **kwargs)
