"""Bad input gets a clear error: wrong arguments, illegal and out-of-range actions, wrong order."""

from __future__ import annotations

import inspect
import pickle
import re

import gymnasium
import numpy as np
import pytest
from pettingzoo.utils import wrappers

from card_envs import IllegalActionError
from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES, random_legal


def _factories(name):
    made = factories(load_spec(name))
    return {"env": made.env, "raw_env": made.raw_env, "gym_env": made.gym}


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("which", ["env", "raw_env", "gym_env"])
def test_unknown_argument_names_the_valid_ones(name, which):
    with pytest.raises(
        ValueError, match=r"unknown argument 'colour_blind'; valid arguments: .*obs_encoding"
    ):
        _factories(name)[which](colour_blind=True)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_bad_values_name_the_valid_choices(name):
    spec = load_spec(name)
    make = _factories(name)["raw_env"]
    with pytest.raises(
        ValueError, match="obs_encoding='pixels' is not valid; choose one of 'default'"
    ):
        make(obs_encoding="pixels")
    with pytest.raises(ValueError, match="render_mode='rgb' is not valid"):
        make(render_mode="rgb")  # a typo; Gymnasium's modes warn (tests/test_idioms.py)
    params = inspect.signature(spec.game_cls.__init__).parameters
    checked = 0
    for arg, p in params.items():
        if p.default is None:  # a default that depends on other arguments
            with pytest.raises(ValueError, match=rf"{arg}='bogus' is not valid"):
                make(**{arg: "bogus"})
            checked += 1
        elif isinstance(p.default, bool):
            for bad in ("bogus", 2, None):
                with pytest.raises(ValueError, match=rf"{arg}=.* is not valid; choose one of"):
                    make(**{arg: bad})
            checked += 1
        elif isinstance(p.default, str):
            with pytest.raises(ValueError, match=rf"{arg}='bogus' is not valid; choose one of"):
                make(**{arg: "bogus"})
            checked += 1
        elif isinstance(p.default, int) and not isinstance(p.default, bool):
            for bad in (-1, 10**6, 2.5, "3"):
                with pytest.raises(ValueError, match=rf"{arg}=.* is not valid"):
                    make(**{arg: bad})
            checked += 1
    assert checked == len(params) - 1


@pytest.mark.parametrize("name", ENV_NAMES)
def test_bad_opponent_and_seat_in_gymnasium(name):
    gym_env = _factories(name)["gym_env"]
    with pytest.raises(ValueError, match="unknown agent 'grandmaster'.*choose one of random"):
        gym_env(opponent="grandmaster")
    with pytest.raises(ValueError, match="learner_seat=99 is not valid"):
        gym_env(learner_seat=99)


def _first_illegal(mask):
    illegal = np.flatnonzero(mask == 0)
    return int(illegal[0]) if len(illegal) else None


def _advance_to_illegal(env, rng):
    """Step randomly until the agent to act has an illegal action available; return it."""
    for _ in range(500):
        obs, *_ = env.last()
        bad = _first_illegal(obs["action_mask"])
        if bad is not None:
            return bad
        env.step(random_legal(obs["action_mask"], rng))
    raise AssertionError("never found an illegal action")


@pytest.mark.parametrize("name", ENV_NAMES)
def test_raw_env_illegal_action_raises_and_changes_nothing(name):
    env = _factories(name)["raw_env"]()
    env.reset(seed=1)
    bad = _advance_to_illegal(env, np.random.default_rng(0))
    before = pickle.dumps(env.game_state)
    obs_before = env.observe(env.agent_selection)["observation"].copy()
    with pytest.raises(
        IllegalActionError, match=rf"action {bad} \(.*\) is illegal .*legal: \d+ \("
    ):
        env.step(bad)
    for out_of_range in (-1, env.game.num_actions, 2.5, None, "1"):
        with pytest.raises(IllegalActionError, match="out of range"):
            env.step(out_of_range)
    assert pickle.dumps(env.game_state) == before
    assert np.array_equal(env.observe(env.agent_selection)["observation"], obs_before)
    assert not any(env.terminations.values())


