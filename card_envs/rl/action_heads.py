"""Per-action policy and value heads for product-shaped action spaces, as SB3 policies.

A plain MLP head gives every action its own output weights, so it must learn the same lesson
once per action: in Literature, that asking an opponent for a card it is known to lack is
hopeless, 96 to 144 times over. Here every action is scored by one small network with shared
weights from that action's own facts (a ``ActionFeatures`` module reads them from the
observation vector: for an ask, what I know of that opponent and that card) joined with a
summary of the whole observation::

    score(a) = head([facts(obs, a), body(obs)])        # one head for every action

The facts are computed inside the network from the observation alone (no extra input, no
hidden information), so a model trained with these policies plays from the environment's
ordinary observation, like any other.

- ``PerActionMaskablePolicy``: sb3-contrib MaskablePPO; the scores are the logits, the value
  comes from its own MLP over the observation.
- ``PerActionDQNPolicy``: masked DQN (card_envs.rl.masked_dqn); the scores are the q-values.

Both take ``env_name``, ``game_args`` and ``obs_encoding`` (which game and encoding the
observation comes from; saved with the model, so ``load`` rebuilds the same network),
``body_arch``, ``head_arch`` and ``facts`` (which of the game's sets of facts; ``basic``
unless a game offers more). A game has per-action facts when its spec names them
(``GameSpec.features``: the game's ``features.py``, whose ``FACT_SETS`` are its sets of facts;
card_envs.core.action_features).
"""

from __future__ import annotations

import inspect
import weakref
from contextlib import contextmanager
from functools import partial
from typing import Any

import torch as th
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn
from torch.distributions import Distribution

from card_envs.core.action_features import ActionFeatures, fact_sets
from card_envs.rl.masked_dqn import MaskedDQNPolicy, MaskedQNetwork
from card_envs.rl.optim import make_optimizer


def make_features(env_name: str, game_args: dict[str, Any], obs_encoding: str,
                  facts: str = "basic") -> ActionFeatures:
    """The per-action facts module of a game's encoding (``facts``: which of the game's sets
    of facts, its ``FACT_SETS``); ValueError if it has none."""
    from card_envs.registry import env_names, load_spec

    spec = load_spec(env_name)
    if spec.features is None:
        with_facts = [n for n in env_names() if load_spec(n).features is not None]
        raise ValueError(
            f"no per-action features for {spec.env_name}; games with them: "
            f"{', '.join(sorted(with_facts))}"
        )
    sets = fact_sets(spec)
    if facts not in sets:
        raise ValueError(f"facts: {facts!r} is not valid for {spec.env_name}; choose one of "
                         f"{', '.join(repr(f) for f in sets)}")
    game = spec.make_game(**game_args)
    encoder = spec.encoders[obs_encoding](game)
    return sets[facts](game, encoder)


def _mlp(sizes: list[int], activation=nn.ReLU) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), activation()]
    return nn.Sequential(*layers)


