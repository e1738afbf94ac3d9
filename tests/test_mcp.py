"""``card-envs mcp``: a scripted client on the SDK's own stdio client plays whole games of every
env; refused moves get one line and change nothing; the retries and the fallback; fuzzed moves
and arguments never crash the server nor change a game on an error."""

from __future__ import annotations

import json
import pickle
import re
import sys

import pytest

pytest.importorskip("mcp", reason="card-envs mcp needs the mcp extra")

import anyio  # noqa: E402  (after the skip: the SDK brings it)
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from card_envs.cli import main as cli_main  # noqa: E402
from card_envs.mcp_server import TextGameError, TextGames, build_server  # noqa: E402
from card_envs.records import check_records, parse_record, read_records  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402
from tests.conftest import ENV_NAMES  # noqa: E402

MOVE = re.compile(r"^\s+(\d+)\. (.*)$")


def listed(text: str) -> list[str]:
    """The labels of the numbered moves in a tool's text."""
    return [m.group(2) for line in text.splitlines() if (m := MOVE.match(line))]


def text(result) -> str:
    return result.content[0].text


async def _play_every_game(record: str) -> list[str]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    server = StdioServerParameters(command=sys.executable, args=[
        "-m", "card_envs.cli", "mcp", "--retries", "2", "--record", record])
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(300):
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert {"list_games", "rules", "start_game", "view", "legal_moves", "play",
                    "result", "record"} <= tools
            catalog = text(await session.call_tool("list_games", {}))
            return [await _play_one(session, k, name, catalog)
                    for k, name in enumerate(ENV_NAMES)]


async def _play_one(session, k: int, name: str, catalog: str) -> str:
    """Game k of the session, of ``name``, played to its end; its record."""
    assert name in catalog
    assert "HOW TO PLAY" in text(await session.call_tool("rules", {"game": name}))
    seat = k % load_spec(name).make_game().num_players
    view = text(await session.call_tool(
        "start_game", {"game": name, "seat": seat, "opponents": "random", "seed": k}))
    game_id = f"g{k + 1}"
    assert view.startswith(f"Game {game_id}: {name}")
    turn = 0
    while "record(" not in view:
        labels = listed(view)
        assert labels == listed(text(await session.call_tool("legal_moves",
                                                             {"game_id": game_id})))
        # by name and by number in turn (a name that fits several moves: its number)
        move = labels[-1] if turn % 2 else len(labels)
        result = await session.call_tool("play", {"game_id": game_id, "move": move})
        if result.is_error:
            assert "fits several moves" in text(result), text(result)
            result = await session.call_tool("play", {"game_id": game_id, "move": len(labels)})
        assert not result.is_error, text(result)
        view, turn = text(result), turn + 1
    assert text(await session.call_tool("result", {"game_id": game_id})) in view
    line = text(await session.call_tool("record", {"game_id": game_id}))
    check_records([parse_record(line)])
    assert json.loads(line)["agents"][seat] == "mcp-client"
    late = await session.call_tool("play", {"game_id": game_id, "move": 1})
    assert late.is_error and "is over" in text(late)
    return line


def test_a_scripted_client_over_stdio_plays_a_whole_game_of_every_env(tmp_path):
    record = tmp_path / "games.jsonl"
    lines = anyio.run(_play_every_game, str(record))
    assert len(lines) == len(ENV_NAMES)
    written = read_records(record)
    assert [r.to_line() for r in written] == lines
    check_records(written)


# --- refusals, retries and the fallback -------------------------------------------------------
def _started(games: TextGames, name: str = "thirty_one", **kwargs) -> str:
    games.start(name, opponents="random", seed=3, **kwargs)
    return f"g{games._started}"


def _snapshot(games: TextGames, game_id: str) -> tuple:
    g = games.games[game_id]
    return pickle.dumps(g.table.state), list(g.table.actions), games.view(game_id)


def test_a_move_naming_no_legal_move_gets_one_line_and_changes_nothing():
    games = TextGames(retries=7)
    game_id = _started(games)
    before = _snapshot(games, game_id)
    for bad in ("fly", "99", 0, "", "d", "take the deck and knock"):
        with pytest.raises(TextGameError) as err:
            games.play(game_id, bad)
        message = str(err.value)
        assert "\n" not in message and "legal moves: 1 draw from the deck" in message
        assert _snapshot(games, game_id) == before
    with pytest.raises(TextGameError, match="before the fallback"):
        games.play(game_id, "nothing")
    assert _snapshot(games, game_id) == before
    games.play(game_id, "draw")  # a legal move is taken, and the count starts again
    assert games.games[game_id].refused == 0


def test_after_the_retries_a_random_legal_move_is_played_and_recorded():
    games = TextGames(retries=1, fallback="random")
    game_id = _started(games, "palace")
    step = games.games[game_id].table.state.steps
    with pytest.raises(TextGameError, match=r"\(1 more answer before the fallback: random\)"):
        games.play(game_id, "fly")
    shown = games.play(game_id, "fly")
    assert "2 answers in a row named no legal move: a random legal move was played" in shown
    assert games.games[game_id].table.state.steps > step
    while not games.games[game_id].over:
        games.play(game_id, 1)
    record = parse_record(games.record(game_id))
    assert f"fallback: a random legal move for player_0 at step {step}" in record.source
    check_records([record])


