"""The card-envs command line."""

from __future__ import annotations

from card_envs.cli import main
from tests.conftest import ENV_NAMES


def test_list_shows_every_env(capsys):
    assert main(["list", "-v"]) == 0
    out = capsys.readouterr().out
    for name in ENV_NAMES:
        assert name in out
    assert "card_envs/SimpleTricks-v0" in out and "first_play" in out


def test_evaluate_prints_rates(capsys):
    assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "20"]) == 0
    out = capsys.readouterr().out
    assert "20 games, seed 0" in out and "heuristic@0: win" in out


def test_evaluate_rejects_bad_names(capsys):
    assert main(["evaluate", "simple_tricks", "wizard"]) == 2
    assert "unknown agent 'wizard'" in capsys.readouterr().err
    assert main(["evaluate", "ninety_eight_cards", "greedy", "--set", "rules=seed"]) == 2
    assert "rules='seed' is not valid" in capsys.readouterr().err
