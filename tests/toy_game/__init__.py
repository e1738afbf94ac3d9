"""High card: a toy game that lives under tests/ to show that a game is one folder.

tests/test_toy_game.py registers it (``card_envs.registry.register_game``) only while its
tests run, then puts every generic check of the test suite, the CLI, the benchmark, the golden
traces and the docs tables through it.
"""
