"""card-envs play: whole games of every game driven through the command with piped input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from card_envs.core.text import parse_move, rules_page
from card_envs.play import move_table
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
    first_line = rules_page(spec).strip().splitlines()[0]
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


@pytest.mark.parametrize(
    "args,says",
    [
        (["simple_tricks", "--seat", "5"], "--seat 5 is not a seat of simple_tricks_v0: choose 0"),
        (["palace", "--players", "9"], "--players 9 is not valid for palace_v0: choose one of 2"),
        (["simple_tricks", "--players", "3"], "it is played by 2 players only"),
        (["ninety_eight_cards", "--players", "2"], "it is played by 1 player only"),
        (["chess"], "unknown game 'chess'; choose one of simple_tricks_v0"),
        (["palace", "--opponent", "wizard"], "choose one of random, lowest_first, heuristic"),
        (["palace", "--set", "swap"], "KEY=VALUE"),
        (["palace", "--set", "colour=red"], "valid arguments: num_players, swap_phase"),
        (["palace", "--watch", "--delay", "-1"], "--delay -1.0: give seconds >= 0"),
        (["palace", "--seat", "x"], "invalid int value: 'x'"),
    ],
)
def test_bad_arguments_get_one_line_naming_the_valid_choices(args, says):
    out = _play(args, [])
    assert out.returncode == 2, out
    assert out.stdout == "" and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and says in out.stderr, out.stderr
    assert "unknown argument 'num_players'" not in out.stderr


def test_parse_move_by_number_name_or_short_name():
    moves = [(3, "play 9 9"), (7, "pick up the pile"), (9, "play 9")]
    assert parse_move("1", moves) == (3, "")
    assert parse_move("  PLAY 9   9 ", moves) == (3, "")
    assert parse_move("9 9", moves) == (3, "")
    assert parse_move("pick up the pile", moves) == (7, "")
    assert parse_move("up the pile", moves) == (7, "")
    assert parse_move("pick up", moves) == (7, "")
    assert parse_move("play 9", moves) == (9, "")
    assert parse_move("4", moves)[0] is None
    assert parse_move("", moves)[0] is None
    assert "not a legal move" in parse_move("knock", moves)[1]
    # digits that int() refuses or reads otherwise (found by test_mcp's fuzzing): a refusal
    for odd in ("\u00b2", "\u0661", "\uff11"):
        assert parse_move(odd, moves)[0] is None



def test_parse_move_ignores_details_and_suit_symbols():
    moves = [
        (3, "place in slot 0: 8\u2665 for K\u2666 (score 18)"),
        (6, "discard drawn card (8\u2665)"),
        (12, "ask player_1 for Q\u2665"),
    ]
    assert parse_move("place in slot 0", moves) == (3, "")
    assert parse_move("discard drawn card", moves) == (6, "")
    assert parse_move("ask player_1 for qh", moves) == (12, "")
    assert parse_move("ask player_1 for Q\u2665", moves) == (12, "")


def test_short_names_a_person_types_are_accepted():
    """The words of a move in order, a card with or without its suit symbol."""
    thirty_one = [
        (0, "draw from the deck"),
        (1, "take 5\u2665 from the discard pile"),
        (2, "knock"),
    ]
    assert parse_move("draw", thirty_one) == (0, "")
    assert parse_move("take", thirty_one) == (1, "")
    assert parse_move("take discard", thirty_one) == (1, "")
    assert parse_move("knock", thirty_one) == (2, "")
    placing = [
        (3, "discard Q\u2660, keep 5\u2665 (score 9)"),
        (4, "discard 9\u2663, keep 5\u2665 (score 10)"),
        (6, "discard 5\u2665, the drawn card (score 10)"),
    ]
    assert parse_move("discard Q\u2660", placing) == (3, "")
    assert parse_move("discard qs", placing) == (3, "")
    assert parse_move("9c", placing) == (4, "")
    assert parse_move("disc 9c", placing) == (4, "")  # the start of a word
    assert "fits several moves" in parse_move("discard", placing)[1]
    tricks = [(2, "play 2\u2660"), (3, "play 3\u2660"), (13, "play 3\u2665")]
    for said in ("play 3\u2660", "play 3S", "play 3s", "3\u2660", "3S", "3s"):
        assert parse_move(said, tricks) == (3, ""), said
    assert parse_move("2", tricks) == (3, "")  # a number is the list's
    assert "fits several moves" in parse_move("play 3", tricks)[1]
    assert parse_move("play 2", tricks) == (2, "")  # one 2: the suit can be left out
    cards = [(0, "play 7 on 0^ (1 -> 7)"), (6, "play 77 on 0^ (1 -> 77)"),
             (16, "play 7 on 2v (100 -> 7)")]
    assert parse_move("7 on 0", cards) == (0, "")  # 7 is not the start of 77
    assert parse_move("77", cards)[0] is None  # a number off the list
    literature = [(1, "ask player_1 for Q\u2665"), (49, "ask player_3 for Q\u2665"),
                  (50, "ask player_3 for K\u2665")]
    assert parse_move("3 qh", literature) == (49, "")
    assert parse_move("player_3 Q\u2665", literature) == (49, "")


def test_long_move_lists_are_shown_a_group_per_line():
    entries = [(k, f"ask player_1 for {c}", ("ask player_1 for", c))
               for k, c in enumerate(["A\u2660", "2\u2660", "3\u2660"] * 10, 1)]
    entries.append((31, "declare low \u2660", None))
    lines = move_table(entries, 80, grouped=True)
    assert len(lines) == 6 and lines[-1][0] == "  31. declare low \u2660"  # 7 a line
    assert lines[0][0].startswith("  ask player_1 for:  1. A\u2660  ")
    assert lines[1][0].startswith(" " * 20) and lines[1][1].startswith("  ask player_1 for:")
    assert all(len(line) < 80 for line, _ in lines)
    assert len(move_table(entries, 80, grouped=False)) == 31


@pytest.mark.parametrize("name", ENV_NAMES)
def test_the_rules_page_is_for_players(name):
    """Written for players: no code names, no action indices from 0, shipped with the package."""
    text = rules_page(load_spec(name))
    assert "HOW TO PLAY" in text.splitlines()[0]
    for word in ("board", "BoardIndex", "action 0", "index", "RULES.md", "docstring", "``"):
        assert word not in text, word
    assert "q quits" in text
    assert all(len(line) <= 79 for line in text.splitlines())
