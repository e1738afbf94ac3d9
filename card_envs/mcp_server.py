"""``card-envs mcp``: the games as a Model Context Protocol server over stdio (the ``mcp`` extra).

Any MCP client (a language-model host, or a script on the SDK's own client) can list the
games and their rules variants, read a game's rules page, start games (the game, its rules,
the client's seat and the agents of the other seats: random, a rule agent, a search agent
``NAME:BUDGET`` or ``best``) and play them by id, several at once: read the seat's view as
text (the table from its seat, the moves since its last one, its legal moves numbered), play
a move by number or by name, and read the result and the game's record (docs/text_agents.md).

The games are the web app's tables (``card_envs.web.tables.Table``: only what the client's
seat may see is ever sent, the seed only in the record of a game that is over); the text is
the terminal's (``card_envs.core.text``, ``card_envs.core.seat_text``). This module adds no
game logic: ``TextGames`` keeps the games by id and applies the illegal-move policy, and
``build_server`` makes its methods the server's tools. A move that names no legal move gets a
one-line reason that lists the legal moves and changes nothing; the answer after ``retries``
such answers in a row gets the fallback instead: ``random`` plays a random legal move for the
client, ``forfeit`` ends the game there. Either is written in the game's record (its
``source``). Importing ``card_envs`` imports none of this; ``build_server`` imports ``mcp``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from card_envs.core.evaluation import deal_seed
from card_envs.core.seat_text import answer_move, check_policy, numbered, random_move, screen
from card_envs.core.text import result_text, rules_page
from card_envs.records import Record, RecordWriter, make_record
from card_envs.registry import env_names, load_spec
from card_envs.web.tables import Table, TableError, catalog, new_table

CLIENT = "mcp-client"  # the client's seat in a record's agents
INSTRUCTIONS = (
    "Card games against agents. list_games shows the games, rules(game) a game's rules; "
    "start_game starts one and shows your seat's view; play(game_id, move) plays a move, by "
    "its number on the list or by its name, and shows the view again after the other seats "
    "have moved. result(game_id) and record(game_id) once the game is over."
)


class TextGameError(ValueError):
    """A request the server refuses, with a one-line reason; the game is unchanged."""


@dataclass
class TextGame:
    """One game of a client: the table, and the answers it refused since its last move."""

    id: str
    table: Table
    refused: int = 0
    forfeit: str = ""  # why the client's seat forfeited ('' while it has not)
    fallbacks: list[int] = field(default_factory=list)  # steps of the moves played for it
    fallback_rng: np.random.Generator | None = None

    @property
    def over(self) -> bool:
        return self.table.state.done or bool(self.forfeit)


class TextGames:
    """The games of one server, by id (``g1``, ``g2``, ...), and the illegal-move policy.

    ``retries``: answers naming no legal move that are refused (one line each, the game
    unchanged) before the fallback; ``fallback``: ``random`` or ``forfeit``; ``max_games``:
    games held at once (``end_game`` drops one); ``records``: where every game that ends is
    written (or None).
    """

    def __init__(self, retries: int = 3, fallback: str = "random", max_games: int = 100,
                 records: RecordWriter | None = None):
        self.retries, self.fallback = check_policy(retries, fallback)
        if isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < 1:
            raise ValueError(f"max_games={max_games!r}: give a positive number of games")
        self.max_games, self.records = max_games, records
        self.games: dict[str, TextGame] = {}
        self._started = 0
        self._lock = threading.RLock()

    # --- the catalog ---------------------------------------------------------------------
    def list_games(self) -> str:
        """Every game: its env name, players, rules variants and the agents it offers."""
        lines = []
        for entry in catalog():
            lines.append(f"{entry['env']} ({entry['title']}): agents "
                         f"{', '.join(entry['agents'])}; default agent {entry['default_agent']}")
            for variant in entry["variants"]:
                rules = ", ".join(f"{k}={v!r}" for k, v in variant["rules"].items())
                players = "/".join(map(str, variant["players"]))
                lines.append(f"  rules {{{rules}}}: {players} players "
                             f"(default {variant['default_players']})")
        lines.append("Any rules argument a game takes may be given; search agents take a "
                     "budget (NAME:BUDGET).")
        return "\n".join(lines)

    def rules(self, game: str) -> str:
        """The game's rules page, as players read it."""
        return rules_page(self._spec(game))

    # --- games -----------------------------------------------------------------------------
    def start(self, game: str, rules: dict[str, Any] | None = None, seat: int = 0,
              opponents: str | list[str] = "best", seed: int | None = None) -> str:
        """Start a game: its id and the client's view (the other seats move first where they
        come first). ``opponents``: one agent name for every other seat, or one per other
        seat in seat order (or one per seat, the client's entry ignored)."""
        with self._lock:
            if len(self.games) >= self.max_games:
                raise TextGameError(f"{len(self.games)} games are open, the most this server "
                                    f"holds: end one first ({', '.join(self.games)})")
            spec = self._spec(game)
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                     or seed < 0):
                raise TextGameError(f"seed must be a whole number >= 0, got {_short(seed)}")
            if isinstance(seat, bool) or not isinstance(seat, int):
                raise TextGameError(f"seat must be a seat number (0 plays first), got "
                                    f"{_short(seat)}")
            try:
                table = new_table(spec.env_name, rules, seat,
                                  _by_seat(spec, rules, seat, opponents), seed)
            except TableError as err:
                raise TextGameError(_line(err)) from err
            self._started += 1
            key = f"g{self._started}"
            self.games[key] = TextGame(key, table,
                                       fallback_rng=np.random.default_rng([table.seed, 0, 9]))
            self._ended(self.games[key])
            return self._text(self.games[key])

    def view(self, game_id: str) -> str:
        """The client's view of the game: the table, the moves since its last move, its legal
        moves (or the result once the game is over)."""
        with self._lock:
            return self._text(self._game(game_id))

    def legal_moves(self, game_id: str) -> str:
        """The client's legal moves, numbered (none when it is not to move)."""
        with self._lock:
            g = self._game(game_id)
            moves = self._moves(g)
            if not moves:
                return f"{game_id}: no move to make: " + ("the game is over" if g.over
                                                         else "it is not your turn")
            return "\n".join(numbered(moves))

    def play(self, game_id: str, move: Any) -> str:
        """Play the client's move (a number on the list or a move's name), then the other
        seats' until the client's turn comes back or the game ends; the view after them.
        TextGameError (the game unchanged) for a move that names no legal move, until the
        fallback."""
        with self._lock:
            g = self._game(game_id)
            if g.over:
                raise TextGameError(f"game {game_id} is over: read result({game_id}) or "
                                    f"record({game_id})")
            moves = self._moves(g)
            action, reason = answer_move(move, moves)
            if not moves:
                raise TextGameError(f"game {game_id}: {reason}")
            if action is None:
                g.refused += 1
                if g.refused <= self.retries:
                    left = self.retries - g.refused + 1
                    raise TextGameError(f"{reason} ({left} more answer"
                                        f"{'s' if left != 1 else ''} before the fallback: "
                                        f"{self.fallback})")
                return self._fall_back(g, moves, reason)
            g.refused = 0
            self._move(g, action)
            return self._text(g)

    def result(self, game_id: str) -> str:
        """The result as the client's seat reads it (once the game is over)."""
        with self._lock:
            return self._result(self._over(game_id, "player_{} is to move"))

    def record(self, game_id: str) -> str:
        """The game's record (one line of JSON: docs/records.md), once the game is over."""
        with self._lock:
            return self._record(self._over(
                game_id, "its record holds the seed, which would show the hidden cards")).to_line()

    def end(self, game_id: str) -> str:
        """Drop a game (over or not) from the server."""
        with self._lock:
            self._game(game_id)
            del self.games[game_id]
            return f"game {game_id} ended" + (f"; open games: {', '.join(self.games)}"
                                              if self.games else "")

    def open_games(self) -> str:
        """The games open on this server, one a line."""
        with self._lock:
            if not self.games:
                return "no games open: start one with start_game"
            return "\n".join(f"{key}: {self._head(g)}" for key, g in self.games.items())

    # --- inside ----------------------------------------------------------------------------
    def _spec(self, game: Any):
        try:
            if not isinstance(game, str):
                raise ValueError(f"a game is an env name, got {_short(game)}; choose one of "
                                 f"{', '.join(env_names())}")
            return load_spec(game)
        except ValueError as err:
            raise TextGameError(_line(err)) from err

    def _game(self, game_id: Any) -> TextGame:
        g = self.games.get(game_id) if isinstance(game_id, str) else None
        if g is None:
            known = f"open games: {', '.join(self.games)}" if self.games else "no game is open"
            raise TextGameError(f"no game {_short(game_id)}; {known}")
        return g

    def _over(self, game_id: Any, why: str) -> TextGame:
        """The game ``game_id`` if it is over; else TextGameError: not over, ``why`` (its
        ``{}``: the seat to move)."""
        g = self._game(game_id)
        if not g.over:
            raise TextGameError(f"game {game_id} is not over: "
                                + why.format(g.table.state.player))
        return g

    def _moves(self, g: TextGame) -> list[tuple[int, str]]:
        if g.over:
            return []
        t = g.table
        return [(m["action"], m["label"]) for m in t.view(t.seat)["moves"]]

    def _move(self, g: TextGame, action: int) -> None:
        g.table.move(action, g.table.state.steps)
        self._ended(g)

    def _fall_back(self, g: TextGame, moves: list[tuple[int, str]], reason: str) -> str:
        answers = f"{g.refused} answers in a row named no legal move"
        g.refused = 0
        step = g.table.state.steps
        if self.fallback == "forfeit":
            g.forfeit = f"player_{g.table.seat} forfeited at step {step}: {answers}"
            self._ended(g)
            return f"{reason}\n{answers}: you forfeit the game.\n{self._text(g)}"
        action = random_move(moves, g.fallback_rng)
        g.fallbacks.append(step)
        label = dict(moves)[action]
        self._move(g, action)
        return (f"{reason}\n{answers}: a random legal move was played for you ({label}).\n"
                f"{self._text(g)}")

    def _ended(self, g: TextGame) -> None:
        """Write the game's record if it just ended (and the server keeps records)."""
        if self.records is not None and g.over:
            self.records.write(self._record(g))

    def _record(self, g: TextGame) -> Record:
        t = g.table
        names = [CLIENT if p == t.seat else name for p, name in enumerate(t.names)]
        source = f"card-envs mcp game {g.id}"
        if g.fallbacks:
            source += (f"; fallback: a random legal move for player_{t.seat} at step"
                       f"{'s' if len(g.fallbacks) > 1 else ''} "
                       f"{', '.join(map(str, g.fallbacks))}")
        if g.forfeit:
            source += f"; {g.forfeit}"
        return make_record(t.spec, t.game, deal_seed(t.seed, 0), names, t.actions, t.state,
                           source)

    def _head(self, g: TextGame) -> str:
        t = g.table
        seats = ", ".join("you" if p == t.seat else f"player_{p} {name}"
                          for p, name in enumerate(t.names))
        state = ("over" if g.over else "your move" if t.state.player == t.seat
                 else f"player_{t.state.player} to move")
        return (f"{t.spec.env_name} {t.game.config()}; you are player_{t.seat} ({seats}); "
                f"step {t.state.steps}, {state}")

    def _text(self, g: TextGame) -> str:
        """What the client reads: the game's head line, notes, the seat's screen, the result."""
        t = g.table
        view = t.view(t.seat)
        news = [("you" if n["seat"] == t.seat else f"player_{n['seat']}") + f": {n['text']}"
                for n in view["news"]]
        lines = [f"Game {g.id}: {self._head(g)}", *(f"Note: {n}" for n in view["notes"]),
                 screen(view["text"], self._moves(g), news)]
        if g.over:
            lines.append(self._result(g))
        return "\n".join(lines)

    def _result(self, g: TextGame) -> str:
        t = g.table
        if g.forfeit:
            return (f"You forfeited this game ({g.forfeit}); it counts as not finished. "
                    f"record({g.id}) gives its record.")
        return result_text(t.game, t.state, t.seat) + f"\nrecord({g.id}) gives its record."


