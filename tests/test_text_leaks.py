"""No leaks through text: what ``card-envs mcp`` shows a client and what a ``cmd:`` agent's
program is sent are the same bytes in twin worlds its seat cannot tell apart (the twin worlds
of tests/test_leaks.py), for every game and rules variant."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from card_envs.core.cmd_agent import encode
from card_envs.core.evaluation import agent_view
from card_envs.core.seat_text import TextView, request, text_view
from card_envs.core.text import move_text
from card_envs.mcp_server import TextGame, TextGames
from card_envs.registry import load_spec
from card_envs.web.tables import Table
from tests.conftest import ENV_NAMES
from tests.twins import twin_worlds


def _mcp_text(spec, game, state, seat: int) -> str:
    """What the MCP server's ``view`` tool answers for ``seat`` at ``state`` (no moves before)."""
    table = Table(spec, game, seat, [None] * game.num_players,
                  ["random"] * game.num_players, [], seed=7)
    table.state = state.copy()
    games = TextGames()
    games.games["g1"] = TextGame("g1", table)
    return games.view("g1")


@pytest.mark.parametrize("name", ENV_NAMES)
def test_twin_worlds_send_text_agents_the_same_bytes(name):
    spec = load_spec(name)
    rng = np.random.default_rng(11)
    changed = compared = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        for s, p, twin in twin_worlds(game, range(2), 4, rng):
            changed += pickle.dumps(twin) != pickle.dumps(s)
            mine, theirs = text_view(spec, game, s, p), text_view(spec, game, twin, p)
            assert encode(request(mine, 1)) == encode(request(theirs, 1)), (name, variant, p)
            if s.done or s.player == p:  # the server answers a client only then
                assert _mcp_text(spec, game, s, p) == _mcp_text(spec, game, twin, p), (
                    name, variant, p)
                compared += bool(mine.moves)
    assert changed > 0 and compared > 0, "no twin worlds with a move to make: proves nothing"


@pytest.mark.parametrize("name", ENV_NAMES)
def test_a_move_is_told_the_same_in_twin_worlds_a_seat_still_cannot_tell_apart(name):
    """The moves since a seat's last one (the ``news`` of the server's text): the same move
    made in twin worlds, with the same chance, is told the seat in the same words whenever
    the seat still cannot tell the two worlds apart after it (the same render and
    observation); where the move shows the seat something new, the worlds may part."""
    spec = load_spec(name)
    rng = np.random.default_rng(12)
    compared = 0
    for variant in spec.variants:
        game = spec.make_game(**variant)
        encoder = spec.encoders["default"](game)
        for s, p, twin in twin_worlds(game, range(2), 3, rng):
            if s.done:
                continue
            legal = np.flatnonzero(game.legal_mask(s))
            action = int(legal[rng.integers(len(legal))])
            if not game.legal_mask(twin)[action]:
                continue
            after, twin_after = s.copy(), twin.copy()
            game.apply(after, action, np.random.default_rng(5))
            game.apply(twin_after, action, np.random.default_rng(5))
            if (spec.render(game, after, p) != spec.render(game, twin_after, p)
                    or not np.array_equal(encoder.encode(game.view(after, p)),
                                          encoder.encode(game.view(twin_after, p)))):
                continue
            told = move_text(spec, game, s, s.player, action, after)
            assert told == move_text(spec, game, twin, s.player, action, twin_after), (
                name, variant, p, s.steps)
            compared += s.player != p or game.num_players == 1
    assert compared > 0, "no move (of another seat, where there is one) was compared"


class _Reader:
    text_spec = None

    def act(self, view, rng):
        raise AssertionError


@pytest.mark.parametrize("name", ENV_NAMES)
def test_the_play_loop_gives_a_text_reader_its_text_view_and_others_the_game_view(name):
    spec = load_spec(name)
    game = spec.make_game()
    s = game.init(np.random.default_rng(0))
    reader = _Reader()
    assert type(agent_view(game, s, s.player, reader)) is type(game.view(s, s.player))
    reader.text_spec = spec
    view = agent_view(game, s, s.player, reader)
    assert isinstance(view, TextView) and view.moves and view.table == spec.render(game, s,
                                                                                   s.player)
    assert [a for a, _ in view.moves] == np.flatnonzero(game.legal_mask(s)).tolist()
