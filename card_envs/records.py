"""Game records: one game per line of JSON (JSON Lines), replayed exactly, loaded as data.

A record holds what it takes to play the game again, step for step, and what came of it
(the format is documented in docs/records.md; ``FORMAT_VERSION`` is its version)::

    {"format": "card-envs-record", "format_version": 1, "card_envs": "0.2.0",
     "env": "thirty_one_v0", "rules": {"num_players": 2, ...}, "seed": [0, 5, 0],
     "agents": ["greedy", "expected_value"], "source": "evaluate game 5",
     "actions": [[0, 0, "draw"], [0, 4, "place in slot 1"], ...],
     "result": {"steps": 57, "terminal": true, "truncated": false, "payoffs": [1.0, -1.0],
                "scores": [2.0, 0.0], "places": null, "seats": [{...}, {...}]}}

``numpy.random.default_rng(seed)`` is the game's generator: it deals (``Game.init``) and
draws every chance event (``Game.apply``); the agents choose with generators of their own,
so the seed and the actions give the game again without the agents. Each action is
``[seat, action index, the action's name]`` (``Game.action_name``); ``result`` is None for a
game stopped before its end, else the payoffs, scores, places (games that rank players) and
every seat's ``Game.results``.

``replay`` re-plays a record and checks it at every step (the seat to act, the action's
legality and name, the result): a record from another version of a game, or one that was
changed, fails with a ``RecordError`` naming the line and the step where it departs.
``imitation_data`` turns records into per-seat (observation, action mask, action) arrays.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from card_envs.core.evaluation import PlayedGame
from card_envs.core.game import Game, State
from card_envs.core.spec import GameSpec
from card_envs.registry import env_names, load_spec

FORMAT = "card-envs-record"
FORMAT_VERSION = 1
# The fields of a record line, in the order they are written.
FIELDS = ("format", "format_version", "card_envs", "env", "rules", "seed", "agents", "source",
          "actions", "result")


def package_version() -> str:
    """The version of card-envs that writes records (``card_envs.__version__``)."""
    from card_envs import __version__

    return __version__


class RecordError(ValueError):
    """A record that cannot be read or does not replay: the message names where and why."""


@dataclass(frozen=True)
class Record:
    """One game: its rules, seed, agents, every action, and its result (None: unfinished).

    ``actions`` are (seat, action, name) triples; ``where`` says where the record was read
    from (``games.jsonl line 3``), for error messages, and is not written.
    """

    env: str
    rules: dict[str, Any]
    seed: int | list[int]
    agents: list[str]
    actions: list[tuple[int, int, str]]
    result: dict[str, Any] | None
    card_envs: str = field(default_factory=package_version)
    source: str = ""
    format_version: int = FORMAT_VERSION
    where: str = field(default="", compare=False)

    @property
    def finished(self) -> bool:
        """Whether the game was played to its end (or to its step cap)."""
        return self.result is not None

    def to_json(self) -> dict[str, Any]:
        """The record as the JSON object of its line."""
        return {
            "format": FORMAT,
            "format_version": self.format_version,
            "card_envs": self.card_envs,
            "env": self.env,
            "rules": self.rules,
            "seed": self.seed,
            "agents": list(self.agents),
            "source": self.source,
            "actions": [list(a) for a in self.actions],
            "result": self.result,
        }

    def to_line(self) -> str:
        """The record as one line of JSON (no newline), keys in the documented order."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))

    def title(self) -> str:
        """A short description for lists: env, agents, moves and how it ended."""
        seats = ", ".join(f"player_{p} {a}" for p, a in enumerate(self.agents))
        end = "unfinished" if self.result is None else result_summary(self.result)
        return f"{self.env}: {seats}; {len(self.actions)} moves; {end}"


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: numpy numbers as Python ones, tuples and arrays as lists."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value


def game_result(game: Game, state: State) -> dict[str, Any] | None:
    """What a record says came of a game: None while it is not over."""
    if not state.done:
        return None
    seats = plain(game.results(state))
    places = [r.get("place") for r in seats]
    scores = game.scores(state)
    return {
        "steps": int(state.steps),
        "terminal": bool(state.terminal),
        "truncated": bool(state.truncated),
        "payoffs": plain(game.payoffs(state)),
        "scores": None if scores is None else plain(scores),
        "places": None if any(p is None for p in places) else places,
        "seats": seats,
    }


def result_summary(result: dict[str, Any]) -> str:
    """The result in a few words: payoffs (and places) per seat."""
    pays = " ".join(f"{p:+.2f}" for p in result["payoffs"])
    text = ("cut at the step cap; " if result["truncated"] else "") + f"payoffs {pays}"
    if result.get("places"):
        text += "; places " + " ".join(str(p) for p in result["places"])
    return text


