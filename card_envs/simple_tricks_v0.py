"""Simple tricks (source 003) as a PettingZoo AEC environment; see docs/games/simple_tricks.md."""

from card_envs.simple_tricks.env import SPEC, env, gym_env, raw_env
from card_envs.simple_tricks.rules import SimpleTricks

__all__ = ["SPEC", "SimpleTricks", "env", "gym_env", "raw_env"]
