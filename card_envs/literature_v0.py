"""Literature (source 002) as a PettingZoo AEC environment; see docs/games/literature.md."""

from card_envs.literature.env import SPEC, env, gym_env, raw_env
from card_envs.literature.rules import Literature

__all__ = ["SPEC", "Literature", "env", "gym_env", "raw_env"]