def test_forfeit_ends_the_game_and_its_record_says_so():
    games = TextGames(retries=0, fallback="forfeit")
    game_id = _started(games, "simple_tricks", seat=1)
    shown = games.play(game_id, "resign")
    assert "you forfeit the game" in shown and games.games[game_id].over
    assert "forfeited" in games.result(game_id)
    record = parse_record(games.record(game_id))
    assert record.result is None and "player_1 forfeited at step" in record.source
    check_records([record])
    with pytest.raises(TextGameError, match="is over"):
        games.play(game_id, 1)


def test_requests_the_server_refuses_say_why_in_one_line():
    games = TextGames(max_games=1)
    game_id = _started(games)
    cases = [
        (lambda: games.view("g9"), "no game 'g9'; open games: g1"),
        (lambda: games.start("thirty_one"), "1 games are open, the most this server holds"),
        (lambda: games.record(game_id), "is not over: its record holds the seed"),
        (lambda: games.result(game_id), "is not over"),
    ]
    for call, message in cases:
        with pytest.raises(TextGameError, match=re.escape(message)) as err:
            call()
        assert "\n" not in str(err.value)
    games.end(game_id)
    with pytest.raises(TextGameError, match="unknown game 'go'; choose one of"):
        games.start("go")
    for kwargs, message in [({"seat": 5}, "seat must be 0..2"),
                            ({"rules": {"num_players": 9}}, "num_players=9 is not valid"),
                            ({"opponents": "cmd:rm -rf x"}, "unknown agent 'cmd:rm -rf x'"),
                            ({"opponents": ["random"]}, "agents must be one name or a list"),
                            ({"seed": -1}, "seed must be a whole number >= 0")]:
        with pytest.raises(TextGameError, match=re.escape(message)) as err:
            games.start("thirty_one", **kwargs)
        assert "\n" not in str(err.value)
    assert not games.games


def test_opponents_may_be_listed_for_the_other_seats_only():
    games = TextGames()
    game_id = _started(games, "palace", seat=1, rules={"num_players": 3})
    games.end(game_id)
    games.start("palace", seat=1, opponents=["heuristic", "lowest_first"], seed=1)
    assert games.games["g2"].table.names == ["heuristic", "human", "lowest_first"]


# --- fuzzing ----------------------------------------------------------------------------------
MOVES = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"(play|take|ask|draw|discard|knock|declare|name|end)? ?[0-9AJQKSHDC♠♥ ]{0,6}",
                  fullmatch=True),
    st.integers(-3, 300),
    st.none(), st.booleans(), st.floats(allow_nan=True),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                         max_size=2),
)
FUZZED = TextGames(retries=10**9)  # never the fallback: every refusal must change nothing


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(ENV_NAMES), move=MOVES)
def test_fuzzed_moves_never_crash_and_never_change_a_game_on_an_error(name, move):
    game_id = next((k for k, g in FUZZED.games.items()
                    if g.table.spec.env_name == name and not g.over), None)
    if game_id is None:
        game_id = _started(FUZZED, name)
    before = _snapshot(FUZZED, game_id)
    try:
        FUZZED.play(game_id, move)
    except TextGameError as err:
        assert "\n" not in str(err) and _snapshot(FUZZED, game_id) == before
    else:
        assert FUZZED.games[game_id].table.actions[:len(before[1])] == before[1]
    if FUZZED.games[game_id].over:
        FUZZED.end(game_id)


JSON = st.recursive(st.none() | st.booleans() | st.integers(-5, 50) | st.text(max_size=12),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=6)
AGENTS = st.sampled_from(["random", "heuristic", "lowest_first", "ismcts:1", "greedy", "nobody",
                          "ismcts:0", "cmd:echo", "model:x.zip"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# a key of the client's own with a line break in it, once found by this test
@example(name="palace_v0", tool="start_game", arguments={"rules": {"\n": None}})
@given(name=st.sampled_from(ENV_NAMES),
       tool=st.sampled_from(["start_game", "play", "view", "legal_moves", "result", "record",
                             "rules", "end_game"]),
       arguments=st.fixed_dictionaries({}, optional={
           "game": st.sampled_from([*ENV_NAMES, "palace", "go"]) | JSON,
           "game_id": st.sampled_from(["g1", "g2", "x"]) | JSON,
           "move": MOVES | JSON, "seat": st.integers(-1, 7) | JSON,
           "rules": st.sampled_from([{}, {"num_players": 2}, {"num_values": 2},
                                     {"rules": "original"}]) | JSON,
           "opponents": AGENTS | st.lists(AGENTS, max_size=6) | JSON,
           "seed": st.integers(-2, 10**6) | JSON}))
def test_fuzzed_tool_calls_are_answered_or_refused_never_a_crash(name, tool, arguments):
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

    games = TextGames(retries=10**9)
    _started(games, name)  # g1, for the calls that name it
    server = build_server(games)

    async def call():
        before = {k: _snapshot(games, k) for k in games.games}
        try:
            with anyio.fail_after(60):
                await server.call_tool(tool, arguments)
        except UnexpectedToolError:
            raise
        except ToolError as err:
            assert "\n" not in str(err), str(err)
            assert {k: _snapshot(games, k) for k in games.games} == before

    anyio.run(call)


# --- the command ---------------------------------------------------------------------------
@pytest.mark.parametrize("argv,message", [
    (["mcp", "--retries", "-1"], "retries=-1: give a whole number >= 0"),
    (["mcp", "--max-games", "0"], "max_games=0: give a positive number of games"),
    (["mcp", "--record", "/nonexistent-folder/games.jsonl"], "cannot write a file there"),
])
def test_the_command_refuses_bad_options_in_one_line(argv, message, capsys):
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
