"""The baselines on the batched twins: environments, players, evaluation, imitation, learning."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the baselines need the train extra")
pytest.importorskip("sb3_contrib", reason="the baselines need the train extra")
pytest.importorskip("numba", reason="the twins are compiled with numba")

import torch as th  # noqa: E402

from baselines.common import Run, result_row  # noqa: E402
from baselines.config import build_config  # noqa: E402
from card_envs.core.make import make_batched  # noqa: E402
from card_envs.registry import load_spec  # noqa: E402

MLP = "{net_arch: [64, 64], activation_fn: relu}"  # a plain MLP for tests that rig weights


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _config(tmp_path, setting: str, algo: str = "maskable_ppo", *extra: str) -> dict:
    from baselines.train import parser

    argv = ["--env", setting, "--algo", algo, "--budget", "quick", "--runs", str(tmp_path),
            *extra]
    return build_config(parser().parse_args(argv))


def _trainer(tmp_path, setting: str, algo: str = "maskable_ppo", *extra: str):
    from baselines.train import Trainer

    cfg = _config(tmp_path, setting, algo, *extra)
    cfg["pretrain"] = None
    return Trainer(Run.create(tmp_path, cfg, "test"))


def test_opponent_shares_follow_the_list_and_add_up():
    from baselines.envs import opponent_shares

    assert opponent_shares(["a", "a", "b", "a"], 1024) == [("a", 768), ("b", 256)]
    assert opponent_shares(["a", "b", "a", "b"], 5) == [("a", 2), ("b", 3)]
    assert opponent_shares(["a", "a", "b", "a"], 2) == [("a", 1), ("b", 1)]
    with pytest.raises(ValueError, match="n_envs=1 is too few"):
        opponent_shares(["a", "b"], 1)


@pytest.mark.parametrize("env_name, kwargs, potential", [
    ("thirty_one_v0", {"num_players": 2}, "lives_lead_and_hand"),
    ("thirty_one_v0", {"num_players": 4}, "lives_lead"),
    ("ninety_eight_cards_v0", {}, "pile_room"),
    ("ninety_eight_cards_v0", {}, "homes"),
    ("ninety_eight_cards_v0", {"rules": "original"}, "homes"),
    ("literature_v0", {}, "half_suit_lead"),
])
def test_potentials_read_from_observations_are_the_views_own(env_name, kwargs, potential):
    """Shaping reads phi from the observation (batched and scalar alike); it must be the
    quantity the rules define, computed here from the learner's view over random play."""
    from baselines.shaping import potential as game_potential

    def from_view(view) -> float:
        if potential == "pile_room":
            return sum(99 - t if k < 2 else t - 2 for k, t in enumerate(view.piles.tolist())) / 5
        if potential == "homes":  # the expert's weights per home lost, summed from four homes
            from card_envs.ninety_eight_cards.expert import TurnPlanner, alive_cards, home_masks

            weights = TurnPlanner().loss[1:]  # from the last home to the fourth
            cost = [sum(weights[h:]) for h in range(5)]  # a card with h homes
            alive = alive_cards(view)
            return -sum(cost[h] * (alive & mask).bit_count()
                        for h, mask in enumerate(home_masks([int(t) for t in view.piles])))
        if potential == "half_suit_lead":
            mine = view.score[view.player % 2]
            return (mine - view.score[1 - view.player % 2]) / 8.0
        others = [view.lives[q] for q in view.opponents] or [0]
        lead = (view.lives[view.player] - sum(others) / len(others)) / max(max(view.lives), 1)
        return lead + (view.score() / 31.0 if potential == "lives_lead_and_hand" else 0.0)

    spec = load_spec(env_name)
    phi = game_potential(spec, potential)  # the game's own, named by its spec
    game = spec.make_game(**kwargs)
    encoder = spec.encoders["default"](game)
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(6):
        s = game.init(rng)
        while not (s.terminal or s.truncated):
            p = s.player
            view = game.view(s, p)
            obs = encoder.encode(view)[None]
            got = float(phi(encoder.layout, obs)[0])
            assert got == pytest.approx(from_view(view), abs=1e-5)
            seen.add(round(got, 3))
            game.apply(s, int(rng.choice(np.flatnonzero(view.legal))), rng)
    assert len(seen) > 3  # the potential moved


