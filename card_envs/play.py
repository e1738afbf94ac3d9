"""Play a game in the terminal against agents (``card-envs play``), or watch agents play.

The screen shows only what the human's seat may see (the game's ``render`` for that
seat), what the other players did since the human's last move, and a numbered list of
the legal moves. The human types a number from the list or a move's name (or its
name without the first word: ``9 9`` for ``play 9 9``); ``?`` shows the rules, ``q``
quits. Anything else gets a one-line reason and the prompt again: nothing typed can
change the game except a legal move. Input is read line by line, so a pipe works.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np

from card_envs.core.agents import Agent, make_agent
from card_envs.core.cards import SUIT_SYMBOLS
from card_envs.core.game import Game, State
from card_envs.core.spec import GameSpec


class Quit(Exception):
    """The person typed q (or the input ended)."""


_SUIT_LETTERS = str.maketrans({sym: let for sym, let in zip(SUIT_SYMBOLS, "shdc", strict=True)})


def _norm(text: str) -> str:
    """Lower case, single spaces, suit symbols as letters (so ``QH`` matches ``Q♥``)."""
    return re.sub(r"\s+", " ", text.strip().lower().translate(_SUIT_LETTERS))


def move_label(spec: GameSpec, game: Game, state: State, seat: int, action: int) -> str:
    """The text a person sees for one of their legal moves."""
    if spec.move_label is not None:
        return spec.move_label(game, state, seat, action)
    return game.action_name(action)


def move_text(
    spec: GameSpec, game: Game, before: State, seat: int, action: int, after: State
) -> str:
    """What everyone saw a seat do (told to the other players)."""
    if spec.describe_move is not None:
        return spec.describe_move(game, before, seat, action, after)
    return game.action_name(action)


def parse_move(text: str, moves: list[tuple[int, str]]) -> tuple[int | None, str]:
    """The action a person's input names, or (None, the reason it names none)."""
    t = _norm(text)
    if not t:
        return None, "type the number of a move, or its name"
    if t.isdigit():
        k = int(t)
        if 1 <= k <= len(moves):
            return moves[k - 1][0], ""
        return None, f"{k} is not on the list: choose 1..{len(moves)}"
    matches = []
    for action, label in moves:
        # the whole label, the label less its details (": ..." or "(...)"), each also
        # without its first word: "play 9 9" answers to "9 9"
        names = {_norm(label), _norm(label.split(":")[0]), _norm(re.sub(r"\(.*?\)", "", label))}
        names |= {n.split(" ", 1)[1] for n in names if " " in n}
        if t in names:
            matches.append(action)
    if len(set(matches)) == 1:
        return matches[0], ""
    if matches:
        return None, f"{text.strip()!r} matches several moves; type its number"
    return None, f"{text.strip()!r} is not a legal move now; type a number from the list"


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


def rules_help(game: Game) -> str:
    """The short rules: the game's rules module docstring."""
    doc = sys.modules[type(game).__module__].__doc__ or type(game).__doc__ or ""
    return doc.strip() + "\n"


def result_text(game: Game, s: State, seat: int | None) -> str:
    pay = game.payoffs(s)
    scores = game.scores(s)
    if s.truncated:
        head = f"The game was stopped at its step cap ({game.max_steps} steps): no result."
    elif seat is None:
        head = "Game over."
    elif pay[seat] > 0:
        head = "You win!" if game.num_players > 1 else "You won: every card played!"
    elif pay[seat] < 0:
        head = "You lose." if game.num_players > 1 else "Game over."
    else:
        head = "A draw."
    parts = []
    for p in range(game.num_players):
        who = "you" if p == seat else f"player_{p}"
        score = f", score {scores[p]:g}" if scores is not None else ""
        parts.append(f"{who}: payoff {pay[p]:+.2f}{score}")
    return head + "\n" + "; ".join(parts)


def play_one(
    spec: GameSpec,
    game: Game,
    agents: list[Agent | None],
    seat: int | None,
    rng: np.random.Generator,
    read: Callable[[str], str],
    out: TextIO,
    delay: float | None = None,
) -> State:
    """Play one game to its end; ``seat`` is the human's (None: watch only)."""
    s = game.init(rng)
    for agent in agents:
        if agent is not None and hasattr(agent, "reset"):
            agent.reset()
    news: list[str] = []
    while not s.done:
        p = s.player
        if p == seat:
            action = _ask(spec, game, s, seat, news, read, out)
            news = []
        else:
            if seat is None:
                out.write(spec.render(game, s, None) + "\n")
                _pause(read, out, delay)
            action = agents[p].act(game.view(s, p), rng)
        before = s.copy() if spec.describe_move is not None else s
        game.apply(s, action, rng)
        who = "you" if p == seat else f"player_{p}"
        news.append(f"{who}: {move_text(spec, game, before, p, action, s)}")
        if seat is None:
            out.write(f">> {news[-1]}\n")
    out.write("\n" + spec.render(game, s, seat) + "\n")
    if news and seat is not None:
        out.write("Since your last move: " + "; ".join(news) + "\n")
    out.write(result_text(game, s, seat) + "\n")
    return s


def _pause(read: Callable[[str], str], out: TextIO, delay: float | None) -> None:
    if delay is not None:
        out.flush()
        time.sleep(delay)
        return
    if _norm(read("[enter] next move, q quits: ")) == "q":
        raise Quit


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
    out.write("\n" + spec.render(game, s, seat) + "\n")
    if news:
        out.write("Since your last move: " + "; ".join(news) + "\n")
    out.write("Your moves:\n")
    for k, (_, label) in enumerate(moves, 1):
        out.write(f"  {k:>2}. {label}\n")
    while True:
        text = read("Your move (number or name, ? for rules, q to quit): ")
        if _norm(text) == "q":
            raise Quit
        if _norm(text) == "?":
            out.write(rules_help(game))
            continue
        action, reason = parse_move(text, moves)
        if action is not None:
            return action
        out.write(reason + "\n")


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
) -> int:
    """The ``card-envs play`` session: games until the person stops."""
    game = spec.make_game(**game_args)
    human = None if watch else seat
    if human is not None and not 0 <= human < game.num_players:
        raise ValueError(
            f"--seat {seat} is not a seat of {spec.env_name}: choose 0..{game.num_players - 1}"
        )
    agents = choose_agents(spec, game, opponent, human, out)
    rng = np.random.default_rng(seed)
    read = line_reader(stream, out)
    names = [("you" if p == human else getattr(a, "name", "agent")) for p, a in enumerate(agents)]
    out.write(
        f"{spec.env_name}: " + ", ".join(f"player_{p} {n}" for p, n in enumerate(names)) + "\n"
    )
    try:
        while True:
            play_one(spec, game, agents, human, rng, read, out, delay)
            if _norm(read("Play again? [y/N] ")) not in ("y", "yes"):
                break
    except Quit:
        out.write("\nBye.\n")
    return 0
