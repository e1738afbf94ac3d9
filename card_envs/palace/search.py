"""The Palace search agent: determinized search (PIMC) over worlds sampled from the seat's view.

A world keeps everything the view shows (the seat's hand, every face-up card, the cards
publicly known to be in each hand, the pile's counts, top and run, the cards out of the game,
the public history) and deals the cards the seat has not seen at random into the places it
cannot see: the rest of each other hand, every face-down card (its own included) and the draw
pile in a random order. The pile's order below its top run is not kept (the rules read only
its counts, top and run).

The search compares the distinct plays the ``heuristic`` compares (every copy or one copy of
each playable rank, a face-up card, blind, picking up); playouts use ``lowest_first`` for every
seat to the end of the game. It keeps the ``heuristic``'s rule play (its move without its own
sampling) unless another play beats it by more than one standard error on the same worlds. The
swap phase (``swap_phase=True``) is played by the ``heuristic``'s swap rule, without search.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from card_envs.core.agents import Agent
from card_envs.core.search import SearchAgent
from card_envs.palace.agents import (
    RANKS,
    HeuristicAgent,
    LowestFirstAgent,
    deal_unseen,
    pile_order,
)
from card_envs.palace.rules import Palace, PalaceState, PalaceView


def sample_world(game: Palace, view: PalaceView, rng: np.random.Generator,
                 observed: bool = False) -> PalaceState:
    """A state consistent with ``view`` (whose seat must be to act): the unseen cards dealt at
    random into the places it cannot see. ``observed=True`` also keeps every number in its
    facts (so that the world can be observed: tests), which a search does not need. Reads only
    the view."""
    if not view.to_act:
        raise ValueError(f"seat {view.player} is not to act: its view does not say who is")
    n, me = view.num_players, view.player
    hands, face_down, draw = deal_unseen(view, rng)
    if len(draw) != view.draw_size:
        raise AssertionError("the unseen cards do not fill the places the view leaves open")
    s = game.deal(hands, [np.repeat(RANKS, view.face_up[q]).tolist() for q in range(n)],
                  face_down, draw=draw, pile=pile_order(view),
                  out=np.repeat(RANKS, view.out_cards).tolist(), player=me,
                  swapping=view.swapping, observed=False,
                  known=[np.repeat(RANKS, view.known[q]).tolist() for q in range(n)])
    s.finished = list(view.finished)
    s.history = list(view.history)
    s.head = view.head
    if observed:
        s.observed = True
        game.copy_numbers(s, s.facts)
    return s


class PalaceSearchAgent(SearchAgent):
    """Determinized search (``PIMC`` of ``card_envs.core.search``) over worlds sampled from the
    view; budget: playouts per decision (one candidate play on one sampled world, then
    ``lowest_first`` for every seat to the end of the game). It keeps the ``heuristic``'s rule
    play unless another beats it by more than one standard error on the same worlds.

    With a ``guide`` (a trained policy, say) the guide plays alone while the draw pile lasts
    (and in the swap phase), and from the moment the draw pile is empty, where the game is
    decided, the search keeps the guide's move unless another beats it by more than one
    standard error: the policy's play, checked by search in the endgame."""

    default_budget = 100
    method = "pimc"
    margin = 1.0
    rule_rollouts = False  # playouts by the heuristic's rule play instead of lowest_first

    def __init__(self, game: Palace, budget: int | None = None, rollout: Agent | None = None,
                 opponents: Agent | None = None, guide: Agent | None = None):
        self._rule = HeuristicAgent(game)
        self._rule.samples = 0  # its rule play without its own search: the base of ours
        super().__init__(game, budget, rollout, opponents, guide)

    def act(self, view: PalaceView, rng: np.random.Generator) -> int:
        if self.guide is not None and (view.swapping or view.draw_size):
            return self.guide.act(view, rng)
        return super().act(view, rng)

    def default_rollout(self) -> Agent:
        if self.rule_rollouts:
            return self._rule
        return LowestFirstAgent(self.game)

    def sample_world(self, view: PalaceView, rng: np.random.Generator) -> PalaceState:
        return sample_world(self.game, view, rng)

    def base_policy(self) -> Agent:
        return self._rule

    def shortcut(self, view: PalaceView) -> int | None:
        if view.swapping:
            return self._rule.act(view, np.random.default_rng(0))  # the swap rule: no chance
        return None

    def redeal_hidden(self, state: Any, slots: np.ndarray, rng: np.random.Generator) -> None:
        """In twin slots ``slots`` of a batched ``state`` (each a copy of a world of this
        search), every card the seat to act cannot see dealt again as ``sample_world`` deals
        them, compiled (card_envs.palace.twin_worlds): batched PIMC's worlds
        (card_envs.core.batched_search) without a scalar world and a load for each."""
        from card_envs.palace.twin_worlds import redeal_hidden

        redeal_hidden(self.game, state.arrays, slots, rng)

    def candidates(self, view: PalaceView) -> list[int]:
        return self._rule._choices(view)

    def key(self, view: PalaceView) -> Hashable:
        return (view.hand.tobytes(), view.top, view.run, view.pile_size, tuple(view.hand_size),
                tuple(view.face_down_size), view.face_up.tobytes(), view.draw_size,
                tuple(view.finished))