class PerActionScorer(nn.Module):
    """Observation (B, D) -> one score per action (B, A), from weights shared by every action
    of a kind (one head per kind of action, e.g. Literature's asks, declarations, namings)."""

    def __init__(self, features: ActionFeatures, obs_size: int, body_arch: list[int],
                 head_arch: list[int]):
        super().__init__()
        self.features = features
        self.body = _mlp([obs_size, *body_arch])
        width = features.num_features + (body_arch[-1] if body_arch else 0)
        self.heads = nn.ModuleList(
            nn.Sequential(_mlp([width, *head_arch]), nn.Linear(head_arch[-1], 1))
            for _ in range(features.num_kinds)
        )
        self.has_body = bool(body_arch)
        kinds = features.kinds.tolist()
        self.runs = [(kinds.index(k), len(kinds) - kinds[::-1].index(k))
                     for k in range(features.num_kinds)]
        if sorted(kinds) != kinds:
            raise ValueError("per-action features must list each kind's actions together, "
                             "in kind order")
        # facts kept and handed back by a training loop (card_envs.rl.rollout): the facts
        # have no weights, so a rollout's facts serve every epoch of its update
        self.recording = False  # set while the policy acts in a rollout (policy.forward)
        self.recorded: tuple[th.Tensor, th.Tensor] | None = None  # (obs, facts) then
        self._given: tuple[weakref.ref, th.Tensor, th.Tensor | None] | None = None
        # (B, A) bool, set by a policy for a call whose scores are masked right after: only
        # the legal actions are scored (the others get 0, which the mask replaces)
        self.legal: th.Tensor | None = None

    def give(self, obs: th.Tensor, facts: th.Tensor, index: th.Tensor | None = None) -> None:
        """Hand in ``obs``'s facts, computed before: (B, A, F), or with ``index`` (B,) the
        rows of a larger store (M, A, F) that are ``obs``'s. The next call on that very
        tensor (the same object, not equal values) uses them instead of computing them
        again; any next call takes them back, used or not."""
        self._given = (weakref.ref(obs), facts, index)

    def _source(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor | None]:
        """``obs``'s facts as (store, index), as handed in or computed now (index None:
        the store is the batch's own (B, A, F))."""
        given, self._given = self._given, None
        if given is not None and given[0]() is obs:
            store, index = given[1], given[2]
        else:
            store, index = self.features(obs), None
        if self.recording:
            self.recorded = (obs, self._gather(store, index))
        return store, index

    @staticmethod
    def _gather(store: th.Tensor, index: th.Tensor | None) -> th.Tensor:
        return store if index is None else store.index_select(0, index)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        store, index = self._source(obs)
        summary = self.body(obs) if self.has_body else None
        legal = self.legal
        if legal is not None:
            if legal.shape != (obs.shape[0], self.features.num_actions):
                raise ValueError(f"legal: shape {tuple(legal.shape)} does not match the "
                                 f"{obs.shape[0]} observations' "
                                 f"{self.features.num_actions} actions")
            return th.cat([self._score_legal(head, store, index, summary,
                                             legal[:, start:stop], start)
                           for head, (start, stop) in zip(self.heads, self.runs, strict=True)],
                          dim=1)
        facts = self._gather(store, index)  # (B, A, F)
        if len(self.heads) == 1:
            return self._score(self.heads[0], facts, summary)
        # each kind's actions are one run of indices: score each run with its own head
        return th.cat([self._score(head, facts[:, start:stop], summary)
                       for head, (start, stop) in zip(self.heads, self.runs, strict=True)],
                      dim=1)

    @staticmethod
    def _base(first: nn.Linear, f: int, summary: th.Tensor | None, batch: int) -> th.Tensor:
        """(B, h): the first layer's summary part and bias, once per observation (its facts
        part is added per action: the same weights and result as on the joined vector)."""
        if summary is not None:
            return th.nn.functional.linear(summary, first.weight[:, f:], first.bias)
        return first.bias.expand(batch, -1)

    def _score_legal(self, head: nn.Sequential, store: th.Tensor, index: th.Tensor | None,
                     summary: th.Tensor | None, legal: th.Tensor, start: int) -> th.Tensor:
        """(B, k) scores of one kind's actions (``legal``: (B, k), which are legal; the
        facts as ``_source`` gives them): the legal ones as ``_score`` computes them, the
        others 0. In 98 Cards under a third of the actions are legal, and the head's work
        is per action; only the legal actions' facts are read from the store."""
        rows, cols = legal.nonzero(as_tuple=True)
        num_actions, f = store.shape[1], store.shape[2]
        where = (rows if index is None else index.index_select(0, rows)) * num_actions
        facts = store.reshape(-1, f).index_select(0, where + cols + start)  # (N, F)
        first = head[0][0]
        base = self._base(first, f, summary, legal.shape[0])
        hidden = th.addmm(base.index_select(0, rows), facts, first.weight[:, :f].T)  # (N, h)
        out = head[1](head[0][1:](hidden)).squeeze(1)  # the rest of the MLP, then the score
        return out.new_zeros(legal.shape).index_put((rows, cols), out)

    def _score(self, head: nn.Sequential, facts: th.Tensor, summary: th.Tensor | None
               ) -> th.Tensor:
        """(B, k) scores: ``head`` over [facts, summary] for each action. The first layer
        is applied to the two parts apart (the same weights and result): the summary's
        part once per observation, not once per action."""
        first = head[0][0]
        f = facts.shape[2]
        base = self._base(first, f, summary, facts.shape[0])
        if len(head[0]) == 2 and isinstance(head[0][1], nn.ReLU):  # one hidden layer: fused
            return _OneLayerHead.apply(facts, base, first.weight[:, :f], head[1].weight,
                                       head[1].bias)
        hidden = facts @ first.weight[:, :f].T + base[:, None, :]  # (B, k, h)
        out = head[0][1:](hidden)  # the rest of the MLP (activation first)
        return head[1](out).squeeze(2)


