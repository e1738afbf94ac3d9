"""The compiled loops over a batch that every batched twin shares (numba; PufferLib Ocean style).

A game's twin (``card_envs/<game>/batched.py``) writes its rules as kernels over the slots it
is given (a loop over ``slots`` around the scalar rules of one game):

* ``deal(s, cfg, slots, rngs, rng_of)``: a new game in each of ``slots`` (their shared fields
  are already reset);
* ``step(s, cfg, slots, actions, rngs, rng_of)``: the legal ``actions[i]`` of the seat to act in
  each game ``i`` of ``slots``: its rewards in ``s.rewards[i]`` (zeroed before), the end by
  the rules in ``s.terminated[i]``, the next seat's legal ``s.mask[i]``;
* ``observe(s, cfg, rows, seats, encoding, out)``: row r of ``out``, game rows[r]'s
  observation for seats[r] in encoder number ``encoding``;
* ``act(s, cfg, rows, agent, rngs, rng_of, out)``: out[r], batched rule agent ``agent``'s
  (1, 2, ...) action for the seat to act in game rows[r];
* ``result(s, cfg, rows, payoffs, scores)``: row r, game rows[r]'s payoffs and scores per seat.

The public loops here (``deal_slots``, ``step_slots``, ...) call the kernels by the global names
DEAL, STEP, OBSERVE, ACT and RESULT: ``specialize(twin)`` compiles a copy of them per twin with
those names bound to its kernels (each copy with its own on-disk cache, so that one game's
compiled loops never depend on another's being imported); the helpers they share take the
kernels and the state as arguments and are inlined, uncached. (A cached function shared by the
twins would keep every game's kernels and state types in one cache index, which fails to load
or save once one of those games is not importable.) The loops serve the functional core (deal,
step with the step count and cap, observe, act) and the Gymnasium view's whole turn (the
learner's move, the other seats' moves up to the learner's next decision, the ended games'
results and new deals), each in one call.
Kernels take the state ``s`` (the twin's NamedTuple of arrays) and its constants
``cfg`` (a NamedTuple with ``num_players`` and ``max_steps``) once per call and loop inside:
a call that passes arrays counts a reference to each (some 10 ns an array), too much per game.
Randomness: ``rngs[rng_of[i]]`` is slot ``i``'s ``numpy.random.Generator`` (one for the batch,
or one per slot), drawn exactly as the scalar game draws from its generator.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit
from numba.np.random.random_methods import random_interval

from card_envs.core.batched_codes import (
    EXTERNAL_AGENT,
    EXTERNAL_MOVE,
    LEARNER_AGENT,
    NEW_GAME,
    RANDOM_AGENT,
)

# The kernels of one twin: the public loops below read them here, and ``specialize`` compiles
# copies of those loops with these names bound to a twin's kernels.
DEAL = STEP = OBSERVE = ACT = RESULT = None


@njit(cache=True)
def shuffle(rng, x):  # pragma: no cover - compiled
    """Shuffle the 1-d array ``x`` in place exactly as ``rng.shuffle`` does (so as the scalar
    games' ``core.cards.shuffled``): the same order and the same draws, checked by
    tests/test_batched_twins.py. Numba's own ``Generator.shuffle`` draws the same but swaps
    through 0-d slices, some 6x slower for a deck."""
    bitgen = rng.bit_generator
    for i in range(len(x) - 1, 0, -1):
        j = np.intp(random_interval(bitgen, np.uint64(i)))
        x[i], x[j] = x[j], x[i]


@njit(cache=True, inline="always")
def random_legal(mask, i, rng, legal):  # pragma: no cover - compiled
    """RandomAgent.act in game ``i``: the legal action of rank floor(rng.random() * count).

    Branch-free: the legal actions are listed in ``legal`` (scratch, one more than the
    actions) by always writing and advancing only past a legal one; a loop that stops at the
    pick mispredicts on almost every game."""
    count = 0
    for a in range(mask.shape[1]):
        legal[count] = a
        count += mask[i, a] != 0
    return legal[int(rng.random() * count)]


@njit(cache=True)
def first_illegal(mask, live, actions):  # pragma: no cover - compiled
    """The first slot where ``live`` ((B,) bool) is set and the action is out of range or
    illegal, or -1."""
    num_actions = mask.shape[1]
    for i in range(len(live)):
        a = actions[i]
        if live[i] and (a < 0 or a >= num_actions or mask[i, a] == 0):
            return i
    return -1


@njit(inline="always")
def _deal(deal, s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """Game.init in each of ``slots``: the shared fields as at a deal, then the twin's deal."""
    for i in slots:
        s.terminated[i] = False
        s.truncated[i] = False
        s.steps[i] = 0
        for q in range(s.rewards.shape[1]):
            s.rewards[i, q] = 0.0
    deal(s, cfg, slots, rngs, rng_of)
    _close(s, slots)


@njit(inline="always")
def _close(s, slots):  # pragma: no cover - compiled
    """No legal action in a game that is over."""
    for i in slots:
        if s.terminated[i] or s.truncated[i]:
            for a in range(s.mask.shape[1]):
                s.mask[i, a] = 0


@njit(inline="always")
def _play(step, s, cfg, slots, actions, rngs, rng_of, zeroed=False):  # pragma: no cover
    """Game.apply in each game of ``slots``: the twin's rules, then the step count and cap
    (``zeroed``: their rewards are 0 already)."""
    if not zeroed:
        for i in slots:
            for q in range(s.rewards.shape[1]):
                s.rewards[i, q] = 0.0
    step(s, cfg, slots, actions, rngs, rng_of)
    steps, terminated, truncated, mask = s.steps, s.terminated, s.truncated, s.mask
    for i in slots:
        steps[i] += 1
        if not terminated[i] and steps[i] >= cfg.max_steps:
            truncated[i] = True
        if terminated[i] or truncated[i]:
            for a in range(mask.shape[1]):
                mask[i, a] = 0


@njit(inline="always")
def _choose(act, s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """out[r]: agent ``agent``'s action in game rows[r] (RANDOM_AGENT: RandomAgent's draw)."""
    if agent == RANDOM_AGENT:
        mask = s.mask
        legal = np.empty(mask.shape[1] + 1, np.int64)
        if len(rngs) == 1:  # one generator for the batch: looked up once
            rng = rngs[0]
            for r in range(len(rows)):
                out[r] = random_legal(mask, rows[r], rng, legal)
        else:
            for r in range(len(rows)):
                i = rows[r]
                out[r] = random_legal(mask, i, rngs[rng_of[i]], legal)
    else:
        act(s, cfg, rows, agent, rngs, rng_of, out)
    return out


def deal_slots(s, cfg, slots, rngs, rng_of):  # pragma: no cover - compiled
    """A new game in each of ``slots``."""
    _deal(DEAL, s, cfg, slots, rngs, rng_of)


def step_slots(s, cfg, live, actions, rngs, rng_of):  # pragma: no cover - compiled
    """``actions[i]`` in each game ``i`` of ``live`` (legal: checked before); the rewards of
    every other game are zeroed."""
    s.rewards[:] = 0.0
    moves = np.empty(len(live), np.int64)
    for r in range(len(live)):
        moves[r] = actions[live[r]]
    _play(STEP, s, cfg, live, moves, rngs, rng_of, True)


def observe_slots(s, cfg, rows, seats, encoding, out):  # pragma: no cover - compiled
    """Row r of ``out``: game rows[r]'s observation for seats[r]."""
    OBSERVE(s, cfg, rows, seats, encoding, out)
    return out


def act_slots(s, cfg, rows, agent, rngs, rng_of, out):  # pragma: no cover - compiled
    """out[r]: agent ``agent``'s action for the seat to act in game rows[r]."""
    return _choose(ACT, s, cfg, rows, agent, rngs, rng_of, out)


def result_slots(s, cfg, payoffs, scores):  # pragma: no cover - compiled
    """Every game's payoffs and scores per seat (Game.payoffs, Game.scores)."""
    RESULT(s, cfg, np.arange(len(payoffs)), payoffs, scores)


# --- the Gymnasium view's turn ----------------------------------------------------------------
# Per slot, the learner's bookkeeping (core.batched.TurnArrays: its seat, what it earned, whether
# its game ended and how, ...); ``opponents[k]`` the agent of the seat k + 1 places after the
# learner (EXTERNAL_AGENT: its moves come from outside, between calls).
# The other seats move in waves: each wave one move in every game that needs one, as one call
# of each kernel; a game's own draws keep their order (the agent's, then the move's). The kinds
# of move and the agent codes are card_envs.core.batched_codes'.


@njit(inline="always")
def _new_games(deal, s, cfg, slots, rngs, rng_of, seat, learner_seat):  # pragma: no cover
    """SingleAgentEnv.reset's draws in each of ``slots``: the learner's seat (unless fixed),
    then the deal."""
    for i in slots:
        if learner_seat < 0:
            seat[i] = rngs[rng_of[i]].integers(0, cfg.num_players)
        else:
            seat[i] = learner_seat
    _deal(deal, s, cfg, slots, rngs, rng_of)


@njit(inline="always")
def _begin(step, deal, s, cfg, rows, actions, kind, rngs, rng_of, learner_seat,
           turns):  # pragma: no cover - compiled
    """``turn_moves``' first part in each game of ``rows``: a new game (NEW_GAME), the
    learner's move (LEARNER_MOVE; it pays after what waited since the deal) or an EXTERNAL
    seat's (EXTERNAL_MOVE; what it earned the learner adds up)."""
    seat, reward, pending, earned, fresh, deals, ended = (
        turns.seat, turns.reward, turns.pending, turns.earned, turns.fresh, turns.deals,
        turns.ended)
    rewards = s.rewards
    if kind == EXTERNAL_MOVE:
        _play(step, s, cfg, rows, actions, rngs, rng_of)
        for i in rows:
            earned[i] += rewards[i, seat[i]]
        return
    for i in rows:
        ended[i] = False
        earned[i] = 0.0
        fresh[i] = kind == NEW_GAME
        deals[i] = 1 if kind == NEW_GAME else 0
    if kind == NEW_GAME:
        _new_games(deal, s, cfg, rows, rngs, rng_of, seat, learner_seat)
    else:  # gym_env.step: the learner's move pays after what waited since the deal
        _play(step, s, cfg, rows, actions, rngs, rng_of)
        for i in rows:
            reward[i] = pending[i] + rewards[i, seat[i]]
            pending[i] = 0.0


@njit(inline="always")
def _sort_games(s, cfg, todo, opponents, turns, max_deals, over, again, movers,
                agent_of):  # pragma: no cover - compiled
    """Each game of ``todo`` by what comes next: ended (the learner's game: its results into
    ``over``, then a new deal; a new game that ended before the learner's first move: only
    the deal), both into ``again``; the learner to act (its ``acting`` seat; what it earned
    since it last acted paid or kept pending); an EXTERNAL seat to act (``waiting``); or
    another seat to move (``movers``, its agent in ``agent_of``). Returns the counts (over,
    again, movers) and the first game past ``max_deals`` deals, or -1."""
    seat, reward, pending, earned, fresh, deals, waiting, ended = (
        turns.seat, turns.reward, turns.pending, turns.earned, turns.fresh, turns.deals,
        turns.waiting, turns.ended)
    final_truncated, acting = turns.final_truncated, turns.acting
    terminated, truncated, current_player = s.terminated, s.truncated, s.current_player
    n = cfg.num_players
    num_over = num_again = num_movers = 0
    for i in todo:
        waiting[i] = False
        if terminated[i] or truncated[i]:
            if not fresh[i]:  # the learner's game ended: its results, then a new one
                reward[i] += earned[i]
                ended[i] = True
                final_truncated[i] = truncated[i]
                fresh[i] = True
                over[num_over] = i
                num_over += 1
            if deals[i] >= max_deals:
                return num_over, num_again, num_movers, i
            deals[i] += 1
            earned[i] = 0.0
            again[num_again] = i
            num_again += 1
            continue
        p = current_player[i]
        agent = LEARNER_AGENT if p == seat[i] else opponents[(p - seat[i]) % n - 1]
        if agent == LEARNER_AGENT:
            acting[i] = p
            if fresh[i]:
                pending[i] = earned[i]
            else:
                reward[i] += earned[i]
            continue
        if agent == EXTERNAL_AGENT:
            waiting[i] = True
            continue
        movers[num_movers] = i
        agent_of[num_movers] = agent
        num_movers += 1
    return num_over, num_again, num_movers, -1


def turn_moves(s, cfg, rows, actions, kind, rngs, rng_of, learner_seat, opponents, encoding,
               turns, max_deals):  # pragma: no cover - compiled
    """One part of a turn in each game of ``rows``, then the other seats' moves until each
    game's learner is to act (or an EXTERNAL seat is): ``kind`` NEW_GAME (the reset),
    LEARNER_MOVE (the learner's ``actions[r]``, starting the turn) or EXTERNAL_MOVE (an
    EXTERNAL seat's ``actions[r]``). A learner's game that ends keeps its results and is
    dealt again (SAME_STEP autoreset), as often as a new game ends before the learner's first
    move. A LEARNER seat (a teammate the learner plays) is the learner's to act as its own
    seat is; ``acting`` gets the seat each learner is to act in. ``turns``: the per-game
    bookkeeping above (core.batched.TurnArrays). The first game where the learner got no
    move in ``max_deals`` deals, or -1."""
    n = cfg.num_players
    k = len(rows)
    seat, earned, rewards = turns.seat, turns.earned, s.rewards
    final_obs, final_payoff, final_score = turns.final_obs, turns.final_payoff, turns.final_score
    _begin(STEP, DEAL, s, cfg, rows, actions, kind, rngs, rng_of, learner_seat, turns)
    todo = rows.copy()
    over = np.empty(k, np.int64)
    again = np.empty(k, np.int64)
    movers = np.empty(k, np.int64)
    agent_of = np.empty(k, np.int64)
    seats = np.empty(k, np.int64)
    payoffs = np.empty((k, n))
    scores = np.empty((k, n))
    moves = np.empty(k, np.int64)
    chosen = np.empty(k, np.int64)
    picked = np.empty(k, np.int64)
    group = np.empty(k, np.int64)
    while len(todo):
        num_over, num_again, num_movers, failed = _sort_games(
            s, cfg, todo, opponents, turns, max_deals, over, again, movers, agent_of)
        if failed >= 0:
            return failed
        if num_over:
            ended_rows = over[:num_over]
            for r in range(num_over):
                seats[r] = seat[ended_rows[r]]
            _final(OBSERVE, RESULT, s, cfg, ended_rows, seats[:num_over], encoding,
                   final_obs, payoffs[:num_over], scores[:num_over], final_payoff, final_score)
        if num_again:
            _new_games(DEAL, s, cfg, again[:num_again], rngs, rng_of, seat, learner_seat)
        if num_movers:  # one move in each, one call of ACT per agent among them
            mover_rows = movers[:num_movers]
            done_agents = 0
            while done_agents < num_movers:
                agent = -2
                size = 0
                for r in range(num_movers):
                    if agent_of[r] != -2 and (agent == -2 or agent_of[r] == agent):
                        agent = agent_of[r]
                        group[size] = r
                        size += 1
                for r in range(size):
                    picked[r] = mover_rows[group[r]]
                    agent_of[group[r]] = -2
                _choose(ACT, s, cfg, picked[:size], agent, rngs, rng_of, moves[:size])
                for r in range(size):
                    chosen[group[r]] = moves[r]
                done_agents += size
            _play(STEP, s, cfg, mover_rows, chosen[:num_movers], rngs, rng_of)
            for i in mover_rows:
                earned[i] += rewards[i, seat[i]]
        todo = np.concatenate((again[:num_again], movers[:num_movers]))
    return -1


@njit(inline="always")
def _final(observe, result, s, cfg, rows, seats, encoding, final_obs, payoffs, scores,
           final_payoff, final_score):  # pragma: no cover - compiled
    """The last observation, payoff and score of each ended game of ``rows`` for its learner."""
    buffer = np.empty((len(rows), final_obs.shape[1]), np.float32)
    observe(s, cfg, rows, seats, encoding, buffer)
    result(s, cfg, rows, payoffs, scores)
    for r in range(len(rows)):
        i = rows[r]
        final_obs[i, :] = buffer[r]
        final_payoff[i] = payoffs[r, seats[r]]
        final_score[i] = scores[r, seats[r]]


# --- one compiled copy of the public loops per twin -------------------------------------------
def source_digest(module: str) -> str:
    """12 hex digits of a hash of every ``.py`` file beside ``module`` (the twin's package:
    its kernels and the rules and encoders they read)."""
    import hashlib
    import importlib.util
    from pathlib import Path

    origin = importlib.util.find_spec(module).origin
    digest = hashlib.sha1()
    for path in sorted(Path(origin).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


PUBLIC = ("deal_slots", "step_slots", "observe_slots", "act_slots", "result_slots", "turn_moves")
_COPIES: dict[str, types.SimpleNamespace] = {}


def specialize(tag: str, deal, step, observe, act, result) -> types.SimpleNamespace:
    """The public loops compiled for one twin's kernels (made once per ``tag``, the twin's
    module): copies of these functions whose globals DEAL, STEP, OBSERVE, ACT and RESULT are
    the kernels, each named after ``tag`` and a digest of the source of the twin's package,
    so that its on-disk cache is its own and a changed twin never runs a stale copy (numba
    checks only the file that defines a cached function, and the kernels are compiled into
    these copies)."""
    loops = _COPIES.get(tag)
    if loops is None:
        env = dict(globals(), DEAL=deal, STEP=step, OBSERVE=observe, ACT=act, RESULT=result)
        label = f"{tag.replace('.', '_')}_{source_digest(tag)}"
        compiled = {}
        for name in PUBLIC:
            function = globals()[name]
            copy = types.FunctionType(function.__code__, env, name, function.__defaults__)
            copy.__qualname__ = f"{name}__{label}"
            copy.__module__ = __name__
            copy.__doc__ = function.__doc__
            compiled[name] = njit(cache=True)(copy)
        loops = _COPIES[tag] = types.SimpleNamespace(**compiled)
    return loops
