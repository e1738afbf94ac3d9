"""The games and replays the web app holds, and what it sends for each (no web framework here).

A ``Table`` is one game: its rules, the agents in the other seats, the state, every move. What
it sends for a seat (``Table.view``) is made only of what that seat may see: the game's board
and text for that seat (``spec.board``, ``spec.render``), its legal moves, the moves as the
table saw them (``spec.describe_move``) and, at the end, the result; the seed, the deck and the
other hands never leave the server while the game is on (a record, which holds the seed, is
handed out only once the game is over). A ``ReplayTable`` is a records file opened for
stepping through. Both live in a ``Store``, by an unguessable id, and expire when idle.

Agents are picked by name from what ``offered_agents`` lists (random, the rule agents, search
agents with a budget of at most ``MAX_BUDGET``, the shipped model ``best`` and ``best+search``,
and the names the server's operator adds, e.g. a ``cmd:PROGRAM`` agent: ``card-envs serve
--agent NAME``): never a model by its path nor a program a client names, so nothing a client
sends names a file on the server.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from card_envs.core.agents import Agent, make_agent, search_budgets
from card_envs.core.evaluation import deal_seed, game_rngs, play_move
from card_envs.core.game import Game, State
from card_envs.core.spec import GameSpec
from card_envs.core.text import move_label, move_text, result_text, rules_page
from card_envs.records import Record, Replay, make_record, replay
from card_envs.registry import env_names, load_spec

MAX_BUDGET = 1000  # the largest search budget a client may ask for (CPU time per move)
NEWS = 60  # moves since the seat's last move that a response lists, at most
HUMAN = "human"


class TableError(ValueError):
    """A request that cannot be done; ``status`` is its HTTP status (4xx)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


# --- agents --------------------------------------------------------------------------------
def offered_agents(spec: GameSpec, extra: Sequence[str] = ()) -> list[str]:
    """The agents the page offers for a game: random, the rule agents, each search agent at
    its two ladder budgets, the shipped model with and without search, then ``extra`` (the
    names the operator adds)."""
    names = ["random"]
    for name, cls in spec.agents.items():
        budgets = search_budgets(cls)
        names += [name] if budgets is None else [f"{name}:{b}" for b in budgets]
    return [*names, "best", "best+search", *extra]


def check_agent(spec: GameSpec, name: Any, extra: Sequence[str] = ()) -> str:
    """``name`` if a client may ask for it (see the module docstring; ``extra``: the names the
    operator adds); TableError if not."""
    if not isinstance(name, str):
        raise TableError(f"an agent is a name, got {name!r}")
    if name in extra:
        return name
    base, sep, budget = name.partition(":")
    cls = spec.agents.get(base)
    if sep and cls is not None and getattr(cls, "takes_budget", False):
        if budget.isdigit() and 1 <= int(budget) <= MAX_BUDGET:
            return name
        raise TableError(f"agent {name!r}: the budget must be 1..{MAX_BUDGET}")
    if name in ("random", "best", "best+search") or (not sep and name in spec.agents):
        return name
    raise TableError(f"unknown agent {name!r} for {spec.env_name}; choose one of "
                     f"{', '.join(offered_agents(spec, extra))} (or a search agent "
                     "NAME:BUDGET)")


def build_agent(spec: GameSpec, game: Game, name: str) -> tuple[Agent, str, str]:
    """(agent, the name it plays under, a note): ``best`` falls back to the strongest rule
    agent when no trained model loads (no train extra, or no model for these rules)."""
    try:
        return make_agent(spec, name, game), name, ""
    except (ValueError, ImportError):
        if not name.startswith("best"):
            raise
    fallback = spec.strongest_agent
    note = (f"no trained model loads here for these rules: `{fallback}` plays instead of "
            f"`{name}`")
    return make_agent(spec, fallback, game), fallback, note