class _OneLayerHead(th.autograd.Function):
    """``relu(facts @ wf.T + base[:, None]) @ w2.T + b2`` for facts (B, k, F), base (B, h):
    a one-hidden-layer head over every action, the values autograd would compute, with its
    (B, k, h) hidden layer made once and changed in place, and a backward pass that reads
    that layer instead of building three more of its size (the ReLU's gradient is the
    layer's sign times ``grad x w2``, so every weight's gradient is a product with the sign).
    In the per-action policies' updates this layer was most of the time; written out, its
    forward and backward passes over 1024 x 32 x 64 take well under half of autograd's time
    alone, and 98 Cards' PPO learns about 12% faster (docs/performance.md). The backward
    pass turns the saved layer into its sign in place: a second backward through the same
    graph is refused by torch."""

    @staticmethod
    def forward(ctx, facts, base, wf, w2, b2):
        hidden = th.matmul(facts, wf.T)
        hidden += base[:, None, :]
        hidden.relu_()
        ctx.save_for_backward(facts, hidden, wf, w2)
        return th.matmul(hidden, w2[0]) + b2

    @staticmethod
    def backward(ctx, grad):
        facts, hidden, wf, w2 = ctx.saved_tensors
        width = hidden.shape[2]
        need = ctx.needs_input_grad
        d_w2 = grad.reshape(1, -1) @ hidden.view(-1, width) if need[3] else None
        active = hidden.sign_()  # 1 where the unit is on, else 0
        d_base = th.bmm(grad[:, None, :], active)[:, 0] * w2[0] if need[1] else None
        d_wf = d_facts = None
        if need[2]:
            weighted = (facts * grad[:, :, None]).reshape(-1, facts.shape[2])
            d_wf = (weighted.T @ active.view(-1, width)).T * w2[0][:, None]
        if need[0]:  # the facts hold no weights: not needed by the policies
            d_facts = (active * (grad[:, :, None] * w2[0])) @ wf
        d_b2 = grad.sum().reshape(1) if need[4] else None
        return d_facts, d_base, d_wf, d_w2, d_b2


class _PerActionExtractor(nn.Module):
    """SB3's mlp_extractor shape: the actor's latent is already the (B, A) scores."""

    def __init__(self, scorer: PerActionScorer, obs_size: int, value_arch: list[int]):
        super().__init__()
        self.scorer = scorer
        self.value = _mlp([obs_size, *value_arch])
        self.latent_dim_pi = scorer.features.num_actions
        self.latent_dim_vf = value_arch[-1]

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.scorer(features)

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.value(features)


