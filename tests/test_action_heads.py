"""Per-action policies (card_envs.rl.action_heads): facts, masks, saving and loading."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the per-action policies need the train extra")
pytest.importorskip("sb3_contrib", reason="the per-action policies need the train extra")

import torch as th  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402

from card_envs.core.action_features import fact_sets  # noqa: E402
from card_envs.core.make import factories  # noqa: E402
from card_envs.literature.deck import NUM_CARDS  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402
from card_envs.rl.action_heads import (  # noqa: E402
    PerActionDQNPolicy,
    PerActionMaskablePolicy,
    make_features,
)
from card_envs.rl.masked_dqn import MaskedDQN  # noqa: E402
from card_envs.rl.policy_agent import (  # noqa: E402
    PolicyAgent,
    load_model_agent,
    policy_scores,
    save_model,
)

CASES = [
    ("literature_v0", {}),
    ("literature_v0", {"rules": "original"}),
    ("ninety_eight_cards_v0", {}),
    ("ninety_eight_cards_v0", {"rules": "original"}),
    ("simple_tricks_v0", {}),
    ("simple_tricks_v0", {"num_values": 4}),
    ("palace_v0", {}),
    ("palace_v0", {"num_players": 4, "swap_phase": True}),
]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _observations(env_name, game_args, games=2, seed=0):
    spec = load_spec(env_name)
    game = spec.make_game(**game_args)
    encoder = spec.encoders["default"](game)
    rng = np.random.default_rng(seed)
    obs, views = [], []
    for _ in range(games):
        s = game.init(rng)
        while not s.done:
            view = game.view(s, s.player)
            obs.append(encoder.encode(view))
            views.append(view)
            game.apply(s, int(rng.choice(np.flatnonzero(view.legal))), rng)
    return game, th.as_tensor(np.array(obs)), views


@pytest.mark.parametrize("env_name,game_args", CASES)
def test_every_action_gets_the_same_number_of_finite_facts(env_name, game_args):
    game, obs, _ = _observations(env_name, game_args)
    facts = make_features(env_name, game_args, "default")(obs)
    assert facts.shape == (len(obs), game.num_actions,
                           fact_sets(load_spec(env_name))["basic"].num_features)
    assert th.isfinite(facts).all()


def test_features_refuse_an_encoding_they_cannot_read():
    with pytest.raises(ValueError, match="obs_encoding in 'default', not 'original'"):
        make_features("literature_v0", {}, "original")
    with pytest.raises(ValueError, match="no per-action features for thirty_one_v0"):
        make_features("thirty_one_v0", {}, "default")


def test_literature_ask_facts_say_what_i_know_of_that_opponent_and_card():
    spec = load_spec("literature_v0")
    game = spec.make_game(rules="original")  # 4 players: opponents at +1 (j=0) and +3 (j=1)
    encoder = spec.encoders["default"](game)
    features = make_features("literature_v0", {"rules": "original"}, "default")
    s = game.init(np.random.default_rng(5))
    # seat 0 asks seat 1 for a card seat 1 does not hold: now everyone knows seat 1 lacks it
    mine = game.view(s, 0)
    legal = np.flatnonzero(mine.legal)
    missing = [a for a in legal if not s.hands[1] >> _bit(a % NUM_CARDS) & 1]
    ask = int(missing[0])
    game.apply(s, ask, np.random.default_rng(0))
    card = ask % NUM_CARDS
    obs = th.as_tensor(encoder.encode(game.view(s, 0)))[None]
    facts = features(obs)[0]
    assert facts[card, 0] == 1, "an ask"
    assert facts[card, 3] == 0 and facts[card, 4] == 1, "seat +1 is known to lack the card"
    # the other opponent (+3) may still hold it: it is the only candidate left
    other = facts[NUM_CARDS + card]
    assert other[4] == 0 and other[3 + 8] == pytest.approx(1.0)


def _bit(card: int) -> int:
    from card_envs.literature.deck import CARD_BIT

    return CARD_BIT[card]


def test_ninety_eight_cards_facts_count_the_live_cards_a_move_shuts_out():
    spec = load_spec("ninety_eight_cards_v0")
    game = spec.make_game()
    encoder = spec.encoders["default"](game)
    features = make_features("ninety_eight_cards_v0", {}, "default")
    rng = np.random.default_rng(3)
    s = game.init(rng)
    view = game.view(s, 0)
    facts = features(th.as_tensor(encoder.encode(view))[None])[0]
    live = set((np.flatnonzero(view.in_draw) + 2).tolist()) | {int(c) for c in view.slots if c}
    for action in np.flatnonzero(view.legal[:32]):
        pile, slot = divmod(int(action), 8)
        top, card = int(view.piles[pile]), int(view.slots[slot])
        between = sum(1 for x in live if min(top, card) < x < max(top, card))
        sign = np.sign((card - top) * (1 if pile < 2 else -1))
        assert facts[action, 2 + 7].item() * 20 == pytest.approx(between * sign)


@pytest.mark.parametrize("game_args", [{}, {"rules": "original"}])
def test_ninety_eight_cards_home_facts_are_the_experts_counting(game_args):
    from card_envs.ninety_eight_cards.expert import TurnPlanner, alive_cards, home_masks

    game, obs, views = _observations("ninety_eight_cards_v0", game_args, games=3, seed=11)
    features = make_features("ninety_eight_cards_v0", game_args, "default", facts="homes")
    base = make_features("ninety_eight_cards_v0", game_args, "default")
    facts = features(obs)
    f0 = base.num_features
    assert th.equal(facts[:, :, :f0], base(obs)), "the basic facts come first"
    loss = TurnPlanner().loss
    checked = 0
    for i, v in enumerate(views):
        tops = [int(t) for t in v.piles]
        masks = home_masks(tops)
        alive = alive_cards(v)
        dead = (alive & masks[0]).bit_count()
        costs = []
        for action in np.flatnonzero(v.legal[:32]):
            pile, slot = divmod(int(action), 8)
            top, card = tops[pile], int(v.slots[slot])
            rest = alive & ~(1 << card)
            low, high = min(top, card), max(top, card)
            between = rest & ((1 << high) - (2 << low))
            by_homes = [(between & m).bit_count() for m in masks]
            tens = abs(card - top) == 10 and (card < top) == (pile < 2)
            lost = [0] * 4 if tens else by_homes[1:]
            back = by_homes[:4] if tens else [0] * 4
            cost = (sum(loss[h] * lost[h - 1] for h in range(1, 5))
                    - sum(loss[h + 1] * back[h] for h in range(4)))
            own = next(h for h, m in enumerate(masks) if m >> card & 1)
            row = facts[i, action, f0:].numpy()
            np.testing.assert_allclose(row[:8] * 4, lost + back, atol=1e-5)
            np.testing.assert_allclose(row[8] * 10, cost, atol=1e-4)
            assert row[9] * 4 == pytest.approx(own) and row[10] * 10 == pytest.approx(dead)
            assert row[11] * 10 == pytest.approx(dead + lost[0] - back[0] - (own == 0))
            costs.append(cost)
            checked += 1
        if game.standard:
            end = facts[i, 32, f0:].numpy()
            assert end[0] * 10 == pytest.approx(dead)
            assert end[1] * 10 == pytest.approx(min(costs) if costs else 0.0, abs=1e-4)
            assert end[2] == (bool(costs) and min(costs) <= 0)
    assert checked > 100


def _expert_cost(tops: list[int], alive: int, pile: int, card: int) -> float:
    """expert.py's counting of one legal play, by hand: the live cards it jumps over by
    their homes, less those a tens trick lets back."""
    from card_envs.ninety_eight_cards.expert import TurnPlanner, home_masks

    loss, masks = TurnPlanner().loss, home_masks(tops)
    top = tops[pile]
    rest = alive & ~(1 << card)
    low, high = min(top, card), max(top, card)
    by_homes = [(rest & ((1 << high) - (2 << low)) & m).bit_count() for m in masks]
    if abs(card - top) == 10 and (card < top) == (pile < 2):  # the tens trick
        return -sum(loss[h + 1] * by_homes[h] for h in range(4))
    return sum(loss[h] * by_homes[h] for h in range(1, 5))


@pytest.mark.parametrize("game_args", [{}, {"rules": "original"}])
def test_ninety_eight_cards_plan_facts_look_one_play_ahead(game_args):
    from card_envs.ninety_eight_cards.expert import alive_cards, fits

    game, obs, views = _observations("ninety_eight_cards_v0", game_args, games=2, seed=5)
    features = make_features("ninety_eight_cards_v0", game_args, "default", facts="plans")
    homes = make_features("ninety_eight_cards_v0", game_args, "default", facts="homes")
    facts = features(obs)
    f0 = homes.num_features
    assert facts.shape[2] == f0 + 5
    assert th.equal(facts[:, :, :f0], homes(obs)), "the homes facts come first"
    checked = 0
    for i, v in enumerate(views):
        tops = [int(t) for t in v.piles]
        alive = alive_cards(v)
        hand = [int(c) for c in v.slots]
        for action in np.flatnonzero(v.legal[:32]):
            pile, slot = divmod(int(action), 8)
            card = hand[slot]
            after = list(tops)
            after[pile] = card
            rest = alive & ~(1 << card)
            nxt = [_expert_cost(after, rest, q, c)
                   for s2, c in enumerate(hand) if c and s2 != slot
                   for q in range(4) if fits(q, after[q], c)]
            row = facts[i, action, f0:].numpy()
            assert row[0] * 8 == pytest.approx(len(nxt))
            assert row[1] == (not nxt)
            least = min(nxt) if nxt else 0.0
            assert row[2] * 10 == pytest.approx(least, abs=1e-4)
            assert row[3] * 4 == pytest.approx(sum(c <= 0 for c in nxt))
            own = _expert_cost(tops, alive, pile, card)
            assert row[4] * 10 == pytest.approx(own + least, abs=1e-4)
            checked += 1
        if game.standard:
            assert not facts[i, 32, f0:].any(), "ending the turn has no plan facts"
    assert checked > 100


@pytest.mark.parametrize("env_name,game_args", CASES[::2])
@pytest.mark.parametrize("algo", ["maskable_ppo", "dqn"])
def test_per_action_policies_learn_only_legal_actions_and_save_and_load(
    tmp_path, env_name, game_args, algo
):
    spec = load_spec(env_name)
    dqn = algo == "dqn"
    env = factories(spec).gym(**game_args, dict_obs=dqn, illegal_reward=None)  # illegal raises
    kwargs = {"env_name": env_name, "game_args": game_args, "obs_encoding": "default",
              "body_arch": [16], "head_arch": [16]}
    if dqn:
        model = MaskedDQN(PerActionDQNPolicy, env, learning_starts=50, buffer_size=500,
                          batch_size=16, train_freq=2, policy_kwargs=kwargs, seed=0,
                          device="cpu")
    else:
        model = MaskablePPO(PerActionMaskablePolicy, env, n_steps=64, batch_size=32, n_epochs=1,
                            policy_kwargs={**kwargs, "value_arch": [16]}, seed=0, device="cpu")
    model.learn(300)
    # Adam with torch's fused kernel (card_envs.rl.optim), the saved kwargs untouched
    assert model.policy.optimizer.defaults["fused"] is True
    assert "fused" not in model.policy.optimizer_kwargs
    save_model(model, tmp_path / "m", {"env": env_name, "setting": env_name, "algo": algo,
                                       "game_args": game_args, "obs_encoding": "default"},
               for_play=True)
    game, obs, views = _observations(env_name, game_args, games=1, seed=1)
    agent = load_model_agent(spec, f"model:{tmp_path / 'm.zip'}", game)
    live = PolicyAgent(game, env.encoder, model.policy, algo)
    rng = np.random.default_rng(0)
    for view in views:
        a = agent.act(view, rng)
        assert view.legal[a] and a == live.act(view, rng), "loaded == trained, legal"


def test_the_ppo_logits_are_the_per_action_scores():
    spec = load_spec("simple_tricks_v0")
    env = factories(spec).gym()
    model = MaskablePPO(PerActionMaskablePolicy, env, seed=0, device="cpu",
                        policy_kwargs={"env_name": "simple_tricks_v0"})
    policy = model.policy
    _, obs, _ = _observations("simple_tricks_v0", {}, games=1)
    with th.no_grad():
        scores = policy.mlp_extractor.scorer(obs)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(obs))
    assert th.equal(scores, logits) and scores.shape == (len(obs), 20)


@pytest.mark.parametrize("head_arch", [[8], [8, 4]])
@pytest.mark.parametrize("env_name,game_args", CASES)
def test_the_fused_heads_score_and_learn_as_autograd_would(env_name, game_args, head_arch):
    """One-hidden-layer heads run through _OneLayerHead (forward and backward written out),
    deeper ones split their first layer (facts and summary apart); the same network as plain
    torch modules gives the same scores and gradients."""
    from card_envs.rl.action_heads import PerActionScorer

    _, obs, _ = _observations(env_name, game_args, games=1)
    th.manual_seed(0)
    features = make_features(env_name, game_args, "default", "basic")
    scorer = PerActionScorer(features, obs.shape[1], [16], head_arch)
    weights = list(scorer.parameters())
    target = th.randn(len(obs), features.num_actions)

    def plain() -> th.Tensor:  # the head as autograd sees nn.Linear -> ReLU -> nn.Linear
        facts, summary = scorer.features(obs), scorer.body(obs)
        parts = []
        for head, (start, stop) in zip(scorer.heads, scorer.runs, strict=True):
            joined = th.cat([facts[:, start:stop],
                             summary[:, None, :].expand(-1, stop - start, -1)], dim=2)
            parts.append(head(joined).squeeze(2))
        return th.cat(parts, dim=1)

    results = []
    for score in (scorer, lambda _: plain()):
        scorer.zero_grad()
        out = score(obs)
        ((out - target) ** 2).sum().backward()
        results.append([out.detach()] + [w.grad.clone() for w in weights])
    assert len(results[0]) == 1 + len(weights) and all(w.grad is not None for w in weights)
    for fused, reference in zip(*results, strict=True):
        assert th.allclose(fused, reference, rtol=1e-4, atol=1e-4 * reference.abs().max())


def test_palace_play_facts_read_the_hand_the_pile_and_what_the_next_player_shows():
    from card_envs.core.cards import parse_rank

    spec = load_spec("palace_v0")
    game = spec.make_game()
    encoder = spec.encoders["default"](game)
    features = make_features("palace_v0", {}, "default")
    r = parse_rank
    # seat 0 holds 5 5 5 Q, the pile is topped by 5 5 (a fourth 5 would burn it); seat 1 (next)
    # shows a K face-up and is known to hold an A; seat 2 shows a 4
    hands = [[r("5")] * 2 + [r("Q")], [r("9"), r("A")], [r("4")]]
    face_up, face_down = [[r("J")], [r("K")], [r("4")]], [[], [r("2")], [r("3")]]
    pile = [r("8"), r("5"), r("5")]
    placed = sum(hands + face_up + face_down, pile)
    draw = [rank for rank in range(13) for _ in range(4 - placed.count(rank))]  # the rest
    s = game.deal(hands=hands, face_up=face_up, face_down=face_down, pile=pile, draw=draw,
                  known=[[], [r("A")], []])
    facts = features(th.as_tensor(encoder.encode(game.view(s, 0)))[None])[0]
    one_five, two_fives, queen = r("5"), 13 + r("5"), r("Q")
    at = 2 + 4 + 13  # after the head-kind flags, the play-kind one-hot and the rank one-hot
    rank, put, source, left, burns, pile_after, unseen, known, answers = range(at, at + 9)
    assert facts[one_five, 2] == 1 and facts[one_five, 6 + r("5")] == 1, "a hand play of a 5"
    assert facts[two_fives, put] == pytest.approx(0.5) and facts[two_fives, left] == 0
    assert facts[one_five, burns] == 0 and facts[two_fives, burns] == 1, "5 5 + 5 5 burns"
    assert facts[queen, burns] == 0 and facts[queen, pile_after] == pytest.approx(4 / 52)
    # no 5 is unseen: two in my hand, two on the pile
    assert facts[one_five, unseen] == 0 and facts[queen, unseen] == pytest.approx(3 / 4)
    # on a 5 the next player can answer with its K and its A; on a Q with the same two
    assert facts[one_five, answers] == pytest.approx(2 / 4)
    assert facts[queen, rank] == pytest.approx(r("Q") / 12) and facts[queen, known] == 0
    assert facts[78, 5] == 1 and facts[78, pile_after] == pytest.approx(3 / 52), "pick-up"


@pytest.mark.parametrize("game_args", [{}, {"rules": "original"}])
def test_literature_belief_facts_are_what_heuristic_reads_from_its_view(game_args):
    from card_envs.literature.agents import Beliefs, HeuristicAgent

    game, obs, views = _observations("literature_v0", game_args, games=3, seed=7)
    features = make_features("literature_v0", game_args, "default", facts="beliefs")
    base = make_features("literature_v0", game_args, "default")
    chance = features.chance(obs).numpy()
    showed = features.showed(obs).numpy()
    facts = features(obs)
    assert th.equal(facts[:, :, :base.num_features], base(obs)), "the basic facts come first"
    f0, t = base.num_features, game.num_players // 2
    for i, v in enumerate(views):
        b = Beliefs(v)
        rows = [(v.player + r) % v.num_players for r in range(v.num_players)]
        np.testing.assert_allclose(chance[i], b.chance[rows], atol=1e-5)
        expect = np.zeros((t, 8))
        for j, h in HeuristicAgent._showed(v, v.opponents()):
            expect[j, h] = 1
        np.testing.assert_array_equal(showed[i], expect)
        asks = facts[i, :t * NUM_CARDS].reshape(t, NUM_CARDS, -1)
        np.testing.assert_allclose(asks[:, :, f0].numpy(), b.chance[v.opponents()], atol=1e-5)
        legal = v.legal[:t * NUM_CARDS].reshape(t, NUM_CARDS).astype(bool)
        if legal.any():  # the best legal ask's chance less its own is 0
            best = b.chance[v.opponents()][legal].max()
            gap = asks[:, :, f0 + 2].numpy()[legal]
            np.testing.assert_allclose(gap.max(), 0.0, atol=1e-5)
            np.testing.assert_allclose(gap, b.chance[v.opponents()][legal] - best, atol=1e-5)
        if not game.original:
            declare = facts[i, t * NUM_CARDS:t * NUM_CARDS + 8, f0].numpy()
            np.testing.assert_allclose(declare, [b.claim_chance(h) for h in range(8)],
                                       atol=1e-5)
            ours = facts[i, t * NUM_CARDS:t * NUM_CARDS + 8, f0 + 1].numpy()
            np.testing.assert_array_equal(ours, [b.with_my_team(h) for h in range(8)])
    with pytest.raises(ValueError, match="facts: 'beliefs' is not valid for simple_tricks_v0"):
        make_features("simple_tricks_v0", {}, "default", facts="beliefs")


def test_a_model_keeps_its_set_of_facts_when_saved_and_loaded(tmp_path):
    from card_envs.literature.features import LiteratureBeliefFeatures

    spec = load_spec("literature_v0")
    env = factories(spec).gym(illegal_reward=None)
    kwargs = {"env_name": "literature_v0", "game_args": {}, "obs_encoding": "default",
              "body_arch": [16], "head_arch": [16], "value_arch": [16], "facts": "beliefs"}
    model = MaskablePPO(PerActionMaskablePolicy, env, n_steps=64, batch_size=32, n_epochs=1,
                        policy_kwargs=kwargs, seed=0, device="cpu")
    model.learn(64)
    save_model(model, tmp_path / "m", {"env": "literature_v0", "setting": "literature_v0",
                                       "algo": "maskable_ppo", "game_args": {},
                                       "obs_encoding": "default"}, for_play=True)
    game, _, views = _observations("literature_v0", {}, games=1, seed=2)
    agent = load_model_agent(spec, f"model:{tmp_path / 'm.zip'}", game)
    assert isinstance(agent.policy.mlp_extractor.scorer.features, LiteratureBeliefFeatures)
    live = PolicyAgent(game, env.encoder, model.policy, "maskable_ppo")
    rng = np.random.default_rng(0)
    assert all(agent.act(v, rng) == live.act(v, rng) for v in views[:50])


def test_make_optimizer_fuses_adam_unless_told_and_leaves_others_alone():
    from card_envs.rl.optim import make_optimizer

    net = th.nn.Linear(3, 2)
    adam = make_optimizer(th.optim.Adam, net.parameters(), 1e-3, {"eps": 1e-5})
    assert adam.defaults["fused"] is True and adam.defaults["eps"] == 1e-5
    assert make_optimizer(th.optim.AdamW, net.parameters(), 1e-3, {"fused": False}
                          ).defaults["fused"] is False
    sgd = make_optimizer(th.optim.SGD, net.parameters(), 0.1, {"momentum": 0.9})
    assert isinstance(sgd, th.optim.SGD) and sgd.defaults["momentum"] == 0.9


def test_the_one_pass_masked_distribution_is_sb3_contribs():
    """OnePassMaskedDistribution (one log_softmax over the masked logits) gives sb3-contrib's
    log-probabilities, entropies, probabilities, modes and gradients, masked or not."""
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution

    from card_envs.rl.action_heads import OnePassMaskedDistribution

    gen = th.Generator().manual_seed(0)
    logits = th.randn(64, 9, generator=gen) * 3
    masks = th.rand(64, 9, generator=gen) < 0.5
    masks[th.arange(64), th.randint(0, 9, (64,), generator=gen)] = True  # one legal at least
    actions = th.multinomial(masks.float(), 1, generator=gen)[:, 0]
    results = []
    for cls in (OnePassMaskedDistribution, MaskableCategoricalDistribution):
        for mask in (masks, None):
            raw = logits.clone().requires_grad_()
            dist = cls(9).proba_distribution(raw)
            if mask is not None:
                dist.apply_masking(mask.numpy())
            log_prob, entropy = dist.log_prob(actions), dist.entropy()
            (log_prob.sum() + 0.1 * entropy.sum()).backward()
            results.append([log_prob.detach(), entropy.detach(), dist.distribution.probs.detach(),
                            dist.mode(), raw.grad])
    for ours, theirs in zip(results[:2], results[2:], strict=True):
        for a, b in zip(ours, theirs, strict=True):
            assert th.allclose(a.float(), b.float(), atol=1e-5), (a - b).abs().max()
    assert results[0][2][~masks].max() == 0 and results[0][3].tolist() != results[1][3].tolist()


def test_a_scorer_uses_handed_in_facts_for_that_tensor_once():
    from card_envs.rl.action_heads import PerActionScorer

    _, obs, _ = _observations("simple_tricks_v0", {}, games=1)
    features = make_features("simple_tricks_v0", {}, "default", "basic")
    scorer = PerActionScorer(features, obs.shape[1], [8], [8])
    with th.no_grad():
        plain = scorer(obs)
        other = th.zeros(len(obs), features.num_actions, features.num_features)
        scorer.give(obs.clone(), other)  # another tensor with the same values: not used
        assert th.equal(scorer(obs), plain)
        scorer.give(obs, other)
        assert not th.equal(scorer(obs), plain)  # used for this tensor...
        assert th.equal(scorer(obs), plain)  # ...once


@pytest.mark.parametrize("env_name", ["ninety_eight_cards_v0", "literature_v0"])
def test_a_rollouts_facts_serve_its_update_and_train_the_same(env_name):
    """keep_rollout_facts: the update reads the facts the rollout computed (no facts are
    computed in the update) and training is the same, weight for weight."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from card_envs.rl.rollout import FactsRolloutBuffer, keep_rollout_facts

    spec = load_spec(env_name)
    models, computed = [], []
    for keep in (True, False):
        env = DummyVecEnv([factories(spec).gym] * 3)
        model = MaskablePPO(PerActionMaskablePolicy, env, n_steps=32, batch_size=24, n_epochs=3,
                            policy_kwargs={"env_name": env_name, "body_arch": [16],
                                           "head_arch": [16], "value_arch": [16]},
                            seed=0, device="cpu")
        if keep:
            assert keep_rollout_facts(model)
        assert isinstance(model.rollout_buffer, FactsRolloutBuffer) is keep
        rows = [0]
        features = model.policy.scorer.features
        compute = features.forward
        features.forward = lambda obs, compute=compute, rows=rows: (
            rows.__setitem__(0, rows[0] + len(obs)) or compute(obs))
        model.learn(2 * 32 * 3)
        models.append(model)
        computed.append(rows[0])
    assert computed[0] == 2 * 32 * 3  # the rollouts' steps only
    assert computed[1] > 3 * computed[0]  # every epoch computed them again
    for kept, plain in zip(models[0].policy.parameters(), models[1].policy.parameters(),
                           strict=True):
        assert th.equal(kept, plain)
    assert models[0].rollout_buffer_class is models[1].rollout_buffer_class  # saved as it was


