"""Play a game in the terminal against agents (``card-envs play``), or watch agents play.

The screen shows only what the human's seat may see (the game's ``render`` for that
seat), what the other players did since the human's last move, and a numbered list of
the legal moves, sized to the terminal (80x24 when it cannot tell): a long list is shown
a group per line (``ask player_3 for: 1. A♠  2. 2♠ ...``) and, if still too long, a page
at a time (``>`` and ``<`` turn the pages). The human types a number from the list or a
move's name, whole or in short: any of its words in order (``take`` for ``take 5♥ from the
discard pile``, ``3♠``, ``3S`` or ``play 3s`` for ``play 3♠``) as long as only one move
fits. ``?`` shows the game's rules page (``card_envs/<game>/how_to_play.md``), ``q`` quits.
Anything else gets a one-line reason and the prompt again: nothing typed can change the
game except a legal move. Input is read line by line, so a pipe works. While watching
agents play with ``--delay``, a line ``q`` stops the game.

``--record FILE`` writes every game of the session as a record (card_envs/records.py), and
``show_replay`` (``card-envs replay FILE --show K``) shows a recorded game move by move on
the same screen, from one seat's view or, for a finished game, with every hand open.
"""

from __future__ import annotations

import math
import secrets
import select
import shutil
import sys
import textwrap
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

from card_envs.core.agents import Agent, make_agent
from card_envs.core.evaluation import deal_seed, game_rngs, play_move
from card_envs.core.game import Game, State
from card_envs.core.spec import GameSpec
from card_envs.core.text import (
    move_label,
    move_text,
    normalized,
    parse_move,
    result_text,
    rules_page,
)
from card_envs.records import RecordWriter, Replay, make_record

PROMPT = "Your move (number or name, ? for rules, q to quit): "


class Quit(Exception):
    """The person typed q (or the input ended)."""


def choose_agents(
    spec: GameSpec, game: Game, opponent: str, seat: int | None, out: TextIO
) -> list[Agent | None]:
    """One agent per seat (None for the human's seat); ``best`` falls back to a rule agent."""
    agents: list[Agent | None] = []
    for p in range(game.num_players):
        if p == seat:
            agents.append(None)
            continue
        name = opponent
        if name == "best":
            try:
                agents.append(make_agent(spec, "best", game))
                continue
            except ValueError as err:
                name = spec.strongest_agent
                if p == (1 if seat == 0 else 0):
                    out.write(
                        f"(no trained model to use: {err}; playing against the "
                        f"`{name}` agent instead)\n"
                    )
        agents.append(make_agent(spec, name, game))
    return agents


def screen_size() -> tuple[int, int]:
    """(columns, lines) of the terminal; 80x24 when it cannot tell (a pipe)."""
    size = shutil.get_terminal_size((80, 24))
    return max(size.columns, 40), max(size.lines, 12)


