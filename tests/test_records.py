"""Game records: every game round-trips through a record and replays exactly; a changed record
or one of another version fails naming its line and step; the commands write and check them."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from card_envs.cli import main
from card_envs.core.agents import make_agent
from card_envs.core.evaluation import duplicate_evaluate, evaluate
from card_envs.records import (
    FORMAT_VERSION,
    RecordError,
    imitation_data,
    make_record,
    parse_record,
    parse_records,
    played_record,
    read_records,
    replay,
)
from card_envs.registry import load_spec
from tests.conftest import ENV_NAMES, random_legal


def _random_game(spec, game, seed: int, stop: int | None = None):
    """A game of random moves from ``default_rng([seed, 0, 0])``: its actions and last state."""
    rng = np.random.default_rng([seed, 0, 0])
    pick = np.random.default_rng([seed, 0, 1])
    state, actions = game.init(rng), []
    while not state.done and (stop is None or len(actions) < stop):
        actions.append(random_legal(game.legal_mask(state), pick))
        game.apply(state, actions[-1], rng)
    return actions, state


def _line(record) -> dict:
    return json.loads(record.to_line())


def _tampered(record, change) -> str:
    data = _line(record)
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_every_game_and_variant_round_trips_and_replays_step_for_step(name):
    spec = load_spec(name)
    for variant in spec.variants:
        game = spec.make_game(**variant)
        for seed in range(2):
            actions, state = _random_game(spec, game, seed)
            agents = [f"random#{p}" for p in range(game.num_players)]
            record = make_record(spec, game, [seed, 0, 0], agents, actions, state, "test")
            again = parse_record(record.to_line(), "line 1")
            assert again == record
            rep = replay(again)
            assert [a for _, a, _ in again.actions] == actions
            assert len(rep.states) == len(actions) + 1
            assert rep.final.steps == state.steps and rep.final.done
            assert np.array_equal(game.payoffs(rep.final), game.payoffs(state))
            assert again.result["seats"] == json.loads(json.dumps(game.results(state)))
            for k, (seat, action, label) in enumerate(again.actions):
                assert seat == rep.states[k].player and label == game.action_name(action)


def test_a_record_holds_everything_the_format_names():
    spec = load_spec("palace")
    game = spec.make_game(num_players=3)
    actions, state = _random_game(spec, game, 4)
    data = _line(make_record(spec, game, [4, 0, 0], ["a", "b", "c"], actions, state, "here"))
    assert list(data) == ["format", "format_version", "card_envs", "env", "rules", "seed",
                          "agents", "source", "actions", "result"]
    assert data["format"] == "card-envs-record" and data["format_version"] == FORMAT_VERSION
    assert data["env"] == "palace_v0" and data["rules"] == game.config()
    assert data["seed"] == [4, 0, 0] and data["agents"] == ["a", "b", "c"]
    result = data["result"]
    assert sorted(result["places"]) == [1, 2, 3] and len(result["payoffs"]) == 3
    assert result["steps"] == len(data["actions"]) == state.steps


def test_an_unfinished_game_is_a_record_too():
    spec = load_spec("palace")
    game = spec.make_game(num_players=2)
    actions, state = _random_game(spec, game, 1, stop=9)
    record = parse_record(make_record(spec, game, [1, 0, 0], ["x", "y"], actions, state)
                          .to_line())
    assert record.result is None and not record.finished
    assert replay(record).final.steps == 9


def test_a_seed_and_actions_that_do_not_give_the_state_are_refused():
    spec = load_spec("simple_tricks")
    game = spec.make_game()
    actions, state = _random_game(spec, game, 0)
    with pytest.raises(ValueError, match="do not give the game's state"):
        make_record(spec, game, [0, 0, 0], ["a", "b"], actions[:-1], state)


@pytest.fixture(scope="module")
def palace_record():
    spec = load_spec("palace")
    game = spec.make_game(num_players=3)
    actions, state = _random_game(spec, game, 2)
    return make_record(spec, game, [2, 0, 0], ["a", "b", "c"], actions, state, "fixture")


@pytest.mark.parametrize("change,says", [
    (lambda d: d["actions"][5].__setitem__(1, 77), "line 1: step 5: action 77"),
    (lambda d: d["actions"][5].__setitem__(2, "fly"), "line 1: step 5: action"),
    (lambda d: d["actions"][5].__setitem__(0, (d["actions"][5][0] + 1) % 3),
     "line 1: step 5: the record has player_"),
    (lambda d: d["result"].__setitem__("payoffs", [0.5, 0.5, -1.0]
                                        if d["result"]["payoffs"][2] != -1.0 else [-1, .5, .5]),
     "line 1: step"),
    (lambda d: d["actions"].pop(), "the record ends here, but the game goes on"),
    (lambda d: d["actions"].append(d["actions"][-1]), "the game is over here"),
    (lambda d: d.__setitem__("seed", [3, 0, 0]), "line 1: step"),
    (lambda d: d.__setitem__("env", "palace_v9"), "palace_v9 is not a game of card-envs"),
    (lambda d: d.__setitem__("rules", {"num_players": 9}), "num_players=9 is not valid"),
    (lambda d: d.__setitem__("agents", ["a"]), "1 agents for 3 seats"),
])
def test_a_changed_record_fails_naming_its_line_and_step(palace_record, change, says):
    line = _tampered(palace_record, change)
    with pytest.raises(RecordError, match="line 1") as err:
        replay(parse_record(line, "games.jsonl line 1"))
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_a_record_of_another_version_says_which_version_wrote_it(palace_record):
    line = _tampered(palace_record, lambda d: (d.__setitem__("card_envs", "0.0.1"),
                                               d["actions"][3].__setitem__(2, "old name")))
    with pytest.raises(RecordError, match=r"step 3: .* \(recorded with card-envs 0.0.1\)"):
        replay(parse_record(line, "line 1"))


@pytest.mark.parametrize("line,says", [
    ("{not json", "line 4: not JSON"),
    ("[1, 2]", "not a card-envs game record"),
    ('{"format": "card-envs-record", "format_version": 99}', "record format 99 is newer"),
    ('{"format": "card-envs-record", "format_version": 1}', "missing card_envs, env"),
])
def test_unreadable_lines_are_named(line, says):
    with pytest.raises(RecordError, match="line 4") as err:
        parse_records("\n\n\n" + line + "\n", "f.jsonl")
    assert says in str(err.value)


def test_badly_typed_fields_are_named(palace_record):
    for change, says in [
        (lambda d: d.__setitem__("seed", -1), "seed must be an integer >= 0"),
        (lambda d: d.__setitem__("agents", "abc"), "agents must be a list"),
        (lambda d: d["actions"].__setitem__(2, [0, "x"]), "step 2: an action must be"),
        (lambda d: d["result"].pop("payoffs"), "result lacks payoffs"),
    ]:
        with pytest.raises(RecordError, match=says):
            parse_record(_tampered(palace_record, change), "line 1")


def test_evaluation_hands_over_every_game_without_changing_its_results():
    spec = load_spec("thirty_one")
    game = spec.make_game(num_players=2)
    agents = [make_agent(spec, "greedy", game), make_agent(spec, "expected_value", game)]
    kept = []
    plain = evaluate(game, agents, 6, seed=5).summary()
    assert evaluate(game, agents, 6, seed=5, keep=kept.append).summary() == plain
    assert [p.seed for p in kept] == [[5, g, 0] for g in range(6)]
    assert [p.seats for p in kept] == [(0, 1), (1, 0)] * 3  # seats rotate
    for played in kept:
        record = played_record(spec, game, played, ["greedy", "expected_value"])
        assert replay(parse_record(record.to_line())).final.steps == played.state.steps
    kept = []
    duplicate_evaluate(game, agents[0], agents[1], 2, seed=1, keep=kept.append)
    assert [(p.seed, p.seats) for p in kept] == [([1, 0, 0], (0, 1)), ([1, 0, 0], (1, 0)),
                                                 ([1, 1, 0], (0, 1)), ([1, 1, 0], (1, 0))]


def test_imitation_data_gives_every_decision_of_the_chosen_seats():
    spec = load_spec("thirty_one")
    game = spec.make_game(num_players=2)
    records = []
    for seed in range(3):
        actions, state = _random_game(spec, game, seed)
        records.append(make_record(spec, game, [seed, 0, 0], ["greedy", "random"], actions,
                                   state))
    data = imitation_data(records)
    total = sum(len(r.actions) for r in records)
    assert data["obs"].shape == (total, spec.encoders["default"](game).size)
    assert data["masks"].shape == (total, game.num_actions) and data["masks"].dtype == bool
    assert data["masks"][np.arange(total), data["actions"]].all(), "every action was legal"
    greedy = imitation_data(records, agent="greedy", encoding="original")
    assert set(greedy["seats"].tolist()) == {0}
    assert len(greedy["actions"]) == sum(1 for r in records for s, _, _ in r.actions if s == 0)
    # the undiscounted return of a seat's every decision is the game's payoff to it
    for g, record in enumerate(records):
        rows = (greedy["games"] == g)
        assert np.allclose(greedy["returns"][rows], record.result["payoffs"][0])
    with pytest.raises(ValueError, match="encoding='nope' is not valid"):
        imitation_data(records, encoding="nope")
    other = make_record(spec, spec.make_game(num_players=3), 0, ["a", "b", "c"], [],
                        spec.make_game(num_players=3).init(np.random.default_rng(0)))
    with pytest.raises(RecordError, match="is not the game of the first record"):
        imitation_data([records[0], other])


# --- the commands ----------------------------------------------------------------------------
def test_evaluate_record_writes_games_that_replay(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    argv = ["evaluate", "simple_tricks", "heuristic", "random", "--games", "6", "--seed", "3"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    assert main([*argv, "--record", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == plain + f"6 games recorded in {path}\n", "the same games, the same report"
    records = read_records(path)
    assert [r.source for r in records] == [f"evaluate game {g}" for g in range(6)]
    assert {tuple(r.agents) for r in records} == {("heuristic", "random"), ("random", "heuristic")}
    assert main(["replay", str(path)]) == 0
    assert "6 games (simple_tricks_v0; 6 finished) replayed exactly" in capsys.readouterr().out
    assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "2",
                 "--duplicate", "--record", str(path)]) == 0
    assert len(read_records(path)) == 4


def test_ladder_record_writes_every_game(tmp_path, capsys):
    path = tmp_path / "ladder.jsonl"
    assert main(["ladder", "simple_tricks", "--games", "2", "--agents", "random", "heuristic",
                 "--record", str(path)]) == 0
    assert "4 games recorded" in capsys.readouterr().out
    records = read_records(path)
    assert [r.seed for r in records] == [[0, 0, 0, 0]] * 2 + [[0, 0, 1, 0]] * 2
    assert records[0].agents == ["random", "heuristic"] == records[1].agents[::-1]
    assert main(["replay", str(path)]) == 0


def test_play_record_writes_the_finished_and_the_stopped_game(tmp_path):
    path = tmp_path / "play.jsonl"
    moves = "1\n" * 10 + "y\n" + "1\n" * 3 + "q\n"  # a deal is 10 cards each
    out = subprocess.run(
        [sys.executable, "-m", "card_envs.cli", "play", "simple_tricks", "--seed", "4",
         "--opponent", "heuristic", "--record", str(path)],
        input=moves, capture_output=True, text=True, timeout=120,
        env={"PYTHONIOENCODING": "utf-8", "PATH": "", "CARD_ENVS_ASCII": "1"})
    assert out.returncode == 0, out.stderr
    assert f"2 games recorded in {path}" in out.stdout
    first, second = read_records(path)
    assert first.agents == ["human", "heuristic"] and first.finished
    assert first.seed == [4, 0, 0] and second.seed == [4, 1, 0]
    assert not second.finished and second.source == "play game 1, stopped"
    assert len(second.actions) >= 3
    for record in (first, second):
        replay(record)


def test_replay_shows_a_game_from_a_seat_or_with_every_hand_open(tmp_path, capsys):
    path = tmp_path / "g.jsonl"
    assert main(["evaluate", "thirty_one", "greedy", "--games", "2", "--set", "num_players=2",
                 "--record", str(path)]) == 0
    capsys.readouterr()
    record = read_records(path)[1]
    assert main(["replay", str(path), "--show", "2", "--seat", "1", "--ascii"]) == 0
    seat_view = capsys.readouterr().out
    assert seat_view.count(">> step ") == len(record.actions)
    assert "player_1 (you)" in seat_view and "player_0: 3 lives [opened]; ?? ?? ??" in seat_view
    assert "Game over." in seat_view or "You " in seat_view
    assert main(["replay", str(path), "--show", "2"]) == 0
    open_view = capsys.readouterr().out
    assert "??" not in open_view.split("\n>> step 0")[0], "every hand open"


@pytest.mark.parametrize("argv,says", [
    (["replay", "NOFILE"], "NOFILE: cannot read it"),
    (["replay", "BAD", "--show", "3"], "--show 3: BAD holds games 1..1"),
    (["replay", "BAD", "--seat", "0"], "--seat needs --show K"),
    (["replay", "BAD", "--show", "1", "--seat", "5"], "--seat 5 is not a seat"),
    (["replay", "TAMPERED"], "line 1: step 2: action"),
    (["replay", "UNFINISHED", "--show", "1"], "was not finished: show it from a seat"),
    (["evaluate", "simple_tricks", "random", "--games", "1", "--record", "/no/such/dir/x"],
     "--record /no/such/dir/x: cannot write"),
    (["play", "simple_tricks", "--record", "/no/such/dir/x"], "--record /no/such/dir/x"),
    (["ladder", "simple_tricks", "--agents", "random", "--record", "/no/such/dir/x"],
     "--record /no/such/dir/x"),
])
def test_record_and_replay_errors_are_one_line_and_exit_2(argv, says, tmp_path, capsys,
                                                          monkeypatch):
    spec = load_spec("simple_tricks")
    game = spec.make_game()
    actions, state = _random_game(spec, game, 0)
    good = make_record(spec, game, [0, 0, 0], ["a", "b"], actions, state)
    (tmp_path / "BAD").write_text(good.to_line() + "\n")
    (tmp_path / "TAMPERED").write_text(
        _tampered(good, lambda d: d["actions"][2].__setitem__(2, "x")) + "\n")
    actions, state = _random_game(spec, game, 0, stop=4)
    (tmp_path / "UNFINISHED").write_text(
        make_record(spec, game, [0, 0, 0], ["a", "b"], actions, state).to_line() + "\n")
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and says in err, err


def test_the_baselines_imitation_reads_records(tmp_path, capsys):
    pytest.importorskip("sb3_contrib", reason="the baselines need the train extra")
    import gymnasium
    from sb3_contrib import MaskablePPO

    from baselines.config import parse_pretrain
    from baselines.imitation import fit, from_records

    path = tmp_path / "expert.jsonl"
    assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "30",
                 "--record", str(path)]) == 0
    capsys.readouterr()
    env = gymnasium.make("card_envs/SimpleTricks-v0", opponent="random")
    data = from_records(str(path), env, gamma=0.99, agent="heuristic")
    assert len(data["actions"]) == 300 and data["obs"].shape[1] == env.observation_space.shape[0]
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
    assert fit(model.policy, data, epochs=20)["accuracy"] > 0.6
    assert parse_pretrain(f"records:{path},3") == {"records": str(path), "epochs": 3}
    with pytest.raises(ValueError, match="records:FILE"):
        parse_pretrain("records:,x")
    other = gymnasium.make("card_envs/SimpleTricks-v0", num_values=5)
    with pytest.raises(ValueError, match="not the run's simple_tricks_v0"):
        from_records(str(path), other, gamma=0.99)


def test_the_example_record_of_the_docs_is_what_its_command_writes(tmp_path, capsys):
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "records.md").read_text()
    example = next(line for line in page.splitlines() if line.startswith('{"format":'))
    path = tmp_path / "one.jsonl"
    assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "1", "--set",
                 "num_values=3", "--record", str(path)]) == 0
    capsys.readouterr()
    written = json.loads(path.read_text())
    assert json.loads(example) == {**written, "card_envs": json.loads(example)["card_envs"]}
    replay(parse_record(example))
