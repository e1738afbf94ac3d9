"""Every batched twin against its scalar game: same seeds and moves, the same games, bit for bit.

Driven by the registry: every game whose spec names a twin, every variant of its spec. Each
slot of a batch is dealt from the seed of one ``raw_env()`` (its own generator, drawn exactly
as the scalar rules draw), both play the same moves, and at every step the seat to act, its
legal mask, its observation in every encoding, the rewards and the ends must be equal; every
seat's observation in every encoding at every game end (and at every step of some games), and
the payoffs and scores. A game that ends continues in the same slot with the next deal of the
same generator (``autoreset`` and the env's ``reset()`` without a seed).

The moves come from the twin's agents: ``random`` (drawn from each game's own generator, as the
scalar RandomAgent draws from the env's) and every batched rule agent, which must choose what
the scalar agent chooses from its view, with the same draws. Twin worlds (states that differ
only in what a seat cannot see, ``Game.randomize_hidden``) loaded into a batch give that seat
identical observations and identical decisions of every batched agent.
"""

from __future__ import annotations

import copy
import itertools
import re

import numpy as np
import pytest

from card_envs.core.agents import make_agent
from card_envs.core.make import factories, make_batched
from card_envs.registry import env_names, load_spec
from tests.conftest import play_states

pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")

TWINS = [load_spec(e) for e in env_names() if load_spec(e).batched is not None]
CASES = [(spec.name, variant) for spec in TWINS for variant in spec.variants]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in cfg.items()) or 'default'}"
       for name, cfg in CASES]


def differential(name: str, config: dict, games: int, batch: int, agent: str = "random",
                 seed: int = 0, every_seat: bool = False) -> int:
    """Play ``games`` games through the twin and through ``raw_env()``s side by side, comparing
    every step; the number of steps compared. ``agent`` moves for every seat on both sides."""
    spec = load_spec(name)
    engine = make_batched(spec, **config)
    seeds = np.arange(batch) + 100_000 * seed + 7
    state = engine.init(batch, seeds=seeds)
    raw_env = factories(spec).raw_env
    envs = [raw_env(**config) for _ in seeds]
    for env, s in zip(envs, seeds.tolist(), strict=True):
        env.reset(seed=s)
    game = envs[0].game
    encoders = {enc: cls(game) for enc, cls in spec.encoders.items()}
    assert engine.encodings == tuple(encoders)
    scalar_agents = [make_agent(spec, agent, game) for _ in seeds]
    players = range(game.num_players)
    finished = steps = 0

    def compare_every_seat(slots: list[int]) -> None:
        for enc, encoder in encoders.items():
            for q in players:
                batched = engine.observe(state, enc, seats=q, rows=slots)
                for r, i in enumerate(slots):
                    expected = encoder.encode_state(envs[i].game_state, q)
                    assert np.array_equal(batched[r], expected), (enc, q, i)

    while finished < games:
        live = [env.game_state for env in envs]
        assert state.current_player.tolist() == [s.player for s in live]
        mask = np.stack([game.legal_mask(s) for s in live])
        assert np.array_equal(engine.legal_action_mask(state), mask)
        for enc, encoder in encoders.items():
            expected = np.stack([encoder.encode_state(s, s.player) for s in live])
            assert np.array_equal(engine.observe(state, enc), expected), enc
        if every_seat:
            compare_every_seat(list(range(batch)))
        actions = engine.act(state, agent)
        for i, env in enumerate(envs):  # the scalar agent draws from the env's generator
            s = env.game_state
            expected = scalar_agents[i].act(game.view(s, s.player), env._rng)
            assert actions[i] == expected, (agent, i, s.steps)
        engine.step(state, actions)
        for env, a in zip(envs, actions.tolist(), strict=True):
            env.step(a)
        steps += batch
        rewards = [[env.rewards[f"player_{q}"] for q in players] for env in envs]
        assert np.array_equal(state.rewards, np.array(rewards))
        assert state.terminated.tolist() == [env.game_state.terminal for env in envs]
        assert state.truncated.tolist() == [env.game_state.truncated for env in envs]
        ended = np.flatnonzero(state.done).tolist()
        if ended:
            assert not engine.legal_action_mask(state)[ended].any()
            compare_every_seat(ended)
            payoffs, scores = engine.results(state)
            for i in ended:
                s = envs[i].game_state
                assert np.array_equal(payoffs[i], game.payoffs(s)), i
                expected_scores = game.scores(s)
                if expected_scores is not None:
                    assert np.array_equal(scores[i], expected_scores), i
                envs[i].reset()
                scalar_agents[i] = make_agent(spec, agent, game)
            finished += len(ended)
            engine.autoreset(state)
    return steps


