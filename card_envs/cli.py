"""The ``card-envs`` command: list environments, evaluate agents, play, rate agents, record and
replay games, serve the web app, serve the games to MCP clients, benchmark."""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import sys
from typing import NoReturn

from card_envs.core.agents import make_agent
from card_envs.core.evaluation import duplicate_evaluate, evaluate
from card_envs.core.game import Game
from card_envs.core.seat_text import FALLBACKS, AgentForfeit
from card_envs.core.spec import GameSpec
from card_envs.registry import list_envs, load_spec


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line (exit code 2), like every CLI error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parse_set(items: list[str], spec: GameSpec) -> dict:
    """``--set KEY=VALUE`` items as rules arguments (values read as Python literals)."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(
                f"--set takes KEY=VALUE, got {item!r}; rules arguments of {spec.env_name}: "
                f"{', '.join(spec.game_args())}"
            )
        try:
            out[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[key] = text
    return out


def _counts(counts: tuple[int, ...]) -> str:
    """Player counts as written for people: ``2-7`` for a run, ``4,6,8`` otherwise."""
    if len(counts) > 2 and counts == tuple(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]}-{counts[-1]}"
    return ",".join(map(str, counts))


def cmd_list(args: argparse.Namespace) -> int:
    rows = list_envs()
    print(
        f"{'env':<24} {'players':<10} {'actions':>7} {'obs':>7}  {'PettingZoo id':<34} Gymnasium id"
    )
    for r in rows:
        players = f"{_counts(r.num_players)} ({r.default_players})"
        print(
            f"{r.env_name:<24} {players:<10} {r.num_actions:>7} {r.obs_shape[0]:>7}  "
            f"{r.pettingzoo_id:<34} {r.gymnasium_id}"
        )
    if args.verbose:
        for r in rows:
            print(
                f"\n{r.env_name}: encodings {', '.join(r.encodings)}; agents {', '.join(r.agents)}"
            )
    return 0


def _evaluate_setup(
    args: argparse.Namespace,
) -> tuple[GameSpec, Game, list[str], list, str | None]:
    """The game, the agents' names (one per seat), the agents and a line saying how two
    agents share more seats (or None); ValueError on bad input.

    The player count is ``--set num_players`` if given; else the number of agents listed,
    where the game and every agent listed can play that many (a trained model plays only
    the count it was trained for); else the game's default. Then the list names one agent
    (it plays every seat), one per seat, or two for more seats (the first against a field
    of the second, said on a line); any other list is refused, as it would have to be cut
    or repeated to fill the seats.
    """
    spec = load_spec(args.game)
    if args.games < 1:
        unit = "pairs of games" if args.duplicate else "games"
        raise ValueError(f"--games {args.games}: give a positive number of {unit}")
    game_args = _parse_set(args.set, spec)
    names = list(args.agents)
    if "num_players" in game_args or len(names) < 2 or len(names) not in spec.num_players:
        return _seat(args, spec, game_args, names)
    by_list = dict(game_args)
    if len(spec.num_players) > 1:
        by_list["num_players"] = len(names)
    try:
        return _seat(args, spec, by_list, names)
    except ValueError as err:  # e.g. a model trained for another count: the game's own count
        if spec.make_game(**game_args).num_players == len(names):
            raise
        try:
            return _seat(args, spec, game_args, names)
        except ValueError:
            raise err from None


def _seat(
    args: argparse.Namespace, spec: GameSpec, game_args: dict, names: list[str]
) -> tuple[GameSpec, Game, list[str], list, str | None]:
    """``_evaluate_setup`` for one player count (``game_args``' or the game's default)."""
    game = spec.make_game(**game_args)
    n = game.num_players
    counts = ", ".join(str(k) for k in spec.num_players)
    if args.duplicate and n != 2:
        hint = " (--set num_players=2 plays it with two)" if 2 in spec.num_players else ""
        raise ValueError(
            f"--duplicate needs a two-player game; {spec.env_name} is played here by {n}"
            f"{hint}"
        )
    field = None
    if len(names) == 2 and n > 2:
        field = (f"{n} seats, two agents: {names[0]} plays one seat, {names[1]} the other "
                 f"{n - 1}")
        names = [names[0]] + [names[1]] * (n - 1)
    elif len(names) == 1:
        names = names * n
    elif len(names) != n:
        seats = (f"{n} seats here (--set num_players={n})" if "num_players" in game_args
                 else f"{n} seats by default" if len(spec.num_players) > 1
                 else f"{n} seat" + "s" * (n != 1))
        raise ValueError(
            f"{spec.env_name} has {seats}, got {len(names)} agents: name one agent (it plays "
            f"every seat), two (one seat against the rest) or one per seat"
            + (f" for {counts} players" if len(spec.num_players) > 1 else "")
        )
    agents = [make_agent(spec, name, game) for name in names]
    return spec, game, names, agents, field


def _seat_note(args: argparse.Namespace, n: int) -> str | None:
    """What ``name@k`` means in this run (None for one-player games)."""
    if n == 1:
        return None
    if args.duplicate:
        return (
            "name@k = the k-th agent given, counting from 0; every deal is played twice, "
            "name@0 in seat 0 first and in seat 1 the second time"
        )
    if args.no_rotate:
        return "name@k = the k-th agent given, counting from 0: it plays seat k in every game"
    return (
        "name@k = the k-th agent given, counting from 0: it sits in seat k in the first game "
        "and one seat further each game, so every agent plays every seat equally often"
    )


def cmd_evaluate(args: argparse.Namespace) -> int:
    try:
        spec, game, names, agents, field = _evaluate_setup(args)
        if args.record:
            _check_writable(args.record)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    n = game.num_players
    labels = names if n == 1 else [f"{name}@{i}" for i, name in enumerate(names)]
    print(f"{spec.env_name} {game!r}")
    if field:
        print(field)
    note = _seat_note(args, n)
    if note:
        print(note)
    from card_envs.vector import evaluation as batched

    forms = [] if args.scalar else [batched.batched_form(spec, name, agent, args.seed)
                                    for name, agent in zip(names, agents, strict=True)]
    on_twin = bool(forms) and all(form is not None for form in forms)
    with _writer(args.record) as records:
        keep = None if records is None else _keeper(records, spec, game, names, args.duplicate)
        if args.duplicate:
            result = (batched.duplicate_evaluate(spec, game, forms[0], forms[1], args.games,
                                                 args.seed, labels, keep=keep) if on_twin
                      else duplicate_evaluate(game, agents[0], agents[1], args.games, args.seed,
                                              labels, keep=keep))
        elif on_twin:
            result = batched.evaluate(spec, game, forms, args.games, args.seed,
                                      rotate=not args.no_rotate, names=labels, keep=keep)
        else:
            result = evaluate(
                game, agents, args.games, args.seed, rotate=not args.no_rotate, names=labels,
                keep=keep,
            )
    print(result.summary())
    if records is not None:
        print(records.summary())
    return 0


@contextlib.contextmanager
def _writer(path: str | None):
    """A RecordWriter for ``--record PATH`` (None without one), closed at the end."""
    if not path:
        yield None
        return
    from card_envs.records import RecordWriter

    with RecordWriter(path) as records:
        yield records


def _keeper(records, spec: GameSpec, game: Game, names: list[str], duplicate: bool):
    """The ``keep`` callback of an evaluation that writes each game to ``records``."""
    from card_envs.records import played_record

    def keep(played) -> None:
        g = played.seed[1]
        source = (f"evaluate --duplicate deal {g}" if duplicate else f"evaluate game {g}")
        records.write(played_record(spec, game, played, names, source))

    return keep


def cmd_play(args: argparse.Namespace) -> int:
    from card_envs import play

    if args.ascii:
        os.environ["CARD_ENVS_ASCII"] = "1"
    try:
        spec = load_spec(args.game)
        game_args = _parse_set(args.set, spec)
        if args.players is not None:
            game_args["num_players"] = _check_players(spec, args.players)
        if args.delay is not None and not (args.delay >= 0):
            raise ValueError(f"--delay {args.delay}: give seconds >= 0 (or leave it out)")
        return play.run(spec, game_args, args.opponent, args.seat, args.seed, watch=args.watch,
                        delay=args.delay, record=args.record)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nBye.")
        return 0


def _check_players(spec: GameSpec, players: int) -> int:
    """``--players`` if the game is played by that many; else ValueError naming the counts."""
    if players not in spec.num_players:
        counts = spec.num_players
        allowed = (
            f"it is played by {counts[0]} player{'s' if counts[0] > 1 else ''} only"
            if len(counts) == 1
            else f"choose one of {', '.join(str(k) for k in counts)}"
        )
        raise ValueError(f"--players {players} is not valid for {spec.env_name}: {allowed}")
    return players


def cmd_ladder(args: argparse.Namespace) -> int:
    from card_envs import ladder

    try:
        game_args = {}
        if args.set and args.game != "all":
            game_args = _parse_set(args.set, load_spec(args.game))
        elif args.set:
            raise ValueError("--set cannot go with 'all': each setting has its own rules")
        return ladder.main(args, game_args)
    except ImportError as err:
        print(f"error: the ladder needs the ladder extra (pip install 'card-envs[ladder]'): "
              f"{err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _check_writable(path: str) -> None:
    """ValueError (for a one-line error) unless ``--record PATH`` can be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) or not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise ValueError(f"--record {path}: cannot write a file there")


