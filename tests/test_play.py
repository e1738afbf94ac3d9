"""card-envs play: whole games of every game driven through the command with piped input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from card_envs.play import parse_move, rules_help
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

RESULTS = (
    "You win!",
    "You lose.",
    "A draw.",
    "Game over.",
    "You won: every card played!",
    "stopped at its step cap",
)


def _play(
    args: list[str], lines: list[str], ascii_only: bool = True
) -> subprocess.CompletedProcess:
    env = {"PYTHONIOENCODING": "utf-8", "PATH": ""}
    if ascii_only:
        env["CARD_ENVS_ASCII"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "card_envs.cli", "play", *args],
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_whole_game_through_a_pipe(name):
    # nonsense first, then the rules, then always the first listed move; "n" ends the session
    lines = ["hello", "0", "999", "?", *["1"] * 3000]
    out = _play([name, "--seed", "0", "--opponent", "random"], lines)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Your moves:" in text and "  1. " in text
    assert "'hello' is not a legal move now" in text
    assert "0 is not on the list" in text and "999 is not on the list" in text
    spec = load_spec(name)
    first_line = rules_help(spec.make_game()).strip().splitlines()[0]
    assert first_line in text, "? shows the rules"
    assert any(r in text for r in RESULTS), text[-2000:]
    assert "Play again? [y/N]" in text
    assert "\u2660" not in text and "\u2665" not in text, "ASCII requested: no suit symbols"
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("name", ENV_NAMES)
def test_watch_agents_play_with_a_delay(name):
    out = _play([name, "--watch", "--delay", "0", "--seed", "1", "--opponent", "random"], ["n"])
    assert out.returncode == 0, out.stderr
    assert ">> player_0: " in out.stdout
    assert any(r in out.stdout for r in RESULTS)


def test_quit_mid_game_and_suit_symbols():
    out = _play(["simple_tricks", "--seed", "0"], ["1", "q"], ascii_only=False)
    assert out.returncode == 0 and "Bye." in out.stdout
    assert "\u2660" in out.stdout or "\u2665" in out.stdout


def test_end_of_input_quits_cleanly():
    out = _play(["thirty_one", "--seed", "0", "--players", "2"], [])
    assert out.returncode == 0 and "Bye." in out.stdout


def test_best_falls_back_and_says_so_or_loads_a_model():
    out = _play(["simple_tricks", "--seed", "0"], ["q"])
    assert out.returncode == 0
    assert "player_1 best" in out.stdout or "playing against the `heuristic` agent" in out.stdout


def test_bad_arguments():
    out = _play(["simple_tricks", "--seat", "5"], [])
    assert out.returncode == 2 and "--seat 5 is not a seat" in out.stderr
    out = _play(["palace", "--players", "9"], [])
    assert out.returncode == 2 and "num_players=9 is not valid" in out.stderr
    out = _play(["chess"], [])
    assert out.returncode == 2 and "unknown game 'chess'" in out.stderr


def test_parse_move_by_number_name_or_short_name():
    moves = [(3, "play 9 9"), (7, "pick up the pile"), (9, "play 9")]
    assert parse_move("1", moves) == (3, "")
    assert parse_move("  PLAY 9   9 ", moves) == (3, "")
    assert parse_move("9 9", moves) == (3, "")
    assert parse_move("pick up the pile", moves) == (7, "")
    assert parse_move("up the pile", moves) == (7, "")
    assert parse_move("play 9", moves) == (9, "")
    assert parse_move("4", moves)[0] is None
    assert parse_move("", moves)[0] is None
    assert "not a legal move" in parse_move("knock", moves)[1]


def test_parse_move_ignores_details_and_suit_symbols():
    moves = [
        (3, "place in slot 0: 8\u2665 for K\u2666 (score 18)"),
        (6, "discard drawn card (8\u2665)"),
        (12, "ask player_1 for Q\u2665"),
    ]
    assert parse_move("place in slot 0", moves) == (3, "")
    assert parse_move("slot 0", moves)[0] is None  # only the first word may be left out
    assert parse_move("discard drawn card", moves) == (6, "")
    assert parse_move("ask player_1 for qh", moves) == (12, "")