def games_for(config: dict, default: int, variant: int) -> int:
    """``default`` games for a game's default rules, ``variant`` for its other variants."""
    return variant if config else default


@pytest.mark.parametrize("name,config", CASES, ids=IDS)
def test_random_games_match_the_scalar_game(name, config):
    differential(name, config, games_for(config, 2000, 300), batch=200)
    differential(name, config, games=60, batch=30, seed=1, every_seat=True)


# Batched agents whose scalar form searches (some ms a move): fewer games against it. Palace's
# `heuristic` plays rollouts once the draw pile is empty (tests/games/test_palace_batched.py
# checks it in every configuration besides).
SCALAR_SEARCHES = {("ninety_eight_cards", "expert"): 3, ("palace", "heuristic"): 5}


def agent_games(name: str, agent: str, games: int) -> int:
    """``games``, divided for an agent whose scalar form is a search (SCALAR_SEARCHES)."""
    return games // SCALAR_SEARCHES.get((name, agent), 1)


@pytest.mark.parametrize("name,config", CASES, ids=IDS)
def test_batched_rule_agents_choose_what_the_scalar_agents_choose(name, config):
    engine = make_batched(load_spec(name), **config)
    assert engine.agents[1:], f"{name}'s twin has no batched rule agent"
    for agent in engine.agents[1:]:
        games = agent_games(name, agent, games_for(config, 150, 50))
        # (no more slots than games: every slot plays at least one whole game)
        differential(name, config, games, batch=min(50, games), agent=agent, seed=2)


@pytest.mark.parametrize("name", [spec.name for spec in TWINS])
def test_twin_worlds_give_a_seat_identical_observations_and_decisions(name):
    spec = load_spec(name)
    rng = np.random.default_rng(0)
    changed = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        engine = make_batched(spec, **variant)
        for seed in range(3):
            for s in play_states(game, seed, every=3):
                for p in range(game.num_players):
                    other = game.randomize_hidden(s, p, rng)
                    state = engine.init(2, seeds=[5, 5])  # same generators: same draws
                    engine.load(state, 0, s)
                    engine.load(state, 1, other)
                    changed += not np.array_equal(
                        np.concatenate([a[0].ravel().astype(float) for a in state.arrays]),
                        np.concatenate([a[1].ravel().astype(float) for a in state.arrays]))
                    for enc in engine.encodings:
                        obs = engine.observe(state, enc, seats=p)
                        assert np.array_equal(obs[0], obs[1]), (enc, p)
                    if s.player == p and not s.done:
                        for agent in engine.agents:
                            a, b = engine.act(state, agent)
                            assert a == b, (agent, p)
    assert changed > 0, "the twin worlds never differed in the batch: the test proves nothing"


@pytest.mark.parametrize("name", [spec.name for spec in TWINS])
def test_loaded_scalar_states_step_as_the_scalar_game(name):
    # load (the tests' door into the batch) writes every field the kernels read
    spec = load_spec(name)
    for variant in spec.variants:
        game = spec.make_game(**variant)
        engine = make_batched(spec, **variant)
        encoders = [cls(game) for cls in spec.encoders.values()]
        states = [s for seed in range(3) for s in play_states(game, seed, every=2) if not s.done]
        batch = engine.init(len(states), seeds=np.arange(len(states)))
        for i, s in enumerate(states):
            engine.load(batch, i, s)
        rng = np.random.default_rng(1)
        actions = np.array([rng.choice(game.legal_actions(s)) for s in states])
        # the scalar step draws what the slot's step draws (a blind card, say): from a copy of
        # the slot's own generator
        generators = [copy.deepcopy(batch.rngs[i]) for i in range(len(states))]
        engine.step(batch, actions)
        for i, s in enumerate(states):
            after = s.copy()
            game.apply(after, int(actions[i]), generators[i])
            assert batch.current_player[i] == after.player
            assert np.array_equal(batch.mask[i], game.legal_mask(after))
            for k, enc in enumerate(encoders):
                for q in range(game.num_players):
                    got = engine.observe(batch, engine.encodings[k], seats=q, rows=[i])[0]
                    assert np.array_equal(got, enc.encode_state(after, q)), (i, q)


CONFIGURED = [spec.name for spec in TWINS if len(spec.variants) > 1]