@pytest.mark.parametrize("head_arch", [[8], [8, 4]])
@pytest.mark.parametrize("env_name,game_args", CASES)
def test_scoring_only_the_legal_actions_gives_their_full_scores_and_gradients(
        env_name, game_args, head_arch):
    """With ``legal`` set (as the PPO policy does whenever masks come with the observations)
    the scorer scores only the legal actions, the others 0: the legal actions' scores and
    every weight's gradient through them are those of scoring every action, whether the
    facts are computed or read from a store by index (the rollout buffer's way)."""
    from card_envs.rl.action_heads import PerActionScorer

    _, obs, views = _observations(env_name, game_args, games=1)
    legal = th.as_tensor(np.array([v.legal for v in views])).bool()
    th.manual_seed(0)
    features = make_features(env_name, game_args, "default", "basic")
    scorer = PerActionScorer(features, obs.shape[1], [16], head_arch)
    weights = list(scorer.parameters())
    target = th.randn(len(obs), features.num_actions)
    # a store holding the batch's facts in another order, then three strangers' rows
    order = th.randperm(len(obs))
    store = th.cat([features(obs)[order],
                    th.randn(3, features.num_actions, features.num_features)])
    index = order.argsort()  # observation i's facts are the store's row index[i]

    def run(mask, given):
        scorer.zero_grad()
        scorer.legal = mask
        if given:
            scorer.give(obs, store, index)
        try:
            out = scorer(obs)
        finally:
            scorer.legal = None
        (((out - target) ** 2) * legal).sum().backward()
        return [out.detach()] + [w.grad.clone() for w in weights]

    full = run(None, False)
    for given in (False, True):
        only = run(legal, given)
        assert th.all(only[0][~legal] == 0), "the illegal actions are not scored"
        assert th.allclose(only[0][legal], full[0][legal], atol=1e-6)
        for a, b in zip(only[1:], full[1:], strict=True):
            assert th.allclose(a, b, rtol=1e-4, atol=1e-5 * b.abs().max()), (a - b).abs().max()
    scorer.legal = legal[:-1]
    with pytest.raises(ValueError, match="legal: shape"):
        scorer(obs)


