"""Per-action facts read from an observation vector, for the per-action heads (action_heads.py).

Each module maps a batch of observations (B, D), as a game's encoder writes them, to
(B, A, F): for every action the same F facts about that action (what kind it is, what the
observation says about the card, pile or seat it names). Only the observation is read, by
the offsets of the encoder's declared layout, so nothing hidden can reach a policy through
here. Modules hold index tensors as buffers and no weights.
"""

from __future__ import annotations

import numpy as np
import torch as th
from torch import nn

from card_envs.core.encoding import Encoder
from card_envs.core.game import Game


class ActionFeatures(nn.Module):
    """Base: ``num_actions`` actions, ``num_features`` facts each; ``forward(obs) -> (B, A, F)``.

    ``kinds`` (a buffer, one int per action, ``num_kinds`` in all) says which kind each action
    is (Literature: ask, declare, name): the scorer gives each kind its own head.
    """

    num_actions: int
    num_features: int
    num_kinds: int = 1

    def __init__(self, game: Game, encoder: Encoder, encodings: tuple[str, ...] = ("default",)):
        super().__init__()
        if encoder.name not in encodings:
            raise ValueError(
                f"per-action features of {game.name} read obs_encoding in "
                f"{', '.join(repr(e) for e in encodings)}, not {encoder.name!r}"
            )
        self.layout = encoder.layout
        self.num_actions = game.num_actions
        self._index("kinds", [0] * game.num_actions)

    def piece(self, obs: th.Tensor, name: str, *shape: int) -> th.Tensor:
        """A named piece of the layout, as (B, *shape)."""
        sl = self.layout[name]
        return obs[:, sl].reshape(obs.shape[0], *shape)

    def _index(self, name: str, values) -> None:
        self.register_buffer(name, th.as_tensor(np.asarray(values), dtype=th.long),
                             persistent=False)


def _pad(parts: list[th.Tensor], width: int) -> th.Tensor:
    """Concatenate (B, k_i, f_i) blocks along actions, each zero-padded to ``width`` facts."""
    out = []
    for p in parts:
        if p.shape[2] < width:
            p = th.cat([p, p.new_zeros(*p.shape[:2], width - p.shape[2])], dim=2)
        out.append(p)
    return th.cat(out, dim=1)


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
        return _pad(parts, self.BASIC)


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