# --- the catalog of games ------------------------------------------------------------------
def catalog(extra: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Every game the page offers: its name, rules variants (each with the player counts it
    allows), agents (``extra``: the names the operator adds) and rules page."""
    out = []
    for env_name in env_names():
        spec = load_spec(env_name)
        rules = rules_page(spec)
        out.append({
            "env": env_name,
            "name": spec.name,
            "title": rules.split("\n", 1)[0].split(":")[0].strip().title() or spec.name,
            "how_to_play": rules,
            "variants": [variant_entry(spec, v) for v in spec.variants],
            "agents": offered_agents(spec, extra),
            "default_agent": spec.strongest_agent,
        })
    return out


def variant_entry(spec: GameSpec, variant: dict[str, Any]) -> dict[str, Any]:
    """A rules variant as the page offers it: its arguments, the player counts it allows (a
    variant may fix them, e.g. Literature's original rules: 4) and its default count."""
    counts = [spec.make_game(**variant).num_players]
    if "num_players" in spec.game_args() and "num_players" not in variant:
        counts = [n for n in spec.num_players if _allows(spec, {**variant, "num_players": n})]
    return {"rules": dict(variant), "players": counts,
            "default_players": spec.make_game(**variant).num_players}


def _allows(spec: GameSpec, rules: dict[str, Any]) -> bool:
    try:
        spec.make_game(**rules)
    except ValueError:
        return False
    return True


def check_rules(spec: GameSpec, rules: Any) -> Game:
    """The game for the rules arguments a client sent; TableError naming what is wrong."""
    if not isinstance(rules, dict):
        raise TableError("rules must be an object of rules arguments")
    for key, value in rules.items():
        if not isinstance(value, (int, float, str, bool)) or isinstance(value, float):
            raise TableError(f"rules argument {key}={value!r}: give an integer, a string or a "
                             "boolean")
    try:
        return spec.make_game(**rules)
    except (ValueError, TypeError) as err:
        raise TableError(str(err)) from err


# --- one game ------------------------------------------------------------------------------
class Table:
    """One game of the web app (see the module docstring).

    ``seat`` is the person's seat, or None when agents play every seat (watching). Game 0 of
    the table's seed is dealt by ``default_rng(deal_seed(seed, 0))``, as ``card-envs play``
    deals, so the table's record replays.
    """

    def __init__(self, spec: GameSpec, game: Game, seat: int | None, agents: list[Agent | None],
                 names: list[str], notes: list[str], seed: int | None = None):
        self.spec, self.game, self.seat = spec, game, seat
        self.agents, self.names, self.notes = agents, names, notes
        self.seed = secrets.randbits(32) if seed is None else seed
        self.rng, self.agent_rng = game_rngs(self.seed, 0)
        self.state: State = game.init(self.rng)
        self.actions: list[int] = []
        self.log: list[dict[str, Any]] = []  # every move as the table saw it
        self.lock = threading.Lock()
        for agent in agents:
            if agent is not None and hasattr(agent, "reset"):
                agent.reset()

    @property
    def watching(self) -> bool:
        return self.seat is None

    # --- moves ------------------------------------------------------------------------
    def _apply(self, action: int, agent: Agent | None) -> None:
        """Play one move (the agent's choice, or the person's ``action``) and log it."""
        s, p = self.state, self.state.player
        before = s.copy() if self.spec.describe_move is not None else s
        if agent is None:
            self.game.apply(s, action, self.rng)
        else:
            action, _ = play_move(self.game, s, agent, self.rng, self.agent_rng)
        self.actions.append(action)
        text = move_text(self.spec, self.game, before, p, action, s)
        self.log.append({"step": s.steps - 1, "seat": p, "text": text})

    def move(self, action: Any, step: Any) -> None:
        """The person's move at ``step``, then the agents' until the person's turn comes back
        or the game ends; TableError (the game unchanged) when it is not a legal move now."""
        if self.watching:
            raise TableError("agents play every seat of this game: nobody moves by hand", 409)
        self._check_step(step)
        s = self.state
        if s.player != self.seat:
            raise TableError(f"it is player_{s.player}'s turn, not yours", 409)
        if not _is_int(action) or not 0 <= action < self.game.num_actions:
            raise TableError(f"action must be an integer 0..{self.game.num_actions - 1}, "
                             f"got {action!r}")
        if not self.game.legal_mask(s)[action]:
            raise TableError(f"{self.game.action_name(action)} (action {action}) is not a "
                             "legal move now", 409)
        self._apply(action, None)
        self.run_agents()

    def run_agents(self) -> None:
        """Let the agents move until the person's turn or the end of the game."""
        while not self.state.done and self.state.player != self.seat and not self.watching:
            self._apply(-1, self.agents[self.state.player])

    def advance(self, step: Any) -> None:
        """One agent move at ``step`` (watching agents play)."""
        if not self.watching:
            raise TableError("you play a seat of this game: agents move after you", 409)
        self._check_step(step)
        if self.state.done:
            raise TableError("the game is over", 409)
        self._apply(-1, self.agents[self.state.player])

    def _check_step(self, step: Any) -> None:
        if not _is_int(step):
            raise TableError(f"step must be the step the move is for (an integer), got {step!r}")
        if step != self.state.steps:
            raise TableError(f"the game is at step {self.state.steps}, not {step}: reload it",
                             409)

    # --- what is sent -----------------------------------------------------------------
    def view(self, view: int | None) -> dict[str, Any]:
        """What the page gets for ``view`` (a seat; None: every hand open, for a watcher or
        once the game is over): only what that seat may see."""
        s, game, spec = self.state, self.game, self.spec
        mine = view is not None and view == self.seat and s.player == view and not s.done
        moves = []
        if mine:
            for a in game.legal_actions(s):
                group = spec.move_group(game, s, view, a) if spec.move_group else None
                moves.append({"action": a, "label": move_label(spec, game, s, view, a),
                              "group": group[0] if group else None,
                              "short": group[1] if group else None})
        return {
            "env": spec.env_name,
            "mode": "watch" if self.watching else "play",
            "seat": self.seat,
            "view": view,
            "players": game.num_players,
            "names": self.seat_names(),
            "rules": game.config(),
            "step": s.steps,
            "to_act": None if s.done else s.player,
            "over": s.done,
            "board": spec.board(game, s, view) if spec.board is not None else None,
            "text": spec.render(game, s, view),
            "moves": moves,
            "news": self.news(),
            "result": result_text(game, s, self.seat).split("\n") if s.done else None,
            "notes": self.notes,
        }

    def seat_names(self) -> list[str]:
        """Who plays each seat, as the page shows it."""
        return ["you" if p == self.seat else name for p, name in enumerate(self.names)]

    def news(self) -> list[dict[str, Any]]:
        """The moves since the person's last move (the last few when watching)."""
        log = self.log
        start = max(0, len(log) - (8 if self.watching else NEWS))
        if not self.watching:
            for k in range(len(log) - 1, -1, -1):
                if log[k]["seat"] == self.seat:
                    start = max(start, k)  # the person's own last move, then the others'
                    break
        return log[start:]

    def record(self) -> Record:
        """The game's record (it holds the seed: TableError while a person's game is on)."""
        if not self.watching and not self.state.done:
            raise TableError("the game is not over: its record would show the hidden cards", 409)
        names = [HUMAN if p == self.seat else name for p, name in enumerate(self.names)]
        return make_record(self.spec, self.game, deal_seed(self.seed, 0), names, self.actions,
                           self.state, "serve")


def new_table(env: Any, rules: Any, seat: Any, agents: Any, seed: int | None = None,
              extra: Sequence[str] = ()) -> Table:
    """A table from a client's request: the game, the person's seat (None: watch) and the
    agents of the other seats (one name for all, or one per seat; ``extra``: the names the
    operator adds to the offered ones); TableError if invalid."""
    if not isinstance(env, str) or env not in [*env_names(), *(load_spec(e).name
                                                                 for e in env_names())]:
        raise TableError(f"unknown game {env!r}; choose one of {', '.join(env_names())}")
    spec = load_spec(env)
    game = check_rules(spec, rules if rules is not None else {})
    n = game.num_players
    if seat is not None and (not _is_int(seat) or not 0 <= seat < n):
        raise TableError(f"seat must be 0..{n - 1} (or null to watch agents), got {seat!r}")
    names = _seat_agents(spec, agents, n, extra)
    built, played, notes = [], [], []
    for p, name in enumerate(names):
        if p == seat:
            built.append(None)
            played.append(HUMAN)
            continue
        agent, used, note = build_agent(spec, game, name)
        built.append(agent)
        played.append(used)
        if note and note not in notes:
            notes.append(note)
    table = Table(spec, game, seat, built, played, notes, seed)
    table.run_agents()
    return table


def _seat_agents(spec: GameSpec, agents: Any, n: int, extra: Sequence[str] = ()) -> list[str]:
    """One checked agent name per seat from a name or a list (the person's entry ignored)."""
    if isinstance(agents, str):
        agents = [agents] * n
    if not isinstance(agents, list) or len(agents) != n:
        raise TableError(f"agents must be one name or a list of {n} (one per seat)")
    return [check_agent(spec, a, extra) if a is not None else "random" for a in agents]


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# --- replays -------------------------------------------------------------------------------
class ReplayTable:
    """A records file opened in the page: its games, one replayed at a time, step by step."""

    def __init__(self, records: Sequence[Record]):
        self.records = list(records)
        self.lock = threading.Lock()
        self._open: tuple[int, Replay] | None = None

    def games(self) -> list[dict[str, Any]]:
        """The games of the file, as the page lists them."""
        return [{"index": k, "title": r.title(), "env": r.env, "agents": r.agents,
                 "moves": len(r.actions), "finished": r.finished, "source": r.source}
                for k, r in enumerate(self.records)]

    def replayed(self, k: Any) -> Replay:
        """Game ``k`` replayed (the last one opened is kept); TableError if it departs."""
        if not _is_int(k) or not 0 <= k < len(self.records):
            raise TableError(f"game must be 0..{len(self.records) - 1}, got {k!r}", 404)
        if self._open is None or self._open[0] != k:
            try:
                self._open = (k, replay(self.records[k]))
            except ValueError as err:
                raise TableError(str(err)) from err
        return self._open[1]

    def frame(self, k: Any, step: Any, view: int | None) -> dict[str, Any]:
        """The table of game ``k`` before move ``step`` (its end for the last) from ``view``."""
        rep = self.replayed(k)
        total = len(rep.record.actions)
        if not _is_int(step) or not 0 <= step <= total:
            raise TableError(f"step must be 0..{total}, got {step!r}")
        n = rep.game.num_players
        if view is None and not rep.record.finished:
            raise TableError("this game was not finished: choose a seat to view it from "
                             "(every hand is open only for a finished game)")
        if view is not None and not 0 <= view < n:
            raise TableError(f"view must be a seat 0..{n - 1} or all")
        s, spec, game = rep.states[step], rep.spec, rep.game
        last = None
        if step > 0:
            seat, action, _ = rep.record.actions[step - 1]
            last = {"step": step - 1, "seat": seat,
                    "text": move_text(spec, game, rep.states[step - 1], seat, action, s)}
        return {
            "env": rep.record.env,
            "game": k,
            "step": step,
            "steps": total,
            "view": view,
            "players": n,
            "names": rep.record.agents,
            "finished": rep.record.finished,
            "board": spec.board(game, s, view) if spec.board is not None else None,
            "text": spec.render(game, s, view),
            "last": last,
            "result": result_text(game, s, view).split("\n") if s.done else None,
        }


# --- the store -----------------------------------------------------------------------------
class Store:
    """Tables and replays by unguessable id (``secrets.token_urlsafe``), at most ``limit``;
    one idle for ``idle`` seconds expires, and when full the one idle longest goes first."""

    def __init__(self, limit: int = 200, idle: float = 1800.0):
        self.limit, self.idle = limit, idle
        self._items: OrderedDict[str, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, item: Any) -> str:
        with self._lock:
            self._sweep()
            while len(self._items) >= self.limit:
                self._items.popitem(last=False)  # the one idle longest
            key = secrets.token_urlsafe(18)
            self._items[key] = (time.monotonic(), item)
            return key

    def get(self, key: str, kind: type) -> Any:
        """The item ``key`` of ``kind``; TableError 404 if there is none (or it expired)."""
        with self._lock:
            self._sweep()
            found = self._items.get(key)
            if found is None or not isinstance(found[1], kind):
                what = "game" if kind is Table else "replay"
                raise TableError(f"no {what} with this id (it may have expired)", 404)
            self._items[key] = (time.monotonic(), found[1])
            self._items.move_to_end(key)
            return found[1]

    def __len__(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._items)

    def _sweep(self) -> None:
        """Drop what has been idle too long (the oldest come first)."""
        cutoff = time.monotonic() - self.idle
        while self._items:
            key, (touched, _) = next(iter(self._items.items()))
            if touched >= cutoff:
                break
            del self._items[key]
