"""The Thirty-One search agent: IS-MCTS over worlds sampled from the seat's view.

A world keeps everything the view shows (the seat's hand and the card it must place, the
discard pile, the cards other players took from it and still hold, lives, the knocker, the
phase) and deals every card the seat has not seen where it is now at random into the places
it cannot see: the other players' slots not filled from the discard pile, and the draw pile in
a random order. (The view does not say which cards went back into the deck at a reshuffle, so
those are redrawn with the rest.)

Playouts use ``expected_value`` for every seat and stop when the round is settled: the value is
then each seat's chance to win the match from the lives left, if each round from then on cost a
life to one of the players still in, uniformly (see ``match_chances``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import lru_cache

import numpy as np

from card_envs.core.agents import Agent
from card_envs.core.cards import DECK_SIZE, shuffled
from card_envs.core.search import SearchAgent
from card_envs.thirty_one.agents import ExpectedValueAgent
from card_envs.thirty_one.rules import (
    HAND_SIZE,
    NO_CARD,
    THIRTY_ONE,
    ThirtyOne,
    ThirtyOneState,
    ThirtyOneView,
)

HAND_TRIES = 30  # deals of one hand before the last one is kept anyway
OFFERS = 2  # cards a player chooses from in each turn it replays


def sample_world(game: ThirtyOne, view: ThirtyOneView, rng: np.random.Generator,
                 knock_level: Callable[[int], float] | None = None) -> ThirtyOneState:
    """A state consistent with ``view``: every card the seat has not seen dealt into the places
    it cannot see (see the module docstring): at random, or with ``knock_level`` as the other
    players might have built their hands (see ``_deal_hands``). Reads nothing but the view."""
    acting, phase = view.acting, view.phase
    # the card the player to act holds in its phase 2: seen by me if it is mine or a taken one
    to_place = view.drawn if view.drawn >= 0 else view.taken
    seen = np.zeros(DECK_SIZE, dtype=bool)
    seen[view.in_discard.astype(bool)] = True
    seen[list(view.hand)] = True
    for q in view.seating:
        for card in view.shown[q]:
            if card >= 0:
                seen[card] = True
    if to_place >= 0:
        seen[to_place] = True
    undealt = shuffled(np.flatnonzero(~seen).tolist(), rng)
    hands = _deal_hands(game, view, undealt, rng, knock_level)
    if phase and to_place < 0:  # another player placing a card drawn from the deck
        to_place = undealt.pop()
    deck = undealt
    if len(deck) != view.deck_size:
        raise AssertionError("the unseen cards do not fill the places the view leaves open")
    pile = np.flatnonzero(view.in_discard).tolist()
    if view.top >= 0:
        pile.remove(view.top)
        pile.append(view.top)  # the rest lie below in some order; only a reshuffle reads it
    s = game.deal(hands, discard=pile, deck=deck, lives=list(view.lives), opener=view.opener)
    if phase:
        s.deck.remove(to_place)  # ``deal`` put the card nobody holds under the deck
    s.shown = list(view.shown)  # rows are tuples
    s.player = acting
    s.knocker = view.knocker
    s.first_turn = view.first_turn
    s.phase = phase
    s.drawn = to_place if phase else NO_CARD
    s.from_discard = bool(phase and view.taken >= 0)
    s.round_turns = view.round_turns
    s.rounds = view.rounds
    s.settled = view.settled
    s.winner = view.winner
    return s


def _deal_hands(game: ThirtyOne, view: ThirtyOneView, undealt: list[int],
                rng: np.random.Generator, knock_level: Callable[[int], float] | None
                ) -> list[list[int]]:
    """Every seat's hand: the view's own hand, and for each other player still in the cards it
    showed plus cards from ``undealt`` (taken out of it) in its other slots.

    With ``knock_level`` the other hands are built as such a player might have built them:
    dealt at random, then for every turn the player has had this round, a card drawn from the
    undealt ones and kept in the slot where it raises the score most, if any (the card let go
    is undealt again); a hand is dealt again (up to ``HAND_TRIES`` times) while it would have
    knocked (score at least ``knock_level(turns played)`` at the start of a turn when knocking
    was legal) but did not, or knocked without such a score.
    """
    me, m, turns = view.player, len(view.seating), view.round_turns
    order = sorted(view.seating, key=lambda q: (q < view.opener, q))  # turn order this round

    def starts(q: int) -> list[int]:  # the turns played before each of q's turns this round
        return list(range(order.index(q), turns, m))

    knock_turn = starts(view.knocker)[-1] if view.knocker >= 0 else turns
    hands: list[list[int]] = []
    for q in range(game.num_players):
        if q == me or q not in view.seating:
            hands.append(list(view.hand) if q == me else [])
            continue
        free = [k for k in range(HAND_SIZE) if view.shown[q][k] < 0]
        for _ in range(HAND_TRIES if knock_level is not None else 1):
            left = undealt[:]
            hand = list(view.shown[q])
            for k in free:
                hand[k] = left.pop(int(rng.random() * len(left)))
            if knock_level is None or _plays_out(game, hand, free, left, starts(q), knock_turn,
                                                 q == view.knocker, knock_level, rng):
                break
        undealt[:] = left
        hands.append(hand)
    return hands


def _plays_out(game: ThirtyOne, hand: list[int], free: list[int], left: list[int],
               starts: list[int], knock_turn: int, knocker: bool,
               knock_level: Callable[[int], float], rng: np.random.Generator) -> bool:
    """Replay a player's turns on ``hand`` (see ``_deal_hands``), changing ``hand`` and ``left``
    in place; whether its knocks agree with ``knock_level``."""
    for start in starts:
        level = knock_level(start)
        if start == knock_turn and knocker:
            return game.score(hand) >= level
        if start < knock_turn and game.score(hand) >= level:
            return False  # it would have knocked
        if not left or not free:
            continue
        best, best_slot, best_j = game.score(hand), -1, -1
        for _ in range(OFFERS):  # the top discard and the deck's card: it keeps the better
            j = int(rng.random() * len(left))
            card = left[j]
            for k in free:
                trial = hand[:]
                trial[k] = card
                score = game.score(trial)
                if score > best:
                    best, best_slot, best_j = score, k, j
        if best_slot >= 0:
            card = left[best_j]
            left[best_j] = hand[best_slot]
            hand[best_slot] = card
    return True


def ev_knock_level(turns: int) -> float:
    """The score at which ``expected_value`` knocks after ``turns`` turns of the round."""
    return min(THIRTY_ONE, ExpectedValueAgent.knock_at + turns // ExpectedValueAgent.knock_every)


@lru_cache(maxsize=100_000)
def _chances_sorted(lives: tuple[int, ...]) -> tuple[float, ...]:
    """``match_chances`` for lives in ascending order (all above 0)."""
    if len(lives) == 1:
        return (1.0,)
    out = [0.0] * len(lives)
    for j in range(len(lives)):
        after = list(lives)
        after[j] -= 1
        alive = [i for i in range(len(lives)) if after[i] > 0]
        order = sorted(alive, key=lambda i: after[i])
        sub = _chances_sorted(tuple(after[i] for i in order))
        for i, chance in zip(order, sub, strict=True):
            out[i] += chance / len(lives)
    return tuple(out)


def match_chances(lives) -> list[float]:
    """Each seat's chance to win the match if every round from now on cost one life to a player
    still in, chosen uniformly (0 for a player who is out)."""
    alive = sorted((i for i in range(len(lives)) if lives[i] > 0), key=lambda i: lives[i])
    sub = _chances_sorted(tuple(lives[i] for i in alive))
    out = [0.0] * len(lives)
    for i, chance in zip(alive, sub, strict=True):
        out[i] = chance
    return out


class ThirtyOneSearchAgent(SearchAgent):
    """Determinized search (``PIMC`` of ``card_envs.core.search``) over worlds sampled from the
    view; budget: playouts per decision (one candidate move on one sampled world, then
    ``expected_value`` for every seat to the end of the round, valued by ``match_chances``).
    It keeps ``expected_value``'s move unless another beats it by more than one standard error
    on the same worlds."""

    default_budget = 200
    method = "pimc"
    margin = 1.0
    built_hands = True  # sample other hands as built by play (False: uniformly)

    def default_rollout(self) -> Agent:
        return ExpectedValueAgent(self.game)

    def sample_world(self, view: ThirtyOneView, rng: np.random.Generator) -> ThirtyOneState:
        return sample_world(self.game, view, rng, ev_knock_level if self.built_hands else None)

    def key(self, view: ThirtyOneView) -> Hashable:
        return (tuple(view.hand), view.drawn, view.top, view.phase, view.knocker, view.rounds,
                tuple(view.lives))

    def leaf_value(self, s: ThirtyOneState, root: ThirtyOneView) -> np.ndarray | None:
        if s.rounds == root.rounds:
            return None
        n = self.game.num_players
        chances = np.array(match_chances(s.lives))
        return chances + (1.0 - chances) * (-1.0 / (n - 1))
