"""Search agents: the generic search on a toy game, and for each game with a search agent its
world sampler (worlds agree with the view they come from) and the leak test (twin worlds that
differ only in what the seat cannot see give identical decisions for the same generator)."""

from __future__ import annotations

import numpy as np
import pytest

from card_envs.core.agents import RandomAgent, make_agent
from card_envs.core.game import Game, State, View
from card_envs.core.make import factories
from card_envs.core.search import ISMCTS, PIMC, SearchAgent
from card_envs.literature import search as literature_search
from card_envs.literature.agents import HeuristicAgent as LiteratureHeuristic
from card_envs.literature.deck import card_row as deck_row
from card_envs.palace import search as palace_search
from card_envs.registry import load_spec
from card_envs.thirty_one import search as thirty_one_search
from tests.conftest import play_states

SEARCH_GAMES = ["thirty_one", "palace", "literature"]
SAMPLERS = {
    "thirty_one": thirty_one_search.sample_world,
    "palace": lambda game, view, rng: palace_search.sample_world(game, view, rng, observed=True),
    "literature": literature_search.sample_world,
}


# --- the generic search on a toy game ---------------------------------------------------------
class _BetState(State):
    __slots__ = ("card", "bet")


class _BetView(View):
    __slots__ = ("high",)


class _Bet(Game):
    """One decision: seat 0 bets (1) or passes (0) on a card 0..9 it cannot see; a bet wins 1
    if the card is 3 or more, else loses 1; a pass pays 0.2. The view says only whether the
    card is high (5 or more) when ``told`` is set."""

    name = "bet"
    num_players = 2
    num_actions = 2
    max_steps = 2

    def __init__(self, told: bool):
        self.told = told
        self._config = {"told": told}

    def init(self, rng):
        s = _BetState(0)
        s.card, s.bet = int(rng.integers(10)), -1
        return s

    def _legal_mask(self, s):
        return np.ones(2, np.int8)

    def _apply(self, s, action, rng):
        s.bet, s.terminal = action, True
        return self.payoffs(s)

    def view(self, s, player):
        v = _BetView()
        v.player, v.legal = player, self.legal_mask(s) if player == s.player else np.zeros(2)
        v.high = (s.card >= 5) if self.told else None
        return v

    def payoffs(self, s):
        if not s.terminal:
            return np.zeros(2)
        win = 0.2 if s.bet == 0 else (1.0 if s.card >= 3 else -1.0)
        return np.array([win, -win])

    def action_name(self, action):
        return ("pass", "bet")[action]

    def action_table(self):
        return []

    def sample(self, view, rng):
        s = _BetState(0)
        cards = range(10) if view.high is None else (range(5, 10) if view.high else range(5))
        s.card, s.bet = int(rng.choice(list(cards))), -1
        return s


@pytest.mark.parametrize("method", ["ismcts", "pimc"])
@pytest.mark.parametrize("told,high,best", [(False, None, 1), (True, True, 1), (True, False, 0)])
def test_search_picks_the_best_action_over_the_worlds_the_view_allows(method, told, high, best):
    # unknown card: a bet is worth 0.4 > 0.2; known high: 1; known low: 2/5 - 3/5 = -0.2 < 0.2
    game = _Bet(told)
    view = _BetView()
    view.player, view.legal, view.high = 0, np.ones(2, np.int8), high
    cls = ISMCTS if method == "ismcts" else PIMC
    search = cls(game, game.sample, RandomAgent(game), 400)
    result = search.search(view, np.random.default_rng(0))
    assert result.best() == best
    assert sum(result.visits.values()) == 400


def test_search_refuses_a_view_not_to_act_and_a_bad_budget():
    game = _Bet(False)
    view = _BetView()
    view.player, view.legal, view.high = 1, np.zeros(2, np.int8), None
    with pytest.raises(ValueError, match="not to act"):
        ISMCTS(game, game.sample, RandomAgent(game), 10).search(view, np.random.default_rng(0))
    with pytest.raises(ValueError, match="simulations=0"):
        ISMCTS(game, game.sample, RandomAgent(game), 0)
    with pytest.raises(ValueError, match="tree='both'"):
        ISMCTS(game, game.sample, RandomAgent(game), 5, tree="both")


