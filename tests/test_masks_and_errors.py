"""Small API promises: the agent named in errors, and the dtypes of the two kinds of masks."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from card_envs import IllegalActionError
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_raw_env_names_the_agent_as_the_env_does(name):
    env = load_spec(name).factories()[1]()
    env.reset(seed=0)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=rf"illegal for {agent} now"):
        env.step(illegal)


def test_mask_dtypes_are_the_documented_ones():
    """int8 in observations and infos (PettingZoo's dtype), bool from action_masks()."""
    spec = load_spec("simple_tricks_v0")
    aec = spec.factories()[0]()
    aec.reset(seed=0)
    assert aec.observe(aec.agent_selection)["action_mask"].dtype == np.int8
    assert aec.observation_space("player_0")["action_mask"].dtype == np.int8
    gym = spec.factories()[2](dict_obs=True)
    obs, info = gym.reset(seed=0)
    assert obs["action_mask"].dtype == np.int8 and info["action_mask"].dtype == np.int8
    assert gym.action_masks().dtype == bool
    assert (gym.action_masks() == info["action_mask"].astype(bool)).all()
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("### Action masks: int8 or bool", 1)[1].split("\n## ", 1)[0]
    int8_part, bool_part = section.split("- bool from", 1)
    assert 'info["action_mask"]' in int8_part and 'observe(agent)["action_mask"]' in int8_part
    assert "action_masks()" in bool_part and "MaskablePPO" in bool_part


def test_readme_says_how_to_get_the_cpu_build_of_torch():
    text = (ROOT / "README.md").read_text()
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in text
    quickstart = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", quickstart, re.S)
    assert all("pip install torch==2.13.0 &&" in c for c in commands)  # kept as they work here