def test_batched_evaluation_plays_the_scalar_evaluations_games():
    """Greedy play of a model and deterministic rule agents: the twin deals game g from
    default_rng([seed, g, 0]) as the scalar loop does, so every figure is the same."""
    from baselines.common import evaluate_agent
    from baselines.evaluation import evaluate
    from card_envs.core.agents import make_agent
    from card_envs.rl.policy_agent import load_model_agent

    spec = load_spec("simple_tricks_v0")
    game = spec.make_game()
    # greedy whatever mode the shipped model plays in (sampled play draws differently)
    model = load_model_agent(spec, "best", game, deterministic=True)
    for opponent, duplicate in (("heuristic", True), ("first_play", False)):
        scalar = result_row(evaluate_agent(spec, game, model, opponent, 30, 5, duplicate,
                                           False), opponent)
        batched = result_row(evaluate(spec, game, model, opponent, 30, 5, duplicate, False),
                             opponent)
        assert batched == scalar
    rule = result_row(evaluate(spec, game, "heuristic", "first_play", 30, 5, False, False), "x")
    assert rule == result_row(evaluate_agent(spec, game, make_agent(spec, "heuristic", game),
                                             "first_play", 30, 5, False, False), "x")
    # a one-player game: no rivals (``solo``), its draws from the game's generator only
    spec = load_spec("ninety_eight_cards_v0")
    game = spec.make_game()
    solo = result_row(evaluate(spec, game, "greedy", "solo", 30, 5, False, False), "solo")
    assert solo == result_row(evaluate_agent(spec, game, make_agent(spec, "greedy", game),
                                             "solo", 30, 5, False, False), "solo")


def test_scalar_and_batched_paths_train_the_same_configuration(tmp_path):
    """One settings file: --scalar changes the environment, nothing else."""
    from card_envs.vector.sb3 import CardSB3VecEnv

    batched = _config(tmp_path, "simple_tricks_v0", "maskable_ppo", "--n-envs", "8")
    scalar = _config(tmp_path, "simple_tricks_v0", "maskable_ppo", "--n-envs", "8", "--scalar")
    assert {k: v for k, v in scalar.items() if k != "scalar"} == {
        k: v for k, v in batched.items() if k != "scalar"}
    a = _trainer(tmp_path / "a", "simple_tricks_v0", "maskable_ppo", "--n-envs", "8")
    b = _trainer(tmp_path / "b", "simple_tricks_v0", "maskable_ppo", "--n-envs", "8",
                 "--scalar")
    assert isinstance(a.base, CardSB3VecEnv) and type(b.base).__name__ == "DummyVecEnv"
    assert a.env.num_envs == b.env.num_envs == 8
    assert type(a.model.policy) is type(b.model.policy)
    for key in ("n_steps", "batch_size", "n_epochs", "gamma", "ent_coef"):
        assert getattr(a.model, key) == getattr(b.model, key), key
    assert a.env.observation_space == b.env.observation_space
    # the same opponents: the twin's heuristic and the scalar heuristic agent
    assert list(a.base.env.opponents) == [a.engine.agent_index("heuristic")]
    assert type(b.base.envs[0].unwrapped.opponents[0]).__name__ == "HeuristicAgent"


@pytest.mark.parametrize("algo", ["maskable_ppo", "dqn"])
def test_two_training_opponents_are_two_batched_envs_side_by_side(tmp_path, algo):
    """Thirty-One trains against expected_value in 3 of 4 games and greedy in 1: two
    CardVectorEnvs of 6 and 2 games behind one VecEnv that both learners train on."""
    from baselines.envs import ConcatVecEnv

    trainer = _trainer(tmp_path, "thirty_one_v0", algo, "--n-envs", "8")
    base = trainer.base
    assert isinstance(base, ConcatVecEnv)
    assert [(p.num_envs, list(p.env.opponents)) for p in base.parts] == [
        (6, [trainer.engine.agent_index("expected_value")]),
        (2, [trainer.engine.agent_index("greedy")])]
    trainer.model.learn(256)
    assert trainer.model.num_timesteps >= 256
    assert base.render_mode is None  # answered by the parts, not SB3's "not defined" warning


def test_side_by_side_envs_build_without_warnings():
    import warnings

    from baselines.envs import ConcatVecEnv
    from card_envs.vector.sb3 import sb3_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both = ConcatVecEnv([sb3_vec_env("thirty_one_v0", 2), sb3_vec_env("thirty_one_v0", 3)])
    assert both.num_envs == 5 and both.get_attr("render_mode") == [None] * 5


