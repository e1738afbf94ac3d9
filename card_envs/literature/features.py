"""Literature's per-action facts for the per-action policies (card_envs.core.action_features)."""

from __future__ import annotations

import torch as th

from card_envs.core.action_features import ActionFeatures, pad
from card_envs.core.encoding import Encoder
from card_envs.core.game import Game


class LiteratureFeatures(ActionFeatures):
    """Literature, default encoding (seats relative: row r is r seats to my left).

    Every action starts with its kind one-hot (ask, declare, name). Ask opponent j (row 2j+1)
    for card c of half-suit h: that seat is known to hold c, known to lack it, its least count
    of h, its hand size; my cards of h; c known with my team; c known with another opponent;
    the opponents not known to lack c (/ team size) and 1/that count when c may be with j;
    cards of h known with j; cards of h with no known holder. Declare h: my cards of h, cards
    of h known with my team, known with the opponents, with no known holder, lacked by my
    whole team, h still live. Name teammate t (row 2t) for the next card of the claim: known
    to hold it, known to lack it, its hand size, the teammates not known to lack it.
    """

    ASK, DECLARE, NAME = 11, 6, 4
    num_features = BASIC = 3 + 11

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.n = n = game.num_players
        self.t = n // 2
        self.original = bool(game.original)
        if not self.original:
            self.num_kinds = 3
            self._index("kinds", [0] * (self.t * 48) + [1] * 8 + [2] * self.t)
        self._index("opp_rows", [2 * j + 1 for j in range(self.t)])
        self._index("team_rows", [2 * j for j in range(self.t)])
        self._index("half_of", [c // 6 for c in range(48)])

    def forward(self, obs: th.Tensor) -> th.Tensor:
        n, t, b = self.n, self.t, obs.shape[0]
        hand = self.piece(obs, "hand", 48)
        holds = self.piece(obs, "holds", n, 48)
        lacks = self.piece(obs, "lacks", n, 48)
        least = self.piece(obs, "least", n, 8)
        sizes = self.piece(obs, "hand_sizes", n) * 8.0  # about 1 for a full hand
        per_half = lambda x: x.reshape(*x.shape[:-1], 8, 6).sum(-1) / 6.0  # noqa: E731
        opp_holds, opp_lacks = holds[:, self.opp_rows], lacks[:, self.opp_rows]  # (B, t, 48)
        team_holds, team_lacks = holds[:, self.team_rows], lacks[:, self.team_rows]
        mine_h = per_half(hand)  # (B, 8)
        team_has = team_holds.amax(1)  # (B, 48)
        opp_has = opp_holds.amax(1)
        located = th.maximum(team_has, opp_has)
        unknown_h = 1.0 - per_half(located)
        candidates = t - opp_lacks.sum(1)  # (B, 48) opponents who may hold c
        half = self.half_of
        ask = th.stack([
            opp_holds,
            opp_lacks,
            least[:, self.opp_rows][:, :, half],
            sizes[:, self.opp_rows, None].expand(-1, -1, 48),
            mine_h[:, None, half].expand(-1, t, -1),
            team_has[:, None].expand(-1, t, -1),
            opp_holds.sum(1, keepdim=True) - opp_holds,
            (candidates / t)[:, None].expand(-1, t, -1),
            (1 - opp_lacks) * (1 - team_has[:, None]) / candidates.clamp(min=1)[:, None],
            per_half(opp_holds)[:, :, half],
            unknown_h[:, None, half].expand(-1, t, -1),
        ], dim=3).reshape(b, t * 48, self.ASK)
        kind = obs.new_zeros(b, t * 48, 3)
        kind[:, :, 0] = 1
        parts = [th.cat([kind, ask], dim=2)]
        if not self.original:
            outcome = self.piece(obs, "half_suits", 8, 3)
            live = 1.0 - outcome.sum(2)
            declare = th.stack([
                mine_h,
                per_half(team_has),
                per_half(opp_has),
                unknown_h,
                per_half(team_lacks.amin(1)),
                live,
            ], dim=2)
            kind = obs.new_zeros(b, 8, 3)
            kind[:, :, 1] = 1
            parts.append(th.cat([kind, declare], dim=2))
            # the card being named next: position len(names) of the claimed half-suit
            claim_half = self.piece(obs, "claim_half", 8)
            named = self.piece(obs, "claim_names", 6, n).sum(2)  # (B, 6) 1 per card named
            position = named.sum(1).clamp(max=5).long()
            card = claim_half.argmax(1) * 6 + position  # (B,)
            claiming = claim_half.sum(1, keepdim=True)  # 0 when no claim is on
            pick = card[:, None, None].expand(-1, t, 1)
            mate_holds = team_holds.gather(2, pick).squeeze(2) * claiming
            mate_lacks = team_lacks.gather(2, pick).squeeze(2) * claiming
            open_mates = (t - mate_lacks.sum(1, keepdim=True)) / t
            name = th.stack([
                mate_holds,
                mate_lacks,
                sizes[:, self.team_rows],
                open_mates.expand(-1, t) * claiming,
            ], dim=2)
            kind = obs.new_zeros(b, t, 3)
            kind[:, :, 2] = 1
            parts.append(th.cat([kind, name], dim=2))
        return pad(parts, self.BASIC)


class LiteratureBeliefFeatures(LiteratureFeatures):
    """Literature's facts (``LiteratureFeatures``) and, after them, what ``heuristic`` weighs
    its moves by (``facts: beliefs`` in the policy's arguments).

    The chance that a seat holds a card is computed from the observation as
    ``card_envs.literature.agents.Beliefs.chance`` computes it from the view: 1 for a known
    holder, 0 for a known non-holder, otherwise the seat's share among the seats that may hold
    it, weighted by each seat's unplaced cards (at least what its least count forces). Ask
    opponent j for card c: that chance, 1 if it is certain, the chance less the best chance
    among the asks I could make, 1 if j showed c's half-suit in one of the two latest asks (j
    asked for a card of it, or gave me one), my team's known cards of the half-suit. Declare
    h: the chance that naming the likeliest teammate for each card is right, 1 if no opponent
    can hold a card of h. Name teammate t: its chance to hold the card being named, 1 if no
    teammate is likelier.
    """

    EXTRA = 5
    num_features = LiteratureFeatures.BASIC + EXTRA

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.showed_asks = 2  # the latest asks heuristic reads

    def chance(self, obs: th.Tensor) -> th.Tensor:
        """(B, n, 48): how likely each seat (row order) holds each card."""
        n, b = self.n, obs.shape[0]
        holds = self.piece(obs, "holds", n, 48)
        lacks = self.piece(obs, "lacks", n, 48)
        least = th.round(self.piece(obs, "least", n, 8) * 6.0)
        sizes = th.round(self.piece(obs, "hand_sizes", n) * 48.0)
        unknown = (1 - holds) * (1 - lacks)
        unplaced = sizes - holds.sum(2)
        open_cards = unknown.sum(2)
        share = th.where(open_cards > 0, unplaced / open_cards.clamp(min=1), 0.0)
        open_in_half = unknown.reshape(b, n, 8, 6).sum(3)
        held_in_half = holds.reshape(b, n, 8, 6).sum(3)
        forced = (least - held_in_half) / open_in_half.clamp(min=1)
        weight = th.maximum(share[:, :, None], forced)  # (B, n, 8)
        weight = weight[:, :, self.half_of] * unknown
        total = weight.sum(1, keepdim=True)
        chance = th.where(total > 0, weight / total.clamp(min=1e-12), 0.0)
        return th.where(holds == 1, 1.0, chance)

    def showed(self, obs: th.Tensor) -> th.Tensor:
        """(B, t, 8): 1 where opponent j showed half-suit h in the two latest asks."""
        n, b = self.n, obs.shape[0]
        width = 2 * n + 48 + 1
        asks = self.piece(obs, "last_asks", -1, width)[:, :self.showed_asks]
        asker, asked = asks[:, :, :n], asks[:, :, n:2 * n]
        card, success = asks[:, :, 2 * n:2 * n + 48], asks[:, :, -1:]
        half = card.reshape(b, -1, 8, 6).sum(3)  # (B, k, 8)
        by_opp = asker[:, :, self.opp_rows] + success * asker[:, :, :1] * asked[:, :, self.opp_rows]
        return (by_opp[:, :, :, None] * half[:, :, None, :]).sum(1).clamp(max=1.0)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        base = super().forward(obs)
        t, b = self.t, obs.shape[0]
        chance = self.chance(obs)
        hand = self.piece(obs, "hand", 48)
        holds = self.piece(obs, "holds", self.n, 48)
        sizes = self.piece(obs, "hand_sizes", self.n)
        half = self.half_of
        opp = chance[:, self.opp_rows]  # (B, t, 48)
        mine_h = hand.reshape(b, 8, 6).sum(2)
        # the asks I could make: a card I lack of a half-suit I hold, of an opponent with cards
        possible = ((mine_h[:, half] > 0) & (hand == 0))[:, None] & (
            sizes[:, self.opp_rows, None] > 0)
        best = th.where(possible, opp, -1.0).flatten(1).amax(1).clamp(min=0)  # (B,)
        team_h = holds[:, self.team_rows].sum(1).reshape(b, 8, 6).sum(2) / 6.0
        ask = th.stack([
            opp,
            (opp == 1.0).to(obs.dtype),
            opp - best[:, None, None],
            self.showed(obs)[:, :, half],
            team_h[:, None, half].expand(-1, t, -1),
        ], dim=3).reshape(b, t * 48, self.EXTRA)
        parts = [ask]
        if not self.original:
            likeliest = chance[:, self.team_rows].amax(1)  # (B, 48)
            claim = likeliest.reshape(b, 8, 6).prod(2)
            ours = 1.0 - (1 - self.piece(obs, "lacks", self.n, 48)[:, self.opp_rows]).amax(1)
            declare = th.stack([claim, ours.reshape(b, 8, 6).amin(2)], dim=2)
            parts.append(th.cat([declare, obs.new_zeros(b, 8, self.EXTRA - 2)], dim=2))
            claim_half = self.piece(obs, "claim_half", 8)
            named = self.piece(obs, "claim_names", 6, self.n).sum(2)
            position = named.sum(1).clamp(max=5).long()
            card = claim_half.argmax(1) * 6 + position
            claiming = claim_half.sum(1, keepdim=True)
            mates = chance[:, self.team_rows].gather(
                2, card[:, None, None].expand(-1, t, 1)).squeeze(2) * claiming  # (B, t)
            top = (mates >= mates.amax(1, keepdim=True)).to(obs.dtype) * claiming
            name = th.stack([mates, top], dim=2)
            parts.append(th.cat([name, obs.new_zeros(b, t, self.EXTRA - 2)], dim=2))
        return th.cat([base, th.cat(parts, dim=1)], dim=2)


FACT_SETS = {"basic": LiteratureFeatures, "beliefs": LiteratureBeliefFeatures}
