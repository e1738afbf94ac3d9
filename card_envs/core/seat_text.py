"""A seat's table as text, for agents that read text: language models through ``card-envs mcp``
and outside programs through ``cmd:PROGRAM`` agents (docs/text_agents.md).

What such an agent reads is what the terminal shows a person (``card_envs.core.text``): the
table from its seat (``GameSpec.render``), its legal moves numbered with their labels
(``move_label``) and, where the driver saw them, the moves since its last one
(``move_text``). It answers a number from the list or words of a move's name
(``parse_move``); an answer that names no legal move gets a one-line reason that lists the
legal moves, and after a number of retries a fallback: a random legal move, or a forfeit.

The play loop (``card_envs.core.evaluation.agent_view``) gives an agent with a
``text_spec`` (the spec of the game it plays) a ``TextView`` instead of the game's view: made
here from the state, holding only text that the seat may read (the leak tests check that
twin worlds the seat cannot tell apart give it the same bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game, State, View, no_actions
from card_envs.core.spec import GameSpec
from card_envs.core.text import move_label, parse_move

# What an agent that keeps answering no legal move gets once its retries are spent.
FALLBACKS = ("random", "forfeit")
# The version of the JSON Lines messages of ``cmd:`` agents (docs/text_agents.md).
PROTOCOL = 1
# Legal moves a refusal names, at most (a long list ends with "... and N more").
NAMED_MOVES = 30


class TextView(View):
    """What a text agent reads for its seat: the table as text and its legal moves labelled.

    ``env``: the env name; ``step``: the game's step; ``table``: the table from this seat
    (``GameSpec.render``); ``moves``: ``(action, label)`` of each legal move, in action order
    (empty when the seat is not to act); ``legal``: the legal mask, as in every view.
    """

    __slots__ = ("env", "step", "table", "moves")


def text_view(spec: GameSpec, game: Game, state: State, seat: int) -> TextView:
    """The ``TextView`` of ``seat`` in ``state``: only what that seat may read."""
    view = TextView()
    view.player = seat
    to_act = state.player == seat and not state.done
    view.legal = game.legal_mask(state) if to_act else no_actions(game.num_actions)
    view.env = spec.env_name
    view.step = int(state.steps)
    view.table = spec.render(game, state, seat)
    view.moves = tuple((int(a), move_label(spec, game, state, seat, int(a)))
                       for a in np.flatnonzero(view.legal)) if to_act else ()
    return view


def numbered(moves: Sequence[tuple[int, str]]) -> list[str]:
    """The moves as the list shows them: ``  1. play 3♠``."""
    width = len(str(len(moves)))
    return [f"  {k:>{width}}. {label}" for k, (_, label) in enumerate(moves, 1)]


def screen(table: str, moves: Sequence[tuple[int, str]], news: Sequence[str] = ()) -> str:
    """The seat's text as one string: the table, the moves since its last one (``news``),
    then its legal moves numbered (none: the seat is not to act)."""
    lines = [table]
    if news:
        lines.append("Since your last move: " + "; ".join(news))
    if moves:
        lines += ["Your moves (answer a number or a move's name):", *numbered(moves)]
    return "\n".join(lines)


def legal_list(moves: Sequence[tuple[int, str]]) -> str:
    """The legal moves on one line: ``1 play 3♠, 2 play 5♥, ...`` (the first NAMED_MOVES)."""
    shown = ", ".join(f"{k} {label}" for k, (_, label) in enumerate(moves[:NAMED_MOVES], 1))
    more = len(moves) - NAMED_MOVES
    return shown + (f" ... and {more} more" if more > 0 else "")


def answer_move(answer: Any, moves: Sequence[tuple[int, str]]) -> tuple[int | None, str]:
    """The action an answer names (a number on the list, or a move's name as ``parse_move``
    reads it), or (None, a one-line reason that lists the legal moves)."""
    if not moves:
        return None, "it is not your turn: there is no move to make"
    if isinstance(answer, bool) or not isinstance(answer, (int, str)):
        reason = f"a move is a number from the list or a move's name, got {_short(answer)}"
    else:
        action, reason = parse_move(str(answer), list(moves))
        if action is not None:
            return action, ""
    return None, f"{_one_line(reason)}; legal moves: {legal_list(moves)}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str) -> str:
    """``text`` on one line (a typed move may hold line breaks), not too long."""
    flat = " ".join(text.split())
    return flat if len(flat) <= 300 else flat[:297] + "..."


def check_policy(retries: Any, fallback: Any) -> tuple[int, str]:
    """``(retries, fallback)`` checked: ValueError naming the valid values."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries={retries!r}: give a whole number >= 0 (answers refused "
                         "before the fallback)")
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback={fallback!r}: choose one of {', '.join(FALLBACKS)}")
    return retries, fallback


def random_move(moves: Sequence[tuple[int, str]], rng: np.random.Generator) -> int:
    """The fallback ``random``: one of the legal moves, drawn from ``rng``."""
    return moves[int(rng.integers(len(moves)))][0]


def request(view: TextView, game_id: int, error: str | None = None,
            tries_left: int | None = None) -> dict[str, Any]:
    """The JSON Lines message that asks a ``cmd:`` agent for a move (docs/text_agents.md)."""
    return {
        "protocol": PROTOCOL,
        "type": "move",
        "game": game_id,
        "env": view.env,
        "seat": int(view.player),
        "step": view.step,
        "view": view.table,
        "moves": [{"number": k, "label": label, "action": action}
                  for k, (action, label) in enumerate(view.moves, 1)],
        "text": screen(view.table, view.moves),
        "error": error,
        "tries_left": tries_left,
    }


class AgentForfeit(RuntimeError):
    """A text agent gave up a game: its answers named no legal move (or it failed to answer)
    through every retry, and its fallback is ``forfeit``. The message says who, where, why."""