class _Fixed(RandomAgent):
    """A guide that always plays one action."""

    def __init__(self, game, action):
        super().__init__(game)
        self.action = action

    def act(self, view, rng):
        return self.action


class _BetSearch(SearchAgent):
    method, margin = "pimc", 1.0

    def sample_world(self, view, rng):
        return self.game.sample(view, rng)

    def default_rollout(self):
        return RandomAgent(self.game)


@pytest.mark.parametrize("high,guide,budget,chosen", [
    (True, 0, 400, 1),    # a bet on a known high card wins 1 > 0.2: the guide's pass is beaten
    (False, 1, 400, 0),   # a bet on a known low card is worth -0.2 < 0.2: its bet is beaten
    (False, 0, 400, 0),   # the guide's pass is the better move: kept
    (True, 0, 1, 0),      # one playout cannot beat the guide by a standard error: kept
])
def test_a_guided_search_keeps_the_guides_move_unless_clearly_beaten(high, guide, budget, chosen):
    game = _Bet(True)
    view = _BetView()
    view.player, view.legal, view.high = 0, np.ones(2, np.int8), high
    agent = _BetSearch(game, budget=budget, guide=_Fixed(game, guide))
    assert agent.name == f"random+ismcts:{budget}"  # the guide's name, then the search's
    assert agent.act(view, np.random.default_rng(0)) == chosen


def test_only_a_pimc_search_with_a_margin_takes_a_guide():
    game = _Bet(True)

    class _Tree(_BetSearch):
        method, margin = "ismcts", None

    with pytest.raises(ValueError, match="guide"):
        _Tree(game, budget=10, guide=_Fixed(game, 0))


def test_guided_palace_search_lets_the_guide_play_while_the_draw_pile_lasts():
    """The guide's move stands, searched or not, until the draw pile is empty; then the
    search may depart from it (here from a guide that always picks up, when it can)."""
    spec = load_spec("palace")
    game = spec.make_game()
    played = {"draw": 0, "endgame": 0, "departed": 0}

    class PickUp(RandomAgent):
        def act(self, view, rng):
            legal = np.flatnonzero(view.legal)
            from card_envs.palace.rules import PICK_UP
            return PICK_UP if view.legal[PICK_UP] else int(legal[0])

    guide = PickUp(game)
    agent = palace_search.PalaceSearchAgent(game, budget=12, guide=guide)
    assert agent.name == "random+ismcts:12"
    rng = np.random.default_rng(0)
    for seed in range(3):
        for s in play_states(game, seed, every=1):
            if s.done or game.legal_mask(s).sum() < 2:
                continue
            view = game.view(s, s.player)
            move, wanted = agent.act(view, rng), guide.act(view, rng)
            if view.draw_size:
                assert move == wanted
                played["draw"] += 1
            else:
                played["endgame"] += 1
                played["departed"] += move != wanted
    assert played["draw"] > 20 and played["endgame"] > 20 and played["departed"] > 0, played


