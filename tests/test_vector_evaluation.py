"""Evaluation on the twins plays the games of the scalar evaluation: the same results."""

from __future__ import annotations

import pytest

from card_envs.core import evaluation
from card_envs.core.agents import make_agent
from card_envs.core.make import make_batched
from card_envs.registry import load_spec

pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")

from card_envs import vector  # noqa: E402
from card_envs.vector import evaluation as batched  # noqa: E402

# Palace's scalar `heuristic` plays rollouts once the draw pile is empty: fewer of its games
GAMES = {"palace": 16}


@pytest.mark.parametrize("name", vector.names())
def test_every_twin_evaluates_as_the_scalar_loop(name):
    spec = load_spec(name)
    games = GAMES.get(name, 40)
    for variant in spec.variants:
        game = spec.make_game(**variant)
        agents = list(make_batched(spec, **variant).agents)  # random first: it draws
        lineup = (agents * game.num_players)[: game.num_players]
        kept = {"scalar": [], "batched": []}
        scalar = evaluation.evaluate(game, [make_agent(spec, a, game) for a in lineup], games,
                                     seed=4, names=lineup, keep=kept["scalar"].append)
        twin = batched.evaluate(spec, game, lineup, games, seed=4, keep=kept["batched"].append)
        assert twin.summary() == scalar.summary(), variant
        assert [(p.seed, p.seats, p.actions) for p in kept["batched"]] == \
            [(p.seed, p.seats, p.actions) for p in kept["scalar"]]
        if game.num_players == 2:
            a, b = agents[-1], agents[0]
            scalar = evaluation.duplicate_evaluate(game, make_agent(spec, a, game),
                                                   make_agent(spec, b, game), 30, seed=5,
                                                   names=[a, b])
            assert batched.duplicate_evaluate(spec, game, a, b, 30, seed=5).summary() == \
                scalar.summary()


def test_the_cli_plays_on_the_twin_where_it_can_and_prints_the_same(capsys):
    from card_envs.cli import main

    for extra in ([], ["--scalar"], ["--duplicate"], ["--duplicate", "--scalar"]):
        assert main(["evaluate", "simple_tricks", "heuristic", "random", "--games", "50",
                     "--seed", "3", *extra]) == 0
    runs = capsys.readouterr().out.split("simple_tricks_v0 SimpleTricks")[1:]
    assert runs[0] == runs[1] and runs[2] == runs[3]
    assert batched.batched_contestants(load_spec("simple_tricks"), ["heuristic", "random"])
    assert not batched.batched_contestants(load_spec("simple_tricks"), ["solver", "random"])


def test_a_shipped_model_plays_on_the_twin_in_one_forward_pass_a_step(capsys):
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    from card_envs.cli import main

    for extra in ([], ["--scalar"]):
        assert main(["evaluate", "thirty_one", "best", "expected_value", "--set",
                     "num_players=2", "--games", "60", "--seed", "11", *extra]) == 0
    runs = capsys.readouterr().out.split("thirty_one_v0 ThirtyOne")[1:]
    assert runs[0] == runs[1]
    spec = load_spec("thirty_one")
    game = spec.make_game(num_players=2)
    form = batched.batched_form(spec, "best", make_agent(spec, "best", game))
    assert form is not None and form.encoding == "default"
    assert batched.batched_form(spec, "ismcts:5", make_agent(spec, "ismcts:5", game)) is None