class NinetyEightCardsFeatures(ActionFeatures):
    """98 Cards, default encoding. Play hand slot s on pile p (action 8p + s), then end turn.

    A play's facts: the slot is empty; the pile ascends; the card and the top / 100; the jump
    (signed, / 10; -1 is the tens trick) and its log from the observation; the tens trick;
    the live cards (in the draw pile or my hand) the move shuts out of that pile (a tens
    trick: those it lets back, negative) / 20, and how many of them are in my hand; a card
    ten away in the move's favour still live / in my hand (a later tens trick); the room the
    pile keeps / 100. End turn: its kind flag, cards played this turn, cards still required,
    and the draw pile's size.
    """

    PLAY = 13
    num_features = BASIC = 2 + 13

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.standard = bool(game.standard)
        if self.standard:
            self.num_kinds = 2
            self._index("kinds", [0] * 32 + [1])
        self.register_buffer("ascends", th.tensor([1.0 if a // 8 < 2 else 0.0
                                                   for a in range(32)]), persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        b = obs.shape[0]
        piles = th.round(self.piece(obs, "piles", 4) * 100)
        hand = th.round(self.piece(obs, "hand", 8) * 100)  # 0 = empty slot
        in_draw = self.piece(obs, "in_draw_pile", 98)
        # live[v] for v in 0..101: still to be played (in the draw pile or in my hand)
        mine = th.zeros(b, 102, dtype=obs.dtype, device=obs.device)
        mine.scatter_(1, hand.long(), 1.0)
        mine[:, 0] = 0
        live = mine.clone()
        live[:, 2:100] += in_draw
        cum_live, cum_mine = live.cumsum(1), mine.cumsum(1)
        # action 8p + s: pile p's top, slot s's card, (B, 32)
        top, card = piles.repeat_interleave(8, dim=1), hand.repeat(1, 4)
        up = self.ascends.expand(b, -1)
        sign = 2 * up - 1
        jump = (card - top) * sign
        empty = (card == 0).to(obs.dtype)
        low, high = th.minimum(top, card), th.maximum(top, card)

        def between(cum):  # cards strictly between low and high
            hi = (high - 1).clamp(min=0).long()
            return (cum.gather(1, hi) - cum.gather(1, low.long())).clamp(min=0)

        direction = th.sign(jump)
        shut = between(cum_live) * direction * (1 - empty)
        shut_mine = between(cum_mine) * direction * (1 - empty)
        partner = (card - 10 * sign).clamp(0, 101).long()
        partner_live = live.gather(1, partner) * (1 - empty)
        partner_mine = mine.gather(1, partner) * (1 - empty)
        room = th.where(up > 0, 99 - card, card - 2) / 100 * (1 - empty)
        play = [
            empty,
            up,
            card / 100,
            top / 100,
            jump / 10 * (1 - empty),
            self.piece(obs, "jumps", 32),
            ((jump == -10) & (empty == 0)).to(obs.dtype),
            shut / 20,
            shut_mine / 4,
            partner_live,
            partner_mine,
            room,
            (1 - empty) * (shut <= 0).to(obs.dtype),
        ]
        # written into one tensor (a stack along the last axis and the kinds' padding cost
        # a quarter of the forward pass)
        facts = obs.new_zeros(b, self.num_actions, self.BASIC)
        facts[:, :32, 0] = 1
        facts[:, :32, 2:] = th.stack(play, dim=1).transpose(1, 2)
        if self.standard:
            facts[:, 32, 1] = 1
            facts[:, 32, 2] = self.piece(obs, "turn_played", 1)[:, 0]
            facts[:, 32, 3] = self.piece(obs, "min_play", 1)[:, 0]
            facts[:, 32, 4] = self.piece(obs, "draw_pile", 1)[:, 0]
        return facts


class NinetyEightCardsHomeFeatures(NinetyEightCardsFeatures):
    """98 Cards' facts (``NinetyEightCardsFeatures``) and, after them, the `expert`'s counting
    of homes (``facts: homes`` in the policy's arguments; ``expert.py``'s ``TurnPlanner``).

    A card's homes are the piles that take it directly (no tens trick): its count of them,
    from the pile tops, for every card still to be played (in the draw pile or my hand). A
    play: the live cards it jumps over by the homes each has before the move (1 to 4: with
    one, the move takes its last home), those a tens trick lets back by their homes before
    it (0 to 3), the expert's cost of the move (those counts weighted 3.0, 1.5, 0.7, 0.3 per
    home lost or won back, as ``TurnPlanner.skip_cost`` and ``reopen_gain``), the homes of
    the card played, the live cards that no pile takes now and after the move. End turn: the
    live cards no pile takes now, the cheapest cost among the legal plays and whether one
    costs nothing.
    """

    EXTRA = 12
    num_features = NinetyEightCardsFeatures.BASIC + EXTRA
    WEIGHTS = (0.0, 3.0, 1.5, 0.7, 0.3)  # expert.TurnPlanner's loss per home, from none

    def forward(self, obs: th.Tensor) -> th.Tensor:
        return self.home_facts(obs)[0]

    def position(self, obs: th.Tensor) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Pile tops (B, 4), hand (B, 8; 0 = an empty slot) and live cards (B, 102)."""
        piles = th.round(self.piece(obs, "piles", 4) * 100)
        hand = th.round(self.piece(obs, "hand", 8) * 100)
        live = th.zeros(obs.shape[0], 102, dtype=obs.dtype, device=obs.device)
        live.scatter_(1, hand.long(), 1.0)
        live[:, 0] = 0
        live[:, 2:100] += self.piece(obs, "in_draw_pile", 98)
        return piles, hand, live

    def home_facts(self, obs: th.Tensor) -> tuple[th.Tensor, tuple, dict]:
        """The facts, the position (``position``) and its plays' counting (``moves``)."""
        base = super().forward(obs)
        b = obs.shape[0]
        piles, hand, live = here = self.position(obs)
        m = self.moves(piles, hand, live)
        lost, reopened, cost, legal = m["lost"], m["reopened"], m["cost"], m["legal"]
        dead, own, filled = m["dead"], m["own"], m["filled"]
        dead_after = dead + lost[0] - reopened[0] - (own == 0).to(obs.dtype) * filled
        extra = obs.new_zeros(b, self.num_actions, self.EXTRA)
        extra[:, :32] = th.stack([
            *(x / 4 for x in lost), *(x / 4 for x in reopened), cost / 10, own / 4,
            dead.expand(-1, 32) / 10, dead_after * filled / 10,
        ], dim=2)
        if self.standard:
            cheapest = self.cheapest(cost, legal)
            extra[:, 32, 0] = dead[:, 0] / 10
            extra[:, 32, 1] = cheapest / 10
            extra[:, 32, 2] = ((cheapest <= 0) & (legal.sum(1) > 0)).to(obs.dtype)
        return th.cat([base, extra], dim=2), here, m

    @staticmethod
    def cheapest(cost: th.Tensor, legal: th.Tensor) -> th.Tensor:
        """The least cost among the legal plays of each row, 0 where none is legal."""
        least = th.where(legal > 0, cost, th.full_like(cost, 1e4)).min(1).values
        return th.where(least > 1e3, th.zeros_like(least), least)

    def moves(self, piles: th.Tensor, hand: th.Tensor, live: th.Tensor) -> dict:
        """The `expert`'s counting for every play 8p + s of rows of pile tops (R, 4), hands
        (R, 8; 0 = an empty slot) and live cards (R, 102): ``lost[h-1]`` (live cards jumped
        over that had h homes), ``reopened[h]`` (let back by a tens trick, h homes before),
        ``cost``, ``own`` (the card's homes), ``legal`` and ``filled`` (R, 32 each), and
        ``dead`` (live cards no pile takes, (R, 1))."""
        dtype = piles.dtype
        homes, card, filled, forward, tens, between = self.geometry(piles, hand)
        # cum[h][:, v]: live cards up to v with h homes
        cum = [(live * (homes == h)).cumsum(1) for h in range(5)]
        counts = [between(c) for c in cum]
        lost = [counts[h] * forward for h in range(1, 5)]
        reopened = [counts[h] * tens for h in range(4)]
        w = self.WEIGHTS
        cost = (sum(w[h] * lost[h - 1] for h in range(1, 5))
                - sum(w[h + 1] * reopened[h] for h in range(4)))
        return {"lost": lost, "reopened": reopened, "cost": cost, "legal": forward + tens,
                "own": homes.gather(1, card.long()).to(dtype) * filled, "filled": filled,
                "dead": (live * (homes == 0)).sum(1, keepdim=True)}

    def geometry(self, piles: th.Tensor, hand: th.Tensor) -> tuple:
        """What ``moves`` and the plan facts' ``costs`` both count from: the homes of every
        value (R, 102; long), and for every play 8p + s (R, 32 each) its card, ``filled``,
        ``forward`` (a move along the pile), ``tens`` (a tens trick) and ``between(c)``: the
        rise of the running sum ``c`` (R, 102) strictly between the pile's top and the card."""
        r, dtype = piles.shape[0], piles.dtype
        values = th.arange(102, dtype=dtype, device=piles.device)
        homes = (values > piles[:, 0:1]).to(th.uint8)  # (R, 102), one addition at a time
        homes += values > piles[:, 1:2]
        homes += values < piles[:, 2:3]
        homes += values < piles[:, 3:4]
        top, card = piles.repeat_interleave(8, dim=1), hand.repeat(1, 4)
        jump = (card - top) * (2 * self.ascends.expand(r, -1) - 1)
        filled = (card > 0).to(dtype)
        forward, tens = (jump > 0).to(dtype) * filled, (jump == -10).to(dtype) * filled
        low, high = th.minimum(top, card).long(), (th.maximum(top, card) - 1).clamp(min=0).long()

        def between(c):
            return (c.gather(1, high) - c.gather(1, low)).clamp(min=0)

        return homes.long(), card, filled, forward, tens, between


class NinetyEightCardsPlanFeatures(NinetyEightCardsHomeFeatures):
    """98 Cards' facts with the `expert`'s counting (``NinetyEightCardsHomeFeatures``) and,
    after them, one play of lookahead in the same counting (``facts: plans``): for a play,
    the legal plays from the hand that are left after it, the cheapest of their costs (counted
    on the piles and live cards after the move), those that cost nothing, and the cost of the
    pair (the move's and the cheapest next one). The `expert` plans whole turns (at least two
    plays under the standard rules); a policy that decides one card at a time sees here what
    its first card leaves for the second. A fixed computation over the hand's 32 plays, from
    the observation alone: no search over hidden cards.
    """

    PLANS = 5
    num_features = NinetyEightCardsHomeFeatures.num_features + PLANS
    # a live card's cost by its homes when a play jumps over it / a tens trick lets it back
    LOST = NinetyEightCardsHomeFeatures.WEIGHTS
    BACK = (*LOST[1:], 0.0)

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.register_buffer("weights", th.tensor([self.LOST, self.BACK]), persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        facts, (piles, hand, live), m = self.home_facts(obs)
        b, dtype = obs.shape[0], obs.dtype
        extra = obs.new_zeros(b, self.num_actions, self.PLANS)
        # the legal plays only: row r is play a[r] = 8p + s of observation i[r]
        i, a = m["legal"].nonzero(as_tuple=True)
        if len(i):
            pile, slot = a // 8, a % 8
            card = hand[i, slot]
            # after the play: pile p's top is the card, slot s is empty, the card not live
            after_piles = piles[i].scatter(1, pile[:, None], card[:, None])
            after_hand = hand[i].scatter(1, slot[:, None], 0.0)
            after_live = live[i].scatter(1, card.long()[:, None], 0.0)
            nxt, legal = self.costs(after_piles, after_hand, after_live)
            count = legal.sum(1)
            least = self.cheapest(nxt, legal)
            free = ((nxt <= 0) & (legal > 0)).to(dtype).sum(1)
            own = m["cost"][i, a]
            extra[i, a] = th.stack([count / 8, (count == 0).to(dtype), least / 10, free / 4,
                                    (own + least) / 10], dim=1)
        return th.cat([facts, extra], dim=2)

    def costs(self, piles: th.Tensor, hand: th.Tensor, live: th.Tensor
              ) -> tuple[th.Tensor, th.Tensor]:
        """``moves``' cost and legality of every play 8p + s, (R, 32) each, from two running
        sums of the live cards weighted by their homes (instead of one per count of homes)."""
        homes, _, _, forward, tens, between = self.geometry(piles, hand)
        cum_lost = (live * th.take(self.weights[0], homes)).cumsum(1)
        cum_back = (live * th.take(self.weights[1], homes)).cumsum(1)
        return between(cum_lost) * forward - between(cum_back) * tens, forward + tens


class SimpleTricksFeatures(ActionFeatures):
    """Simple tricks, default encoding. Action c plays card c (colour c // N, value c % N).

    A card's facts: in my hand; its colour; its value / N; a card is led; it follows the
    led colour; it beats the led card; the opponent's cards of its colour, above it and below
    it, / N; my cards of its colour above and below it / N; my cards of its colour / N;
    tricks won by me and the opponent / N (the score so far).
    """

    num_features = 14

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        self.n = n = game.num_values
        self.register_buffer("colour", th.tensor([c // n for c in range(2 * n)],
                                                 dtype=th.float32), persistent=False)
        self.register_buffer("value", th.tensor([c % n for c in range(2 * n)],
                                                dtype=th.float32), persistent=False)
        above = th.zeros(2 * n, 2 * n)
        for c in range(2 * n):
            for d in range(2 * n):
                if c // n == d // n and d % n > c % n:
                    above[c, d] = 1.0
        same = th.tensor([[1.0 if c // n == d // n else 0.0 for d in range(2 * n)]
                          for c in range(2 * n)])
        self.register_buffer("above", above, persistent=False)
        self.register_buffer("below", same - above - th.eye(2 * n), persistent=False)
        self.register_buffer("same", same, persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        n, b = self.n, obs.shape[0]
        hand = self.piece(obs, "hand", 2 * n)
        theirs = self.piece(obs, "opponent_hand", 2 * n)
        lead = self.piece(obs, "lead", 2 * n)
        led = lead.sum(1, keepdim=True).expand(-1, 2 * n)  # 1 when a card is led
        follows = lead @ self.same  # (B, 2N): 1 for cards of the led colour
        beats = lead @ self.below.T  # cards above the led one, same colour
        tricks = th.cat([self.piece(obs, "my_tricks", 1), self.piece(obs, "opponent_tricks", 1)],
                        dim=1)
        facts = th.stack([
            hand,
            self.colour.expand(b, -1),
            self.value.expand(b, -1) / n,
            led,
            follows,
            beats,
            theirs @ self.above.T / n,
            theirs @ self.below.T / n,
            hand @ self.above.T / n,
            hand @ self.below.T / n,
            hand @ self.same.T / n,
            theirs @ self.same.T / n,
            tricks[:, :1].expand(-1, 2 * n),
            tricks[:, 1:].expand(-1, 2 * n),
        ], dim=2)
        return facts


class PalaceFeatures(ActionFeatures):
    """Palace, default encoding. Actions 0-51 play k = a // 13 + 1 cards of rank r = a % 13 from
    the hand, 52-64 one face-up card of rank a - 52, 65 a face-down card blind (66-77 are never
    legal), 78 picks the pile up; with the swap phase, 79-247 swap hand rank h for face-up rank
    u (79 + 13 h + u) and 248 ends the swapping (their own head).

    A play's facts: its kind (hand, face-up, blind, pick-up); its rank one-hot and its rank /
    12; cards it puts down / 4; my cards of that rank where it plays from, and those left
    after it, / 4; it burns the pile (a 10, or the fourth of the top rank in a row); the pile
    after it / 52 (a pick-up: the cards taken); copies of that rank no one has seen / 4 and
    those known in opponents' hands / 4; the cards the next player is known to hold or shows
    face-up that may go on it / 4; my hand after it / 13. A swap's facts: the hand rank's and
    the face-up rank's one-hots, my cards of each / 4, and whether it ends the swapping.
    """

    PLAY = 4 + 13 + 12
    SWAP = 13 + 13 + 3
    num_features = 2 + max(PLAY, SWAP)

    def __init__(self, game: Game, encoder: Encoder):
        super().__init__(game, encoder)
        from card_envs.palace.rules import BURN_RUN, NUM_PLAY_ACTIONS, PLAYABLE, TEN

        self.n = game.num_players
        self.burn_run, self.ten = BURN_RUN, TEN
        self.swaps = game.num_actions - NUM_PLAY_ACTIONS  # 0 without the swap phase
        if self.swaps:
            self.num_kinds = 2
            self._index("kinds", [0] * NUM_PLAY_ACTIONS + [1] * self.swaps)
        ranks = list(range(13))
        # per play action: its rank (the blind, pick-up and unused actions: 0, masked below)
        self._index("rank_of", [a % 13 for a in range(52)] + ranks + [0] * 14)
        kind = np.zeros((NUM_PLAY_ACTIONS, 4), np.float32)
        kind[:52, 0] = kind[52:65, 1] = kind[65:78, 2] = kind[78, 3] = 1.0
        self.register_buffer("kind", th.as_tensor(kind), persistent=False)
        put = np.array([a // 13 + 1 for a in range(52)] + [1] * 26 + [0], np.float32)
        self.register_buffer("put", th.as_tensor(put), persistent=False)
        ranked = np.zeros(NUM_PLAY_ACTIONS, np.float32)
        ranked[:65] = 1.0  # the actions that name a rank
        self.register_buffer("ranked", th.as_tensor(ranked), persistent=False)
        # may[r, x]: a card of rank x may go on a pile topped by rank r
        self.register_buffer("may", th.as_tensor(PLAYABLE[1:].astype(np.float32)),
                             persistent=False)

    def forward(self, obs: th.Tensor) -> th.Tensor:
        b, o = obs.shape[0], self.n - 1
        hand = self.piece(obs, "hand", 13)  # / 4
        up = self.piece(obs, "face_up", 13)
        opp_up = self.piece(obs, "opponent_face_up", o, 13)
        known = self.piece(obs, "opponent_known", o, 13)
        pile = self.piece(obs, "pile", 13)
        out = self.piece(obs, "out_of_game", 13)
        top = self.piece(obs, "top", 13)
        run = self.piece(obs, "run", 1) * (self.burn_run - 1)  # cards of the top rank on top
        pile_size = self.piece(obs, "pile_size", 1)  # / 52
        r = self.rank_of
        ranked = self.ranked
        from_hand = self.kind[:, 0]
        source = th.where(from_hand.bool(), hand[:, r], up[:, r]) * ranked  # (B, 79) / 4
        put = self.put.expand(b, -1)
        left = (source - put / 4).clamp(min=0) * ranked
        on_top = (top[:, r] * ranked) > 0
        burns = ((r == self.ten).to(obs.dtype) * ranked).expand(b, -1).clone()
        burns = th.maximum(burns, (on_top & (run + put >= self.burn_run)).to(obs.dtype))
        pile_after = pile_size + put / 52
        pile_after[:, 78] = pile_size[:, 0]  # a pick-up takes the pile
        unseen = (1 - hand - up - opp_up.sum(1) - known.sum(1) - pile - out).clamp(min=0)
        next_cards = known[:, 0] + opp_up[:, 0]  # (B, 13) / 4
        answers = next_cards @ self.may.T  # (B, 13): cards of the next player that go on r
        hand_after = (hand.sum(1, keepdim=True) * 4 - put * from_hand) / 13
        hand_after[:, 78] += pile_size[:, 0] * 52 / 13
        one_hot = th.nn.functional.one_hot(r, 13).to(obs.dtype) * ranked[:, None]
        play = th.cat([
            self.kind.expand(b, -1, -1),
            one_hot.expand(b, -1, -1),
            th.stack([
                r.to(obs.dtype).expand(b, -1) / 12 * ranked,
                put / 4,
                source,
                left,
                burns,
                pile_after,
                unseen[:, r] * ranked,
                known.sum(1)[:, r] * ranked,
                answers[:, r] * ranked,
                hand_after,
                run.expand(-1, r.shape[0]) / 3,
                pile_size.expand(-1, r.shape[0]),
            ], dim=2),
        ], dim=2)
        kind = obs.new_zeros(b, play.shape[1], 2)
        kind[:, :, 0] = 1
        parts = [th.cat([kind, play], dim=2)]
        if self.swaps:
            eye = th.eye(13, dtype=obs.dtype, device=obs.device)
            held = eye.repeat_interleave(13, dim=0)  # (169, 13): the hand rank of swap h*13+u
            shown = eye.repeat(13, 1)  # the face-up rank
            swap = th.cat([
                held.expand(b, -1, -1),
                shown.expand(b, -1, -1),
                th.stack([hand @ held.T, up @ shown.T, obs.new_zeros(b, 169)], dim=2),
            ], dim=2)
            done = obs.new_zeros(b, 1, self.SWAP)
            done[:, :, -1] = 1
            kind = obs.new_zeros(b, 170, 2)
            kind[:, :, 1] = 1
            parts.append(th.cat([kind, th.cat([swap, done], dim=1)], dim=2))
        return _pad(parts, self.num_features)


FEATURES: dict[str, type[ActionFeatures]] = {
    "literature": LiteratureFeatures,
    "ninety_eight_cards": NinetyEightCardsFeatures,
    "palace": PalaceFeatures,
    "simple_tricks": SimpleTricksFeatures,
}

# Other sets of facts a game offers beside its default one (the policies' ``facts`` argument).
FACT_SETS: dict[str, dict[str, type[ActionFeatures]]] = {
    name: {"basic": cls} for name, cls in FEATURES.items()
}
FACT_SETS["literature"]["beliefs"] = LiteratureBeliefFeatures
FACT_SETS["ninety_eight_cards"]["homes"] = NinetyEightCardsHomeFeatures
FACT_SETS["ninety_eight_cards"]["plans"] = NinetyEightCardsPlanFeatures
