"""Small API promises: the agent named in errors, and the dtypes of the two kinds of masks."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from card_envs import IllegalActionError
from card_envs.core.make import factories
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ENV_NAMES)
def test_raw_env_names_the_agent_as_the_env_does(name):
    env = factories(load_spec(name)).raw_env()
    env.reset(seed=0)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match=rf"illegal for {agent} now"):
        env.step(illegal)


def test_mask_dtypes_are_the_documented_ones():
    """int8 in observations and infos (PettingZoo's dtype), bool from action_masks()."""
    spec = load_spec("simple_tricks_v0")
    aec = factories(spec).env()
    aec.reset(seed=0)
    assert aec.observe(aec.agent_selection)["action_mask"].dtype == np.int8
    assert aec.observation_space("player_0")["action_mask"].dtype == np.int8
    gym = factories(spec).gym(dict_obs=True)
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


def test_the_learner_can_play_its_teammates_seats_and_only_theirs():
    """An opponent entry "learner" makes a teammate's seat the learner's too: its decisions
    are steps, observed (and masked) from that seat; the reward is the team's; nothing else
    may be so entered."""
    spec = load_spec("literature_v0")
    env = factories(spec).gym(num_players=4, opponent=["cautious", "learner", "cautious"])
    game, encoder = env.game, env.encoder
    seen = set()
    for episode in range(6):
        obs, info = env.reset(seed=episode)
        done, total = False, 0.0
        while not done:
            state = env.game_state
            assert env.acting == state.player and (env.acting - env.seat) % 2 == 0
            assert np.array_equal(obs, encoder.encode_state(state, env.acting))
            assert np.array_equal(env.action_masks(), game.legal_mask(state).astype(bool))
            assert info["seat"] == env.seat
            seen.add((env.acting - env.seat) % 4)
            legal = np.flatnonzero(env.action_masks())
            obs, reward, terminated, truncated, info = env.step(int(legal[episode % len(legal)]))
            total += reward
            done = terminated or truncated
        assert total == info["payoff"]  # the team's result, paid to the learner
    assert seen == {0, 2}  # its own seat and its teammate's both came up
    for bad in (["learner", "cautious", "cautious"], ["cautious", "cautious", "learner"]):
        with pytest.raises(ValueError, match=r"only for the learner's teammates: the seats 2 "
                                             r"places after the learner's; got it for the seat"):
            factories(spec).gym(num_players=4, opponent=bad)
    with pytest.raises(ValueError, match="none in this game"):
        factories(load_spec("thirty_one_v0")).gym(num_players=3, opponent="learner")


def test_teammate_places_come_from_the_games_teams():
    """The seats a learner may enter as "learner" are those the game's teams make teammates
    whatever seat it has: in Literature every second seat, in games without teams none."""
    from card_envs.core.gym_env import is_learner, teammate_places

    places = {n: teammate_places(load_spec("literature_v0").make_game(num_players=n))
              for n in (4, 6, 8)}
    assert places == {4: [2], 6: [2, 4], 8: [2, 4, 6]}
    for name in ("palace_v0", "thirty_one_v0", "simple_tricks_v0", "ninety_eight_cards_v0"):
        assert teammate_places(load_spec(name).make_game()) == []
    assert is_learner("learner") and not is_learner("heuristic") and not is_learner(None)
