"""Baselines for card-envs: train MaskablePPO and masked DQN, evaluate, reproduce the table.

    python -m baselines.train --env thirty_one_v0 --algo maskable_ppo --opponent greedy
    python -m baselines.evaluate MODEL --env thirty_one_v0 --opponent greedy
    python -m baselines.reproduce --budget quick

Needs the ``train`` extra. Trained models ship in ``card_envs/rl/models/``.
"""
