"""The card-envs command line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from card_envs.cli import main
from tests.conftest import ENV_NAMES


def test_list_shows_every_env(capsys):
    assert main(["list", "-v"]) == 0
    out = capsys.readouterr().out
    for name in ENV_NAMES:
        assert name in out
    assert "card_envs/SimpleTricks-v0" in out and "first_play" in out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:6]}
    assert rows["literature_v0"] == "4,6,8" and rows["thirty_one_v0"] == "2-7"


def test_evaluate_prints_rates(capsys):
    assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "20"]) == 0
    out = capsys.readouterr().out
    assert "20 games, seed 0" in out and "heuristic@0: win" in out


def test_evaluate_rejects_bad_names(capsys):
    assert main(["evaluate", "simple_tricks", "wizard"]) == 2
    assert "unknown agent 'wizard'" in capsys.readouterr().err
    assert main(["evaluate", "ninety_eight_cards", "greedy", "--set", "rules=seed"]) == 2
    assert "rules='seed' is not valid" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,says",
    [
        (["evaluate", "nosuchgame", "random"], "unknown game 'nosuchgame'; choose one of"),
        (["evaluate", "simple_tricks", "wizard"], "choose one of random, first_play"),
        (["evaluate", "simple_tricks", "random", "--games", "-5"], "--games -5"),
        (["evaluate", "simple_tricks", "random", "--games", "0"], "positive number"),
        (["evaluate", "palace", "heuristic", "random", "random", "--duplicate"],
         "two-player game"),
        (["evaluate", "literature", "random", "--duplicate"], "two-player game"),
        (["evaluate", "ninety_eight_cards", "greedy", "--duplicate"], "two-player game"),
        (["evaluate", "simple_tricks", "random", "random", "random"], "has 2 seats, got 3"),
        (["evaluate", "palace", "a", "b", "c", "d", "e", "f"], "for 2, 3, 4, 5 players"),
        (["evaluate", "literature", "random", "random", "random"], "for 4, 6, 8 players"),
        (["evaluate", "thirty_one", "greedy", "greedy", "greedy", "--set", "num_players=4"],
         "has 4 seats here (--set num_players=4), got 3 agents"),
        (["evaluate", "ninety_eight_cards", "greedy", "greedy"], "has 1 seat, got 2"),
        (["evaluate", "simple_tricks", "random", "--set", "num_values"], "KEY=VALUE"),
        (["evaluate", "simple_tricks", "random", "--set", "players=3"], "num_values"),
        (["evaluate", "literature", "random", "--set", "num_players=5"], "4, 6, 8"),
        (["evaluate", "simple_tricks", "random", "--games", "many"], "invalid int value"),
        (["evaluate"], "the following arguments are required"),
    ],
)
def test_evaluate_user_errors_are_one_line_and_exit_2(argv, says, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert says in lines[0] and "Traceback" not in captured.err


def _evaluate(capsys, *argv: str) -> str:
    assert main(["evaluate", *argv]) == 0
    return capsys.readouterr().out


def test_evaluate_explains_name_at_seat_once_and_the_score(capsys):
    out = _evaluate(capsys, "simple_tricks", "heuristic", "random", "--games", "10")
    assert out.count("name@k") == 1 and "seat k" in out
    assert "score = tricks won" in out
    out = _evaluate(capsys, "thirty_one", "greedy", "random", "--games", "10", "--no-rotate")
    assert out.count("name@k") == 1 and "seat k in every game" in out
    assert "score = lives left" in out
    out = _evaluate(capsys, "simple_tricks", "heuristic", "random", "--games", "5", "--duplicate")
    assert out.count("name@k") == 1 and "played twice" in out
    assert "score = tricks won (both games of a pair added)" in out
    out = _evaluate(capsys, "ninety_eight_cards", "greedy", "--games", "3")
    assert "score = cards played" in out and "greedy: win" in out and "@" not in out


def test_evaluate_team_games_report_per_team(capsys):
    out = _evaluate(capsys, "literature", "heuristic", "random", "--games", "12")
    assert "6 seats, two agents: heuristic plays one seat, random the other 5" in out
    assert "team A (heuristic@0, random@2, random@4): win" in out
    assert "team B (random@1, random@3, random@5): win" in out
    assert not any(line.startswith("random@") for line in out.splitlines())
    assert "score = half-suits won by the team" in out


def _players(out: str) -> int:
    return int(out.split("num_players=")[1].split(",")[0])


def test_evaluate_takes_the_player_count_from_the_agents_listed(capsys):
    out = _evaluate(capsys, "thirty_one", "greedy", "random", "--games", "4")
    assert _players(out) == 2 and "greedy@0" in out and "@2" not in out
    out = _evaluate(capsys, "literature", "heuristic", "cautious", "heuristic", "cautious",
                    "--games", "4")
    assert _players(out) == 4
    assert "team A (heuristic@0, heuristic@2): win" in out
    assert "team B (cautious@1, cautious@3): win" in out
    # the count given wins; one agent plays every seat
    out = _evaluate(capsys, "thirty_one", "greedy", "random", "random", "--set",
                    "num_players=3", "--games", "4")
    assert _players(out) == 3 and "two agents" not in out
    out = _evaluate(capsys, "palace", "heuristic", "--games", "2")
    assert _players(out) == 3 and out.count("heuristic@") == 3
    # two agents for more seats: one seat against the rest, said on a line
    out = _evaluate(capsys, "thirty_one", "greedy", "random", "--set", "num_players=4",
                    "--games", "4")
    assert "4 seats, two agents: greedy plays one seat, random the other 3" in out
    assert "random@3" in out


def test_evaluate_keeps_the_count_a_trained_model_plays(capsys):
    """A list whose length is a count no listed model plays falls back to the game's count
    (Palace's model plays three players); a list that would then not fill the seats is
    refused with the reason the listed count failed."""
    pytest.importorskip("sb3_contrib", reason="trained models need the train extra")
    out = _evaluate(capsys, "palace", "best", "random", "--games", "2")
    assert _players(out) == 3
    assert "3 seats, two agents: best plays one seat, random the other 2" in out
    assert main(["evaluate", "literature", "best", "heuristic", "best", "heuristic",
                 "--games", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "num_players=4" in err[0], err


def test_evaluate_palace_reports_losses_and_places(capsys):
    out = _evaluate(capsys, "palace", "lowest_first", "random", "random", "--games", "30")
    rows = [line for line in out.splitlines() if line.startswith(("lowest_first@", "random@"))]
    assert len(rows) == 3
    assert all(": lost " in r and "places 1st" in r and "3rd" in r for r in rows)
    assert not any(" win " in r for r in rows)
    assert "the last player left holding cards" in out
    # one loser a game (players tied at the step cap share it): the losses add up to about
    # 100%, not to the 190% that "wins" meaning "not last" gave
    lost = sum(float(r.split(": lost ")[1].split("%")[0]) for r in rows)
    cut = int(out.split(" cut by the step cap")[0].rsplit(" ", 1)[1])
    assert 100 - 0.2 <= lost <= 100 * (30 + cut) / 30 + 0.2


def test_evaluate_score_intervals_stay_inside_the_range(capsys):
    # random players in 3-player Thirty-One end with about 0 lives: the interval used to dip
    # below 0 lives
    out = _evaluate(
        capsys, "thirty_one", "greedy", "random", "--games", "50", "--set", "num_players=3"
    )
    for line in out.splitlines():
        if "@" in line and "mean score" in line:
            low = float(line.split("mean score ")[1].split("[")[1].split(",")[0])
            assert low >= 0.0, line


def test_models_play_with_one_torch_thread_unless_the_user_says():
    """The CLI plays a model one position at a time: one torch thread, unless OMP_NUM_THREADS
    is set (a second thread only fights the games on the 2-core machines the docs' timings
    come from)."""
    pytest.importorskip("torch")
    code = ("from card_envs.cli import main; "
            "main(['evaluate', 'simple_tricks', 'best', 'random', '--games', '2']); "
            "import torch; print('threads', torch.get_num_threads())")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "threads 1"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_NUM_THREADS": "2"},
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "threads 2"
