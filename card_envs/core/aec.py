"""The PettingZoo AEC environment classes that drive any Game.

``CardGameEnv(spec, game, encoder)`` is the ``raw_env``: an illegal action raises
``IllegalActionError`` naming it and the legal actions, and leaves the state untouched.
Before reset() the per-step attributes (``agents``, ``agent_selection``, ``rewards``, ...)
do not exist yet, as in any PettingZoo environment without wrappers.

``ClassicCardGameEnv`` (same arguments) is what ``env()`` returns: the behaviour of
PettingZoo's classic wrapper stack (TerminateIllegalWrapper(-1) -> AssertOutOfBoundsWrapper
-> OrderEnforcingWrapper) implemented inline, without three wrapper layers per call:

* an out-of-range action fails an ``AssertionError`` ("action is not in action space");
* an illegal action ends the game: every agent terminated and truncated, -1 to the
  offender, 0 to the others, PettingZoo's illegal-move warning;
* step/observe/render/state/agent_iter before reset() fail as PettingZoo's do, the
  per-step attributes raise the wrapper's AttributeError before reset() ("agents cannot
  be accessed before reset"), step() after every agent is done only warns, and
  ``agent_iter`` insists on a step() between agents.

Observations and masks are read-only arrays (the env keeps them for ``observe`` and ``last``
until the next step, and the mask is the game's own cached one): writing into them raises
instead of changing what the env or the game holds.

Every agent stays in the game until it ends (players who are out are simply never
selected); at the end all agents are terminated (or truncated at the step cap) and
``infos`` carry the public result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import logger as gym_logger
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env import AECIterable, AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from card_envs.core.dtypes import INT8
from card_envs.core.encoding import Encoder, MaskedObservationSpace
from card_envs.core.game import Game, State
from card_envs.core.gym_env import check_render_mode

if TYPE_CHECKING:
    from card_envs.core.spec import GameSpec


class _SetByReset:
    """A class attribute that reset() shadows with an instance attribute of the same name;
    before reset() reading it raises PettingZoo's AttributeError.

    (A ``__getattr__`` on the env would do the same but slow every attribute lookup of the
    env: Python does not specialise lookups on a class that defines one.)
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, env: Any, owner: type | None = None) -> Any:
        if env is None:
            return self
        raise AttributeError(f"{self.name} cannot be accessed before reset")