def _fit(text: str, cols: int) -> list[str]:
    """``text``'s lines, each longer than the terminal is wide wrapped (indented by 2)."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) < cols:
            out.append(line)
        else:
            out += textwrap.wrap(line, cols - 1, subsequent_indent="  ") or [""]
    return out


def _height(lines: list[str], cols: int) -> int:
    """Terminal lines that ``lines`` take at ``cols`` columns (long lines wrap)."""
    return sum(max(1, math.ceil(len(line) / cols)) for line in lines)


def play_one(
    spec: GameSpec,
    game: Game,
    agents: list[Agent | None],
    seat: int | None,
    rng: np.random.Generator,
    read: Callable[[str], str],
    out: TextIO,
    delay: float | None = None,
    keys: Keys | None = None,
    agent_rng: np.random.Generator | None = None,
    state: State | None = None,
    actions: list[int] | None = None,
) -> State:
    """Play one game to its end; ``seat`` is the human's (None: watch only).

    ``rng`` deals (unless ``state`` is given: the game goes on from there, in place) and
    draws the chance events; the agents choose with ``agent_rng`` (default: ``rng``).
    ``actions``, when given, gets every action as it is played (for a record).
    """
    s = game.init(rng) if state is None else state
    for agent in agents:
        if agent is not None and hasattr(agent, "reset"):
            agent.reset()
    news: list[str] = []
    while not s.done:
        p = s.player
        if p == seat:
            action = _ask(spec, game, s, seat, news, read, out)
            news = []
            before = s.copy() if spec.describe_move is not None else s
            game.apply(s, action, rng)
        else:
            if seat is None:
                out.write("\n".join(_fit(spec.render(game, s, None), screen_size()[0])) + "\n")
                _pause(read, out, delay, keys)
            before = s.copy() if spec.describe_move is not None else s
            action, _ = play_move(game, s, agents[p], rng, agent_rng)
        if actions is not None:
            actions.append(action)
        who = "you" if p == seat else f"player_{p}"
        news.append(f"{who}: {move_text(spec, game, before, p, action, s)}")
        if seat is None:
            out.write(f">> {news[-1]}\n")
    cols, _ = screen_size()
    out.write("\n" + "\n".join(_fit(spec.render(game, s, seat), cols)) + "\n")
    if news and seat is not None:
        out.write("\n".join(_news_lines(news, cols, 4)) + "\n")
    out.write(result_text(game, s, seat) + "\n")
    return s


class Keys:
    """Lines typed while agents play with a delay: ``q`` stops (select-able input only)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        try:
            stream.fileno()
            self.live = True
        except (AttributeError, OSError, ValueError):
            self.live = False  # e.g. a StringIO: just wait

    def wait(self, seconds: float) -> None:
        """Wait ``seconds``; raise Quit if a line ``q`` is typed meanwhile."""
        end = time.monotonic() + seconds
        while self.live:
            left = max(0.0, end - time.monotonic())
            try:
                ready, _, _ = select.select([self.stream], [], [], left)
            except (OSError, ValueError):
                self.live = False
                break
            if not ready:
                return
            line = self.stream.readline()
            if not line:
                self.live = False  # the input ended: keep watching, without keys
                break
            if normalized(line) == "q":
                raise Quit
            if left == 0.0:
                return
        time.sleep(max(0.0, end - time.monotonic()))


def _pause(
    read: Callable[[str], str], out: TextIO, delay: float | None, keys: Keys | None
) -> None:
    if delay is not None:
        out.flush()
        if keys is not None:
            keys.wait(delay)
        else:
            time.sleep(delay)
        return
    if normalized(read("[enter] next move, q quits: ")) == "q":
        raise Quit


def _news_lines(news: list[str], cols: int, budget: int) -> list[str]:
    """"Since your last move: ...", the latest moves that fit in ``budget`` lines."""
    budget = max(1, budget)
    for start in range(len(news)):
        shown = news[start:]
        head = "Since your last move" + (
            f" (the last {len(shown)} of {len(news)} moves)" if start else ""
        )
        lines = textwrap.wrap(head + ": " + "; ".join(shown), cols - 1, subsequent_indent="  ")
        if len(lines) <= budget:
            return lines
    last = f"Since your last move (the last of {len(news)} moves): {news[-1]}"
    return textwrap.wrap(last, cols - 1, subsequent_indent="  ")[:budget]


