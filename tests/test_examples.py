"""The integration examples run for real, briefly, and their results hold up.

Each example trains on a strict environment (``raw_env()`` or ``illegal_reward=None``) that
raises on an illegal action, so finishing at all proves the library applied our action mask.
Each test is skipped, saying which extra to install, when its library is missing.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
INTEGRATIONS_DOC = ROOT / "docs" / "integrations.md"


def needs(module: str, extra: str) -> None:
    """Skip the test, naming the extra that provides ``module``, when it is not installed."""
    pytest.importorskip(module, reason=f"needs the {extra} extra: pip install 'card-envs[{extra}]'")


def example(name: str):
    """Import ``examples/<name>.py`` (the folder is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"examples_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    # Registered while it runs (dataclasses look their module up), then forgotten like a
    # script's __main__: Ray and SubprocVecEnv workers, which cannot import it, get its
    # functions by value, as they do when the example runs as a script.
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.fixture(autouse=True)
def torch_threads_restored():
    """The examples run torch on one thread; later tests get the usual count back."""
    torch = sys.modules.get("torch")
    threads = torch.get_num_threads() if torch else None
    yield
    if threads is not None:
        torch.set_num_threads(threads)


def test_sb3_maskable_ppo_in_subprocesses_beats_random_on_duplicate_deals():
    needs("sb3_contrib", "train")
    sb3 = example("sb3_subproc_maskable_ppo")
    result = sb3.main(timesteps=20_000, envs=2, pairs=200)
    learner, random = result.tallies
    assert learner.games == random.games == 200
    _, low, _ = learner.decided()
    assert low > 0.5, f"not clearly better than random: {learner.summary()}"


# 0 env runners samples in this process; 1 samples in a Ray actor, as env runners do on a cluster.
@pytest.mark.parametrize("env_runners", [0, 1])
def test_rllib_shared_policy_ppo_trains_an_iteration_on_every_seat(env_runners):
    needs("ray.rllib", "rllib")
    rllib = example("rllib_multiagent_ppo")
    [result] = rllib.main(iterations=1, num_players=3, env_runners=env_runners, batch=400)
    sampled = result["env_runners"]
    assert sampled["num_env_steps_sampled_lifetime"] >= 400
    assert sampled["num_episodes_lifetime"] >= 1
    per_seat = sampled["agent_episode_returns_mean"]
    assert set(per_seat) == {"player_0", "player_1", "player_2"}
    assert all(-1.0 <= r <= 1.0 for r in per_seat.values())
    # Thirty-One is zero-sum: a seat's final reward lost between env and RLlib would show here.
    assert math.isclose(sampled["episode_return_mean"], 0.0, abs_tol=1e-6)
    assert set(result["learners"]) == {"__all_modules__", rllib.SHARED_POLICY}
    shared = result["learners"][rllib.SHARED_POLICY]
    assert shared["num_module_steps_trained"] > 0 and np.isfinite(shared["total_loss"])


def test_tianshou_multiagent_dqn_collects_and_updates_with_masks():
    needs("tianshou", "tianshou")
    tianshou = example("tianshou_multiagent")
    outcome = tianshou.train_and_test(epochs=1, epoch_steps=1000, test_episodes=50)
    assert outcome.training_env_steps >= 1000 and outcome.training_episodes >= 40
    assert outcome.learner_moved > 0, "the learner's weights never changed"
    returns = outcome.test.returns
    assert returns.shape == (50, 2)
    # Every test deal pays +1/-1 or 0/0 to the two seats: both seats' rewards reach Tianshou.
    assert set(np.unique(returns)) <= {-1.0, 0.0, 1.0}
    assert np.all(returns.sum(axis=1) == 0)


def test_rlcard_dqn_learns_to_beat_random():
    needs("rlcard", "rlcard")
    needs("torch", "rlcard")  # RLCard itself installs without torch; its DQN needs it
    rlcard = example("rlcard_dqn")
    outcome = rlcard.main(episodes=600, test_episodes=400)
    assert outcome.moves_fed == 600 * 10 and outcome.gradient_steps > 0
    assert outcome.mean_payoff == pytest.approx(-outcome.random_mean_payoff)
    # Random against random is within 0.02 of 0 either way (seat 0 leads first).
    assert outcome.mean_payoff > 0.1


def _snippets(text: str) -> list[tuple[str, str]]:
    """(example file, code) of each python block after a ``<!-- from examples/X.py -->`` line."""
    pattern = r"<!-- from (examples/\S+\.py) -->\s*```python\n(.*?)```"
    return re.findall(pattern, text, re.S)


def test_integration_doc_snippets_are_the_examples_code():
    # A snippet may leave lines out ("...") and add comments; its code lines are the example's.
    snippets = _snippets(INTEGRATIONS_DOC.read_text())
    # an example a page includes whole (the site's snippet include) is shown there as it is
    included = {path for page in (ROOT / "docs").glob("*.md")
                for path in re.findall(r'--8<-- "(examples/\S+\.py)"', page.read_text())}
    assert {path for path, _ in snippets} | included == {
        f"examples/{p.name}" for p in EXAMPLES.glob("*.py")
    }, "every example has a snippet in docs/integrations.md (or is included whole in a page)"
    for path, code in snippets:
        source = {line.strip() for line in (ROOT / path).read_text().splitlines()}
        for line in code.splitlines():
            if line.strip() and line.strip() != "..." and not line.lstrip().startswith("#"):
                assert line.strip() in source, f"docs/integrations.md: not in {path}: {line!r}"


# --- every other code block of the pages about using the envs runs, and what trains learns ------
DOC_PAGES = [("docs/integrations.md", None), ("docs/vector.md", None),
             ("README.md", "## Using the environments")]
OPTIONAL = {"sb3_contrib", "stable_baselines3", "torch", "numba", "supersuit", "ray"}
BLOCK = re.compile(r"(<!-- from examples/\S+\.py -->\s*)?```(\w*)\n(.*?)```", re.S)


def _page_blocks() -> list[tuple[str, int, str, str, bool]]:
    """(page, number, language, code, taken from an example) of each fenced block."""
    out = []
    for page, section in DOC_PAGES:
        text = (ROOT / page).read_text()
        if section:
            text = text.split(section, 1)[1].split("\n## ", 1)[0]
        for k, m in enumerate(BLOCK.finditer(text)):
            out.append((page, k, m.group(2), m.group(3), bool(m.group(1))))
    return out


def test_the_pages_hold_python_blocks_and_printed_output_only():
    # a shell command that needs a cluster or a long run goes in the text, not in a block
    for page, k, language, _, _ in _page_blocks():
        assert language in ("python", "text"), f"{page}: block {k} is {language or 'unmarked'}"


def _runnable_blocks():
    return [pytest.param(page, code, id=f"{page}:{k}:{code.strip().splitlines()[-1][:40]}")
            for page, k, language, code, from_example in _page_blocks()
            if language == "python" and not from_example]


@pytest.mark.parametrize("page,code", _runnable_blocks())
def test_every_python_block_runs_and_what_trains_learns(page, code):
    """Each block as a reader would paste it, in a fresh namespace; a block that leaves a
    trained ``model`` must beat the random policy with the block's own settings."""
    from tests.test_idioms import assert_learns

    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(1)  # small networks; restored by the fixture above
    namespace: dict = {"__name__": "doc_block"}
    try:
        exec(compile(code, page, "exec"), namespace)
    except ModuleNotFoundError as missing:
        if (missing.name or "").split(".")[0] not in OPTIONAL:
            raise
        pytest.skip(f"needs {missing.name} (pip install 'card-envs[train,test]')")
    model = namespace.get("model")
    if hasattr(model, "policy"):
        assert_learns(model, f"{page}: the block ending {code.strip().splitlines()[-1]!r}")
