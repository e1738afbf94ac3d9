"""Rule-based agents for Palace. They read only their seat's view."""

from __future__ import annotations

import numpy as np

from card_envs.core.agents import BaseAgent
from card_envs.core.cards import NUM_RANKS, shuffled
from card_envs.palace.rules import (
    BLIND,
    BURN_RUN,
    FACE_UP_BASE,
    PICK_UP,
    SWAP_BASE,
    SWAP_DONE,
    WILDS,
    Palace,
    PalaceState,
    PalaceView,
)

# Ranks in the order lowest_first spends them: non-wild ranks low to high, then the wilds.
SPEND_ORDER = tuple([r for r in range(NUM_RANKS) if r not in WILDS] + list(WILDS))

# How much a card is worth showing face-up (rank index -> value): 4 < 5 < 6 < 8 < ... < A,
# then the wilds 7 < 3 < 2 < 10.
KEEP_VALUE = (11, 10, 0, 1, 2, 9, 3, 4, 12, 5, 6, 7, 8)
RANKS = np.arange(NUM_RANKS)


def lowest_first_action(legal: np.ndarray, hand: np.ndarray) -> int:
    """lowest_first's choice from a legal mask and the hand: every copy of the first playable
    rank in SPEND_ORDER (one card from face-up), else blind, else pick up."""
    # The choice of rank depends on the mask alone; rollouts ask for it millions of times.
    key = legal.tobytes()
    choice = _FIRST_CHOICE.get(key)
    if choice is None:
        if len(_FIRST_CHOICE) > 100_000:
            _FIRST_CHOICE.clear()
        choice = _first_choice(legal)
        _FIRST_CHOICE[key] = choice
    if choice < FACE_UP_BASE:
        return 13 * (int(hand[choice]) - 1) + choice
    return choice


def _first_choice(legal: np.ndarray) -> int:
    """The rank of lowest_first's hand play (0..12), or its face-up, blind or pick-up action."""
    if legal[BLIND]:
        return BLIND
    for rank in SPEND_ORDER:
        if legal[rank]:
            return rank
    for rank in SPEND_ORDER:
        if legal[FACE_UP_BASE + rank]:
            return FACE_UP_BASE + rank
    return PICK_UP


_FIRST_CHOICE: dict[bytes, int] = {}


# --- the cards a seat cannot see, dealt at random (the heuristic's and the search's worlds) --
def deal_unseen(view: PalaceView, rng: np.random.Generator
                ) -> tuple[list[list[int]], list[list[int]], list[int]]:
    """The cards ``view``'s seat cannot see, shuffled into the places it cannot see: every
    hand (the seat's own as it is, the others' known cards kept), every face-down stack and
    the draw pile, as rank lists. Reads only the view."""
    n, me = view.num_players, view.player
    seen = (view.hand + view.face_up.sum(axis=0) + view.pile + view.out_cards
            + view.known.sum(axis=0) - view.known[me])
    pool = shuffled(np.repeat(RANKS, 4 - seen).tolist(), rng)
    hands, face_down, at = [], [], 0
    for q in range(n):
        if q == me:
            hands.append(np.repeat(RANKS, view.hand).tolist())
        else:
            unknown = view.hand_size[q] - int(view.known[q].sum())
            hands.append(np.repeat(RANKS, view.known[q]).tolist() + pool[at : at + unknown])
            at += unknown
        face_down.append(pool[at : at + view.face_down_size[q]])
        at += view.face_down_size[q]
    return hands, face_down, pool[at:]


def pile_order(view: PalaceView) -> list[int]:
    """A pile, bottom to top, with the view's counts, top and run (all the rules read)."""
    if view.top < 0:
        return []
    top, run = view.top, view.run
    rest = view.pile.astype(np.int64)
    rest[top] -= run
    others = np.repeat(RANKS, np.where(RANKS == top, 0, rest)).tolist()
    # Earlier cards of the top rank sit below a card of another rank, as they must have.
    return [top] * int(rest[top]) + others + [top] * run



class LowestFirstAgent(BaseAgent):
    """Plays its lowest legal non-wild rank (every copy of it in hand); wilds only when it
    must, lowest first (2, 3, 7, 10); picks up only when nothing else is legal; never swaps."""

    name = "lowest_first"

    def act(self, view: PalaceView, rng: np.random.Generator) -> int:
        if view.swapping:
            return SWAP_DONE
        return lowest_first_action(view.legal, view.hand)