@pytest.mark.parametrize("rules", ["standard", "original"])
def test_guided_98_cards_search_plays_the_guides_plan_unless_clearly_dearer(rules):
    """98 Cards' plan search with a guide: with no margin to spare it plays its own choice (or
    a plan as cheap that starts with the guide's move); with any margin, the guide's move
    wherever one of its scored plans starts with it, else its own choice; never the guide's
    move once the draw pile is empty (nothing is hidden: the endgame solver plays)."""
    from card_envs.ninety_eight_cards.expert import STUCK, alive_cards
    from card_envs.ninety_eight_cards.expert import SearchAgent as PlanSearch

    spec = load_spec("ninety_eight_cards")
    game = spec.make_game(rules=rules)
    guide = RandomAgent(game)
    plain = PlanSearch(game, budget=2)
    tight = PlanSearch(game, budget=2, guide=guide, guide_margin=0.0)
    loose = PlanSearch(game, budget=2, guide=guide, guide_margin=1e9)
    assert loose.name == "random+ismcts:2" and plain.name == "ismcts"
    with pytest.raises(ValueError, match="guide_margin"):
        PlanSearch(game, guide=guide, guide_margin=-1)

    def stuck(view):  # no plan meets the minimum: the candidates are every legal move
        need = view.min_play if view.standard else 1
        return all(cost >= STUCK for cost, _ in plain.planner.options(
            list(view.hand), [int(t) for t in view.piles], alive_cards(view), need, plain.count,
            shorter=view.standard))

    counts = {"guide": 0, "own": 0}
    for seed in range(8):
        for s in play_states(game, seed, every=1):
            if s.done or game.legal_mask(s).sum() < 2:
                continue
            view = game.view(s, s.player)
            for agent in (plain, tight, loose):
                agent.reset()
            own = plain.act(view, np.random.default_rng(seed))
            # a guide that wants another of the scored plans' first moves, or a random move
            others = [m for m in plain.candidates(view) if m != own] if view.draw_pile else []
            wanted = others[-1] if others and seed % 2 else guide.act(
                view, np.random.default_rng([seed, 1]))

            tight.guide = loose.guide = _Fixed(game, wanted)
            assert tight.act(view, np.random.default_rng(seed)) in (own, wanted)
            move = loose.act(view, np.random.default_rng(seed))
            if view.draw_pile and wanted in plain.candidates(view) and not stuck(view):
                assert move == wanted
                counts["guide"] += wanted != own
            else:
                assert move == own
                counts["own"] += wanted != own
    assert counts["guide"] > 5 and counts["own"] > 5, counts


def test_best_search_guides_98_cards_plan_search():
    """``best+search`` loads for 98 Cards: the shipped network guiding the plan search."""
    pytest.importorskip("sb3_contrib", reason="the shipped models need the train extra")
    spec = load_spec("ninety_eight_cards")
    agent = make_agent(spec, "best+search", spec.make_game())
    assert agent.name == "best+ismcts:4" and agent.guide is not None


# --- the games' world samplers -----------------------------------------------------------------
def _game_states(name: str, seeds: int = 2, every: int = 3):
    """(game, state) pairs from random games of every variant of ``name``."""
    spec = load_spec(name)
    for variant in spec.variants:
        game = spec.make_game(**variant)
        for seed in range(seeds):
            for s in play_states(game, seed, every=every):
                if not s.done:
                    yield game, s


def _same_view(a: View, b: View) -> bool:
    for name in [*type(a).__slots__, "player", "legal"]:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("name", SEARCH_GAMES)
def test_a_sampled_world_keeps_the_rules_and_shows_the_seat_its_own_view(name):
    spec = load_spec(name)
    rng = np.random.default_rng(1)
    checked = redrawn = 0
    for game, s in _game_states(name):
        encoders = [cls(game) for cls in spec.encoders.values()]
        seats = [s.player] if name == "palace" else range(game.num_players)
        for p in seats:
            view = game.view(s, p)
            if name == "thirty_one" and p not in view.seating:
                continue
            world = SAMPLERS[name](game, view, rng)
            game.check_invariants(world)
            again = game.view(world, p)
            assert _same_view(view, again), (name, game, p)
            for enc in encoders:
                assert np.array_equal(enc.encode(view), enc.encode(again)), (name, enc.name)
            checked += 1
            redrawn += _hidden(game, world) != _hidden(game, s)
    assert checked > 100 and redrawn > checked // 4, (checked, redrawn)


def _hidden(game: Game, s: State):
    """Where the cards are (for counting the worlds that differ from the real one)."""
    if game.name == "thirty_one":
        return [list(h) for h in s.hands], list(s.deck)
    if game.name == "palace":
        return [h.tolist() for h in s.hand], [list(f) for f in s.face_down], list(s.draw)
    return list(s.hands)