def cmd_replay(args: argparse.Namespace) -> int:
    from card_envs import records as rec

    try:
        found = rec.read_records(args.file)
        if args.show is not None and not 1 <= args.show <= len(found):
            raise ValueError(f"--show {args.show}: {args.file} holds games 1..{len(found)}")
        if args.seat is not None and args.show is None:
            raise ValueError("--seat needs --show K: the game to show")
        checked = rec.check_records(found)
        if args.show is None:
            kinds = sorted({r.record.env for r in checked})
            finished = sum(r.record.finished for r in checked)
            print(f"{args.file}: {len(checked)} game{'s' if len(checked) != 1 else ''} "
                  f"({', '.join(kinds)}; {finished} finished) replayed exactly: every move "
                  "legal, every result the same")
            return 0
        return _show(args, rec, found[args.show - 1])
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _show(args: argparse.Namespace, rec, record) -> int:
    """``replay --show K``: the game move by move, from ``--seat`` or with every hand open."""
    from card_envs import play

    if args.ascii:
        os.environ["CARD_ENVS_ASCII"] = "1"
    n = len(record.agents)
    if args.seat is not None and not 0 <= args.seat < n:
        raise ValueError(f"--seat {args.seat} is not a seat of {record.env}: choose 0..{n - 1}")
    if args.seat is None and not record.finished:
        raise ValueError(f"game {args.show} was not finished: show it from a seat (--seat "
                         f"0..{n - 1}); every hand is open only for a finished game")
    if args.delay is not None and not args.delay >= 0:
        raise ValueError(f"--delay {args.delay}: give seconds >= 0 (or leave it out)")
    replayed = rec.replay(record)
    read = play.line_reader(sys.stdin, sys.stdout)
    try:
        play.show_replay(replayed, args.seat, read, sys.stdout, pause=args.pause,
                         delay=args.delay)
    except play.Quit:
        print("\nBye.")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from card_envs.web.server import serve
    except ImportError as err:
        print(f"error: card-envs serve needs the web extra (pip install 'card-envs[web]'): "
              f"{err}", file=sys.stderr)
        return 2
    try:
        return serve(args.host, args.port, max_games=args.max_games, idle=args.idle,
                     max_upload=args.max_upload, open_browser=args.open, agents=args.agent)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.ascii:
        os.environ["CARD_ENVS_ASCII"] = "1"
    try:
        if args.record:
            _check_writable(args.record)
        from card_envs import mcp_server

        return mcp_server.main(args.retries, args.fallback, args.max_games, args.record)
    except ImportError as err:
        print(f"error: card-envs mcp needs the mcp extra (pip install 'card-envs[mcp]'): {err}",
              file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def cmd_bench(args: argparse.Namespace) -> int:
    from card_envs.bench import main as bench_main

    return bench_main(args.rest)


def ladder_quick_games() -> int:
    from card_envs.ladder import QUICK_GAMES

    return QUICK_GAMES


def _add_rules_and_record(p: argparse.ArgumentParser, example: str) -> None:
    """``--set KEY=VALUE`` (rules arguments) and ``--record FILE``, as every command that plays
    games takes them."""
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"a rules argument, e.g. {example}")
    p.add_argument("--record", metavar="FILE",
                   help="write every game to FILE as a record (JSON Lines; docs/records.md)")


