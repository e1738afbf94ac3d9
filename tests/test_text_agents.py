"""``cmd:PROGRAM`` agents: outside programs play a seat over JSON Lines, wherever an agent name
goes (evaluate, the ladder, play), with a time limit per move and the illegal-move policy."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from io import StringIO
from pathlib import Path

import numpy as np
import pytest

from card_envs.cli import main as cli_main
from card_envs.core.agents import make_agent
from card_envs.core.cmd_agent import MAX_FAILURES, CmdAgent, parse_name
from card_envs.core.evaluation import evaluate, play_game
from card_envs.core.seat_text import AgentForfeit, answer_move, text_view
from card_envs.records import check_records, read_records
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "text_agent.py"


def cmd(script: Path | str, options: str = "") -> str:
    """The agent name that runs ``script`` with this Python."""
    head = f"cmd[{options}]" if options else "cmd"
    return f"{head}:{shlex.join([sys.executable, str(script)])}"


def program(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    """A Python program in ``tmp_path``: ``body`` runs once per message, with ``message`` (the
    request) and ``log`` (a file that gets every message) defined; it prints its answer."""
    path = tmp_path / name
    path.write_text(textwrap.dedent("""\
        import json, os, sys, time
        log = open(sys.argv[0] + ".log", "a")
        for line in sys.stdin:
            message = json.loads(line)
            log.write(json.dumps({"pid": os.getpid(), **message}) + "\\n")
            log.flush()
        """) + textwrap.indent(textwrap.dedent(body), "    "))
    return path


def messages(script: Path) -> list[dict]:
    log = Path(str(script) + ".log")
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def one_game(name: str, agent: str, seat: int = 0, seed: int = 0):
    """A game of ``name`` with ``agent`` in ``seat`` and random agents elsewhere: the final
    state and the agent."""
    spec = load_spec(name)
    game = spec.make_game()
    built = make_agent(spec, agent, game)
    agents = [built if p == seat else make_agent(spec, "random", game)
              for p in range(game.num_players)]
    rec = play_game(game, agents, np.random.default_rng(seed), np.random.default_rng(seed + 1))
    built.close()
    return rec, built


# --- the protocol ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ENV_NAMES)
def test_the_example_program_plays_a_whole_game_of_every_env(name):
    rec, agent = one_game(name, cmd(EXAMPLE))
    assert rec.state.done and agent.notes == []


def test_each_message_holds_the_seats_text_and_moves_as_documented(tmp_path):
    script = program(tmp_path, 'print(json.dumps({"move": 1}), flush=True)')
    one_game("thirty_one", cmd(script), seat=1)
    sent = messages(script)
    assert sent and {m["seat"] for m in sent} == {1} and {m["game"] for m in sent} == {1}
    first = sent[0]
    assert set(first) == {"pid", "protocol", "type", "game", "env", "seat", "step", "view",
                          "moves", "text", "error", "tries_left"}
    assert first["protocol"] == 1 and first["type"] == "move" and first["env"] == "thirty_one_v0"
    assert first["error"] is None and first["tries_left"] == 2
    assert [m["number"] for m in first["moves"]] == list(range(1, len(first["moves"]) + 1))
    assert first["view"] in first["text"] and first["moves"][0]["label"] in first["text"]
    steps = [m["step"] for m in sent]
    assert steps == sorted(steps)


def test_answers_by_number_by_name_by_action_index_and_as_a_bare_line(tmp_path):
    moves = [(0, "draw from the deck"), (1, "take 5♥ from the discard pile"), (2, "knock")]
    assert answer_move(2, moves) == (1, "")
    assert answer_move("take", moves) == (1, "")
    assert answer_move("knock", moves) == (2, "")
    for answer in ('{"move": 3}', '{"move": "knock"}', '{"action": 2}', "3", "knock\n"):
        script = program(tmp_path, f"print({answer!r}.strip(), flush=True)", f"a{len(answer)}.py")
        spec = load_spec("thirty_one")
        game = spec.make_game(num_players=2)
        agent = make_agent(spec, cmd(script), game)
        s = game.init(np.random.default_rng(0))
        view = text_view(spec, game, s, s.player)
        knock = next(a for a, label in view.moves if label == "knock")
        assert agent.act(view, np.random.default_rng(0)) == knock, answer
        agent.close()


def test_a_wrong_answer_is_asked_again_with_the_reason_then_a_random_legal_move(tmp_path):
    script = program(tmp_path, 'print(json.dumps({"move": "fly away"}), flush=True)')
    rec, agent = one_game("simple_tricks", cmd(script, "retries=1"))
    sent = messages(script)
    assert rec.state.done
    assert [m["tries_left"] for m in sent[:2]] == [1, 0]
    assert sent[0]["error"] is None
    error = sent[1]["error"]
    assert "'fly away' is not a legal move now" in error and "legal moves: 1 play" in error
    assert "\n" not in error
    # every move of the seat fell back, each with a note, and the game went on legally
    assert len(agent.notes) == len(sent) // 2
    assert all("played a random legal move" in n for n in agent.notes)


def test_forfeit_raises_and_the_cli_says_so_in_one_line(tmp_path, capsys):
    script = program(tmp_path, 'print("nonsense", flush=True)')
    with pytest.raises(AgentForfeit, match="forfeited"):
        one_game("palace", cmd(script, "retries=0,fallback=forfeit"))
    code = cli_main(["evaluate", "palace", cmd(script, "retries=0,fallback=forfeit"), "random",
                     "random", "--games", "2"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: cmd[")


def test_a_program_that_times_out_is_stopped_and_the_move_falls_back(tmp_path):
    script = program(tmp_path, """\
        if message["step"] < 4:
            time.sleep(30)
        print(1, flush=True)
        """)
    spec = load_spec("simple_tricks")
    game = spec.make_game(num_values=5)
    notes = []
    agent = CmdAgent(spec, game, [sys.executable, str(script)], timeout=0.5, log=notes.append)
    others = make_agent(spec, "random", game)
    rec = play_game(game, [agent, others], np.random.default_rng(3), np.random.default_rng(4))
    agent.close()
    assert rec.state.done
    assert notes and all("no answer within 0.5 s" in n for n in notes)
    # a fresh program after each timeout, and one that answers keeps playing
    pids = [m["pid"] for m in messages(script)]
    assert len(set(pids)) == len(notes) + 1


def test_a_program_that_dies_gets_the_fallback_and_rests_after_failing_in_a_row(tmp_path):
    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.exit(3)\n")
    notes = []
    spec = load_spec("ninety_eight_cards")
    game = spec.make_game()
    agent = CmdAgent(spec, game, [sys.executable, str(script)], log=notes.append)
    rec = play_game(game, [agent], np.random.default_rng(0), np.random.default_rng(1))
    assert rec.state.done
    assert all("exited (code 3)" in n for n in notes[:MAX_FAILURES])
    assert all(f"failed {MAX_FAILURES} times in a row" in n for n in notes[MAX_FAILURES:])
    assert agent.notes == notes and agent._child is None


def test_one_child_per_agent_object_started_at_its_first_move_and_closed(tmp_path):
    script = program(tmp_path, 'print(1, flush=True)')
    spec = load_spec("simple_tricks")
    game = spec.make_game(num_values=4)
    agent = make_agent(spec, cmd(script), game)
    assert agent._child is None and not messages(script)  # nothing runs before a move
    others = make_agent(spec, "random", game)
    result = evaluate(game, [agent, others], games=3, seed=0)
    assert result.games == 3
    sent = messages(script)
    assert len({m["pid"] for m in sent}) == 1 and {m["game"] for m in sent} == {1, 2, 3}
    proc = agent._child.proc
    agent.close()
    assert proc.poll() is not None and agent._child is None


# --- wherever an agent name goes ----------------------------------------------------------
def test_evaluate_rates_a_program_against_rule_agents_with_intervals(capsys):
    code = cli_main(["evaluate", "palace", cmd(EXAMPLE), "heuristic", "heuristic",
                     "--games", "6"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("cmd:"))
    assert "lost" in line and "[" in line and "places" in line


def test_the_ladder_rates_a_program_with_intervals_and_records_its_games(tmp_path, capsys):
    pytest.importorskip("openskill")
    record = tmp_path / "ladder.jsonl"
    name = cmd(EXAMPLE)
    code = cli_main(["ladder", "simple_tricks", "--agents", name, "first_play", "random",
                     "--games", "2", "--record", str(record)])
    out = capsys.readouterr().out
    assert code == 0
    row = next(line for line in out.splitlines() if f"`{name}`" in line)
    assert row.count("[") >= 2  # the rating's and the win rate's intervals (and regret)
    found = read_records(record)
    assert any(name in r.agents for r in found)
    check_records(found)


def test_play_takes_a_program_as_the_opponent():
    from card_envs import play

    out = StringIO()
    code = play.run(load_spec("simple_tricks"), {"num_values": 3}, cmd(EXAMPLE), seat=0, seed=2,
                    stream=StringIO("1\n" * 5 + "n\n"), out=out)
    assert code == 0 and "cmd:" in out.getvalue() and "payoff" in out.getvalue()


# --- bad names --------------------------------------------------------------------------------
@pytest.mark.parametrize("name,message", [
    ("cmd:", "name the program after 'cmd:'"),
    ("cmd:'unclosed", "cannot split the program's command line"),
    ("cmd[speed=9]:python x.py", "'speed=9' is not an option; options: timeout=..."),
    ("cmd[timeout=0]:python x.py", "timeout='0': give seconds > 0"),
    ("cmd[retries=-1]:python x.py", "retries='-1': give a whole number >= 0"),
    ("cmd[fallback=resign]:python", "fallback='resign': choose one of random, forfeit"),
    ("cmd:no-such-program-here --x", "no program 'no-such-program-here'"),
])
def test_a_bad_cmd_name_is_refused_with_one_line(name, message, capsys):
    spec = load_spec("simple_tricks")
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace(".", r"\.")):
        make_agent(spec, name, spec.make_game())
    assert cli_main(["evaluate", "simple_tricks", name, "random", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_cmd_names_are_parsed_like_a_shell_line_without_a_shell():
    argv, options = parse_name("cmd[timeout=2.5, retries=0]:python 'my agent.py' --x $HOME")
    assert argv == ["python", "my agent.py", "--x", "$HOME"]
    assert options == {"timeout": 2.5, "retries": 0}


def test_serve_offers_the_operators_program_and_no_other(capsys):
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from card_envs.web.server import create_app

    name = cmd(EXAMPLE)
    with TestClient(create_app(agents=[name])) as client:
        games = client.get("/api/catalog").json()["games"]
        assert all(name in g["agents"] for g in games)
        made = client.post("/api/tables", json={"env": "simple_tricks", "rules": {"num_values": 3},
                                                "seat": 0, "agents": name})
        assert made.status_code == 201 and made.json()["names"][1] == name
        view = made.json()
        while not view["over"]:
            view = client.post(f"/api/tables/{view_id(made)}/move",
                               json={"action": view["moves"][0]["action"],
                                     "step": view["step"]}).json()
        other = client.post("/api/tables", json={"env": "simple_tricks", "seat": 0,
                                                 "agents": cmd(EXAMPLE, "timeout=5")})
        assert other.status_code == 400 and "unknown agent" in other.json()["error"]
    assert cli_main(["serve", "--agent", "cmd:no-such-program-here"]) == 2  # before serving
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no program 'no-such-program-here'" in err


def view_id(response) -> str:
    return response.json()["id"]
