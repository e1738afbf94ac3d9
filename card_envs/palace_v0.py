"""Palace (source 000) as a PettingZoo AEC environment; see docs/games/palace.md."""

from card_envs.palace.env import SPEC, env, gym_env, raw_env
from card_envs.palace.rules import Palace

__all__ = ["SPEC", "Palace", "env", "gym_env", "raw_env"]