def _by_seat(spec, rules: Any, seat: Any, opponents: Any) -> Any:
    """``opponents`` as the web's tables take them: a list of one name per other seat gets
    the client's seat put in (None); anything else as it is (``new_table`` checks it)."""
    if not isinstance(opponents, list) or not isinstance(seat, int):
        return opponents
    try:
        players = spec.make_game(**rules).num_players if isinstance(rules, dict) else \
            spec.make_game().num_players
    except (ValueError, TypeError):
        return opponents
    if len(opponents) == players - 1 and 0 <= seat < players:
        return [*opponents[:seat], None, *opponents[seat:]]
    return opponents


def _line(err: Exception) -> str:
    return " ".join(str(err).split())


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def build_server(games: TextGames):
    """The MCP server whose tools are ``games``' methods (imports the ``mcp`` SDK)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    class Server(MCPServer):
        async def call_tool(self, name, arguments, context=None):
            # the SDK's argument errors run over several lines: one line, like every error
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError:
                raise
            except ToolError as err:
                raise ToolError(_tool_error(err)) from err

    server = Server("card-envs", instructions=INSTRUCTIONS, log_level="WARNING")

    def call(method, *args):
        try:
            return method(*args)
        except TextGameError as err:
            raise ToolError(str(err)) from err

    _add_tools(server.tool(structured_output=False), call, games)
    return server


def _add_tools(tool, call, games: TextGames) -> None:
    """The server's tools, in the order it lists them: each ``games``' method of its name,
    run through ``call`` (which turns a TextGameError into the tool's error)."""

    @tool
    def list_games() -> str:
        """Every game: its env name, its rules variants with their player counts, and the
        agents that can play the other seats."""
        return call(games.list_games)

    @tool
    def rules(game: str) -> str:
        """A game's rules page, as players read it (game: an env name such as palace_v0, or
        its name, palace)."""
        return call(games.rules, game)

    @tool
    def start_game(game: str, rules: dict[str, int | str | bool] | None = None, seat: int = 0,
                   opponents: str | list[str] = "best", seed: int | None = None) -> str:
        """Start a game and show your seat's view. game: an env name (list_games); rules:
        rules arguments, e.g. {"num_players": 3}; seat: your seat, 0 plays first;
        opponents: one agent for every other seat (random, a rule agent, a search agent
        NAME:BUDGET, or best: the trained model where one is shipped) or a list, one per
        other seat in seat order; seed: the deal's seed (default: a random one)."""
        return call(games.start, game, rules, seat, opponents, seed)

    @tool
    def view(game_id: str) -> str:
        """Your seat's view of a game: the table, the moves since your last move, your legal
        moves numbered (or the result once the game is over)."""
        return call(games.view, game_id)

    @tool
    def legal_moves(game_id: str) -> str:
        """Your legal moves in a game, numbered."""
        return call(games.legal_moves, game_id)

    @tool
    def play(game_id: str, move: str | int) -> str:
        """Play your move: its number on the list, or its name (any words of it in order,
        e.g. "take" or "play 9"); then the other seats move until your turn comes back. A
        move that names no legal move is refused with the reason (the game unchanged)."""
        return call(games.play, game_id, move)

    @tool
    def result(game_id: str) -> str:
        """The result of a game that is over, as your seat reads it."""
        return call(games.result, game_id)

    @tool
    def record(game_id: str) -> str:
        """The record of a game that is over: one line of JSON (its seed, every move, the
        result), which `card-envs replay` replays."""
        return call(games.record, game_id)

    @tool
    def end_game(game_id: str) -> str:
        """Drop a game from the server, over or not."""
        return call(games.end, game_id)

    @tool
    def open_games() -> str:
        """The games open on this server."""
        return call(games.open_games)


def _where(loc: tuple) -> str:
    """Where an argument check failed, on one line: ``rules.seat``; a location that holds a
    client's own key (any text, a line break say) is written as Python writes it."""
    return ".".join(str(p) if isinstance(p, int) or str(p).isidentifier() else repr(p)
                    for p in loc) or "arguments"


def _tool_error(err: Exception) -> str:
    """A tool error on one line: a failed argument check as ``seat: Input should be ...``."""
    cause = err.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        try:
            parts = [f"{_where(e['loc'])}: {' '.join(str(e['msg']).split())}"
                     for e in errors()]
        except (TypeError, KeyError):
            parts = []
        if parts:
            return "invalid arguments: " + "; ".join(parts)
    return _line(err)


def main(retries: int, fallback: str, max_games: int, record: str | None) -> int:
    """``card-envs mcp``: serve the games over stdio until the client closes the stream."""
    games = TextGames(retries, fallback, max_games)
    server = build_server(games)  # ImportError without the mcp extra, before any file opens
    games.records = RecordWriter(record) if record else None
    try:
        server.run("stdio")
    finally:
        if games.records is not None:
            games.records.close()
    return 0
