"""What SB3, Gymnasium, PettingZoo and SuperSuit users type first, with our ids, works.

The matrix of docs/integrations.md ("What users type"): each idiom runs as its users write it,
and each one that trains beats the random policy on the same deals in a short run (simple
tricks against the random opponent: 2000 deals, the lower 99.9% bound of the paired
difference above 0). Skipped, naming the extra, where a library is missing.
"""

from __future__ import annotations

import copy
import importlib
import importlib.metadata
import inspect
import pickle
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from card_envs.core.game import IllegalActionError
from card_envs.registry import env_names, load_spec

ROOT = Path(__file__).resolve().parents[1]
GAME, GYM_ID = "simple_tricks", "card_envs/SimpleTricks-v0"
GYM_IDS = {load_spec(name).gymnasium_id: name for name in env_names()}
EVAL_GAMES, EVAL_SEED = 2000, 900_000
# MaskablePPO settings that learn simple tricks in 10,000 steps (the default n_steps=2048 per
# env collects for a long time before its first update); the docs' snippets use these.
PPO = {"n_steps": 128, "batch_size": 256, "learning_rate": 1e-3, "gamma": 1.0, "seed": 0,
       "device": "cpu"}


def env_module(name: str):
    """``card_envs.<name>``, e.g. ``card_envs.simple_tricks_v0``."""
    return importlib.import_module(f"card_envs.{name}")


def needs(module: str, extra: str) -> None:
    """Skip the test, naming the extra that provides ``module``, when it is not installed."""
    pytest.importorskip(module, reason=f"needs the {extra} extra: pip install 'card-envs[{extra}]'")


@pytest.fixture
def one_torch_thread():
    """Small networks train fastest on one thread; later tests get the usual count back."""
    torch = pytest.importorskip("torch", reason="needs the train extra")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# --- the learning signal ----------------------------------------------------------------------
def deal_payoffs(choose: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 games: int = EVAL_GAMES, seed: int = EVAL_SEED) -> np.ndarray:
    """The learner's payoff in each of ``games`` deals of simple tricks against the random
    opponent, ``choose(obs, masks) -> actions`` playing the learner (deal i from seed + i)."""
    from card_envs.vector.gym_env import CardVectorEnv

    env = CardVectorEnv(GAME, num_envs=games, opponent="random")
    obs, _ = env.reset(seed=list(range(seed, seed + games)))
    payoffs = np.full(games, np.nan)
    while np.isnan(payoffs).any():
        obs, _, terminated, truncated, info = env.step(choose(obs, env.action_masks()))
        first = (terminated | truncated) & np.isnan(payoffs)
        if first.any():
            payoffs[first] = info["final_info"]["payoff"][first]
    return payoffs


