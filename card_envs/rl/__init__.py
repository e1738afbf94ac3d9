"""Learning-side helpers (need the ``train`` extra: torch, stable-baselines3, sb3-contrib).

- ``masked_dqn.MaskedDQN``: SB3's DQN with the action mask applied when acting greedily,
  when exploring (also during warm-up) and in the target's max over next actions.
- ``policy_agent``: trained models as agents (``act(view, rng)``), saving and loading models
  with their metadata, and the shipped models (``best``).

Importing ``card_envs`` never imports this package.
"""