def test_literature_worlds_respect_every_fact_of_informed_play():
    """Heuristic play (many facts known) and the flow fallback both give worlds that keep
    every fact: check_invariants checks every player's tables against the sampled hands."""
    for variant in ({"num_players": 6}, {"num_players": 4, "rules": "original"}):
        game = load_spec("literature").make_game(**variant)
        agent = LiteratureHeuristic(game)
        rng = np.random.default_rng(3)
        s = game.init(rng)
        while not s.done:
            for p in range(game.num_players):
                view = game.view(s, p)
                deals = literature_search.Deals(view)
                world = literature_search.sample_world(game, view, rng, deals)
                game.check_invariants(world)
                assert _same_view(view, game.view(world, p))
                owner = deals._by_flow(rng)
                hands = list(deals.known)
                for c, q in owner.items():
                    hands[q] |= 1 << (8 * (c // 6) + c % 6)
                assert _agrees(view, hands)
            game.apply(s, agent.act(game.view(s, s.player), rng), rng)


def _agrees(view, hands: list[int]) -> bool:
    """Whether slot-form ``hands`` keep every fact of a Literature view's tables."""
    cards = np.array([deck_row(h) for h in hands])  # (n, 48)
    per_half = cards.reshape(len(hands), 8, 6).sum(axis=2)
    return bool((cards >= view.holds()).all() and not (cards & view.lacks()).any()
                and (per_half >= view.least()).all()
                and cards.sum(axis=1).tolist() == list(view.sizes))


# --- leaks: decisions depend on the view only ---------------------------------------------------
def _searcher(spec, game, guided: bool):
    """``ismcts:6``, or the same search guided by the game's strongest rule agent (which reads
    its view only, so the guided search must still see only the view)."""
    if not guided:
        return make_agent(spec, "ismcts:6", game)
    guide = make_agent(spec, spec.strongest_agent, game)
    return type(make_agent(spec, "ismcts", game))(game, budget=6, guide=guide)


@pytest.mark.parametrize("guided,seed", [(False, 2), (True, 3)], ids=["plain", "guided"])
@pytest.mark.parametrize("name", SEARCH_GAMES)
def test_twin_worlds_give_the_search_agent_identical_decisions(name, guided, seed):
    spec = load_spec(name)
    rng = np.random.default_rng(seed)
    decided = 0
    for game, s in _game_states(name, seeds=1, every=7):
        p = s.player
        if not game.legal_mask(s).sum() > 1:
            continue
        twin = game.randomize_hidden(s, p, rng)
        agent = _searcher(spec, game, guided)
        first = agent.act(game.view(s, p), np.random.default_rng(decided))
        second = agent.act(game.view(twin, p), np.random.default_rng(decided))
        assert first == second, (name, game, s.steps)
        decided += 1
    assert decided > 10


@pytest.mark.parametrize("name", SEARCH_GAMES)
def test_the_search_agent_is_an_ordinary_agent(name):
    """By name, with a budget, in evaluate's play loop, as a Gymnasium opponent."""
    spec = load_spec(name)
    game = spec.make_game()
    agent = make_agent(spec, "ismcts:3", game)
    assert isinstance(agent, SearchAgent) and agent.budget == 3
    assert make_agent(spec, "ismcts", game).budget == type(agent).default_budget
    env = factories(spec).gym(opponent="ismcts:2")
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        legal = np.flatnonzero(env.action_masks())
        obs, _, done, cut, _ = env.step(int(legal[0]))
        if done or cut:
            break


def test_thirty_one_match_chances():
    chances = thirty_one_search.match_chances
    assert chances([3, 3]) == [0.5, 0.5]
    assert chances([1, 3]) == pytest.approx([1 / 8, 7 / 8])
    assert chances([0, 2, 2]) == pytest.approx([0.0, 0.5, 0.5])
    assert sum(chances([1, 2, 3, 3])) == pytest.approx(1.0)