def _add_list(sub) -> None:
    """The ``list`` command's arguments."""
    p = sub.add_parser(
        "list", help="every environment with its players, actions and observation size"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="also list encodings and agents")
    p.set_defaults(func=cmd_list)


def _add_evaluate(sub) -> None:
    """The ``evaluate`` command's arguments."""
    p = sub.add_parser("evaluate", help="play agents against each other and print win rates")
    p.add_argument("game", help="e.g. simple_tricks or simple_tricks_v0")
    p.add_argument(
        "agents", nargs="+",
        help="one agent per seat (their number is the player count where the game allows it), "
             "one agent for every seat, or two: the first in one seat, the second in the rest",
    )
    p.add_argument("--games", type=int, default=1000, help="games (or duplicate pairs) to play")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--duplicate",
        action="store_true",
        help="two-player games: play every deal twice with seats swapped",
    )
    p.add_argument("--no-rotate", action="store_true", help="keep every agent in its seat")
    p.add_argument("--scalar", action="store_true",
                   help="play game by game even where the game's batched twin could play every "
                        "game at once (the same games and results either way)")
    _add_rules_and_record(p, "--set num_players=4 --set rules=original")
    p.set_defaults(func=cmd_evaluate)


def _add_play(sub) -> None:
    """The ``play`` command's arguments."""
    p = sub.add_parser("play", help="play a game in the terminal against agents (or --watch)")
    p.add_argument("game", help="e.g. palace or thirty_one")
    p.add_argument("--players", type=int, help="number of players (where the game allows)")
    p.add_argument("--opponent", default="best",
                   help="random, a rule agent, model:PATH, best (default; the shipped model, "
                        "else the strongest rule agent) or best+search")
    p.add_argument("--seat", type=int, default=0, help="your seat (0 plays first)")
    p.add_argument("--seed", type=int, help="seed of the deals (default: random)")
    p.add_argument("--watch", action="store_true", help="agents in every seat; you watch")
    p.add_argument("--delay", type=float,
                   help="--watch: seconds between moves (default: wait for Enter)")
    p.add_argument("--ascii", action="store_true", help="letters instead of suit symbols")
    _add_rules_and_record(p, "--set rules=original")
    p.set_defaults(func=cmd_play)