class CardGameEnv(AECEnv):
    """A PettingZoo AECEnv for any ``Game``; see the module docstring."""

    classic = False

    def __init__(
        self,
        spec: GameSpec,
        game: Game,
        encoder: Encoder,
        render_mode: str | None = None,
    ):
        super().__init__()
        self.spec = spec
        self.game = game
        self.encoder = encoder
        self.metadata = spec.metadata
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"],
                                             spec.env_name)
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = MaskedObservationSpace(encoder.space(), game.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self._has_reset = False
        self._has_updated = False
        self._obs_cache: dict[str, dict[str, np.ndarray]] = {}  # agent -> its observation
        self._rewards_dirty = False
        # reset() was called and the game has not ended (by its rules, the cap or an
        # illegal move): the one flag step() tests before the fast path. While it is set,
        # agent_selection is the agent of game_state.player (last() relies on it).
        self._live = False
        self._num_actions = game.num_actions
        self._no_actions = np.zeros(game.num_actions, INT8)  # the mask of a seat not to act
        self._no_actions.flags.writeable = False

    # --- PettingZoo API -----------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game; ``options={"state": s}`` starts from a copy of the state ``s``."""
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        start = options.get("state") if options else None
        self.game_state: State = start.copy() if start is not None else self.game.init(self._rng)
        agents = self.possible_agents
        self.agents = agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self.agent_selection = agents[self.game_state.player]
        self._obs_cache.clear()
        self._rewards_dirty = False
        self._live = True
        self._has_reset = True
        self._has_updated = True
        if self.game_state.terminal or self.game_state.truncated:
            self._finish()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self._obs_cache.get(agent)
        if obs is None:
            obs = self._encode(agent)
        return obs

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # AECEnv.last with the observation cache looked up inline (it runs every step), and
        # while the game runs the acting agent's observation encoded inline: the selected
        # agent is then the player to act, so its mask is the legal one.
        agent = self.agent_selection
        assert agent is not None
        if observe:
            obs = self._obs_cache.get(agent)
            if obs is None:
                if self._live:
                    state = self.game_state
                    mask = state.mask
                    if mask is None:
                        mask = state.mask = self.game._legal_mask(state)  # read-only
                    observation = self.encoder.encode_state_read_only(state, state.player)
                    obs = self._obs_cache[agent] = {"observation": observation,
                                                    "action_mask": mask}
                else:
                    obs = self._encode(agent)
        else:
            obs = None
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def _encode(self, agent: str) -> dict[str, np.ndarray]:
        """Encode ``agent``'s observation and mask of the current state, and cache them."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        seat = self.agent_name_mapping[agent]
        state = self.game_state
        if seat == state.player and not (state.terminal or state.truncated):
            mask = state.mask  # Game.legal_mask inline: cached in the state for the player to act
            if mask is None:
                mask = state.mask = self.game._legal_mask(state)  # read-only
        else:
            mask = self._no_actions
        observation = self.encoder.encode_state_read_only(state, seat)
        obs = {"observation": observation, "action_mask": mask}
        self._obs_cache[agent] = obs
        return obs

    def step(self, action: Any) -> None:
        if not self._live:
            self._step_after_end(action)
            return
        self._has_updated = True
        state = self.game_state
        game = self.game
        mask = state.mask
        if mask is None:
            mask = game.legal_mask(state)
        # Fast path: a legal int. Anything else goes through the full checks.
        if (action.__class__ is int or isinstance(action, np.integer)) and (
            0 <= action < self._num_actions and mask[action]
        ):
            if action.__class__ is not int:
                action = int(action)
        elif self.classic:
            if not self._in_bounds(action):
                raise AssertionError("action is not in action space")
            action = int(action)  # e.g. a 0-d integer array
            if not mask[action]:
                self._end_by_illegal_move(self.agent_selection)
                return
        else:
            action = game.check_action(state, action)  # raises, naming it and the legal ones

        self._cumulative_rewards[self.agent_selection] = 0.0
        rewards = game.apply(state, action, self._rng)  # the one step path
        self._obs_cache.clear()
        if self._rewards_dirty:
            for a in self.rewards:
                self.rewards[a] = 0.0
            self._rewards_dirty = False
        if rewards is not None:
            self._pay(rewards)
        if state.terminal or state.truncated:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[state.player]

    def _pay(self, rewards: np.ndarray) -> None:
        cumulative = self._cumulative_rewards
        for a, r in zip(self.possible_agents, rewards.tolist(), strict=True):
            if r:
                self.rewards[a] = r
                cumulative[a] += r
                self._rewards_dirty = True

    def _step_after_end(self, action: Any) -> None:
        """step() before reset(), or once the game is over: PettingZoo's dead-agent protocol."""
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        agents = self.agents
        if not agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        if self.classic and action is not None and not self._in_bounds(action):
            raise AssertionError("action is not in action space")
        # AECEnv._was_dead_step for the only case here: once the game is over every agent
        # left is done, so the next one to step is simply the first one left (checked against
        # PettingZoo by test_env_matches_pettingzoo_classic_wrappers and the golden traces)
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent], self.truncations[agent], self.infos[agent]
        del self.rewards[agent], self._cumulative_rewards[agent]
        agents.remove(agent)
        if agents:
            if getattr(self, "_skip_agent_selection", None) is None:
                self._skip_agent_selection = agent
            self.agent_selection = agents[0]
        else:
            skip = getattr(self, "_skip_agent_selection", None)
            if skip is not None:
                self.agent_selection = skip
            self._skip_agent_selection = None
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0

    def render(self) -> str | None:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        if self.render_mode is None:
            gym_logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = self.spec.render(self.game, self.game_state, None)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        if not self.classic:
            return AECIterable(self, max_iter)
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _OrderedIterable(self, max_iter)

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        return super().state()

    # --- helpers ------------------------------------------------------------------------
    @property
    def seat(self) -> int:
        """The seat index of ``agent_selection``."""
        return self.agent_name_mapping[self.agent_selection]

    def _in_bounds(self, action: Any) -> bool:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            return 0 <= action < self.game.num_actions
        return self.action_spaces[self.agent_selection].contains(action)

    def _finish(self) -> None:
        """Mark every agent terminated (or truncated at the cap) and publish the result."""
        state = self.game_state
        self._live = False
        flags = self.terminations if state.terminal else self.truncations
        for a, info in zip(self.possible_agents, self.game.results(state), strict=True):
            flags[a] = True
            self.infos[a] = info
        self.agent_selection = self.possible_agents[state.player]

    def _end_by_illegal_move(self, agent: str) -> None:
        """PettingZoo's TerminateIllegalWrapper: the offender gets -1 and everyone is done."""
        EnvLogger.warn_on_illegal_move()
        self._live = False
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.truncations, 0.0)
        self.rewards[agent] = -1.0
        self._rewards_dirty = True
        self._accumulate_rewards()
        self._deads_step_first()


class ClassicCardGameEnv(CardGameEnv):
    """``env()``: PettingZoo's classic wrapper behaviour inline; see the module docstring.

    Before reset() the per-step attributes raise the wrapper's AttributeError through the
    class attributes below, which reset() shadows. (Reading an attribute that the class
    shadows with such a descriptor is not specialised by Python, so it costs some 200
    instructions more than a plain one: the raw env does without them. A ``__getattr__``
    would cost that on every attribute of the env.)
    """

    classic = True
    agents = _SetByReset()
    agent_selection = _SetByReset()
    rewards = _SetByReset()
    terminations = _SetByReset()
    truncations = _SetByReset()
    infos = _SetByReset()
    game_state = _SetByReset()


class _OrderedIterable(AECIterable):
    def __iter__(self) -> AECIterator:
        return _OrderedIterator(self.env, self.max_iter)


class _OrderedIterator(AECIterator):
    """PettingZoo's order-enforcing iterator: every agent yielded must be stepped."""

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return env.agent_selection
