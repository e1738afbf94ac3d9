"""card-envs play as a person plays it: in an 80x24 pseudo-terminal, typing short move names.

Every screen (the table, the news, the moves and the prompt) must fit the terminal, moves
are typed the way they show on screen (``3♠``, ``3S``, ``take``, ``45 on 2``), ``?`` shows
the game's rules page a screenful at a time, and ``q`` stops a game being watched.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[1]
ROWS, COLS = 24, 80
PROMPT = "Your move (number or name, ? for rules, q to quit): "
SUIT_LETTER = {"\u2660": "S", "\u2665": "H", "\u2666": "D", "\u2663": "C"}


class Terminal:
    """One ``card-envs play`` session in a pseudo-terminal of ROWS x COLS."""

    def __init__(self, *args: str):
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "card_envs.cli", "play", *args],
            dimensions=(ROWS, COLS),
            encoding="utf-8",
            timeout=60,
            cwd=str(ROOT),
            env={"PYTHONIOENCODING": "utf-8", "PATH": "", "LANG": "C.UTF-8"},
        )
        self.screen: list[str] = []

    def wait(self, *patterns: str) -> int:
        """Wait for one of ``patterns`` (plain text); the lines printed since become ``screen``."""
        k = self.child.expect_exact([*patterns, pexpect.EOF])
        assert k < len(patterns), "the program ended: " + self.child.before[-2000:]
        # the first line is the rest of the line typed at the previous prompt
        self.screen = self.child.before.replace("\r\n", "\n").split("\n")[1:]
        if self.screen and self.screen[-1] == "":
            self.screen.pop()  # the line the prompt is written on
        assert "Traceback" not in self.child.before
        return k

    def turn(self) -> bool:
        """Wait for the next move prompt (True) or the end of the game (False); check the fit."""
        k = self.wait(PROMPT, "Play again? [y/N] ")
        if k == 0:
            blank = [i for i, line in enumerate(self.screen) if line == ""]
            shown = self.screen[blank[-1] if blank else 0 :]  # from the blank line above the table
            assert len(shown) + 1 <= ROWS, "\n".join(shown)  # + the prompt line
            assert all(len(line) <= COLS for line in shown), max(shown, key=len)
        return k == 0

    def moves(self) -> list[str]:
        """The labels of the moves listed one per line (``  3. play K`` -> ``play K``)."""
        return [m.group(1) for line in self.screen if (m := re.match(r"\s+\d+\. (.*)$", line))]

    def send(self, text: str) -> None:
        self.child.sendline(text)

    def close(self) -> None:
        self.child.close(force=True)


def _first_move_by_name(name: str, term: Terminal) -> str:
    """What a person would type for a move on screen now, in short (checked to be accepted)."""
    screen = "\n".join(term.screen)
    if name == "simple_tricks_v0":
        card = term.moves()[0].split()[-1]  # "play 3♠" -> "3♠"
        return card[:-1] + SUIT_LETTER[card[-1]]  # typed with the suit letter: "3S"
    if name == "thirty_one_v0":
        labels = term.moves()
        if any(label.startswith("take") for label in labels):
            return "take"
        return "discard " + labels[0].split()[1].rstrip(",")  # "discard A♦, keep ..."
    if name == "palace_v0":
        label = term.moves()[0]
        short = label.removeprefix("play ")  # "K", "9 9", "face-up 4", ...
        # a lone number picks from the list, and a lone q quits (a queen is "play Q")
        return label if short.isdigit() or short.lower() == "q" else short
    if name == "literature_v0":
        m = re.search(r"ask (player_\d) for:\s+\d+\. (\S+)", screen)
        return f"{m.group(1)} {m.group(2)}"  # "player_3 Q♥"
    if name == "ninety_eight_cards_v0":
        m = re.search(r"(\d)[\^v] \(top \d+\):\s+\d+\. (\d+)", screen)  # a line per pile
        m = m or re.search(r"\d+\. play (\d+) on (\d)", screen)  # or a line per move
        if m is None:
            return "end turn"
        card, pile = m.groups() if "play" in m.group(0) else reversed(m.groups())
        return f"{card} on {pile}"  # "45 on 2"
    raise AssertionError(name)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_person_plays_in_an_80x24_terminal(name):
    """Moves typed by short name, then by number; every screen fits 80x24; q quits."""
    term = Terminal(name, "--seed", "3", "--opponent", "random")
    try:
        assert term.turn()
        for _ in range(6):  # by name
            said = _first_move_by_name(name, term)
            term.send(said)
            if not term.turn():
                break
            assert not any("not a legal move" in line or "fits several" in line
                           for line in term.screen), (said, term.screen)
        else:
            for _ in range(30):  # by number
                term.send("1")
                if not term.turn():
                    break
            else:
                term.send("q")
                term.wait("Bye.")
    finally:
        term.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_question_mark_shows_the_rules_page_a_screen_at_a_time(name):
    term = Terminal(name, "--seed", "0", "--opponent", "random")
    page = (ROOT / "card_envs" / load_spec(name).name / "how_to_play.md").read_text()
    try:
        assert term.turn()
        term.send("?")
        seen = []
        while term.wait("-- Enter: more of the rules", "-- end of the rules") == 0:
            assert len(term.screen) + 1 <= ROWS
            seen += term.screen
            term.send("")
        seen += term.screen
        assert len(term.screen) + 1 <= ROWS
        text = "\n".join(seen)
        assert page.splitlines()[0] in text and page.rstrip().splitlines()[-1] in text
        term.send("")
        assert term.turn(), "back to the game, the table drawn again"
        assert "Your moves:" in term.screen
        term.send("q")
        term.wait("Bye.")
    finally:
        term.close()


def test_long_move_lists_are_grouped_and_paged():
    term = Terminal("literature", "--seed", "0", "--opponent", "random")
    try:
        assert term.turn()
        footer = [line for line in term.screen if "moves page 1 of" in line]
        assert footer and any(line.startswith("  ask player_1 for:") for line in term.screen)
        term.send(">")
        assert term.turn()
        assert any("moves page 2 of" in line for line in term.screen)
        term.send("q")
        term.wait("Bye.")
    finally:
        term.close()
    term = Terminal("ninety_eight_cards", "--seed", "0")
    try:
        assert term.turn()
        piles = [line for line in term.screen if re.match(r"  \d[\^v] \(top \d+\):", line)]
        assert len(piles) == 4, term.screen  # a line per pile: 32 moves on 4 lines
    finally:
        term.close()


@pytest.mark.parametrize("name", ENV_NAMES)
def test_q_stops_watching(name):
    term = Terminal(name, "--watch", "--delay", "0.2", "--seed", "1", "--opponent", "random")
    try:
        term.wait(">> player_0: ")
        term.send("q")
        term.wait("Bye.")
        term.child.expect(pexpect.EOF)
    finally:
        term.close()
    assert term.child.exitstatus == 0
