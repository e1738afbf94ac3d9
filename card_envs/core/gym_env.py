"""The single-agent Gymnasium view of any Game: one learning seat, opponents played inside ``step``.

Observation and reward always belong to the learner. The reward of a step is
everything the learner's seat earned from its action up to its next decision
(opponents' moves included). In a team game the learner may play its teammates' seats as
well (an opponent entry ``"learner"`` for each): their decisions are the learner's steps
too, each observed from the seat to act, and the reward stays its own seat's (a team shares
one result). ``action_masks()`` gives the learner's legal
actions as bool (what sb3-contrib's MaskablePPO asks for); ``info["action_mask"]``
carries the same actions as int8, the dtype of PettingZoo's observation masks
(docs/api.md, "Action masks"). With ``dict_obs=True`` the observation is PettingZoo-style
``{"observation": ..., "action_mask": ...}``.

An illegal action ends the episode with ``illegal_reward`` (default -1) and
``info["illegal_action"] = True``, like PettingZoo's classic envs; the state is
not changed by it. ``illegal_reward=None`` raises ``IllegalActionError`` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from card_envs.core.agents import Agent, make_agent
from card_envs.core.dtypes import INT8
from card_envs.core.encoding import Encoder, MaskedObservationSpace
from card_envs.core.evaluation import play_until
from card_envs.core.game import Game, IllegalActionError, State, check_int

if TYPE_CHECKING:
    from card_envs.core.spec import GameSpec

# Deals in which the learner never gets to act are re-dealt; this bounds the retries.
_MAX_REDEALS = 100

# The render modes Gymnasium knows (its wrappers add "_list" to any of them). A mode the env
# does not offer gets a warning and no rendering, as Gymnasium's own envs do: SB3's
# make_vec_env asks every env for "rgb_array" first. Anything else is a typo and raises.
GYMNASIUM_RENDER_MODES = ("human", "ansi", "rgb_array", "depth_array")


def check_render_mode(render_mode: Any, supported: Sequence[str], env: str = "the env") -> Any:
    """``render_mode`` if ``env`` offers it (or it is None); None, with Gymnasium's warning,
    for another mode Gymnasium knows; ValueError naming the valid modes for anything else."""
    if render_mode is None or render_mode in supported:
        return render_mode
    known = isinstance(render_mode, str) and render_mode.removesuffix("_list") in \
        GYMNASIUM_RENDER_MODES
    offered = ", ".join(repr(m) for m in (None, *supported))
    if not known:
        raise ValueError(
            f"render_mode={render_mode!r} is not valid; choose one of {offered} (Gymnasium's "
            "other modes, such as 'rgb_array', are accepted with a warning and render nothing)"
        )
    gym.logger.warn(
        f"render_mode={render_mode!r} is not offered by {env} (its modes: {offered}); "
        "it renders nothing (render_mode=None)"
    )
    return None


def opponents_per_seat(opponent: Any, others: int, check: Callable[[Any], Any]) -> list[Any]:
    """``check(entry)`` for each of the ``others`` other seats (it raises on a bad entry, or
    builds the seat's agent): a sequence must give exactly one entry per seat (ValueError
    otherwise); anything else is the entry of every seat, checked even when there is none."""
    if isinstance(opponent, Sequence) and not isinstance(opponent, str):
        if len(opponent) != others:
            raise ValueError(
                f"opponent: give one agent for every other seat ({others}), got {len(opponent)}"
            )
        chosen = list(opponent)
    else:
        chosen = [opponent] * others
        if others == 0:
            check(opponent)  # still reject an unknown name
    return [check(a) for a in chosen]


# An opponent entry naming a seat the learner plays as well (a teammate in a team game).
LEARNER = "learner"


def is_learner(entry: Any) -> bool:
    """Whether an opponent entry is ``"learner"`` (a seat the learner plays as well)."""
    return isinstance(entry, str) and entry == LEARNER


def teammate_places(game: Game) -> list[int]:
    """The p in 1..n-1 for which the seat p places after any seat is on that seat's team
    (``Game.teams()``); empty where the game has no teams."""
    n = game.num_players
    team_of = {seat: t for t, members in enumerate(game.teams() or []) for seat in members}
    if not team_of:
        return []
    return [p for p in range(1, n) if all(team_of[(s + p) % n] == team_of[s] for s in range(n))]


def check_learner_seats(game: Game, chosen: Sequence[Any]) -> list[int]:
    """The offsets k (seat k + 1 places after the learner's) whose entry is ``"learner"``;
    ValueError unless each such seat is the learner's teammate whatever seat it has."""
    offsets = [k for k, entry in enumerate(chosen) if is_learner(entry)]
    if not offsets:
        return offsets
    places = teammate_places(game)
    bad = [k for k in offsets if k + 1 not in places]
    if bad:
        where = (f"the seats {', '.join(map(str, places))} places after the learner's"
                 if places else "none in this game (it has no teams)")
        raise ValueError(
            f"opponent: {LEARNER!r} (the learner plays that seat too) is only for the "
            f"learner's teammates: {where}; got it for the seat {bad[0] + 1} places after"
        )
    return offsets


class SingleAgentEnv(gym.Env):
    """One seat of a Game as a Gymnasium environment; see the module docstring.

    Args:
        spec: the game's spec.
        game: the rules object.
        encoder: the observation encoder.
        opponent: an agent name or Agent for every other seat, or a sequence with one
            entry per other seat, relative to the learner: the seat after the learner's
            first (so in team games the entries of the learner's teammates stay put
            whatever seat the learner gets).
        learner_seat: the learner's seat, or None for a uniformly random seat each episode.
        render_mode: ``"ansi"`` (render returns the table as text) or ``"human"`` (prints it).
        dict_obs: observation as ``{"observation", "action_mask"}`` instead of the flat vector.
        illegal_reward: reward for an illegal action (ends the episode); None raises instead.
    """

    def __init__(
        self,
        spec: GameSpec,
        game: Game,
        encoder: Encoder,
        opponent: Any = None,
        learner_seat: int | None = None,
        render_mode: str | None = None,
        dict_obs: bool = False,
        illegal_reward: float | None = -1.0,
    ):
        self.spec_ = spec
        self.game = game
        self.encoder = encoder
        self.metadata = spec.metadata
        if not isinstance(dict_obs, (bool, np.bool_)):
            raise ValueError(f"dict_obs={dict_obs!r} is not valid; choose one of False, True")
        if illegal_reward is not None and not (
            isinstance(illegal_reward, (int, float, np.integer, np.floating))
            and not isinstance(illegal_reward, (bool, np.bool_))
            and np.isfinite(illegal_reward)
        ):
            raise ValueError(
                f"illegal_reward={illegal_reward!r} is not valid; give a finite number, or None "
                "to raise IllegalActionError on an illegal action"
            )
        render_mode = check_render_mode(render_mode, spec.metadata["render_modes"],
                                        spec.env_name)
        self.render_mode = render_mode
        self.dict_obs = bool(dict_obs)
        self.illegal_reward = None if illegal_reward is None else float(illegal_reward)
        n = game.num_players
        if learner_seat is not None:
            check_int("learner_seat", learner_seat, 0, n - 1)
        self.learner_seat = learner_seat
        self.opponents = self._make_opponents(
            opponent if opponent is not None else spec.default_opponent
        )
        self._learner_offsets = check_learner_seats(game, self.opponents)
        if self.dict_obs:
            self.observation_space = MaskedObservationSpace(encoder.space(), game.num_actions)
        else:
            self.observation_space = encoder.space()
        self.action_space = spaces.Discrete(game.num_actions)
        self.seat = 0 if learner_seat is None else learner_seat
        self.acting = self.seat  # the learner's seat to act (its own or a teammate's)
        self.game_state: State | None = None
        self._warned_over = False  # action_masks() of an ended episode warns once

    def _make_opponents(self, opponent: Any) -> list[Agent | None]:
        # One agent object per seat, so agents with memory never share it.
        return opponents_per_seat(
            opponent, self.game.num_players - 1,
            lambda a: a if is_learner(a) else make_agent(self.spec_, a, self.game))

    # --- Gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(_MAX_REDEALS):
            n = self.game.num_players
            self.seat = int(rng.integers(n)) if self.learner_seat is None else self.learner_seat
            seat = self.seat  # the agent of every seat, None for the learner's (for play_until)
            self._by_seat = [None if p == seat or (p - seat) % n - 1 in self._learner_offsets
                             else self.opponents[(p - seat) % n - 1] for p in range(n)]
            start = options.get("state") if options else None
            self.game_state = start.copy() if start is not None else self.game.init(rng)
            for agent in self._by_seat:
                if hasattr(agent, "reset"):
                    agent.reset()
            self._pending = self._play_opponents()
            if not (self.game_state.terminal or self.game_state.truncated) or start is not None:
                break
        return self._observation(), self._info()

    def step(self, action: Any):
        state = self.game_state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if state.terminal or state.truncated:
            raise RuntimeError("the episode is over; call reset()")
        game = self.game
        mask = game.legal_mask(state)
        if not (
            isinstance(action, (int, np.integer))
            and 0 <= action < game.num_actions
            and mask[action]
        ):
            if self.illegal_reward is None or not self.action_space.contains(action):
                game.check_action(state, action)  # raises, naming the action and the legal ones
            obs = self._observation()
            info = self._info()
            info["illegal_action"] = True
            self.game_state = _ended(state)
            return obs, float(self.illegal_reward), True, False, info
        seat = self.seat
        rewards = game.apply(state, int(action), self.np_random)
        reward = self._pending + (float(rewards[seat]) if rewards is not None else 0.0)
        # the opponents' moves up to the learner's next decision (_play_opponents, inline)
        earned = play_until(game, state, self._by_seat, self.np_random)
        if earned is not None:
            reward += float(earned[seat])
        self._pending = 0.0
        self._note_acting()
        return self._observation(), reward, state.terminal, state.truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool array (all False once the episode is over,
        with a warning the first time: a policy has nothing to choose there)."""
        state = self.game_state
        if state is not None and (state.terminal or state.truncated) and not self._warned_over:
            self._warned_over = True
            gym.logger.warn(
                "action_masks() of an episode that is over is all False; reset() first. In a "
                "Gymnasium vector env with next-step autoreset (make_vec's 'sync' and 'async' "
                "default), wrap it in card_envs.vector.MaskedVectorEnv to reset in the same step"
            )
        return self.game.legal_mask(state).astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = self.spec_.render(self.game, self.game_state, None)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # --- helpers ------------------------------------------------------------------------
    def _play_opponents(self) -> float:
        """Let the other seats act until the learner is to act or the game is over."""
        earned = play_until(self.game, self.game_state, self._by_seat, self.np_random)
        self._note_acting()
        return 0.0 if earned is None else float(earned[self.seat])

    def _note_acting(self) -> None:
        """The seat the observation is of: the learner's seat to act, else its own."""
        state = self.game_state
        over = state.terminal or state.truncated
        self.acting = self.seat if over or self._by_seat[state.player] is not None \
            else state.player

    def _observation(self):
        state, seat = self.game_state, self.acting
        obs = self.encoder.encode_state(state, seat)
        if self.dict_obs:
            if seat == state.player and not (state.terminal or state.truncated):
                mask = self.game.legal_mask(state).copy()
            else:
                mask = np.zeros(self.game.num_actions, INT8)
            return {"observation": obs, "action_mask": mask}
        return obs

    def _info(self) -> dict[str, Any]:
        state = self.game_state
        # a copy: Gymnasium's checker wants new info data on every call (users keep it)
        info: dict[str, Any] = {"action_mask": self.game.legal_mask(state).copy(),
                                "seat": self.seat}
        if state.terminal or state.truncated:
            info.update(self.game.result(state, self.seat))
        return info


def _ended(state: State) -> State:
    """A copy of ``state`` marked over, so the episode can't continue after an illegal action."""
    ended = state.copy()
    ended.terminal = True
    return ended


__all__ = ["SingleAgentEnv", "IllegalActionError"]
