"""98 Cards' per-action facts for the per-action policies (card_envs.core.action_features)."""

from __future__ import annotations

import torch as th

from card_envs.core.action_features import ActionFeatures
from card_envs.core.encoding import Encoder
from card_envs.core.game import Game
from card_envs.ninety_eight_cards.expert import HOME_WEIGHTS


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
    WEIGHTS = (0.0, *HOME_WEIGHTS)  # expert.TurnPlanner's loss per home, from none

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


FACT_SETS = {"basic": NinetyEightCardsFeatures, "homes": NinetyEightCardsHomeFeatures,
             "plans": NinetyEightCardsPlanFeatures}
