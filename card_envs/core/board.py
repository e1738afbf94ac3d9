"""The table as data for drawing (the web app's board): seats, their cards, the piles between.

A game's spec may name a ``board(game, state, player)`` function (in its ``env.py``, beside
``render``) that gives the table as plain data, made with the helpers below: everything when
``player`` is None, else only what that seat may see (the same rule as ``render``; the web
tests check it with twin worlds). The web app draws any board the same way, laid out by the
game's ``layout`` name::

    {"layout": "palace", "status": "player_1 to play",
     "seats": [{"seat": 0, "acting": True, "out": False, "team": None, "tags": ["3 lives"],
                "rows": [{"label": "hand", "cards": [{"rank": "Q", "suit": 1}, ...]}, ...]}],
     "center": [{"label": "pile", "cards": [...], "count": 12, "note": "top 9 x2"}],
     "info": ["last play: player_2 played 9 9"]}

A card is ``{"rank": "Q", "suit": 1}`` (suit 0..3 = ♠ ♥ ♦ ♣, None for games without suits),
or ``{"back": True}`` face down; ``act`` is the action that clicking it plays, ``pick`` a key
that a row's ``targets`` maps to an action (pick a card, then a pile), ``mark`` a word the
page shows it with (``known``, ``new``, ``down``). A row with ``chips`` lists labelled marks
instead of cards (e.g. Literature's half-suits).
"""

from __future__ import annotations

from typing import Any

Card = dict[str, Any]
Row = dict[str, Any]


def card(rank: str, suit: int | None = None, act: int | None = None, mark: str | None = None,
         pick: str | None = None) -> Card:
    """A face-up card; ``act``: the action clicking it plays; ``pick``: its key for targets."""
    out: Card = {"rank": rank, "suit": suit}
    if act is not None:
        out["act"] = int(act)
    if mark:
        out["mark"] = mark
    if pick is not None:
        out["pick"] = pick
    return out


def backs(count: int, act: int | None = None) -> list[Card]:
    """``count`` face-down cards (each playing ``act`` when clicked, if given)."""
    one: Card = {"back": True}
    if act is not None:
        one["act"] = int(act)
    return [dict(one) for _ in range(count)]


def row(label: str, cards: list[Card] | None = None, count: int | None = None, note: str = "",
        act: int | None = None, targets: dict[str, int] | None = None,
        chips: list[dict[str, str]] | None = None, kind: str = "fan") -> Row:
    """A labelled row of cards: a hand (``fan``), a ``pile`` (cards stacked, ``count`` said),
    or ``chips``. ``act`` is the action clicking the row plays (e.g. take the discard)."""
    out: Row = {"label": label, "kind": kind, "cards": cards or []}
    if count is not None:
        out["count"] = int(count)
    if note:
        out["note"] = note
    if act is not None:
        out["act"] = int(act)
    if targets:
        out["targets"] = {k: int(v) for k, v in targets.items()}
    if chips is not None:
        out["chips"] = chips
    return out


def seat(p: int, rows: list[Row], tags: list[str] | None = None, acting: bool = False,
         out: bool = False, team: int | None = None) -> dict[str, Any]:
    """One seat of the table: its rows of cards and its tags (lives, tricks, ...)."""
    return {"seat": p, "rows": rows, "tags": tags or [], "acting": bool(acting), "out": bool(out),
            "team": team}


def board(layout: str, seats: list[dict[str, Any]], center: list[Row], status: str,
          info: list[str] | None = None) -> dict[str, Any]:
    """The whole table."""
    return {"layout": layout, "seats": seats, "center": center, "status": status,
            "info": info or []}


def clickable(legal, action: int) -> int | None:
    """``action`` if ``legal`` (a mask, or None when the viewer is not to act) allows it."""
    if legal is None or not 0 <= action < len(legal) or not legal[action]:
        return None
    return action
