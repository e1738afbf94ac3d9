"""98 Cards (source 004) as a one-agent PettingZoo AEC environment and a Gymnasium environment.

See docs/games/ninety_eight_cards.md.
"""

from card_envs.ninety_eight_cards.env import SPEC, env, gym_env, raw_env
from card_envs.ninety_eight_cards.rules import NinetyEightCards

__all__ = ["SPEC", "NinetyEightCards", "env", "gym_env", "raw_env"]
