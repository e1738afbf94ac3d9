"""What a person reads and types about a game: its moves as text, typed moves, the rules page
and the result; the terminal (``card_envs.play``) and the web app (``card_envs.web``) show the
same words.

A move is listed to the seat about to make it by ``move_label`` (the game's
``GameSpec.move_label``, default ``action_name``) and told to everyone once made by
``move_text`` (``GameSpec.describe_move``); ``parse_move`` finds the move a person's input names
among the listed ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources

from card_envs.core.cards import SUIT_LETTERS, SUIT_SYMBOLS, unicode_ok
from card_envs.core.game import Game, State
from card_envs.core.spec import GameSpec

_SUIT_LETTERS = str.maketrans({sym: let for sym, let in zip(SUIT_SYMBOLS, "shdc", strict=True)})
_SUIT_UPPER = str.maketrans(dict(zip(SUIT_SYMBOLS, SUIT_LETTERS, strict=True)))


def normalized(text: str) -> str:
    """Lower case, single spaces, suit symbols as letters (so ``QH`` matches ``Q♥``)."""
    return re.sub(r"\s+", " ", text.strip().lower().translate(_SUIT_LETTERS))


def _words(text: str) -> list[str]:
    """The words of a move's name: normalised, without punctuation (``player_3`` is 2 words)."""
    return re.sub(r"[^a-z0-9^]+", " ", normalized(text).replace("->", " ")).split()


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


def _is_subsequence(said: list[str], words: list[str], prefix: bool) -> bool:
    """Whether ``said`` appears in ``words`` in order (each word whole, or its start)."""
    it = iter(words)
    for w in said:
        for word in it:
            # a start of a word, but not of a number: 7 is not the start of 77
            if word == w or (
                prefix and word.startswith(w) and not (w[-1] + word[len(w)]).isdigit()
            ):
                break
        else:
            return False
    return True


def parse_move(text: str, moves: list[tuple[int, str]]) -> tuple[int | None, str]:
    """The action a person's input names, or (None, the reason it names none).

    Tried in turn, the first that fits any move wins: the number on the list; a move's
    whole name, its name less the details (after ``:`` or in brackets), either without its
    first word (``9 9`` for ``play 9 9``); then any of its words in order (``take`` for
    ``take 5♥ from the discard pile``, ``qh`` for ``play Q♥``); then the starts of its
    words (``disc`` for ``discard``). Input that fits several moves names none.
    """
    t = normalized(text)
    if not t:
        return None, "type the number of a move, or its name"
    if t.isdecimal() and t.isascii():
        k = int(t)
        if 1 <= k <= len(moves):
            return moves[k - 1][0], ""
        return None, f"{k} is not on the list: choose 1..{len(moves)}"
    said = _words(t)
    tiers: list[Callable[[str], bool]] = [
        lambda label: t in _names(label),
        lambda label: bool(said) and _is_subsequence(said, _words(label), prefix=False),
        lambda label: bool(said) and _is_subsequence(said, _words(label), prefix=True),
    ]
    for fits in tiers:
        matches = [(action, label) for action, label in moves if fits(label)]
        if len({a for a, _ in matches}) == 1:
            return matches[0][0], ""
        if matches:
            listed = ", ".join(label for _, label in matches[:3])
            more = f" and {len(matches) - 3} more" if len(matches) > 3 else ""
            return None, (
                f"{text.strip()!r} fits several moves ({listed}{more}): type its number or "
                "more of its name"
            )
    return None, f"{text.strip()!r} is not a legal move now; type a number from the list"


def _names(label: str) -> set[str]:
    """A label's exact names: whole, less its details, each also without the first word."""
    names = {normalized(label), normalized(label.split(":")[0]),
             normalized(re.sub(r"\(.*?\)", "", label))}
    return names | {n.split(" ", 1)[1] for n in names if " " in n}


def rules_page(spec: GameSpec) -> str:
    """The game's rules for players: ``how_to_play.md`` in the game's package, shipped with it.

    Suit symbols become letters (``Q♥`` -> ``QH``) where the screen shows no symbols.
    """
    page = resources.files(spec.package).joinpath("how_to_play.md")
    text = page.read_text("utf-8")
    return text if unicode_ok() else text.translate(_SUIT_UPPER)


def result_text(game: Game, s: State, seat: int | None) -> str:
    """The end of a game as ``seat`` reads it (None: a watcher): won, lost or a draw, then
    every seat's payoff and score."""
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
        score = f", {game.score_name} {scores[p]:g}" if scores is not None else ""
        parts.append(f"{who}: payoff {pay[p]:+.2f}{score}")
    return head + "\n" + "; ".join(parts)
