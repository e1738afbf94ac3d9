"""``cmd:PROGRAM`` agents: an outside program plays a seat, one JSON line in, one line out.

``make_agent`` builds one from the name ``cmd:PROGRAM`` (``PROGRAM`` split like a shell
command line, run without a shell), with options in brackets where the defaults do not fit:
``cmd[timeout=30,retries=1,fallback=forfeit]:python my_agent.py``. Each agent object runs one
child process, started at its first move and closed when the agent is closed, collected, or
the interpreter exits. For every move of its seat the agent writes one line of JSON to the
child's standard input (``card_envs.core.seat_text.request``: the game, the seat, the table as
text, the legal moves numbered and labelled) and reads one line from its standard output:

    {"move": 3}                    the number of a move on the list
    {"move": "take"}               words of a move's name (as a person types them)
    {"action": 17}                 the env's action index of a legal move
    3   or   take                  a line that is not a JSON object: read as {"move": ...}

An answer that names no legal move is asked again with ``error`` (a one-line reason that
lists the legal moves) and ``tries_left``, ``retries`` times; then the fallback: a random
legal move drawn from the agent's generator (``random``), or ``AgentForfeit`` (``forfeit``).
A child that exits, or answers nothing within ``timeout`` seconds (it is then stopped),
gets the fallback for that move at once; the next move starts a new child, unless the
program failed ``MAX_FAILURES`` times in a row in this game. Each fallback is a note: a line
on standard error and an entry of ``notes``. The child's standard error is this process's.
"""

from __future__ import annotations

import json
import queue
import shlex
import shutil
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.core.game import Game, View
from card_envs.core.seat_text import (
    AgentForfeit,
    TextView,
    answer_move,
    check_policy,
    legal_list,
    random_move,
    request,
)
from card_envs.core.spec import GameSpec

TIMEOUT = 60.0  # seconds a move may take, by default
RETRIES = 2  # answers naming no legal move that are asked again, by default
MAX_FAILURES = 3  # a program that exits or times out this often in a row rests for the game
LINE_LIMIT = 1 << 20  # the longest answer line read, in bytes
OPTIONS = ("timeout", "retries", "fallback")


def parse_name(name: str) -> tuple[list[str], dict[str, Any]]:
    """``cmd[OPTIONS]:PROGRAM`` as (argv, options); ValueError says what is wrong."""
    head, sep, program = name.partition(":")
    if not sep or not (head == "cmd" or (head.startswith("cmd[") and head.endswith("]"))):
        raise ValueError(f"agent {name!r}: write cmd:PROGRAM or cmd[OPTIONS]:PROGRAM")
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in head[4:-1].split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in OPTIONS:
            raise ValueError(f"agent {name!r}: {item!r} is not an option; options: "
                             f"{', '.join(o + '=...' for o in OPTIONS)}")
        options[key] = _option(name, key, value.strip())
    try:
        argv = shlex.split(program)
    except ValueError as err:
        raise ValueError(f"agent {name!r}: cannot split the program's command line: {err}") \
            from err
    if not argv:
        raise ValueError(f"agent {name!r}: name the program after 'cmd:', e.g. "
                         "cmd:'python my_agent.py'")
    return argv, options


def _option(name: str, key: str, value: str) -> Any:
    """An option's value, checked."""
    if key == "fallback":
        return value
    try:
        number = float(value) if key == "timeout" else int(value)
    except ValueError:
        number = -1
    if number <= 0 and not (key == "retries" and number == 0):
        what = "seconds > 0" if key == "timeout" else "a whole number >= 0"
        raise ValueError(f"agent {name!r}: {key}={value!r}: give {what}")
    return number


def make_cmd_agent(spec: GameSpec, name: str, game: Game) -> CmdAgent:
    """The ``cmd:`` agent called ``name`` (the factory ``make_agent`` calls)."""
    argv, options = parse_name(name)
    if shutil.which(argv[0]) is None:
        raise ValueError(f"agent {name!r}: no program {argv[0]!r} (not on PATH, nor a file "
                         "that can be run)")
    return CmdAgent(spec, game, argv, name=name, **options)


