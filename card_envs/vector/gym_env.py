"""The single-agent Gymnasium view of a batched twin: B learners, the other seats played inside.

``CardVectorEnv("simple_tricks", num_envs=B, opponent="first_play")`` (or
``gymnasium.make_vec("card_envs/SimpleTricks-v0", num_envs=B)``) is the batched twin of
``gym_env()``: in every game one learning seat; every other seat played inside ``step`` by a
batched rule agent (in the same compiled call) or by a ``Player`` (a policy over a batch of
observations, e.g. a frozen network: one call for all the games where its seat is to act).
Observations and rewards belong to the learner; the reward of a step is everything the
learner's seat earned from its action up to its next decision (opponents' moves included).

Autoreset: ``AutoresetMode.SAME_STEP`` (declared in ``metadata["autoreset_mode"]``). When a
game ends in ``step``, that slot's ``terminated``/``truncated`` is set, its final
observation goes to ``infos["final_obs"]`` (a (B, size) array, rows valid where
``infos["_final_obs"]``) with ``infos["final_info"]`` (the learner's ``payoff`` and
``score`` and ``truncated``, as arrays with the same mask), and the returned observation is
already that of the next game, with the learner to act. ``action_masks()`` is therefore
always the mask of a live game.

Seeding: ``reset(seed=s)`` gives the batch one generator; ``reset(seed=[s_0, ..., s_B-1])``
one per slot, slot ``i`` then drawing exactly as ``gym_env(...).reset(seed=s_i)`` and its later
resets do (its learner seat, deals, the opponents' random moves and the game's own draws), so
it plays the very episodes of that env.

Differences from a SyncVectorEnv of ``gym_env()``: an illegal action raises ValueError
(``gym_env(illegal_reward=None)`` behaviour) naming the slot; observations are flat (no
``dict_obs``); there is no rendering (a render mode Gymnasium knows gets its warning and
renders nothing, as in ``gym_env()``). It pickles and deep-copies (the engine is remade from
the game and its rules, the games go on from the same arrays and generators).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from card_envs.core.batched import (
    EXTERNAL_AGENT,
    EXTERNAL_MOVE,
    LEARNER_AGENT,
    LEARNER_MOVE,
    NEW_GAME,
    BatchedGame,
    BatchedState,
    Turns,
    check_batch_size,
    play_turns,
)
from card_envs.core.game import check_choice, check_int
from card_envs.core.gym_env import (
    check_learner_seats,
    check_render_mode,
    is_learner,
    opponents_per_seat,
)
from card_envs.core.make import make_batched
from card_envs.registry import load_spec
from card_envs.vector.selfplay import Player

ENV_ARGS = ("opponent", "learner_seat", "obs_encoding")


class CardVectorEnv(VectorEnv):
    """B games of one seat against batched opponents; see the module docstring.

    Args:
        game: a game with a batched twin (``simple_tricks`` or ``simple_tricks_v0``, ...).
        num_envs: B, the number of games played at once.
        opponent: for every other seat a batched agent's name (``random`` and the game's rule
            agents) or a ``Player``; or a sequence with one entry per other seat, relative to
            the learner (the seat after the learner's first), as in ``gym_env()``; there, as
            in ``gym_env()``, ``"learner"`` for a teammate the learner plays too.
        learner_seat: the learner's seat, or None for a uniformly random seat each game.
        obs_encoding: ``"default"`` or ``"original"``.
        **rules: the game's rules arguments (over the spec's ``gym_defaults``, as gym_env():
            Thirty-One has 2 players unless told).
    """

    def __init__(self, game: str, num_envs: int = 1, opponent: Any = None,
                 learner_seat: int | None = None, obs_encoding: str = "default",
                 max_episode_steps: int | None = None, render_mode: str | None = None,
                 **rules: Any):
        spec = load_spec(game)
        self.num_envs = check_batch_size(num_envs)
        if max_episode_steps is not None:
            raise ValueError("max_episode_steps is not supported: every game has its step cap")
        check_render_mode(render_mode, (), f"the batched {spec.env_name}")  # warns: no rendering
        self._rules = {**spec.gym_defaults, **rules}
        self.engine: BatchedGame = make_batched(spec, **self._rules)
        engine = self.engine
        check_choice("obs_encoding", obs_encoding, engine.encodings)
        self.obs_encoding = obs_encoding
        n = engine.num_players
        if learner_seat is not None:
            check_int("learner_seat", learner_seat, 0, n - 1)
        self.learner_seat = learner_seat
        chosen = opponents_per_seat(opponent if opponent is not None else spec.default_opponent,
                                    n - 1, self._known)
        learners = check_learner_seats(engine.game, chosen)
        # each other seat's agent number; a Player's seats move between compiled calls
        self.players: list[Player | None] = [p if isinstance(p, Player) else None
                                             for p in chosen]
        self.opponents = np.array(
            [EXTERNAL_AGENT if isinstance(p, Player) else LEARNER_AGENT if k in learners
             else engine.agent_index(p) for k, p in enumerate(chosen)], np.int64)
        size = engine.observation_size(obs_encoding)
        self.metadata = {
            "name": f"{spec.env_name}_vector",
            "autoreset_mode": AutoresetMode.SAME_STEP,
            "render_modes": [],
        }
        self.render_mode = None
        self.single_observation_space = spec.encoders[obs_encoding](engine.game).space()
        self.single_action_space = spaces.Discrete(engine.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.state = None
        self.turns = Turns(self.num_envs, size)
        self._everything = np.arange(self.num_envs)
        self._live = np.ones(self.num_envs, bool)  # after same-step autoreset: every game
        self._encoding = engine.encoding_index(obs_encoding)

    def _known(self, entry: Any) -> Any:
        """``entry`` if it is a Player, ``"learner"`` or a batched agent's name; ValueError
        otherwise."""
        if not isinstance(entry, Player) and not is_learner(entry):
            self.engine.agent_index(entry)  # raises, listing the agents
        return entry

    @property
    def seat(self) -> np.ndarray:
        """(B,) each game's learner seat."""
        return self.turns.seat

    # --- Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None):
        """Deal B new games. ``seed``: an int (one generator for the batch), B ints (one per
        game: slot i as ``gym_env(...).reset(seed=seed[i])``), or None (new entropy on the
        first reset; later, the generators go on)."""
        b = self.num_envs
        if seed is not None and not isinstance(seed, (int, np.integer)):
            self.state = self.engine.new_state(b, seeds=seed)
        elif seed is not None or self.state is None:
            self.state = self.engine.new_state(b, seed=seed)
        self.turns.pending[:] = 0.0
        self._turn(NEW_GAME, self._everything, np.zeros(b, np.int64))
        return self._observe(), self._infos()

    def step(self, actions: Any):
        state = self.state
        if state is None:
            raise RuntimeError("call reset() before step()")
        actions = self.engine.check_actions(state, actions, self._live)
        self._turn(LEARNER_MOVE, self._everything, actions)
        turns = self.turns
        truncated = turns.ended & turns.final_truncated
        terminated = turns.ended & ~turns.final_truncated
        infos: dict[str, Any] = {}
        if turns.ended.any():
            done = turns.ended.copy()
            final_obs = np.zeros_like(turns.final_obs)  # zero pages: only ended rows written
            final_obs[done] = turns.final_obs[done]
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
            infos["final_info"] = {
                "payoff": np.where(done, turns.final_payoff, 0.0), "_payoff": done,
                "score": np.where(done, turns.final_score, 0.0), "_score": done,
                "truncated": truncated.copy(), "_truncated": done,
            }
        infos.update(self._infos())
        return self._observe(), turns.reward.copy(), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(B, actions) bool: each learner's legal actions."""
        return self.state.mask.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        self.state = None

    # --- pickling and deep copies: the engine is remade from its game and rules ----------
    def __getstate__(self) -> dict[str, Any]:
        fields = dict(self.__dict__)
        fields["engine"] = (self.engine.spec.env_name, self._rules)
        if self.state is not None:  # its fields, the generators in a plain list (not numba's)
            fields["state"] = {**vars(self.state), "rngs": list(self.state.rngs)}
        return fields

    def __setstate__(self, fields: dict[str, Any]) -> None:
        name, rules = fields["engine"]
        fields["engine"] = make_batched(load_spec(name), **rules)
        if fields["state"] is not None:
            from numba import typed  # the twins draw from a numba list of generators

            state = BatchedState.__new__(BatchedState)
            state.__dict__.update(fields["state"], rngs=typed.List(fields["state"]["rngs"]))
            fields["state"] = state
        self.__dict__.update(fields)

    # --- helpers --------------------------------------------------------------------------
    def _turn(self, kind: int, rows: np.ndarray, actions: np.ndarray) -> None:
        """One compiled call for the batch, then the Players' moves (one call each per wave)
        and the compiled moves they lead to, until every learner is to act."""
        engine, state, turns = self.engine, self.state, self.turns
        self._play(kind, rows, actions)
        while turns.waiting.any():
            waiting = np.flatnonzero(turns.waiting)
            relative = (state.current_player[waiting] - turns.seat[waiting]) % \
                engine.num_players - 1
            moves = np.zeros(self.num_envs, np.int64)
            for k, player in enumerate(self.players):
                mine = waiting[relative == k]
                if player is None or not len(mine):
                    continue
                obs = engine.observe(state, player.encoding, rows=mine)
                moves[mine] = player.policy(obs, state.mask[mine], mine, state)
            engine.check_actions(state, moves, turns.waiting)
            self._play(EXTERNAL_MOVE, waiting, moves[waiting])

    def _play(self, kind: int, rows: np.ndarray, actions: np.ndarray) -> None:
        """``play_turns`` in games ``rows``; ``actions[r]`` is the move in game rows[r]."""
        play_turns(self.engine, self.state, self.turns, kind, rows, actions, self.opponents,
                   self.learner_seat, self.obs_encoding)

    def _observe(self) -> np.ndarray:
        return self.engine.observe_checked(self.state, self._encoding, self._everything,
                                           self.turns.acting)

    def _infos(self) -> dict[str, Any]:
        return {"seat": self.turns.seat.copy()}