@pytest.mark.parametrize("name", CONFIGURED)
def test_an_engine_refuses_a_state_of_another_configuration(name):
    # e.g. a 3-player Thirty-One batch stepped by a 2-player engine: its arrays would be read
    # with the other configuration's shapes and constants
    from card_envs.core.batched import Turns, play_turns

    spec = load_spec(name)
    made, other = spec.variants[0], spec.variants[1]
    maker, engine = make_batched(spec, **made), make_batched(spec, **other)
    assert maker.config() != engine.config()
    state = maker.init(4, seed=0)
    arrays = [a.copy() for a in state.arrays]
    actions = maker.act(state, "random")
    rows = np.arange(4)
    calls = {
        "step": lambda: engine.step(state, actions),
        "observe": lambda: engine.observe(state),
        "observe_checked": lambda: engine.observe_checked(state, 0, rows, state.current_player),
        "act": lambda: engine.act(state, "random"),
        "legal_action_mask": lambda: engine.legal_action_mask(state),
        "autoreset": lambda: engine.autoreset(state),
        "reset_slots": lambda: engine.reset_slots(state, rows),
        "load": lambda: engine.load(state, 0, spec.make_game(**other).init(
            np.random.default_rng(0))),
        "results": lambda: engine.results(state),
        "places": lambda: engine.places(state),
        "play_turns": lambda: play_turns(engine, state, Turns(4, engine.observation_size()),
                                         0, rows, actions, np.zeros(8, np.int64), 0, "default"),
    }
    for call, run in calls.items():
        with pytest.raises(ValueError, match=re.escape(
                f"made by {maker!r}, not by {engine!r}")):
            run()
        assert all(np.array_equal(a, b) for a, b in zip(arrays, state.arrays, strict=True)), call
    # an engine of the same configuration made again is the same engine
    again = make_batched(spec, **made)
    again.step(state, actions)
    assert again.observe(state).shape[0] == 4


def test_simple_tricks_every_game_of_the_smallest_deals_matches():
    # exhaustive (OpenSpiel's consistency check): every deal of 2 x 2 and 2 x 3 cards, every
    # line of play, through the twin and the scalar rules
    spec = load_spec("simple_tricks")
    for n in (2, 3):
        game = spec.make_game(num_values=n)
        engine = make_batched(spec, num_values=n)
        encoders = [cls(game) for cls in spec.encoders.values()]
        frontier = [game.deal([list(p[:n]), list(p[n:])])
                    for p in itertools.permutations(range(2 * n))]
        positions = 0
        while frontier:
            batch = engine.init(len(frontier), seed=0)
            for i, s in enumerate(frontier):
                engine.load(batch, i, s)
            moves = [(i, a) for i, s in enumerate(frontier) for a in game.legal_actions(s)]
            rows = np.array([i for i, _ in moves])
            children = engine.init(len(moves), seed=0)
            for r, (i, _) in enumerate(moves):
                engine.load(children, r, frontier[i])
            engine.step(children, np.array([a for _, a in moves]))
            nxt = []
            for r, (i, a) in enumerate(moves):
                after = frontier[i].copy()
                game.apply(after, a, np.random.default_rng(0))
                assert np.array_equal(children.mask[r], game.legal_mask(after))
                assert children.terminated[r] == after.terminal
                for k, enc in enumerate(encoders):
                    for q in range(2):
                        got = engine.observe(children, engine.encodings[k], seats=q, rows=[r])
                        assert np.array_equal(got[0], enc.encode_state(after, q))
                if after.terminal:
                    assert np.array_equal(engine.payoffs(children)[r], game.payoffs(after))
                else:
                    nxt.append(after)
            positions += len(rows)
            frontier = nxt
        assert positions > 0


@pytest.mark.slow
@pytest.mark.parametrize("name,config", CASES, ids=IDS)
def test_100k_random_games_match_the_scalar_game(name, config):
    games = games_for(config, 100_000, 10_000)
    differential(name, config, games, batch=1000, seed=3)
    for agent in make_batched(load_spec(name), **config).agents[1:]:
        differential(name, config, agent_games(name, agent, games // 10), batch=1000,
                     agent=agent, seed=4)


def test_the_compiled_shuffle_draws_as_numpy_does():
    from card_envs.core.batched_loops import shuffle

    for seed in range(20):
        ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
        for n in (1, 2, 5, 13, 52, 98, 300):
            cards = np.arange(n, dtype=np.int8 if n < 128 else np.int64) * 1
            shuffle(ours, cards)
            expected = list(range(n))
            numpys.shuffle(expected)
            assert cards.tolist() == expected, (seed, n)
        assert ours.random() == numpys.random()  # and the generators go on alike