def make_record(spec: GameSpec, game: Game, seed: int | Sequence[int], agents: Sequence[str],
                actions: Sequence[int], state: State, source: str = "") -> Record:
    """The record of a game played from ``default_rng(seed)`` with ``actions``; ``state`` is
    where it stands now (its end, or where it was stopped).

    The actions' seats and names are found by playing them again from the seed (cheap next to
    the agents' thinking), which also checks that the seed and actions do give ``state``.
    """
    seed = _seed_value(seed)
    rng = np.random.default_rng(seed)
    check = game.init(rng)
    triples = []
    for action in actions:
        a = int(action)
        triples.append((int(check.player), a, game.action_name(a)))
        game.check_action(check, a)
        game.apply(check, a, rng)
    if check.steps != state.steps or check.done != state.done:
        raise ValueError(f"{spec.env_name}: the seed and the actions do not give the game's "
                         f"state (step {check.steps}, not {state.steps})")
    return Record(env=spec.env_name, rules=plain(game.config()), seed=seed,
                  agents=[str(a) for a in agents], actions=triples,
                  result=game_result(game, state), source=source)


def played_record(spec: GameSpec, game: Game, played: PlayedGame, names: Sequence[str],
                  source: str = "") -> Record:
    """The record of a game handed over by evaluation's ``keep`` (``names``: contestants)."""
    agents = [names[i] for i in played.seats]
    return make_record(spec, game, played.seed, agents, played.actions, played.state, source)