def test_dqn_sees_masks_and_an_empty_mask_after_the_last_move(tmp_path):
    trainer = _trainer(tmp_path, "simple_tricks_v0", "dqn", "--n-envs", "16")
    env = trainer.env
    obs = env.reset()
    assert set(obs) == {"observation", "action_mask"} and obs["action_mask"].shape == (16, 20)
    ended = 0
    for _ in range(12):
        actions = obs["action_mask"].argmax(1)
        obs, _, dones, infos = env.step(actions)
        assert obs["action_mask"].any(1).all()  # every game's learner is to act
        for i in np.flatnonzero(dones):
            last = infos[i]["terminal_observation"]
            assert not last["action_mask"].any() and last["observation"].shape == (103,)
            assert infos[i]["payoff"] in (-1.0, 0.0, 1.0)
            ended += 1
    assert ended == 16


class _Fixed(th.nn.Module):
    """A stand-in 'policy' for pool tests: always the legal action of highest (or lowest)
    number, through policy_actions' DQN path."""

    def __init__(self, highest: bool):
        super().__init__()
        self.highest = highest

    def q_net(self, batch):
        n = batch["action_mask"].shape[1]
        order = th.arange(n, dtype=th.float32)
        return (order if self.highest else -order).expand(batch["action_mask"].shape[0], -1)


def test_pool_player_draws_a_snapshot_per_game_and_follows_the_pool():
    from baselines.selfplay import PoolPlayer, SnapshotPool
    from card_envs.vector.gym_env import CardVectorEnv

    spec = load_spec("simple_tricks_v0")
    pool = SnapshotPool(spec, spec.make_game(), None, "dqn")
    pool.members = [_Fixed(False)]
    engine = make_batched(spec)
    seat = PoolPlayer(pool, engine, "default", mix="first_play", mix_fraction=0.25, seed=1)
    env = CardVectorEnv("simple_tricks", 256, opponent=seat.player, learner_seat=0)
    env.reset(seed=0)
    env.step(env.action_masks().argmax(1))  # the learner leads; then the pool's seat plays
    drawn = seat.member.copy()
    assert set(drawn.tolist()) == {-1, 0} and 0.15 < (drawn == -1).mean() < 0.35
    pool.members.append(_Fixed(True))  # a new snapshot joins
    first_game = env.state.steps.copy()
    for _ in range(30):  # games of 20 moves: every slot starts new games
        _, _, term, trunc, _ = env.step(env.action_masks().argmax(1))
    assert (env.state.steps != first_game).any()
    now = seat.member
    assert set(now.tolist()) == {-1, 0, 1}  # new games draw from the grown pool
    assert 0.15 < (now == -1).mean() < 0.35


def test_learner_player_and_teammates_follow_the_learners_weights(tmp_path):
    """A batched teammate is the learner's current policy: change the weights, its moves
    change at once (one forward pass for every slot where it is to act)."""
    from baselines.selfplay import LiveLearner, learner_player

    trainer = _trainer(tmp_path, "simple_tricks_v0", "maskable_ppo", "--n-envs", "8",
                       "--hp", "policy=mlp", "--hp", f"policy_kwargs={MLP}")
    learner = LiveLearner()
    learner.policy = trainer.model.policy
    player = learner_player(learner, "maskable_ppo", "default", seed=0)
    engine = trainer.engine
    state = engine.init(64, seed=2)
    rows = np.arange(64)
    obs = engine.observe(state, rows=rows)
    before = player.policy(obs, state.mask, rows, state)
    with th.no_grad():
        for p in learner.policy.action_net.parameters():
            p.zero_()
        learner.policy.action_net.bias[:] = th.arange(20, dtype=th.float32) * 50
    after = player.policy(obs, state.mask, rows, state)
    highest = 19 - np.argmax(state.mask[:, ::-1] > 0, axis=1)
    assert (after == highest).all() and (before != after).any()