def test_the_ppo_policy_scores_only_the_legal_actions_when_given_masks():
    """PerActionMaskablePolicy: acting and evaluating with masks score only the legal actions
    (the scorer's ``legal`` is set within the call only) and give what sb3-contrib's policy
    computes from every action's score: the same log-probabilities, entropies, values and
    gradients."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    _, obs, views = _observations("literature_v0", {}, games=1)
    masks = np.array([v.legal for v in views])
    spec = load_spec("literature_v0")
    model = MaskablePPO(PerActionMaskablePolicy, factories(spec).gym(), n_steps=8, batch_size=8,
                        policy_kwargs={"env_name": "literature_v0", "body_arch": [16],
                                       "head_arch": [16, 8], "value_arch": [16]},
                        seed=0, device="cpu")
    policy = model.policy
    seen = []
    scorer_forward = policy.scorer.forward
    policy.scorer.forward = lambda o: seen.append(policy.scorer.legal) or scorer_forward(o)
    actions = th.as_tensor([int(np.flatnonzero(m)[-1]) for m in masks])
    results = []
    for evaluate in (policy.evaluate_actions,
                     lambda *a: MaskableActorCriticPolicy.evaluate_actions(policy, *a)):
        policy.zero_grad()
        values, log_prob, entropy = evaluate(obs, actions, th.as_tensor(masks))
        (log_prob.sum() + entropy.sum() + values.sum()).backward()
        results.append([values.detach(), log_prob.detach(), entropy.detach()]
                       + [w.grad.clone() for w in policy.parameters() if w.grad is not None])
    assert seen[0] is not None and th.equal(seen[0], th.as_tensor(masks))
    assert seen[1] is None and policy.scorer.legal is None
    assert len(results[0]) == len(results[1]) > 3
    for a, b in zip(*results, strict=True):
        assert th.allclose(a, b, rtol=1e-4, atol=1e-5 * max(b.abs().max(), 1)), (a - b).abs().max()
    with th.no_grad():
        policy.forward(obs, action_masks=masks)
        policy.get_distribution(obs, masks)
    assert all(s is not None for s in seen[2:]) and len(seen) == 4
    assert policy.scorer.legal is None
    # the batched players' and evaluations' scores (policy_scores): legal ones as in full
    scores = policy_scores(policy, "maskable_ppo", obs.numpy(), masks)
    assert seen[4] is not None and len(seen) == 5 and policy.scorer.legal is None
    with th.no_grad():
        full = policy.scorer(obs)
    legal = th.as_tensor(masks).bool()
    assert th.all(scores[~legal] == 0) and th.allclose(scores[legal], full[legal], atol=1e-6)


def test_the_one_pass_distribution_samples_each_action_with_its_probability():
    """Its sampler (inverse of the cumulative probabilities) draws every legal action about as
    often as its probability says, and never a masked one."""
    from card_envs.rl.action_heads import OnePassMaskedDistribution

    th.manual_seed(0)
    logits = th.tensor([[0.0, 1.0, -1.0, 2.0, 0.5, -3.0, 1.5]])
    mask = th.tensor([[True, True, False, True, True, True, False]])
    rows = 200_000
    dist = OnePassMaskedDistribution(7).proba_distribution(logits.expand(rows, -1))
    dist.apply_masking(mask.expand(rows, -1).numpy())
    drawn = dist.get_actions(deterministic=False)
    assert drawn.shape == (rows,) and drawn.dtype == th.int64
    counts = th.bincount(drawn, minlength=7).double()
    probs = th.softmax(logits.masked_fill(~mask, -th.inf), -1)[0].double()
    sigma = (rows * probs * (1 - probs)).sqrt()
    assert counts[~mask[0]].sum() == 0
    assert th.all((counts - rows * probs).abs() <= 5 * sigma + 1), (counts / rows, probs)
