"""Palace's batched twin against the scalar rules in every configuration the game accepts.

The spec's variants (tests/test_batched_twins.py) cover five configurations; here every
combination of 2-5 players, ``swap_phase`` and ``reward`` is played through the twin and the
scalar rules side by side, with a short step cap beside the real one so that games cut by the
cap (and their result rule, and the shaped stalemate penalty) come often, and with the rule
agents (the heuristic's endgame searches included) choosing every move.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from card_envs.palace.agents import HeuristicAgent, LowestFirstAgent
from card_envs.palace.rules import PICK_UP, Palace, ranks
from card_envs.registry import load_spec

pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")

from card_envs.core.batched import BatchedGame  # noqa: E402
from card_envs.palace import batched as twin  # noqa: E402
from tests.vector_checks import play_beside_gym_env  # noqa: E402

SPEC = load_spec("palace")
CONFIGS = [dict(num_players=n, swap_phase=swap, reward=reward)
           for n, swap, reward in itertools.product((2, 3, 4, 5), (False, True),
                                                    ("default", "original"))]
IDS = [f"{c['num_players']}p-swap={c['swap_phase']}-{c['reward']}" for c in CONFIGS]
SCALAR_AGENTS = {"lowest_first": LowestFirstAgent, "heuristic": HeuristicAgent}


def side_by_side(config: dict, games: int, batch: int, agent: str = "random",
                 max_steps: int = 1000, seed: int = 0) -> dict[str, int]:
    """Play ``games`` games of ``config`` (with step cap ``max_steps``) through the twin and
    through the scalar rules, comparing every step: seat to act, mask, every seat's
    observation in both encodings, rewards, ends, payoffs. ``agent`` moves for every seat on
    both sides (random: uniform over the legal moves, drawn apart from the games'
    generators). Counts of what was compared."""
    game = Palace(**config)
    game.max_steps = max_steps
    engine = BatchedGame(SPEC, game)
    encoders = [cls(game) for cls in SPEC.encoders.values()]
    seeds = np.arange(batch) + 1000 * seed
    state = engine.init(batch, seeds=seeds)
    gens = [np.random.default_rng(int(s)) for s in seeds]  # slot i's generator, twice
    states = [game.init(g) for g in gens]
    scalar = SCALAR_AGENTS[agent](game) if agent != "random" else None
    pick = np.random.default_rng(seed + 1)
    seen = dict(steps=0, games=0, capped=0, searches=0)
    while seen["games"] < games:
        assert state.current_player.tolist() == [s.player for s in states]
        assert np.array_equal(state.mask, np.stack([game.legal_mask(s) for s in states]))
        for k, enc in enumerate(encoders):
            for q in range(game.num_players):
                got = engine.observe(state, engine.encodings[k], seats=q)
                assert np.array_equal(got, np.stack([enc.encode_state(s, q) for s in states]))
        if scalar is None:
            actions = np.array([pick.choice(game.legal_actions(s)) for s in states])
        else:
            actions = engine.act(state, agent)
            for i, s in enumerate(states):
                view = game.view(s, s.player)
                if agent == "heuristic" and not view.draw_size and not view.swapping:
                    seen["searches"] += len(scalar._choices(view)) > 1
                assert actions[i] == scalar.act(view, gens[i]), (i, s.steps)
        engine.step(state, actions)
        rewards = []
        for i, s in enumerate(states):
            paid = game.apply(s, int(actions[i]), gens[i])
            rewards.append(np.zeros(game.num_players) if paid is None else paid)
        assert np.array_equal(state.rewards, np.array(rewards))
        assert state.terminated.tolist() == [s.terminal for s in states]
        assert state.truncated.tolist() == [s.truncated for s in states]
        seen["steps"] += batch
        ended = np.flatnonzero(state.done).tolist()
        if ended:
            payoffs = engine.payoffs(state)
            places = np.zeros((len(ended), game.num_players), np.int64)
            twin.places(state.arrays, engine.cfg, np.array(ended), places)
            for r, i in enumerate(ended):
                assert np.array_equal(payoffs[i], game.payoffs(states[i])), i
                assert places[r].tolist() == [game.place(states[i], q)
                                              for q in range(game.num_players)], i
                seen["capped"] += states[i].truncated
                states[i] = game.init(gens[i])  # the env's reset: the same generator goes on
            seen["games"] += len(ended)
            engine.autoreset(state)
    return seen


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_random_games_match_in_every_configuration(config):
    seen = side_by_side(config, games=60, batch=20, max_steps=150)
    assert seen["capped"] > 0, "no game reached the cap: its result rule went untested"
    side_by_side(config, games=20, batch=20, seed=1)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_batched_rule_agents_choose_as_the_scalar_agents_in_every_configuration(config):
    side_by_side(config, games=20, batch=10, agent="lowest_first", max_steps=60, seed=2)
    # the scalar heuristic's rollouts make this the slow part (some 2 ms a searched move)
    seen = side_by_side(config, games=5, batch=5, agent="heuristic", seed=3)
    assert seen["searches"] > 0, "the heuristic never searched: its rollouts went untested"


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_many_more_games_match_in_every_configuration(config):
    side_by_side(config, games=2000, batch=200, max_steps=300, seed=4)
    side_by_side(config, games=1000, batch=200, agent="lowest_first", seed=5)
    side_by_side(config, games=100, batch=50, agent="heuristic", seed=6)


def test_heuristic_search_draws_and_decides_as_the_scalar_agent():
    # an endgame by hand (3 players, empty draw pile): seat 0 holds 5 5 9 over a 4, so it
    # compares all or one of its 5s, its 9 and picking up, on imagined deals
    game = Palace()
    s = game.deal(hands=[ranks("5 5 9"), ranks("6 J"), ranks("K A A")],
                  face_up=[ranks("8"), ranks("Q"), []], face_down=[ranks("7"), ranks("6 4"),
                                                                   ranks("3")],
                  pile=ranks("4"))
    engine = BatchedGame(SPEC, game)
    agent = HeuristicAgent(game)
    choices = agent._choices(game.view(s, 0))
    assert sorted(choices) == sorted([16, 3, 7, PICK_UP])
    for seed in range(20):
        state = engine.init(1, seeds=[seed])
        engine.load(state, 0, s)
        rng = np.random.default_rng(seed)
        game.init(rng)  # the slot's generator dealt one game before the load
        assert engine.act(state, "heuristic")[0] == agent.act(game.view(s, 0), rng)
        assert state.rngs[0].random() == rng.random(), "the twin drew what the agent drew"


# (opponent, rules) of the Gymnasium view: the batched turn (card_envs.core.batched_loops's
# turn_moves) over these kernels against gym_env(), episode by episode
VIEWS = [
    ("lowest_first", {}),
    ("heuristic", {"num_players": 2}),
    ("random", {"num_players": 4, "swap_phase": True, "reward": "original"}),
    (["heuristic", "random", "lowest_first"], {"num_players": 4}),
]


@pytest.mark.parametrize("opponent,rules", VIEWS, ids=[f"{o}-{r}" for o, r in VIEWS])
def test_vector_env_slots_play_the_episodes_of_gym_env(opponent, rules):
    play_beside_gym_env("palace", {"opponent": opponent, **rules}, batch=6, most_steps=150,
                        first_seed=40, games=1)