def _add_ladder(sub) -> None:
    """The ``ladder`` command's arguments."""
    p = sub.add_parser(
        "ladder",
        help="play every agent of a game against the others and rate them (docs/ladder.md)",
    )
    p.add_argument("game", help="e.g. simple_tricks, or 'all' for every setting of the docs page")
    p.add_argument("--games", type=int,
                   help="games per agent, duplicate deals per pair or games per lineup "
                        "(default: the setting's own)")
    p.add_argument("--batched-games", type=int, metavar="GAMES",
                   help="as many for a match whose every agent has a batched form (rule "
                        "agents, a trained model), which the twin plays at once (default: "
                        "the setting's own; --games alone sets both)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true",
                   help=f"a smoke test: {ladder_quick_games()} games per match, search agents "
                        "at their lower budget only")
    p.add_argument("--write", nargs="?", const=".", metavar="DIR",
                   help="write the setting's section of docs/ladder.md, its plot and its "
                        "block in the game's docs page, in the checkout in DIR (the folder "
                        "holding docs/; the working directory if DIR is left out)")
    p.add_argument("--agents", nargs="+", metavar="AGENT",
                   help="only these agents (names as for evaluate, e.g. heuristic ismcts:50)")
    p.add_argument("--scalar", action="store_true",
                   help="play every match game by game, even where the game's batched twin "
                        "could play it at once (the same games and results either way)")
    p.add_argument("-v", "--verbose", action="store_true", help="log each match to stderr")
    _add_rules_and_record(p, "--set rules=original")
    p.set_defaults(func=cmd_ladder)