class _Child:
    """The running program: its stdin, and a thread that queues its stdout's lines (None:
    the output ended), so that a read can wait with a time limit."""

    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._finalizer = weakref.finalize(self, _stop, self.proc)

    def _read(self) -> None:
        out = self.proc.stdout
        try:
            while line := out.readline(LINE_LIMIT):
                if not line.endswith(b"\n") and len(line) == LINE_LIMIT:
                    while (rest := out.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
                        pass  # an over-long line: read to its end, answer as garbage
                    line = b"\x00(line too long)\n"
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def ask(self, message: dict[str, Any], timeout: float) -> tuple[str | None, str]:
        """The child's answer line to ``message``, or (None, why there is none)."""
        try:
            self.proc.stdin.write(encode(message))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return None, self._ended()
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            return None, f"no answer within {timeout:g} s (the program was stopped)"
        if line is None:
            return None, self._ended()
        return line.decode("utf-8", "replace"), ""

    def _ended(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the program closed its output"
        return f"the program exited (code {code})"

    def close(self) -> None:
        self._finalizer()


def encode(message: dict[str, Any]) -> bytes:
    """A message as the line the program reads: JSON in ASCII (other characters escaped)."""
    return json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n"


def _stop(proc: subprocess.Popen) -> None:
    """End a child: close its input (a program reading lines then ends), kill it if it
    lingers, and reap it. (Its output is left to the reading thread, which ends there.)"""
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def read_answer(line: str, view: TextView) -> tuple[int | None, str]:
    """The action an answer line names, or (None, a one-line reason listing the legal moves)."""
    try:
        data = json.loads(line)
    except ValueError:
        data = line.strip()
    if isinstance(data, dict):
        if "action" in data and "move" not in data:
            action = data["action"]
            if any(action == a and not isinstance(action, bool) for a, _ in view.moves):
                return int(action), ""
            return None, (f"action {action!r} is not a legal action index now; legal moves: "
                          f"{legal_list(view.moves)}")
        if "move" not in data:
            return None, ('an answer is {"move": NUMBER or NAME} or {"action": INDEX}; '
                          f"legal moves: {legal_list(view.moves)}")
        data = data["move"]
    return answer_move(data, view.moves)


class CmdAgent(BaseAgent):
    """An outside program playing a seat over JSON Lines (see the module docstring).

    Args:
        spec: the game's spec (the agent reads its table as text: ``text_spec``).
        game: the rules object.
        argv: the program and its arguments.
        timeout: seconds the program may take to answer one message.
        retries: answers naming no legal move that are asked again before the fallback.
        fallback: ``random`` (a random legal move) or ``forfeit`` (raise AgentForfeit).
        name: the agent's name (default ``cmd:`` and the command line).
        log: where notes go (default: a line on standard error).
    """

    def __init__(self, spec: GameSpec, game: Game, argv: list[str], timeout: float = TIMEOUT,
                 retries: int = RETRIES, fallback: str = "random", name: str | None = None,
                 log: Callable[[str], None] | None = None):
        super().__init__(game)
        self.retries, self.fallback = check_policy(retries, fallback)
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r}: give seconds > 0")
        self.text_spec = spec
        self.argv = list(argv)
        self.timeout = float(timeout)
        self.name = name or "cmd:" + shlex.join(self.argv)
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.notes: list[str] = []
        self.games = 0  # games begun: the id of the current game
        self._failures = 0  # exits and timeouts in a row in this game
        self._child: _Child | None = None
        self._lock = threading.Lock()

    def reset(self) -> None:
        """A new game begins (its id is one more than the last)."""
        self.games += 1
        self._failures = 0

    def act(self, view: View, rng: np.random.Generator) -> int:
        if not isinstance(view, TextView):
            raise TypeError(f"{self.name} reads the table as text: the play loop gives it a "
                            "TextView (card_envs.core.evaluation.agent_view), not a game's view")
        with self._lock:
            game_id = max(self.games, 1)
            error, why = None, ""
            for tries_left in range(self.retries, -1, -1):
                if self._failures >= MAX_FAILURES:
                    why = f"not asked: the program failed {MAX_FAILURES} times in a row"
                    break
                line, why = self._ask(request(view, game_id, error, tries_left))
                if line is None:
                    break
                action, error = read_answer(line, view)
                if action is not None:
                    return action
                answers = self.retries + 1
                why = (f"no legal move in {answers} answer{'s' if answers > 1 else ''} "
                       f"(last: {error})")
            return self._fall_back(view, rng, game_id, why)

    def _ask(self, message: dict[str, Any]) -> tuple[str | None, str]:
        """The child's answer (the child started if need be), or (None, why none)."""
        if self._child is None:
            try:
                self._child = _Child(self.argv)
            except OSError as err:
                self._failures += 1
                return None, f"the program did not start: {err}"
        line, why = self._child.ask(message, self.timeout)
        if line is None:
            self._failures += 1
            self.close()
        else:
            self._failures = 0
        return line, why

    def _fall_back(self, view: TextView, rng: np.random.Generator, game_id: int,
                   why: str) -> int:
        where = f"{self.name}: game {game_id}, step {view.step}, player_{view.player}"
        if self.fallback == "forfeit":
            raise AgentForfeit(f"{where}: forfeited ({why})")
        action = random_move(view.moves, rng)
        label = dict(view.moves)[action]
        note = f"{where}: {why}; played a random legal move ({label}) as the fallback"
        self.notes.append(note)
        self.log(note)
        return action

    def close(self) -> None:
        """Stop the child process (a later move starts a new one)."""
        child, self._child = self._child, None
        if child is not None:
            child.close()

    def __repr__(self) -> str:
        return (f"CmdAgent({self.argv!r}, timeout={self.timeout:g}, retries={self.retries}, "
                f"fallback={self.fallback!r})")
