"""Shared core: the Game protocol, the generic AEC and Gymnasium envs, agents, evaluation."""
