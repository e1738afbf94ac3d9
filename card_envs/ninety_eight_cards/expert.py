"""Expert play for 98 Cards: plan the whole turn, count the cards, solve the endgame.

What the player knows: the hand, the pile tops, and (by elimination) which cards are still to
come, but not their order. Three ideas carry the play:

- **Counting.** A play that moves a pile past cards already played costs nothing: the cost
  of a play is the number of cards still to come (in the hand or the draw pile) that it
  jumps over on its pile, and a tens trick earns back those it reopens.
- **Planning the turn.** Under the standard rules a turn plays at least two cards. The
  planner searches every sequence of plays from the hand (with a transposition table over
  the cards left and the pile tops), so it finds combinations such as playing 60 and then
  50 on an ascending pile as a tens trick. Plays beyond the minimum are made only when
  they are cheap: each extra play earns ``extra_bonus`` against its cost.
- **The endgame.** Once the draw pile is empty nothing is hidden: an exact search finds
  the order that plays the most cards left (all of them wins).

``ExpertAgent`` (``expert``) plays the planner's first move at every decision; it reads only
its view, and replans each time, so it keeps no memory between moves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.core.game import check_int
from card_envs.ninety_eight_cards.rules import (
    ASCENDING,
    END_TURN,
    HAND_SIZE,
    HIGHEST,
    LOWEST,
    CardsState,
    CardsView,
    NinetyEightCards,
)

# What taking a home from a card still to come costs (a home: a pile that takes the card
# directly, no tens trick), by the homes it had: its last home first. The expert's counting:
# the planner's costs, the twin's expert, the per-action facts (features.py) and reward
# shaping read these numbers, so they are written here once.
HOME_WEIGHTS = (3.0, 1.5, 0.7, 0.3)
# A card's cost by its homes now (0 to 4): what taking them all, one by one, would cost.
HOME_COST = tuple(sum(HOME_WEIGHTS[h:], 0.0) for h in range(5))

# A plan that cannot meet the turn's minimum ends the game: worse than any cost.
STUCK = 10_000.0
NINE = (1 << 9) - 1


def alive_cards(view: CardsView) -> int:
    """The cards still to be played (hand and draw pile) as a bit mask over card values."""
    draw = np.packbits(np.asarray(view.in_draw) > 0.5, bitorder="little").tobytes()
    mask = int.from_bytes(draw, "little") << LOWEST
    for card in view.hand:
        mask |= 1 << card
    return mask


ALL_CARDS = ((1 << (HIGHEST + 1)) - 1) ^ ((1 << LOWEST) - 1)


def home_masks(tops) -> tuple[int, int, int, int, int]:
    """Bit masks of the card values that 0, 1, 2, 3 and 4 piles take directly (no tens trick)."""
    top0, top1, top2, top3 = tops
    up0 = ALL_CARDS & ~((2 << top0) - 1)  # cards above the top of ascending pile 0
    up1 = ALL_CARDS & ~((2 << top1) - 1)
    down2 = ALL_CARDS & ((1 << top2) - 1)  # cards below the top of descending pile 2
    down3 = ALL_CARDS & ((1 << top3) - 1)
    one_up, two_up = up0 ^ up1, up0 & up1
    one_down, two_down = down2 ^ down3, down2 & down3
    no_up = ALL_CARDS & ~(one_up | two_up)
    no_down = ALL_CARDS & ~(one_down | two_down)
    return (
        no_up & no_down,
        (one_up & no_down) | (no_up & one_down),
        (two_up & no_down) | (one_up & one_down) | (no_up & two_down),
        (two_up & one_down) | (one_up & two_down),
        two_up & two_down,
    )


def play_cost(pile: int, top: int, card: int, alive: int) -> int:
    """Cards still to come that a legal play of ``card`` on ``pile`` jumps over.

    Negative for the tens trick: minus the cards still to come that it reopens. ``alive``
    must not hold ``card`` itself.
    """
    if ASCENDING[pile]:
        if card > top:
            return ((alive >> (top + 1)) & ((1 << (card - top - 1)) - 1)).bit_count()
        return -((alive >> (card + 1)) & NINE).bit_count()
    if card < top:
        return ((alive >> (card + 1)) & ((1 << (top - card - 1)) - 1)).bit_count()
    return -((alive >> (top + 1)) & NINE).bit_count()


def fits(pile: int, top: int, card: int) -> bool:
    """Whether ``card`` may go on ``pile`` with top ``top`` (the rules' test, on ints)."""
    if ASCENDING[pile]:
        return card > top or card == top - 10
    return card < top or card == top + 10


class TurnPlanner:
    """Finds a cheap sequence of plays from a hand (see the module docstring).

    ``plan(hand, tops, alive, need)`` returns ``(cost, [(card, pile), ...])``: the plays
    in order, at least ``need`` of them when possible (an empty or short plan means the
    minimum cannot be met). A plan's cost is the sum of its plays' costs, less
    ``extra_bonus`` for each play beyond the minimum.

    Pruning keeps it fast: a required play is tried only if it costs at most ``margin``
    more than the cheapest one there, and an extra play only if it is worth making by
    itself (cost after the bonus at most 0) or sets up a tens trick with a card in hand.
    """

    def __init__(
        self,
        extra_bonus: float = 0.5,
        margin: int = 8,
        home_weights: tuple[float, ...] = HOME_WEIGHTS,
        extras: bool = True,
    ):
        self.extra_bonus = extra_bonus
        self.margin = margin
        self.extras = extras
        # LOSS[h]: the cost of taking one of its h homes (piles that take it) from a card
        self.loss = (0.0, *home_weights)

    def skip_cost(self, tops: tuple[int, ...], skipped: int) -> float:
        """What jumping over the cards of the bit mask ``skipped`` costs, by their homes."""
        loss = self.loss
        return sum(
            loss[h] * (skipped & mask).bit_count()
            for h, mask in enumerate(home_masks(tops))
            if h
        )

    def reopen_gain(self, tops: tuple[int, ...], reopened: int) -> float:
        """What a tens trick reopening the cards of ``reopened`` is worth, by their homes."""
        loss = self.loss
        return sum(
            loss[h + 1] * (reopened & mask).bit_count()
            for h, mask in enumerate(home_masks(tops)[:4])
        )

    def plan(
        self, hand: list[int], tops: list[int], alive: int, need: int
    ) -> tuple[float, list[tuple[int, int]]]:
        """The cheapest plan: ``(cost, [(card, pile), ...])``."""
        cost, plays = self.options(hand, tops, alive, need, 1)[0]
        return cost, [(card, pile) for card, pile, _ in plays]

    def options(
        self, hand: list[int], tops: list[int], alive: int, need: int, count: int,
        shorter: bool = True,
    ) -> list[tuple[float, list[tuple[int, int, float]]]]:
        """Up to ``count`` cheap plans, cheapest first, as ``(cost, [(card, pile, step), ...])``.

        Each option is the cheapest plan of a different first play, or (with ``shorter``)
        one of their shorter forms, stopping once the minimum is met; ``step`` is each
        play's own cost.
        """
        n = len(hand)
        bonus, margin, extras, loss = self.extra_bonus, self.margin, self.extras, self.loss
        memo: dict[tuple, tuple[float, list[tuple[int, int, float]]]] = {}
        root: list[tuple[float, list[tuple[int, int, float]]]] = []
        held = 0
        for card in hand:
            held |= 1 << card

        def best(left: int, tops: tuple[int, ...], alive: int, held: int) -> tuple[float, list]:
            key = (left, tops)
            found = memo.get(key)
            if found is not None:
                return found
            required = n - left.bit_count() < need
            moves = _moves(hand, left, tops, alive, held, loss)
            if required:
                result: tuple[float, list] = (STUCK, [])
                if moves:
                    cheapest = min(m[0] for m in moves)
                    moves = [m for m in moves if m[0] <= cheapest + margin or m[1]]
                extra = 0.0
            else:
                result = (0.0, [])
                moves = [m for m in moves if m[0] <= bonus or m[1]] if extras else []
                extra = bonus
            at_root = left == full
            for cost, _, i, card, pile, rest in moves:
                new_tops = tops[:pile] + (card,) + tops[pile + 1 :]
                sub_cost, sub_plan = best(left & ~(1 << i), new_tops, rest, held & ~(1 << card))
                total = cost - extra + sub_cost
                if at_root:
                    root.append((total, [(card, pile, cost - extra), *sub_plan]))
                if total < result[0]:
                    result = (total, [(card, pile, cost - extra), *sub_plan])
            memo[key] = result
            return result

        full = (1 << n) - 1
        best(full, tuple(tops), alive, held)
        if count == 1 or not root:
            return [memo[(full, tuple(tops))]]
        found = _distinct(root, need, shorter)
        if not found:  # no plan meets the minimum
            return [memo[(full, tuple(tops))]]
        return sorted(found.values(), key=lambda option: option[0])[:count]


def _moves(
    hand: list[int], left: int, tops: tuple[int, ...], alive: int, held: int,
    loss: tuple[float, ...],
) -> list[tuple[float, int, int, int, int, int]]:
    """TurnPlanner.options' moves: each legal play of a card ``left`` (bit i: hand[i]) on the
    piles ``tops`` as ``(cost, setup, i, card, pile, rest)``. ``cost``: what the cards still
    to come (``alive``) that it jumps over lose (``loss`` by their homes), or minus what a tens
    trick gives back to those it reopens; ``setup``: it sets up a tens trick with a card
    ``held``; ``rest``: ``alive`` without the card. A play on the twin of a pile with the
    same top is left out (the same move)."""
    _, loss1, loss2, loss3, loss4 = loss
    h0, h1, h2, h3, h4 = home_masks(tops)
    moves = []
    for i in range(len(hand)):
        if not left >> i & 1:
            continue
        card = hand[i]
        rest = alive & ~(1 << card)
        for pile in range(4):
            top = tops[pile]
            if pile & 1 and top == tops[pile - 1]:
                continue  # the same move as on the twin pile
            if pile < 2:
                if card > top:
                    jumped = rest & ((1 << card) - (2 << top))
                    setup = held >> (card - 10) & 1 if card > 11 else 0
                elif card == top - 10:
                    jumped = -(rest & ((1 << top) - (2 << card)))
                    setup = 0
                else:
                    continue
            else:
                if card < top:
                    jumped = rest & ((1 << top) - (2 << card))
                    setup = held >> (card + 10) & 1 if card < 90 else 0
                elif card == top + 10:
                    jumped = -(rest & ((1 << card) - (2 << top)))
                    setup = 0
                else:
                    continue
            if jumped >= 0:  # cards jumped over lose a home each
                cost = (
                    loss1 * (jumped & h1).bit_count()
                    + loss2 * (jumped & h2).bit_count()
                    + loss3 * (jumped & h3).bit_count()
                    + loss4 * (jumped & h4).bit_count()
                )
            else:  # a tens trick gives the cards between back a home each
                jumped = -jumped
                cost = -(
                    loss1 * (jumped & h0).bit_count()
                    + loss2 * (jumped & h1).bit_count()
                    + loss3 * (jumped & h2).bit_count()
                    + loss4 * (jumped & h3).bit_count()
                )
            moves.append((cost, setup, i, card, pile, rest))
    return moves


def _distinct(
    root: list[tuple[float, list[tuple[int, int, float]]]], need: int, shorter: bool
) -> dict[tuple, tuple[float, list[tuple[int, int, float]]]]:
    """TurnPlanner.options' options from the root's plans (``root``: one per first play):
    each plan by its first play, or (``shorter``) each of its forms that meets the minimum
    ``need`` (and none at all when nothing is needed) by its plays, the first found kept."""
    found = {}
    for total, plays in root:
        if not shorter:
            found[tuple(plays[:1])] = (total, plays)
            continue
        for length in range(max(need, 1), len(plays) + 1):
            prefix = plays[:length]
            key = tuple((card, pile) for card, pile, _ in prefix)
            if key not in found:
                found[key] = (sum(step for _, _, step in prefix), prefix)
    if need == 0 and shorter:
        found[()] = (0.0, [])
    return found


def longest_run(hand: list[int], tops: list[int]) -> list[tuple[int, int]]:
    """An order of plays that plays as many cards of ``hand`` as possible (exact search)."""
    n = len(hand)
    memo: dict[tuple, list[tuple[int, int]]] = {}

    def best(left: int, tops: tuple[int, ...]) -> list[tuple[int, int]]:
        key = (left, tops)
        found = memo.get(key)
        if found is not None:
            return found
        result: list[tuple[int, int]] = []
        remaining = left.bit_count()
        for i in range(n):
            if not left >> i & 1:
                continue
            card = hand[i]
            for pile in range(4):
                top = tops[pile]
                if pile & 1 and top == tops[pile - 1]:
                    continue
                if fits(pile, top, card):
                    sub = best(left & ~(1 << i), tops[:pile] + (card,) + tops[pile + 1 :])
                    if len(sub) + 1 > len(result):
                        result = [(card, pile), *sub]
                        if len(result) == remaining:
                            memo[key] = result
                            return result
        memo[key] = result
        return result

    return best((1 << n) - 1, tuple(tops))


def action_of(view: CardsView, card: int, pile: int) -> int:
    """The action that plays ``card`` (in hand) on ``pile``."""
    return pile * HAND_SIZE + view.hand.index(card)


def first_move(view: CardsView, plays: list) -> int:
    """The action that starts a plan (plays of (card, pile, ...)): its first play, or ending
    the turn for an empty plan."""
    return action_of(view, plays[0][0], plays[0][1]) if plays else END_TURN


class ExpertAgent(BaseAgent):
    """Counts the cards, plans the whole turn, and solves the endgame (module docstring).

    ``extra_bonus``: how much cheaper than free an extra play beyond the minimum must look
    to be made (in cards jumped over).
    """

    name = "expert"

    def __init__(self, game: NinetyEightCards | None = None, **planner):
        super().__init__(game)
        self.planner = TurnPlanner(**planner)
        # the rest of the turn's plan, and the position in which its next play is due
        self._expected: tuple | None = None
        self._rest: list[tuple[int, int]] = []

    def reset(self) -> None:
        self._expected, self._rest = None, []

    def plan(self, view: CardsView, rng: np.random.Generator) -> list[tuple[int, int]]:
        """The plays the agent means to make from here, as (card, pile), in order."""
        hand, tops = list(view.hand), [int(t) for t in view.piles]
        if view.draw_pile == 0:
            return longest_run(hand, tops)
        need = view.min_play if view.standard else 1
        alive = alive_cards(view)
        position = (tuple(hand), tuple(tops), alive, need)
        if position == self._expected:
            # the rest of a plan is the best plan from where it leads (same search, same
            # position), so it need not be searched again
            plays = self._rest
        else:
            plays = self.choose(view, hand, tops, alive, need, rng)
        if plays and view.standard:
            card, pile = plays[0]
            tops[pile] = card
            hand.remove(card)
            self._expected = (tuple(hand), tuple(tops), alive & ~(1 << card), max(need - 1, 0))
            self._rest = plays[1:]
        return plays

    def choose(
        self, view: CardsView, hand: list[int], tops: list[int], alive: int, need: int,
        rng: np.random.Generator,
    ) -> list[tuple[int, int]]:
        """The plays to make from a position the agent has not planned for."""
        return self.planner.plan(hand, tops, alive, need)[1]

    def act(self, view: CardsView, rng: np.random.Generator) -> int:
        plays = self.plan(view, rng)
        if plays:
            return action_of(view, *plays[0])
        if view.standard and view.legal[END_TURN]:
            return END_TURN
        return int(np.flatnonzero(view.legal)[0])  # no plan meets the minimum: any legal move

    def __repr__(self) -> str:
        return f"ExpertAgent(extra_bonus={self.planner.extra_bonus})"




class SearchAgent(ExpertAgent):
    """The expert's plans, chosen by sampling the draw (name ``ismcts``).

    At the start of a turn it takes the planner's ``options`` cheapest plans and scores
    each by its own cost plus the mean cost of the best next turn over ``budget`` sampled
    draws (the same samples for every plan): each sample deals the cards the plan leaves
    room for from the unseen cards, which the player knows by elimination (never their
    order), and plans the next turn from there. A next turn that cannot meet the minimum
    counts as STUCK. Budget: sampled draws per turn (default 4).

    ``guide`` (an Agent, a trained policy say: ``best+search``): where one of the scored
    plans starts with the guide's move and scores within ``guide_margin`` of the best plan
    (in the planner's cost, cards jumped over), that plan is played instead: the search
    keeps the guide's move unless another plan is clearly cheaper.
    """

    name = "ismcts"
    takes_budget = True
    ladder_budgets = (1, 4)
    # batched PIMC (``batched-pimc:W``, card_envs.core.batched_search) plays this search's
    # worlds (``sample_world``) out on the twin with ``rollout``, the twin's ``expert``; a
    # playout is worth the cards it plays (a win alone is too rare a signal)
    playout_value = "score"
    # the expert's move stays unless another beats it on the same worlds by this many
    # standard errors: a playout's cards vary by some ten, so the best of a few means is
    # mostly the luckiest (docs/policies.md)
    margin = 2.5

    def __init__(
        self, game: NinetyEightCards | None = None, budget: int = 4, options: int = 6,
        guide: BaseAgent | None = None, guide_margin: float = 1.0, **planner,
    ):
        super().__init__(game, **planner)
        self.budget = check_int("budget", budget, 1)
        self.count = check_int("options", options, 1)
        if not guide_margin >= 0:
            raise ValueError(f"guide_margin={guide_margin!r} is not valid; it must be a "
                             "number at least 0")
        self.guide, self.guide_margin = guide, float(guide_margin)
        if guide is not None:
            self.name = f"{guide.name}+{self.name}:{self.budget}"
        # the next turn is scored by its required plays only (faster, and extra plays
        # there are free choices that the next decision makes with its own draw)
        self.lookahead = TurnPlanner(
            self.planner.extra_bonus, self.planner.margin, self.planner.loss[1:], extras=False
        )
        self.rollout = ExpertAgent(game, **planner)

    @classmethod
    def takes_guide(cls) -> bool:
        """A model can guide this search (``guide``)."""
        return True

    def reset(self) -> None:
        super().reset()
        if self.guide is not None and hasattr(self.guide, "reset"):
            self.guide.reset()

    def sample_world(self, view: CardsView, rng: np.random.Generator) -> CardsState:
        """A world for batched PIMC: the view's draw pile in a random order (the rules'
        ``sample_world``)."""
        game = self.game or NinetyEightCards("standard" if view.standard else "original")
        return game.sample_world(view, rng)

    def redeal_hidden(self, state: Any, slots: np.ndarray, rng: np.random.Generator) -> None:
        """In twin slots ``slots`` of a batched ``state``, the draw pile shuffled again, as
        ``sample_world`` orders it (compiled: card_envs.ninety_eight_cards.twin_worlds)."""
        from card_envs.ninety_eight_cards.twin_worlds import redeal_hidden

        redeal_hidden(state.arrays, slots, rng)

    def base_policy(self) -> ExpertAgent:
        """The move batched PIMC keeps unless clearly beaten: the expert's."""
        return self.rollout

    def shortcut(self, view: CardsView) -> int | None:
        """No move is made without search (batched PIMC asks)."""
        return None

    def candidates(self, view: CardsView) -> list[int]:
        """The moves batched PIMC compares: the first move of each of the planner's
        ``options`` cheapest plans (ending the turn for an empty plan), the plans this search
        scores; once the draw pile is empty nothing is hidden, and the expert's exact move
        is the only one."""
        if view.draw_pile == 0:
            return [self.rollout.act(view, np.random.default_rng(0))]
        need = view.min_play if view.standard else 1
        moves: list[int] = []
        for cost, plays in self.planner.options(
            list(view.hand), [int(t) for t in view.piles], alive_cards(view), need, self.count,
            shorter=view.standard,
        ):
            move = first_move(view, plays)
            if cost < STUCK and view.legal[move] and move not in moves:
                moves.append(move)
        return moves or np.flatnonzero(view.legal).tolist()

    def choose(
        self, view: CardsView, hand: list[int], tops: list[int], alive: int, need: int,
        rng: np.random.Generator,
    ) -> list[tuple[int, int]]:
        standard = view.standard
        # Standard rules: a whole turn is played, then the hand refills. Original rules: one
        # card, then one card is drawn; a plan is judged by its first play.
        options = self.planner.options(hand, tops, alive, need, self.count, shorter=standard)
        unseen = [card for card in range(LOWEST, HIGHEST + 1) if alive >> card & 1]
        unseen = [card for card in unseen if card not in hand]
        draws = [
            rng.choice(unseen, size=min(len(unseen), HAND_SIZE), replace=False).tolist()
            for _ in range(self.budget)
        ]
        best_score, best_plays = float("inf"), options[0][1]
        scored: list[tuple[float, list]] = []
        for cost, plays in options:
            if cost >= STUCK:
                continue
            played = plays if standard else plays[:1]
            if not standard:  # the first play's own cost; the rest is replanned after the draw
                cost = plays[0][2]
            after, after_tops, after_alive = list(hand), list(tops), alive
            for card, pile, _ in played:
                after.remove(card)
                after_tops[pile] = card
                after_alive &= ~(1 << card)
            drawn = HAND_SIZE - len(after)
            total = 0.0
            for draw in draws:
                new_hand = sorted(after + draw[:drawn])
                if len(unseen) <= drawn:  # the draw pile is empty: nothing is hidden
                    run = longest_run(new_hand, after_tops)
                    total += STUCK * (len(new_hand) - len(run)) / max(len(new_hand), 1)
                else:  # the next turn's required plays (original rules: the next two plays)
                    total += self.lookahead.plan(new_hand, after_tops, after_alive, 2)[0]
            score = cost + total / len(draws)
            scored.append((score, played))
            if score < best_score:
                best_score, best_plays = score, played
        if self.guide is not None and scored:
            guided = self._guided(view, scored, best_score, rng)
            best_plays = best_plays if guided is None else guided  # [] (end the turn) counts
        return [(card, pile) for card, pile, _ in best_plays]

    def _guided(self, view: CardsView, scored: list[tuple[float, list]], best_score: float,
                rng: np.random.Generator) -> list | None:
        """The cheapest scored plan that starts with the guide's move, if it is within
        ``guide_margin`` of the best; else None."""
        move = self.guide.act(view, rng)
        near = [(score, played) for score, played in scored
                if score <= best_score + self.guide_margin
                and first_move(view, played) == move]
        return min(near, key=lambda sp: sp[0])[1] if near else None

    def __repr__(self) -> str:
        guide = "" if self.guide is None else f", guide={self.guide!r}"
        return f"SearchAgent(budget={self.budget}, options={self.count}{guide})"