def random_choice(seed: int = 0) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A uniformly random legal action in every game."""
    rng = np.random.default_rng(seed)
    return lambda obs, masks: np.where(masks, rng.random(masks.shape), -1.0).argmax(axis=1)


def policy_of(model) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """An SB3 model's greedy legal action (MaskablePPO on flat observations, MaskedDQN on
    ``{"observation", "action_mask"}``)."""
    if isinstance(model.observation_space, gymnasium.spaces.Dict):
        return lambda obs, masks: model.predict(
            {"observation": obs, "action_mask": masks.astype(np.int8)}, deterministic=True)[0]
    return lambda obs, masks: model.predict(obs, action_masks=masks, deterministic=True)[0]


_RANDOM_PAYOFFS: list[np.ndarray] = []


def assert_learns(model, label: str) -> None:
    """``model`` beats the random policy on the same deals: the lower 99.9% bound of the mean
    paired difference in payoff is above 0."""
    if not _RANDOM_PAYOFFS:
        _RANDOM_PAYOFFS.append(deal_payoffs(random_choice()))
    difference = deal_payoffs(policy_of(model)) - _RANDOM_PAYOFFS[0]
    mean, se = difference.mean(), difference.std(ddof=1) / np.sqrt(len(difference))
    assert mean - 3.3 * se > 0, (
        f"{label}: not better than random over {len(difference)} deals: "
        f"payoff difference {mean:+.3f} (standard error {se:.3f})"
    )


# --- render modes ------------------------------------------------------------------------------
@pytest.mark.parametrize("gym_id", list(GYM_IDS))
def test_a_gymnasium_render_mode_we_lack_warns_and_renders_nothing(gym_id):
    with pytest.warns(UserWarning, match="render_mode='rgb_array' is not offered"):
        env = gymnasium.make(gym_id, render_mode="rgb_array")
    assert env.unwrapped.render_mode is None
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert env.render() is None
    module = env_module(GYM_IDS[gym_id])
    for mode in ("rgb_array", "rgb_array_list", "depth_array"):
        with pytest.warns(UserWarning, match=f"render_mode='{mode}' is not offered"):
            assert module.raw_env(render_mode=mode).render_mode is None
    with pytest.warns(UserWarning, match="render_mode='human' is not offered by the batched"):
        gymnasium.make_vec(gym_id, num_envs=2, render_mode="human")
    assert module.env(render_mode="ansi").render_mode == "ansi"


@pytest.mark.parametrize("make", ["raw_env", "env", "gym_env", "vector"])
def test_a_render_mode_no_library_knows_is_a_typo(make):
    module = env_module("simple_tricks_v0")
    factory = {"vector": lambda **kw: gymnasium.make_vec(GYM_ID, num_envs=2, **kw)}.get(
        make) or getattr(module, make)
    with pytest.raises(ValueError, match=r"render_mode='rgb' is not valid; choose one of None"):
        factory(render_mode="rgb")


# --- Stable-Baselines3 -------------------------------------------------------------------------
@pytest.mark.parametrize("gym_id", list(GYM_IDS))
def test_sb3_make_vec_env_takes_every_id(gym_id, one_torch_thread):
    needs("sb3_contrib", "train")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*render_mode='rgb_array' is not offered")
        vec_env = make_vec_env(gym_id, n_envs=2, seed=0, env_kwargs={"illegal_reward": None})
    assert vec_env.get_attr("render_mode") == [None, None]
    model = MaskablePPO("MlpPolicy", vec_env, **{**PPO, "n_steps": 32, "batch_size": 64})
    model.learn(64)  # illegal_reward=None: an unmasked action would raise
    assert model.num_timesteps == 64


def test_sb3_make_vec_env_with_maskable_ppo_learns(one_torch_thread):
    needs("sb3_contrib", "train")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*render_mode='rgb_array' is not offered")
        vec_env = make_vec_env(GYM_ID, n_envs=4, seed=0, env_kwargs={"illegal_reward": None})
    model = MaskablePPO("MlpPolicy", vec_env, **PPO).learn(10_000)
    assert_learns(model, "make_vec_env + MaskablePPO")


def test_sb3_takes_the_id_itself(one_torch_thread):
    needs("sb3_contrib", "train")
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", GYM_ID, **{**PPO, "n_steps": 64, "batch_size": 64})
    model.learn(128)
    assert model.num_timesteps == 128


def test_what_the_library_refuses_is_what_the_docs_say():
    """Gymnasium's wrappers keep action_masks() to the env; SB3 takes no Gymnasium VectorEnv
    (docs/integrations.md, "What users type", says both and what to do)."""
    needs("sb3_contrib", "train")
    from sb3_contrib import MaskablePPO

    env = gymnasium.make(GYM_ID)
    with pytest.raises(AttributeError):
        env.action_masks  # noqa: B018
    env.reset(seed=0)
    assert env.unwrapped.action_masks().any() and env.get_wrapper_attr("action_masks")().any()
    with pytest.raises(ValueError, match="not a Gymnasium environment"):
        MaskablePPO("MlpPolicy", gymnasium.make_vec(GYM_ID, num_envs=2))
    doc = (ROOT / "docs" / "integrations.md").read_text()
    assert '"not a Gymnasium environment"' in doc and "env.unwrapped.action_masks()" in doc


def test_masked_dqn_takes_sb3s_policy_names_and_learns(one_torch_thread):
    needs("stable_baselines3", "train")
    from stable_baselines3.common.env_util import make_vec_env

    from card_envs.rl.masked_dqn import MaskedDQN, MaskedDQNPolicy

    vec_env = make_vec_env(GYM_ID, n_envs=4, seed=0,
                           env_kwargs={"dict_obs": True, "illegal_reward": None})
    model = MaskedDQN("MlpPolicy", vec_env, learning_starts=1000, exploration_fraction=0.3,
                      target_update_interval=500, learning_rate=1e-3, gamma=1.0, batch_size=64,
                      policy_kwargs={"net_arch": [64, 64]}, seed=0, device="cpu")
    assert isinstance(model.policy, MaskedDQNPolicy)
    model.learn(20_000)
    assert_learns(model, "MaskedDQN('MlpPolicy')")


def test_masked_dqn_says_what_it_needs():
    needs("stable_baselines3", "train")
    from card_envs.rl.masked_dqn import MaskedDQN

    with pytest.raises(ValueError, match="make the environment with dict_obs=True"):
        MaskedDQN("MlpPolicy", GYM_ID)
    with pytest.raises(ValueError, match="policy='CnnPolicy' is not valid for MaskedDQN; "
                                         "choose one of 'MaskedDQNPolicy', 'MlpPolicy'"):
        MaskedDQN("CnnPolicy", gymnasium.make(GYM_ID, dict_obs=True))


# --- Gymnasium vector envs ---------------------------------------------------------------------
MODES = ["sync", "async", "vector_entry_point"]


def make_vec(mode: str, num_envs: int, **kwargs) -> gymnasium.vector.VectorEnv:
    """``gymnasium.make_vec`` of simple tricks; the scalar envs raise on an illegal action
    (the batched one always does)."""
    if mode != "vector_entry_point":
        kwargs.setdefault("illegal_reward", None)
    return gymnasium.make_vec(GYM_ID, num_envs=num_envs, vectorization_mode=mode, **kwargs)


@pytest.mark.parametrize("mode", MODES)
def test_gymnasium_make_vec_with_maskable_ppo_learns(mode, one_torch_thread):
    needs("sb3_contrib", "train")
    from sb3_contrib import MaskablePPO

    from card_envs.vector.sb3 import sb3_vec_env

    envs = make_vec(mode, 4)
    try:
        model = MaskablePPO("MlpPolicy", sb3_vec_env(envs), **PPO).learn(10_000)
    finally:
        envs.close()
    assert_learns(model, f"make_vec({mode!r}) + MaskablePPO")


@pytest.mark.parametrize("dict_obs", [False, True])
@pytest.mark.parametrize("autoreset", [None, *AutoresetMode], ids=str)
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_masked_vector_env_never_shows_an_empty_mask(mode, autoreset, dict_obs):
    from card_envs.vector import MaskedVectorEnv

    vector_kwargs = {} if autoreset is None else {"autoreset_mode": autoreset}
    envs = MaskedVectorEnv(make_vec(mode, 3, dict_obs=dict_obs, vector_kwargs=vector_kwargs))
    choose, ended = random_choice(), 0
    try:
        obs, info = envs.reset(seed=0)
        for _ in range(40):
            masks = envs.action_masks()
            assert masks.any(axis=1).all(), "an all-False mask reached the policy"
            if dict_obs:
                assert np.array_equal(obs["action_mask"].astype(bool), masks)
            obs, reward, terminated, truncated, info = envs.step(choose(None, masks))
            done = terminated | truncated
            if done.any():
                ended += done.sum()
                assert np.array_equal(info["_final_obs"], done)
                final = info["final_info"]
                assert final["_payoff"][done].all() and set(final["payoff"][done]) <= {-1, 0, 1}
                if dict_obs:  # the ended games' last observations: nothing left to play
                    assert not any(o["action_mask"].any() for o in info["final_obs"][done])
    finally:
        envs.close()
    assert ended >= 6 and envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP


def test_next_step_autoreset_alone_shows_empty_masks_and_warns():
    """Why MaskedVectorEnv: Gymnasium's default for sync and async returns the ended game's
    last observation (nothing legal) and resets it on the next step."""
    envs = make_vec("sync", 2)
    envs.reset(seed=0)
    choose = random_choice()
    while True:
        masks = np.stack(envs.call("action_masks"))
        _, _, terminated, truncated, _ = envs.step(choose(None, masks))
        if (terminated | truncated).any():
            break
    with pytest.warns(UserWarning, match="wrap it in card_envs.vector.MaskedVectorEnv"):
        masks = np.stack(envs.call("action_masks"))
    assert not masks[terminated | truncated].any()


def test_sb3_vec_env_of_a_vector_env_takes_no_other_arguments():
    needs("stable_baselines3", "train")
    from card_envs.vector.sb3 import sb3_vec_env

    with pytest.raises(ValueError, match="the VectorEnv is already made"):
        sb3_vec_env(make_vec("sync", 2), num_envs=4)
    with pytest.raises(ValueError, match="give a game name .* or a Gymnasium VectorEnv"):
        sb3_vec_env(gymnasium.make(GYM_ID))


# --- PettingZoo and SuperSuit ------------------------------------------------------------------
def first_legal(mask: np.ndarray) -> int:
    """The lowest legal action (0 where nothing is legal)."""
    return int(np.argmax(mask))


def play_parallel(env, seed: int = 0) -> dict[str, float]:
    """One game of a Parallel env, every agent playing its first legal action (action 0 for
    the agents not on turn: their masks are all zeros, and the conversion ignores them)."""
    observations, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {a: first_legal(observations[a]["action_mask"]) for a in env.agents}
        observations, rewards, *_ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    return returns


@pytest.mark.parametrize("name", env_names())
def test_turn_based_aec_to_parallel_passes_the_parallel_api_test(name):
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    module = env_module(name)
    for make in (module.raw_env, module.env):
        parallel_api_test(turn_based_aec_to_parallel(make()), num_cycles=100)
    returns = play_parallel(turn_based_aec_to_parallel(module.raw_env()))
    assert set(returns) == set(module.raw_env().possible_agents)


def play_aec(env, seed: int = 0) -> dict[str, float]:
    """One game of an AEC env, each agent playing its first legal action."""
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        env.step(None if termination or truncation else first_legal(obs["action_mask"]))
    return returns


def float16_observation(env):
    """SuperSuit's observation_lambda_v0 changing only the "observation" entry's dtype: how a
    Box-observation wrapper applies to our Dict observations."""
    import supersuit

    def space(space):
        inner = space["observation"]
        return gymnasium.spaces.Dict({**space.spaces, "observation": gymnasium.spaces.Box(
            inner.low.astype(np.float16), inner.high.astype(np.float16),
            inner.shape, np.float16)})

    return supersuit.observation_lambda_v0(
        env, lambda obs, _: {**obs, "observation": obs["observation"].astype(np.float16)}, space)


def supersuit_wrappers():
    """The SuperSuit wrappers that apply to Dict observations, each with its arguments."""
    import supersuit

    return {
        "clip_reward_v0": lambda env: supersuit.clip_reward_v0(env, -0.5, 0.5),
        "reward_lambda_v0": lambda env: supersuit.reward_lambda_v0(env, lambda r: 2 * r),
        "pad_action_space_v0": supersuit.pad_action_space_v0,
        "observation_lambda_v0": float16_observation,
    }


@pytest.mark.parametrize("wrapper", ["clip_reward_v0", "reward_lambda_v0",
                                     "pad_action_space_v0", "observation_lambda_v0"])
@pytest.mark.parametrize("form", ["aec", "parallel"])
def test_supersuit_wrappers_for_any_observation_work(wrapper, form):
    needs("supersuit", "test")
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    wrap = supersuit_wrappers()[wrapper]
    raw = env_module("simple_tricks_v0").raw_env  # raises on an illegal action
    plain = play_aec(raw()) if form == "aec" else play_parallel(turn_based_aec_to_parallel(raw()))
    if form == "aec":
        returns = play_aec(wrap(raw()))
    else:
        returns = play_parallel(wrap(turn_based_aec_to_parallel(raw())))
    scale = {"clip_reward_v0": 0.5, "reward_lambda_v0": 2.0}.get(wrapper, 1.0)
    assert returns == {a: scale * r for a, r in plain.items()}  # the same game, same seed
    if wrapper == "observation_lambda_v0":
        env = wrap(raw())
        env.reset(seed=0)
        assert env.observe("player_0")["observation"].dtype == np.float16


# Box-only wrappers fail on Dict observations with SuperSuit's own error; wrappers that replay
# or delay actions or observations make the agent act on a stale mask, which raw_env refuses.
BOX_ONLY = ["dtype_v0", "normalize_obs_v0", "flatten_v0", "frame_stack_v1",
            "agent_indicator_v0", "pad_observations_v0", "color_reduction_v0"]
STALE_MASK = ["sticky_actions_v0", "delay_observations_v0", "frame_skip_v0"]


@pytest.mark.parametrize("wrapper", BOX_ONLY + STALE_MASK)
def test_supersuit_wrappers_that_do_not_apply_fail_as_documented(wrapper):
    needs("supersuit", "test")
    import supersuit

    args = {"dtype_v0": (np.float16,), "frame_stack_v1": (2,), "sticky_actions_v0": (0.9,),
            "delay_observations_v0": (1,), "frame_skip_v0": (2,)}.get(wrapper, ())
    doc = (ROOT / "docs" / "integrations.md").read_text()
    assert f"`{wrapper}`" in doc, f"docs/integrations.md does not say {wrapper} fails"
    make = getattr(supersuit, wrapper)
    if wrapper in BOX_ONLY:
        with pytest.raises((AttributeError, AssertionError)) as caught:
            play_aec(make(env_module("simple_tricks_v0").raw_env(), *args))
        if caught.type is AttributeError:  # a Box's bounds asked for: ours says where they are
            assert "apply a Box-only wrapper to the 'observation' entry" in str(caught.value)
    else:
        with pytest.raises(IllegalActionError):
            for seed in range(20):
                play_aec(make(env_module("simple_tricks_v0").raw_env(), *args), seed)


@pytest.mark.parametrize("wrapper", ["dtype_v0", "normalize_obs_v0", "frame_stack_v1"])
def test_supersuit_box_wrappers_apply_to_the_gymnasium_view(wrapper):
    needs("supersuit", "test")
    import supersuit

    args = {"dtype_v0": (np.float16,), "frame_stack_v1": (2,)}.get(wrapper, ())
    env = getattr(supersuit, wrapper)(gymnasium.make(GYM_ID, illegal_reward=None), *args)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    done = False
    while not done:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, _, terminated, truncated, info = env.step(int(legal[0]))
        done = terminated or truncated
    assert "payoff" in info


# --- pickling and copies -----------------------------------------------------------------------
def _aec_trace(env, steps: int) -> list:
    trace = []
    for agent in env.agent_iter(steps):
        obs, reward, termination, truncation, _ = env.last()
        trace.append((agent, obs["observation"].tolist(), reward))
        env.step(None if termination or truncation else first_legal(obs["action_mask"]))
    return trace


def _gym_trace(env, steps: int) -> list:
    trace = []
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(
            int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        trace.append((obs.tolist(), reward))
        if terminated or truncated:
            env.reset()
    return trace


def _parallel_trace(env, steps: int) -> list:
    trace = []
    for _ in range(steps):
        if not env.agents:
            env.reset()
        observations = {a: env.aec_env.observe(a) for a in env.agents}
        actions = {a: first_legal(o["action_mask"]) for a, o in observations.items()}
        _, rewards, *_ = env.step(actions)
        trace.append(sorted(rewards.items()))
    return trace


def _vector_trace(env, steps: int) -> list:
    trace = []
    for _ in range(steps):
        obs, reward, *_ = env.step(env.action_masks().argmax(axis=1))
        trace.append((obs.tolist(), reward.tolist()))
    return trace


def _sb3_trace(vec_env, steps: int) -> list:
    trace = []
    for _ in range(steps):
        masks = np.stack(vec_env.env_method("action_masks"))
        obs, reward, *_ = vec_env.step(masks.argmax(axis=1))
        trace.append((obs.tolist(), reward.tolist()))
    return trace


def _forms():
    """(name, make a started env, play ``steps`` steps returning what was seen)."""
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    module = env_module("thirty_one_v0")  # the deck and the opponents draw from the env's generator

    def started(env, **reset):
        env.reset(seed=3, **reset)
        return env

    def sb3():
        needs("stable_baselines3", "train")
        from card_envs.vector.sb3 import sb3_vec_env

        vec_env = sb3_vec_env("thirty_one", num_envs=8, monitor=False)  # VecMonitor: below
        vec_env.seed(3)
        vec_env.reset()
        return vec_env

    def masked():
        from card_envs.vector import MaskedVectorEnv

        return started(MaskedVectorEnv(gymnasium.make_vec("card_envs/ThirtyOne-v0", num_envs=8)))

    return {
        "raw_env": (lambda: started(module.raw_env()), _aec_trace),
        "env": (lambda: started(module.env()), _aec_trace),
        "gym_env": (lambda: started(module.gym_env(opponent="random")), _gym_trace),
        "gymnasium.make": (lambda: started(gymnasium.make("card_envs/ThirtyOne-v0")), _gym_trace),
        "parallel": (lambda: started(turn_based_aec_to_parallel(module.raw_env())),
                     _parallel_trace),
        "make_vec (batched)": (lambda: started(
            gymnasium.make_vec("card_envs/ThirtyOne-v0", num_envs=8, opponent="random")),
            _vector_trace),
        "MaskedVectorEnv (batched)": (masked, _vector_trace),
        "sb3_vec_env (batched)": (sb3, _sb3_trace),
    }


@pytest.mark.parametrize("form", ["raw_env", "env", "gym_env", "gymnasium.make", "parallel",
                                  "make_vec (batched)", "MaskedVectorEnv (batched)",
                                  "sb3_vec_env (batched)"])
def test_every_env_form_pickles_and_deep_copies_mid_game(form):
    make, trace = _forms()[form]
    env = make()
    trace(env, 5)
    copies = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    expected = trace(env, 30)  # the original goes on; each copy goes on exactly alike
    for other in copies:
        assert trace(other, 30) == expected


def test_sb3s_vec_monitor_does_not_pickle_as_documented():
    needs("stable_baselines3", "train")
    from card_envs.vector.sb3 import sb3_vec_env

    with pytest.raises(TypeError, match="mappingproxy"):  # SB3's VecEnvWrapper, any env
        pickle.dumps(sb3_vec_env("thirty_one", num_envs=2))
    assert "`monitor=False`" in (ROOT / "docs" / "integrations.md").read_text()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_gymnasiums_own_vector_envs_refuse_pickling_clearly_when_wrapped(mode):
    from card_envs.vector import MaskedVectorEnv

    envs = MaskedVectorEnv(make_vec(mode, 2))
    try:
        for clone in (pickle.dumps, copy.deepcopy):
            with pytest.raises(TypeError, match=f"Gymnasium's {mode.title()}VectorEnv .*: "
                                                "pickle the batched env"):
                clone(envs)
    finally:
        envs.close()


# --- the versions CI tests -----------------------------------------------------------------------
VERSIONS = re.compile(r"<!-- BEGIN VERSIONS.*?-->\n(.*?)<!-- END VERSIONS -->", re.S)


def installed_versions_table(packages: list[str]) -> str:
    """The docs' table of tested versions for what is installed here (public versions)."""
    rows = [f"| Python | {sys.version_info.major}.{sys.version_info.minor} |"]
    for package in packages:
        rows.append(f"| {package} | {importlib.metadata.version(package).split('+')[0]} |")
    return "\n".join(["| package | version |", "|---|---|", *rows]) + "\n"


def test_the_tested_versions_table_is_what_is_installed():
    text = (ROOT / "docs" / "integrations.md").read_text()
    table = VERSIONS.search(text).group(1)
    packages = re.findall(r"^\| ([\w.-]+) \| ", table, re.M)[2:]  # after the header, Python
    missing = []
    for package in packages:
        try:
            importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            missing.append(package)
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: CI installs .[train,test,web,rllib]")
    assert table == installed_versions_table(packages), (
        "docs/integrations.md: the tested versions differ from the installed ones; "
        "paste tests.test_idioms.installed_versions_table(...) printed here:\n"
        + installed_versions_table(packages)
    )


def test_masked_vector_env_is_documented_where_users_look():
    """The docs name the wrapper and say why, and its module says what it does."""
    from card_envs.vector import masks

    for page in ("integrations.md", "vector.md"):
        assert "MaskedVectorEnv" in (ROOT / "docs" / page).read_text(), page
    assert "NEXT_STEP" in inspect.getdoc(masks)