class _OnePassCategorical(MaskableCategorical):
    """sb3-contrib's masked categorical (illegal logits set to -1e8, no entropy from them)
    normalized once: one ``log_softmax`` over the masked logits, where sb3-contrib's
    normalizes the logits, masks them and normalizes them again. The same log-probabilities,
    entropies, samples and modes within float rounding (tests/test_action_heads.py)."""

    def __init__(self, logits: th.Tensor, masks=None):
        self.masks = None
        if masks is not None:
            self.masks = th.as_tensor(masks, dtype=th.bool,
                                      device=logits.device).reshape(logits.shape)
            logits = logits.masked_fill(~self.masks, -1e8)
        self.logits = th.log_softmax(logits, dim=-1)  # what Categorical keeps as its logits
        self._param = self.logits
        self._num_events = self.logits.size(-1)
        Distribution.__init__(self, self.logits.size()[:-1], validate_args=False)

    def apply_masking(self, masks) -> None:
        raise NotImplementedError("masked once, when built (OnePassMaskedDistribution)")

    def sample(self, sample_shape: th.Size = th.Size()) -> th.Tensor:  # noqa: B008
        """One action per row by the inverse of the cumulative probabilities: one uniform
        number a row, where torch's categorical draws one exponential number per action
        (a tenth of 98 Cards' rollout forward pass). A masked action, of probability 0,
        is never drawn."""
        if sample_shape != th.Size():
            return super().sample(sample_shape)
        with th.no_grad():
            cdf = self.probs.cumsum(-1)
            u = th.rand(cdf.shape[:-1] + (1,), dtype=cdf.dtype, device=cdf.device)
            drawn = th.searchsorted(cdf, u * cdf[..., -1:], right=True)
            return drawn.clamp_(max=self._num_events - 1).squeeze(-1)

    def entropy(self) -> th.Tensor:
        # a masked action's probability is exactly 0 (exp(-1e8)): it adds nothing
        return -(self.logits * self.probs).sum(-1)


class OnePassMaskedDistribution(MaskableCategoricalDistribution):
    """MaskablePPO's masked categorical distribution, normalized once (``_OnePassCategorical``):
    built when the masks are applied (MaskablePPO always applies them right after), or
    unmasked when read before. 98 Cards' PPO update spends about 6% less time
    (docs/performance.md)."""

    def __init__(self, action_dim: int):
        super().__init__(action_dim)
        self._logits: th.Tensor | None = None
        self._built: _OnePassCategorical | None = None

    def proba_distribution(self, action_logits: th.Tensor) -> OnePassMaskedDistribution:
        self._logits = action_logits.view(-1, self.action_dim)
        self._built = None
        return self

    @property
    def distribution(self) -> _OnePassCategorical:  # type: ignore[override]
        if self._built is None:
            self._built = _OnePassCategorical(self._logits)
        return self._built

    @distribution.setter
    def distribution(self, value) -> None:
        self._built = value

    def apply_masking(self, masks) -> None:
        self._built = _OnePassCategorical(self._logits, masks)


class PerActionMaskablePolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy whose logits come from a ``PerActionScorer`` (see the module doc),
    with a masked distribution normalized once (``OnePassMaskedDistribution``)."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Discrete,
                 lr_schedule, *args: Any, env_name: str = "", game_args: dict | None = None,
                 obs_encoding: str = "default", body_arch: list[int] | None = None,
                 head_arch: list[int] | None = None, value_arch: list[int] | None = None,
                 facts: str = "basic", **kwargs: Any):
        self.env_name, self.game_args = env_name, dict(game_args or {})
        self.obs_encoding, self.facts = obs_encoding, facts
        self.body_arch = list(body_arch if body_arch is not None else [128])
        self.head_arch = list(head_arch or [64, 64])
        self.value_arch = list(value_arch or [256, 256])
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        features = make_features(self.env_name, self.game_args, self.obs_encoding, self.facts)
        if features.num_actions != self.action_space.n:
            raise ValueError(f"{self.env_name}: the features score {features.num_actions} "
                             f"actions; the action space has {self.action_space.n}")
        scorer = PerActionScorer(features, self.features_dim, self.body_arch, self.head_arch)
        self.mlp_extractor = _PerActionExtractor(scorer, self.features_dim, self.value_arch)

    @property
    def scorer(self) -> PerActionScorer:
        return self.mlp_extractor.scorer

    @contextmanager
    def legal_only(self, action_masks):
        """Within: the scorer scores only the actions ``action_masks`` allows (when given;
        the masked distribution never reads the others' logits)."""
        if action_masks is None:
            yield
            return
        self.scorer.legal = th.as_tensor(action_masks, device=self.device).reshape(
            -1, int(self.action_space.n)).bool()
        try:
            yield
        finally:
            self.scorer.legal = None

    def forward(self, obs: th.Tensor, deterministic: bool = False, action_masks=None):
        """Act (MaskablePPO's rollouts call this), keeping the observations' facts for a
        rollout buffer that stores them (card_envs.rl.rollout)."""
        self.scorer.recording = True
        try:
            with self.legal_only(action_masks):
                return super().forward(obs, deterministic, action_masks)
        finally:
            self.scorer.recording = False

    def evaluate_actions(self, obs: th.Tensor, actions: th.Tensor, action_masks=None):
        with self.legal_only(action_masks):
            return super().evaluate_actions(obs, actions, action_masks)

    def get_distribution(self, obs, action_masks=None):
        with self.legal_only(action_masks):
            return super().get_distribution(obs, action_masks)

    def _build(self, lr_schedule) -> None:
        self.action_dist = OnePassMaskedDistribution(int(self.action_space.n))
        super()._build(lr_schedule)
        # the scores are the logits: no output layer on top (rebuild the optimizer without it)
        self.action_net = nn.Identity()
        if self.ortho_init:
            # as SB3 does for its action layer: small last weights, so the first policy is
            # close to uniform over the legal actions (whatever kind each action is)
            for head in self.scorer.heads:
                head[-1].apply(partial(self.init_weights, gain=0.01))
        self.optimizer = make_optimizer(self.optimizer_class, self.parameters(),
                                        lr_schedule(1), self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(env_name=self.env_name, game_args=self.game_args,
                    obs_encoding=self.obs_encoding, body_arch=self.body_arch,
                    head_arch=self.head_arch, value_arch=self.value_arch, facts=self.facts)
        return data


class PerActionQNetwork(MaskedQNetwork):
    """A masked Q-network whose q-values come from a ``PerActionScorer``."""

    def __init__(self, *args: Any, scorer_args: dict[str, Any], **kwargs: Any):
        super().__init__(*args, **kwargs)
        features = make_features(scorer_args["env_name"], scorer_args["game_args"],
                                 scorer_args["obs_encoding"], scorer_args.get("facts", "basic"))
        self.q_net = PerActionScorer(features, self.features_dim, scorer_args["body_arch"],
                                     scorer_args["head_arch"])


class PerActionDQNPolicy(MaskedDQNPolicy):
    """Masked DQN policy whose q-values come from a ``PerActionScorer`` (see the module doc)."""

    def __init__(self, *args: Any, env_name: str = "", game_args: dict | None = None,
                 obs_encoding: str = "default", body_arch: list[int] | None = None,
                 head_arch: list[int] | None = None, facts: str = "basic", **kwargs: Any):
        self.scorer_args = {
            "facts": facts,
            "env_name": env_name,
            "game_args": dict(game_args or {}),
            "obs_encoding": obs_encoding,
            "body_arch": list(body_arch if body_arch is not None else [128]),
            "head_arch": list(head_arch or [64, 64]),
        }
        super().__init__(*args, **kwargs)

    def make_q_net(self) -> PerActionQNetwork:
        net_args = self._update_features_extractor(self.net_args, features_extractor=None)
        return PerActionQNetwork(**net_args, scorer_args=self.scorer_args).to(self.device)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(self.scorer_args)
        return data


POLICIES = {
    "maskable_ppo": PerActionMaskablePolicy,
    "dqn": PerActionDQNPolicy,
}


def per_action_arguments() -> set[str]:
    """The keyword arguments the per-action policies take beyond their base classes' (what a
    plain MLP would not know: the game, its encoding, the facts and the heads' shapes)."""
    own: set[str] = set()
    for cls in POLICIES.values():
        base = cls.__mro__[1]
        own |= (set(inspect.signature(cls.__init__).parameters)
                - set(inspect.signature(base.__init__).parameters))
    return own - {"self", "args", "kwargs"}