def make_vector_env(game: str, num_envs: int = 1, **kwargs: Any) -> CardVectorEnv:
    """``CardVectorEnv(game, num_envs, **kwargs)``; ValueError for an unknown argument."""
    spec = load_spec(game)
    valid = [*ENV_ARGS, *spec.game_args()]
    for key in kwargs:
        if key not in valid and key not in ("max_episode_steps", "render_mode"):
            raise ValueError(
                f"{spec.name} vector env: unknown argument {key!r}; "
                f"valid arguments: {', '.join(valid)}"
            )
    return CardVectorEnv(game, num_envs=num_envs, **kwargs)


def vector_env(game: str, num_envs: int = 1, **kwargs: Any) -> CardVectorEnv:
    """The registry's vector entry point (``gymnasium.make_vec``) for ``game``."""
    return make_vector_env(game, num_envs=num_envs, **kwargs)


__all__ = ["CardVectorEnv", "Player", "make_vector_env", "vector_env"]


def __getattr__(name: str):
    """``simple_tricks_v0`` (any registered game with a twin): its vector entry point, a
    function ``(num_envs=1, **kwargs) -> CardVectorEnv`` (what the registry names)."""
    try:
        spec = load_spec(name)
    except ValueError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    if spec.batched is None or name != spec.env_name:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return functools.partial(vector_env, spec.env_name)