class HeuristicAgent(BaseAgent):
    """Plays by rule while the draw pile lasts, then searches.

    - Swap phase: shows its strongest cards face-up (10, 2, 3, 7, then A down to 4).
    - While the draw pile lasts: like ``lowest_first``, but it first finishes a
      four-of-a-kind on the pile when it can (the pile burns and it plays again).
    - Once the draw pile is empty, where the game is decided: for each distinct choice
      (each playable rank with all its copies, one copy, picking up) it imagines
      ``samples`` deals of the cards it cannot see, consistent with its view (known cards
      stay where they are known to be), plays every choice out on the same deals with
      everyone playing ``lowest_first``, and keeps the choice that loses least often.
      Nothing but its own view goes into the imagined deals.
    """

    name = "heuristic"
    samples = 8
    rollout_cap = 400

    def act(self, view: PalaceView, rng: np.random.Generator) -> int:
        if view.swapping:
            return self._swap(view)
        rule = self._rule_play(view)
        if view.draw_size or not isinstance(self.game, Palace):
            return rule
        choices = self._choices(view)
        if len(choices) < 2:
            return rule
        return self._search(view, choices, rule, rng)

    def _rule_play(self, view: PalaceView) -> int:
        """lowest_first's play, unless a four-of-a-kind burn is on offer."""
        top, legal = view.top, view.legal
        if top >= 0 and view.hand_size[view.player] and legal[top]:
            if view.run + int(view.hand[top]) >= BURN_RUN:
                return 13 * (int(view.hand[top]) - 1) + top
        elif top >= 0 and legal[FACE_UP_BASE + top] and view.run + 1 >= BURN_RUN:
            return FACE_UP_BASE + top
        return lowest_first_action(legal, view.hand)

    def _choices(self, view: PalaceView) -> list[int]:
        """The distinct plays worth comparing: all copies or one of each playable rank, pick-up."""
        legal = view.legal
        if legal[BLIND]:
            return [BLIND, PICK_UP] if legal[PICK_UP] else [BLIND]
        choices = []
        for rank in range(NUM_RANKS):
            if legal[rank]:
                held = int(view.hand[rank])
                choices.append(13 * (held - 1) + rank)
                if held > 1:
                    choices.append(rank)
            elif legal[FACE_UP_BASE + rank]:
                choices.append(FACE_UP_BASE + rank)
        if legal[PICK_UP]:
            choices.append(PICK_UP)
        return choices

    def _search(self, view: PalaceView, choices: list[int], rule: int,
                rng: np.random.Generator) -> int:
        """The choice with the best mean rollout result over imagined deals (ties: the rule's)."""
        game: Palace = self.game
        totals = dict.fromkeys(choices, 0.0)
        for _ in range(self.samples):
            deal = self.imagine(view, rng)
            for action in choices:
                s = deal.copy()
                game.apply(s, action, rng)
                totals[action] += self._rollout(s, view.player, rng)
        return max(choices, key=lambda a: (totals[a], a == rule))

    def _rollout(self, s: PalaceState, me: int, rng: np.random.Generator) -> float:
        """Play ``s`` out with lowest_first everywhere: -1 if ``me`` loses, +1 if out, 0 if cut."""
        game = self.game
        for _ in range(self.rollout_cap):
            if s.is_out[me]:
                return 1.0
            if s.terminal or s.truncated:
                return -1.0 if s.terminal else 0.0
            game.apply(s, lowest_first_action(game.legal_mask(s), s.hand[s.player]), rng)
        return 0.0

    def imagine(self, view: PalaceView, rng: np.random.Generator) -> PalaceState:
        """A deal consistent with ``view``: the unseen cards shuffled into the hidden places."""
        n, me = view.num_players, view.player
        hands, face_down, draw = deal_unseen(view, rng)
        game: Palace = self.game
        return game.deal(hands, [np.repeat(RANKS, view.face_up[q]).tolist() for q in range(n)],
                         face_down, draw=draw, pile=pile_order(view),
                         out=np.repeat(RANKS, view.out_cards).tolist(), player=me,
                         swapping=False, observed=False,
                         known=[np.repeat(RANKS, view.known[q]).tolist() for q in range(n)])

    def _swap(self, view: PalaceView) -> int:
        """Swap the most valuable hand card for the least valuable face-up card, or stop."""
        p = view.player
        held = [r for r in range(NUM_RANKS) if view.hand[r]]
        shown = [r for r in range(NUM_RANKS) if view.face_up[p, r]]
        best = max(held, key=lambda r: KEEP_VALUE[r])
        worst = min(shown, key=lambda r: KEEP_VALUE[r])
        if KEEP_VALUE[best] > KEEP_VALUE[worst]:
            return SWAP_BASE + NUM_RANKS * best + worst
        return SWAP_DONE