def _add_replay(sub) -> None:
    """The ``replay`` command's arguments."""
    p = sub.add_parser(
        "replay",
        help="replay and check every game of a records file, or show one move by move",
    )
    p.add_argument("file", help="a records file (JSON Lines) written with --record")
    p.add_argument("--show", type=int, metavar="K",
                   help="show game K (its line, counting from 1) move by move")
    p.add_argument("--seat", type=int,
                   help="--show: only what this seat could see (default: every hand open, "
                        "for a finished game)")
    p.add_argument("--pause", action="store_true", help="--show: wait for Enter after each move")
    p.add_argument("--delay", type=float, help="--show: seconds between moves")
    p.add_argument("--ascii", action="store_true", help="letters instead of suit symbols")
    p.set_defaults(func=cmd_replay)


def _add_serve(sub) -> None:
    """The ``serve`` command's arguments."""
    p = sub.add_parser("serve", help="play, watch and replay games in the browser (web extra)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--max-games", type=int, default=200,
                   help="games (and replays) held at once; the longest idle goes first")
    p.add_argument("--idle", type=float, default=1800,
                   help="seconds after which an idle game expires")
    p.add_argument("--max-upload", type=int, default=4 * 2**20,
                   help="largest records file a replay may upload, in bytes")
    p.add_argument("--open", action="store_true", help="open the page in a web browser")
    p.add_argument("--agent", action="append", default=[], metavar="NAME",
                   help="offer this agent too, in every game (e.g. cmd:PROGRAM: a program of "
                        "yours, docs/text_agents.md); clients still cannot name other programs")
    p.set_defaults(func=cmd_serve)


def _add_mcp(sub) -> None:
    """The ``mcp`` command's arguments."""
    p = sub.add_parser(
        "mcp", help="serve the games to a Model Context Protocol client over stdio (mcp extra; "
                    "docs/text_agents.md)")
    p.add_argument("--retries", type=int, default=3,
                   help="answers naming no legal move refused before the fallback (default 3)")
    p.add_argument("--fallback", choices=FALLBACKS, default="random",
                   help="after the retries: a random legal move for the client (default) or "
                        "the client forfeits the game")
    p.add_argument("--max-games", type=int, default=100, help="games open at once, at most")
    p.add_argument("--record", metavar="FILE",
                   help="write every game that ends to FILE as a record (JSON Lines; "
                        "docs/records.md)")
    p.add_argument("--ascii", action="store_true", help="letters instead of suit symbols")
    p.set_defaults(func=cmd_mcp)


def _add_bench(sub) -> None:
    """The ``bench`` command's arguments."""
    p = sub.add_parser("bench", help="environment speed benchmark (see card_envs/bench.py)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark")
    p.set_defaults(func=cmd_bench)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="card-envs", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_list, _add_evaluate, _add_play, _add_ladder, _add_replay, _add_serve,
                _add_mcp, _add_bench):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # A trained model plays one position at a time, where a second torch thread only fights
    # the games (and, on the 2-core machines the ladder's timings come from, the other jobs).
    # torch reads this when it is first imported, which ``card_envs`` never does on its own; an
    # OMP_NUM_THREADS the user set wins.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        return args.func(args)
    except AgentForfeit as err:  # a cmd: agent with fallback=forfeit gave up a game
        print(f"error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