def test_team_games_on_the_twin_let_the_learner_play_its_teammates(tmp_path):
    """Literature (4 players, teams of alternate seats), ``teammate: learner``: on the twin
    the teammate's seat is the learner's own (its decisions are rollout steps, observed from
    that seat), the opponents' seats the twin's agent; scalar envs enter it the same way."""
    from card_envs.core.batched import LEARNER_AGENT

    trainer = _trainer(tmp_path, "literature_v0-original", "maskable_ppo", "--n-envs", "8")
    assert trainer.cfg["teammate"] == "learner"
    heuristic = trainer.base.parts[0].env  # 3 of the 4 games against heuristic, 1 cautious
    assert heuristic.players == [None, None, None]  # relative: +1, +2 (teammate), +3
    assert list(heuristic.opponents) == [trainer.engine.agent_index("heuristic"), LEARNER_AGENT,
                                         trainer.engine.agent_index("heuristic")]
    acting = []
    step = heuristic.step

    def spy(actions):
        out = step(actions)
        acting.append(heuristic.turns.acting - heuristic.turns.seat)
        return out

    heuristic.step = spy
    trainer.model.learn(256)
    offsets = np.concatenate(acting) % 4
    assert set(offsets.tolist()) == {0, 2}  # the learner acted in its seat and its teammate's
    scalar = _trainer(tmp_path / "s", "literature_v0-original", "maskable_ppo", "--n-envs", "2",
                      "--scalar")
    assert scalar.env.envs[0].unwrapped.opponents[1] == "learner"


def test_team_games_with_teammate_self_seat_the_learners_policy_as_teammates(tmp_path):
    """``teammate: self`` (the pipeline before): the teammate's seat is a Player of the
    learner's own current policy, the opponents' seats the twin's agent."""
    from baselines.train import Trainer

    cfg = _config(tmp_path, "literature_v0-original", "maskable_ppo", "--n-envs", "4")
    cfg["pretrain"], cfg["teammate"] = None, "self"
    trainer = Trainer(Run.create(tmp_path, cfg, "test"))
    heuristic = trainer.base.parts[0].env
    seats = heuristic.players  # relative to the learner: +1, +2 (teammate), +3
    assert seats[0] is None and seats[2] is None and seats[1].name == "learner"
    assert list(heuristic.opponents) == [trainer.engine.agent_index("heuristic"), -1,
                                         trainer.engine.agent_index("heuristic")]
    trainer.model.learn(64)
    assert trainer.learner.policy is trainer.model.policy


def test_imitation_collects_the_twins_agent_in_every_learner_seat(tmp_path):
    from baselines.imitation import collect, twin_actor

    trainer = _trainer(tmp_path, "simple_tricks_v0", "maskable_ppo", "--n-envs", "64")
    data = collect(trainer.env, twin_actor([trainer.base], "heuristic"), 2000, gamma=1.0)
    assert len(data["actions"]) >= 2000
    assert data["masks"][np.arange(len(data["actions"])), data["actions"]].all()
    # with gamma 1 and one reward at the end, every return of a game is its result
    assert set(np.unique(data["returns"]).tolist()) <= {-1.0, 0.0, 1.0}
    assert (data["obs"][:, 100] == 1.0).all()  # the learner's turn flag: it was to act


def test_a_short_batched_run_beats_random_play(tmp_path):
    """The batched training path learns: 150k steps of MaskablePPO on simple tricks (about
    20 s) beat uniformly random play on duplicate deals."""
    from baselines.evaluation import evaluate
    from card_envs.rl.policy_agent import PolicyAgent

    trainer = _trainer(tmp_path, "simple_tricks_v0", "maskable_ppo", "--n-envs", "256",
                       "--opponent", "random", "--hp", "policy=mlp", "--hp",
                       f"policy_kwargs={MLP}", "--hp", "batch_size=1024", "--hp",
                       "learning_rate=1e-3")
    trainer.model.learn(150_000)
    agent = PolicyAgent(trainer.game, trainer.encoder, trainer.model.policy, "maskable_ppo",
                        True, "model")
    row = result_row(evaluate(trainer.spec, trainer.game, agent, "random", 300, 99, True,
                              False), "random")
    assert row["decided_rate"] > 0.7, row


def test_a_potential_the_game_does_not_declare_is_refused_naming_the_games_own():
    from baselines.shaping import potential

    with pytest.raises(ValueError, match="unknown potential 'homes' for thirty_one_v0; choose "
                                         "one of hand_score, lives_lead, lives_lead_and_hand"):
        potential(load_spec("thirty_one_v0"), "homes")
    with pytest.raises(ValueError, match="the game declares no potentials"):
        potential(load_spec("palace_v0"), "homes")
