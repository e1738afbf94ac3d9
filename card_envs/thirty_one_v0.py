"""Thirty-One (source 001) as a PettingZoo AEC environment; see docs/games/thirty_one.md."""

from card_envs.thirty_one.env import SPEC, env, gym_env, raw_env
from card_envs.thirty_one.rules import ThirtyOne

__all__ = ["SPEC", "ThirtyOne", "env", "gym_env", "raw_env"]