def _pettingzoo_classic(raw):
    env = wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def _trace(env, actions):
    """Feed ``actions`` (None entries become a random legal move) and record everything public."""
    out = []
    rng = np.random.default_rng(5)
    for planned in actions:
        if not env.agents:
            break
        agent = env.agent_selection
        obs, rew, term, trunc, info = env.last()
        out.append(
            (
                agent,
                obs["observation"].tolist(),
                obs["action_mask"].tolist(),
                rew,
                term,
                trunc,
                dict(env.rewards),
                dict(env.terminations),
                dict(env.truncations),
            )
        )
        if term or trunc:
            action = None
        elif planned is None:
            action = random_legal(obs["action_mask"], rng)
        else:
            action = planned
        env.step(action)
    return out


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("illegal_at", [0, 3, 10])
def test_env_matches_pettingzoo_classic_wrappers(name, illegal_at):
    raw_env = _factories(name)["raw_env"]
    ours = _factories(name)["env"]()
    theirs = _pettingzoo_classic(raw_env())
    results = []
    for env in (ours, theirs):
        env.reset(seed=3)
        rng = np.random.default_rng(0)
        actions = []
        # the same plan for both: random play, one illegal action, then the dead agents' steps
        probe = raw_env()
        probe.reset(seed=3)
        for _ in range(illegal_at):
            obs = probe.observe(probe.agent_selection)
            a = random_legal(obs["action_mask"], rng)
            actions.append(a)
            probe.step(a)
            if not probe.agents or any(probe.terminations.values()):
                break
        bad = _first_illegal(probe.observe(probe.agent_selection)["action_mask"])
        actions += [bad] + [None] * 8
        results.append(_trace(env, actions))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_env_order_and_bounds_errors_match_pettingzoo(name):
    raw_env = _factories(name)["raw_env"]
    for env in (_factories(name)["env"](), _pettingzoo_classic(raw_env())):
        with pytest.raises(AttributeError, match="agents cannot be accessed before reset"):
            _ = env.agents
        with pytest.raises(
            AssertionError, match=re.escape("reset() needs to be called before step")
        ):
            env.step(0)
        with pytest.raises(
            AssertionError, match=re.escape("reset() needs to be called before observe")
        ):
            env.observe("player_0")
        env.reset(seed=0)
        with pytest.raises(AssertionError, match="action is not in action space"):
            env.step(-1)
        with pytest.raises(AssertionError, match="action is not in action space"):
            env.step(None)
        with pytest.raises(AssertionError, match="need to call step"):
            it = iter(env.agent_iter())
            next(it)
            next(it)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_gymnasium_illegal_action_ends_the_episode_or_raises(name):
    gym_env = _factories(name)["gym_env"]
    env = gym_env()
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    bad = None
    for _ in range(500):
        bad = _first_illegal(info["action_mask"])
        if bad is not None:
            break
        obs, _, term, trunc, info = env.step(random_legal(info["action_mask"], rng))
        if term or trunc:
            obs, info = env.reset()
    state_before = pickle.dumps(env.game_state)
    obs2, reward, term, trunc, info2 = env.step(bad)
    assert (reward, term, trunc, info2["illegal_action"]) == (-1.0, True, False, True)
    assert np.array_equal(obs, obs2)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(bad)
    strict = gym_env(illegal_reward=None)
    strict.reset(seed=0)
    strict.game_state = pickle.loads(state_before)
    with pytest.raises(IllegalActionError, match=rf"action {bad} .* is illegal"):
        strict.step(bad)
    with pytest.raises(IllegalActionError, match="out of range"):
        strict.step(-3)
    assert pickle.dumps(strict.game_state) == state_before


def test_gymnasium_make_passes_arguments_through():
    env = gymnasium.make("card_envs/SimpleTricks-v0", opponent="heuristic", num_values=4)
    obs, info = env.reset(seed=0)
    assert env.action_space.n == 8
    with pytest.raises(ValueError, match="num_values=1 is not valid"):
        gymnasium.make("card_envs/SimpleTricks-v0", num_values=1)


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("which", ["env", "raw_env"])
def test_numpy_integer_actions_are_accepted(name, which):
    env = _factories(name)[which]()
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for kind in (np.int64, np.int32, np.array):
        obs, *_ = env.last()
        if not env.agents or any(env.terminations.values()):
            break
        env.step(kind(random_legal(obs["action_mask"], rng)))
    assert not any(env.truncations.values()), "a legal numpy action is not an illegal move"


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize(
    "arg, value, valid",
    [
        ("dict_obs", "False", "False, True"),
        ("dict_obs", 1, "False, True"),
        ("illegal_reward", "x", "finite number, or None"),
        ("illegal_reward", float("nan"), "finite number, or None"),
        ("illegal_reward", True, "finite number, or None"),
        ("render_mode", "text", "None, 'human', 'ansi'"),
    ],
)
def test_gymnasium_view_rejects_bad_arguments_at_construction(name, arg, value, valid):
    gym_env = _factories(name)["gym_env"]
    with pytest.raises(ValueError, match=rf"{arg}=.* is not valid.*{re.escape(valid)}"):
        gym_env(**{arg: value})
    env = gym_env(dict_obs=np.bool_(True), illegal_reward=np.float32(-2))
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)
    assert env.illegal_reward == -2.0