def move_table(
    entries: list[tuple[int, str, tuple[str, str] | None]], cols: int, grouped: bool
) -> list[tuple[str, str]]:
    """The numbered moves as lines: one per move, or (``grouped``) a group per line.

    ``entries`` are (number, label, (group, short text) or None). Grouped, each group's
    moves follow its name in columns (``ask player_3 for:  1. A♠   2. 2♠``), wrapping
    under themselves; moves without a group keep a line of their own. Each line comes with
    the form it takes at the top of a page (a wrapped line then repeats its group's name).
    """
    width = len(str(len(entries)))
    if not grouped:
        return [(line, line) for line in (f"  {k:>{width}}. {label}" for k, label, _ in entries)]
    order: list[str | None] = []
    members: dict[str, list[tuple[int, str]]] = {}
    singles: list[tuple[int, str]] = []
    for k, label, group in entries:
        if group is None:
            order.append(None)
            singles.append((k, label))
            continue
        name, short = group
        if name not in members:
            order.append(name)
            members[name] = []
        members[name].append((k, short))
    if not members:
        return move_table(entries, cols, grouped=False)
    head = max(len(name) for name in members) + 4  # "  " + name + ": "
    lines: list[tuple[str, str]] = []
    pending = iter(singles)
    for name in order:
        if name is None:
            k, label = next(pending)
            line = f"  {k:>{width}}. {label}"
            lines.append((line, line))
            continue
        cells = [f"{k:>{width}}. {short}" for k, short in members[name]]
        cell = max(len(c) for c in cells) + 2
        per_line = max(1, (cols - 1 - head + 2) // cell)  # the last cell needs no gap
        for i in range(0, len(cells), per_line):
            row = "".join(c.ljust(cell) for c in cells[i : i + per_line]).rstrip()
            named = f"  {name}:".ljust(head) + row
            lines.append((named if i == 0 else " " * head + row, named))
    return lines


def _screen(
    spec: GameSpec,
    game: Game,
    s: State,
    seat: int,
    news: list[str],
    moves: list[tuple[int, str]],
    page: int,
) -> tuple[list[str], int]:
    """The screen before the prompt, fitted to the terminal, and the number of move pages."""
    cols, rows = screen_size()
    table = _fit(spec.render(game, s, seat), cols)
    # a blank line, "Your moves:", the prompt and a line for a reason why a move was refused
    left = rows - _height(table, cols) - 4
    news_lines = _news_lines(news, cols, min(3, left - 5)) if news else []
    left -= len(news_lines)
    entries = [
        (k, label, spec.move_group(game, s, seat, a) if spec.move_group else None)
        for k, (a, label) in enumerate(moves, 1)
    ]
    rows_ = move_table(entries, cols, grouped=False)
    if _height([r for r, _ in rows_], cols) > left and spec.move_group is not None:
        rows_ = move_table(entries, cols, grouped=True)
    pages = [rows_]
    if _height([r for r, _ in rows_], cols) > left:
        size = max(3, left - 1)  # one line for the page footer
        pages = [rows_[i : i + size] for i in range(0, len(rows_), size)]
    page = min(page, len(pages) - 1)
    shown = [pages[page][0][1]] + [line for line, _ in pages[page][1:]]
    if len(pages) > 1:
        shown.append(
            f"  (moves page {page + 1} of {len(pages)}: > next, < back; every number works)"
        )
    head = "Your moves:"
    return ["", *table, *news_lines, head, *shown], len(pages)


def _ask(
    spec: GameSpec,
    game: Game,
    s: State,
    seat: int,
    news: list[str],
    read: Callable[[str], str],
    out: TextIO,
) -> int:
    mask = game.legal_mask(s)
    moves = [(int(a), move_label(spec, game, s, seat, int(a))) for a in np.flatnonzero(mask)]
    page = 0
    redraw = True
    while True:
        if redraw:
            lines, pages = _screen(spec, game, s, seat, news, moves, page)
            out.write("\n".join(lines) + "\n")
            redraw = False
        text = read(PROMPT)
        t = normalized(text)
        if t == "q":
            raise Quit
        if t == "?":
            _show_rules(spec, read, out)
            redraw = True
            continue
        if t in (">", "<") and pages > 1:
            page = (page + (1 if t == ">" else -1)) % pages
            redraw = True
            continue
        action, reason = parse_move(text, moves)
        if action is not None:
            return action
        out.write(reason + "\n")


def _show_rules(spec: GameSpec, read: Callable[[str], str], out: TextIO) -> None:
    """The rules page, a screenful at a time."""
    cols, rows = screen_size()
    lines: list[str] = []
    for line in rules_page(spec).rstrip("\n").split("\n"):
        lines += textwrap.wrap(line, cols - 1, subsequent_indent="  ") or [""]
    size = rows - 1
    for start in range(0, len(lines), size):
        out.write("\n".join(lines[start : start + size]) + "\n")
        if start + size < len(lines):
            if normalized(read("-- Enter: more of the rules, q: back to the game -- ")) == "q":
                return
    read("-- end of the rules; Enter: back to the game -- ")


def line_reader(stream: TextIO, out: TextIO) -> Callable[[str], str]:
    """Prompt on ``out`` and read one line; the end of the input quits."""

    def read(prompt: str) -> str:
        out.write(prompt)
        out.flush()
        line = stream.readline()
        if not line:
            raise Quit
        if not stream.isatty():
            out.write(line if line.endswith("\n") else line + "\n")  # echo piped input
        return line

    return read


def session_seed(seed: int | None) -> int:
    """The seed of a play session: ``seed``, or a fresh one drawn from the system."""
    return secrets.randbits(32) if seed is None else seed


def run(
    spec: GameSpec,
    game_args: dict,
    opponent: str,
    seat: int,
    seed: int | None,
    watch: bool = False,
    delay: float | None = None,
    stream: TextIO = sys.stdin,
    out: TextIO = sys.stdout,
    record: str | None = None,
) -> int:
    """The ``card-envs play`` session: games until the person stops.

    Game g of a session seeded S is dealt by ``default_rng([S, g, 0])``; with ``record``
    every game, the one stopped by ``q`` included, is written to that file as a record.
    """
    game = spec.make_game(**game_args)
    human = None if watch else seat
    if human is not None and not 0 <= human < game.num_players:
        raise ValueError(
            f"--seat {seat} is not a seat of {spec.env_name}: choose 0..{game.num_players - 1}"
        )
    writer = RecordWriter(record) if record else None
    agents = choose_agents(spec, game, opponent, human, out)
    seed = session_seed(seed)
    read = line_reader(stream, out)
    keys = Keys(stream) if watch and delay is not None else None
    names = [("you" if p == human else getattr(a, "name", "agent")) for p, a in enumerate(agents)]
    out.write(
        f"{spec.env_name}: " + ", ".join(f"player_{p} {n}" for p, n in enumerate(names)) + "\n"
    )
    if keys is not None:
        out.write("(type q and Enter to stop)\n")
    seats = ["human" if n == "you" else n for n in names]
    g, state, actions = 0, None, []
    try:
        while True:
            rng, agent_rng = game_rngs(seed, g)
            state, actions = game.init(rng), []
            play_one(spec, game, agents, human, rng, read, out, delay, keys, agent_rng, state,
                     actions)
            if writer is not None:
                writer.write(make_record(spec, game, deal_seed(seed, g), seats, actions, state,
                                         f"play game {g}"))
                state = None
            g += 1
            if normalized(read("Play again? [y/N] ")) not in ("y", "yes"):
                break
    except Quit:
        out.write("\nBye.\n")
    finally:
        if writer is not None:
            if state is not None and actions:  # the game stopped by q, as far as it went
                writer.write(make_record(spec, game, deal_seed(seed, g), seats, actions, state,
                                         f"play game {g}, stopped"))
            writer.close()
            out.write(writer.summary() + "\n")
    return 0


def show_replay(
    rep: Replay,
    seat: int | None,
    read: Callable[[str], str],
    out: TextIO,
    pause: bool = False,
    delay: float | None = None,
) -> None:
    """Show a replayed game move by move: the table before each move from ``seat``'s view
    (None: every hand open), the move as the table saw it, then the end and the result.

    ``pause`` waits for Enter after each move (``q`` stops); ``delay`` waits that long.
    """
    spec, game, states = rep.spec, rep.game, rep.states
    cols = screen_size()[0]
    names = rep.record.agents
    view = "every hand open" if seat is None else f"player_{seat}'s view"
    out.write(f"{rep.record.title()}\n(seed {rep.record.seed}; {view})\n")
    for k, (p, action, _) in enumerate(rep.record.actions):
        out.write("\n" + "\n".join(_fit(spec.render(game, states[k], seat), cols)) + "\n")
        before, after = states[k], states[k + 1]
        who = f"player_{p} ({'you, ' if p == seat else ''}{names[p]})"
        out.write(f">> step {k}: {who}: {move_text(spec, game, before, p, action, after)}\n")
        if pause or delay is not None:
            _pause(read, out, None if pause else delay, None)
    out.write("\n" + "\n".join(_fit(spec.render(game, rep.final, seat), cols)) + "\n")
    if rep.final.done:
        out.write(result_text(game, rep.final, seat) + "\n")
    else:
        out.write(f"(the record stops here, after {len(rep.record.actions)} moves: the game was "
                  "not finished)\n")