def _seed_value(seed: Any) -> int | list[int]:
    """``seed`` as a record keeps it: a non-negative int or a list of them."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        return [int(x) for x in seed]
    return int(seed)


# --- writing -----------------------------------------------------------------------------------
class RecordWriter:
    """Writes records to a file, one line each, flushed as each game ends (so that a run cut
    short keeps the games it finished). The file is written anew."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self._file: TextIO = self.path.open("w", encoding="utf-8")
        except OSError as err:
            raise ValueError(f"--record {path}: cannot write it: {err.strerror}") from err
        self.count = 0

    def write(self, record: Record) -> None:
        self._file.write(record.to_line() + "\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        self._file.close()

    def summary(self) -> str:
        """``3 games recorded in FILE``."""
        return f"{self.count} game{'' if self.count == 1 else 's'} recorded in {self.path}"

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- reading -----------------------------------------------------------------------------------
def read_records(path: str | Path) -> list[Record]:
    """Every record of a JSON Lines file (blank lines skipped); RecordError names a bad line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise RecordError(f"{path}: cannot read it: {err.strerror}") from err
    except UnicodeDecodeError as err:
        raise RecordError(f"{path}: not a records file (not UTF-8 text)") from err
    return parse_records(text, path.name)


def parse_records(text: str, name: str = "records") -> list[Record]:
    """The records of JSON Lines ``text``; ``name`` is what error messages call the file."""
    records = [parse_record(line, f"{name} line {k}")
               for k, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not records:
        raise RecordError(f"{name}: no records in it")
    return records


def parse_record(line: str, where: str = "record") -> Record:
    """One record from its line of JSON, its fields checked; RecordError says what is wrong."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise RecordError(f"{where}: not JSON ({err.msg} at column {err.colno})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError(f"{where}: not a card-envs game record (no \"format\": \"{FORMAT}\")")
    version = data.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise RecordError(f"{where}: format_version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise RecordError(f"{where}: record format {version} is newer than this card-envs "
                          f"({package_version()}) reads (format {FORMAT_VERSION})")
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise RecordError(f"{where}: missing {', '.join(missing)}")
    _expect(where, "card_envs", data["card_envs"], str)
    _expect(where, "env", data["env"], str)
    _expect(where, "rules", data["rules"], dict)
    _expect(where, "source", data["source"], str)
    seed = data["seed"]
    if not (_is_count(seed) or (isinstance(seed, list) and seed and all(map(_is_count, seed)))):
        raise RecordError(f"{where}: seed must be an integer >= 0 or a list of them, got {seed!r}")
    agents = data["agents"]
    if not (isinstance(agents, list) and all(isinstance(a, str) for a in agents)):
        raise RecordError(f"{where}: agents must be a list of names, one per seat")
    actions = data["actions"]
    if not isinstance(actions, list):
        raise RecordError(f"{where}: actions must be a list of [seat, action, name]")
    for k, a in enumerate(actions):
        if not (isinstance(a, list) and len(a) == 3 and _is_count(a[0]) and _is_count(a[1])
                and isinstance(a[2], str)):
            raise RecordError(f"{where}: step {k}: an action must be [seat, action, name], "
                              f"got {a!r}")
    result = data["result"]
    if result is not None:
        _expect(where, "result", result, dict)
        gaps = [k for k in ("steps", "terminal", "truncated", "payoffs", "scores", "places",
                            "seats") if k not in result]
        if gaps:
            raise RecordError(f"{where}: result lacks {', '.join(gaps)}")
    return Record(env=data["env"], rules=data["rules"], seed=seed, agents=agents,
                  actions=[(a[0], a[1], a[2]) for a in actions], result=result,
                  card_envs=data["card_envs"], source=data["source"], format_version=version,
                  where=where)


def _is_count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _expect(where: str, key: str, value: Any, kind: type) -> None:
    if not isinstance(value, kind):
        raise RecordError(f"{where}: {key} must be a {kind.__name__}, got {value!r}")


# --- replaying ---------------------------------------------------------------------------------
@dataclass
class Replay:
    """A record played again: its spec and game, and the states before each action and at
    the end (``states[k]`` is the table before step k; ``states[-1]`` where it ended)."""

    record: Record
    spec: GameSpec
    game: Game
    states: list[State]

    @property
    def final(self) -> State:
        return self.states[-1]


def game_of(record: Record) -> tuple[GameSpec, Game]:
    """The record's spec and game; RecordError if this card-envs has no such game or rules."""
    where = record.where or "record"
    if record.env not in env_names():
        raise RecordError(f"{where}: {record.env} is not a game of card-envs "
                          f"{package_version()}{_made_with(record)}; games: "
                          f"{', '.join(env_names())}")
    spec = load_spec(record.env)
    try:
        game = spec.make_game(**record.rules)
    except (ValueError, TypeError) as err:
        raise RecordError(f"{where}: its rules do not make a {record.env} game: {err}") from err
    if len(record.agents) != game.num_players:
        raise RecordError(f"{where}: {len(record.agents)} agents for {game.num_players} seats")
    return spec, game


def _made_with(record: Record) -> str:
    """`` (recorded with card-envs X)`` when another version wrote the record, else ''."""
    mine = package_version()
    return "" if record.card_envs == mine else f" (recorded with card-envs {record.card_envs})"


def replay(record: Record, keep_states: bool = True) -> Replay:
    """Play ``record`` again from its seed and check every step and the result.

    RecordError names the line and the step where the game departs from the record: a seat
    that is not the one to act, an illegal action, an action named otherwise, a game that
    ends early or late, a different result. ``keep_states`` keeps a copy of every state.
    """
    spec, game = game_of(record)
    where = record.where or "record"
    rng = np.random.default_rng(record.seed)
    state = game.init(rng)
    states = []
    for k, (seat, action, name) in enumerate(record.actions):
        if keep_states:
            states.append(state.copy())
        fault = _departure(game, state, seat, action, name, k, len(record.actions))
        if fault:
            raise RecordError(f"{where}: step {k}: {fault}{_made_with(record)}")
        game.apply(state, action, rng)
    states.append(state)
    end = len(record.actions)
    if record.result is None and state.done:
        raise RecordError(f"{where}: step {end}: the game ends here, but the record says it "
                          f"was not finished{_made_with(record)}")
    if record.result is not None:
        if not state.done:
            raise RecordError(f"{where}: step {end}: the record ends here, but the game goes on "
                              f"(player_{state.player} to act){_made_with(record)}")
        replayed = game_result(game, state)
        for key, value in replayed.items():
            if _normal(record.result.get(key)) != _normal(value):
                raise RecordError(f"{where}: step {end}: the result's {key} is "
                                  f"{record.result.get(key)!r} in the record but {value!r} "
                                  f"replayed{_made_with(record)}")
    return Replay(record, spec, game, states)


def _departure(game: Game, state: State, seat: int, action: int, name: str, k: int,
               total: int) -> str:
    """Why the record's step does not fit the game here ('' if it does)."""
    if state.done:
        return f"the game is over here, but the record has {total - k} more actions"
    if seat != state.player:
        return f"the record has player_{seat} act, but player_{state.player} is to act"
    if not (action < game.num_actions and game.legal_mask(state)[action]):
        legal = ", ".join(f"{a} ({game.action_name(a)})" for a in game.legal_actions(state)[:8])
        return f"action {action} ({name}) is not legal for player_{seat}; legal: {legal}"
    if game.action_name(action) != name:
        return f"action {action} is named {game.action_name(action)!r}, the record says {name!r}"
    return ""


def _normal(value: Any) -> Any:
    """A JSON value with numbers compared as floats (1 and 1.0 alike; NaN equal to NaN)."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return "nan" if math.isnan(value) else float(value)
    return value


def check_records(records: Iterable[Record]) -> list[Replay]:
    """Replay every record (without keeping states); the first departure raises RecordError."""
    return [replay(r, keep_states=False) for r in records]


# --- loading as data ---------------------------------------------------------------------------
def imitation_data(records: Sequence[Record], encoding: str = "default",
                   agent: str | None = None, seats: Sequence[int] | None = None,
                   gamma: float = 1.0) -> dict[str, np.ndarray]:
    """The decisions of ``records`` as arrays for imitation or offline RL.

    Each decision of a seat becomes one row: ``obs`` (float32, the seat's observation in
    ``encoding``), ``masks`` (bool, its legal actions), ``actions`` (int64), ``seats`` and
    ``games`` (the seat and the record's index), ``returns`` (float32: the rewards paid to the
    seat from that decision to the end, each later decision of the seat discounting by
    ``gamma``). ``agent`` keeps only seats played by the agent of that name; ``seats`` only
    those seats. Every record must be of one game with one set of rules.
    """
    if not records:
        raise ValueError("records: give at least one record")
    spec, game = game_of(records[0])
    if encoding not in spec.encoders:
        raise ValueError(f"encoding={encoding!r} is not valid for {spec.env_name}; choose one of "
                         f"{', '.join(map(repr, spec.encoders))}")
    encoder = spec.encoders[encoding](game)
    rows: dict[str, list] = {k: [] for k in ("obs", "masks", "actions", "seats", "games")}
    returns: list[float] = []
    for index, record in enumerate(records):
        if record.env != records[0].env or _normal(record.rules) != _normal(records[0].rules):
            raise RecordError(f"{record.where or f'record {index}'}: {record.env} "
                              f"{record.rules} is not the game of the first record "
                              f"({records[0].env} {records[0].rules})")
        picked = _picked_seats(record, agent, seats)
        returns += _decisions(game, encoder, record, picked, index, rows, gamma)
    size = encoder.size
    return {
        "obs": np.array(rows["obs"], dtype=np.float32).reshape(-1, size),
        "masks": np.array(rows["masks"], dtype=bool).reshape(-1, game.num_actions),
        "actions": np.array(rows["actions"], dtype=np.int64),
        "seats": np.array(rows["seats"], dtype=np.int64),
        "games": np.array(rows["games"], dtype=np.int64),
        "returns": np.array(returns, dtype=np.float32),
    }


def _picked_seats(record: Record, agent: str | None, seats: Sequence[int] | None) -> set[int]:
    picked = set(range(len(record.agents)))
    if agent is not None:
        picked = {p for p in picked if record.agents[p] == agent}
    if seats is not None:
        picked &= set(seats)
    return picked


def _decisions(game: Game, encoder, record: Record, picked: set[int], index: int,
               rows: dict[str, list], gamma: float) -> list[float]:
    """Replay one record, appending the picked seats' decisions to ``rows``; their returns."""
    rng = np.random.default_rng(record.seed)
    state = game.init(rng)
    where = record.where or f"record {index}"
    earned: dict[int, list[float]] = {p: [] for p in picked}  # rewards after each decision
    order: list[tuple[int, int]] = []  # (seat, its decision number) per row, in row order
    for k, (seat, action, name) in enumerate(record.actions):
        fault = _departure(game, state, seat, action, name, k, len(record.actions))
        if fault:
            raise RecordError(f"{where}: step {k}: {fault}{_made_with(record)}")
        if seat in picked:
            view = game.view(state, seat)
            rows["obs"].append(np.array(encoder.encode(view), dtype=np.float32))
            rows["masks"].append(np.asarray(view.legal, dtype=bool))
            rows["actions"].append(action)
            rows["seats"].append(seat)
            rows["games"].append(index)
            order.append((seat, len(earned[seat])))
            earned[seat].append(0.0)
        rewards = game.apply(state, action, rng)
        if rewards is not None:
            for p in picked:
                if earned[p]:  # rewards before a seat's first decision are not its doing
                    earned[p][-1] += float(rewards[p])
    discounted = {p: _discounted(r, gamma) for p, r in earned.items()}
    return [discounted[p][i] for p, i in order]


def _discounted(rewards: list[float], gamma: float) -> list[float]:
    """Discounted returns of a reward sequence."""
    out, running = [], 0.0
    for r in reversed(rewards):
        running = r + gamma * running
        out.append(running)
    return out[::-1]
