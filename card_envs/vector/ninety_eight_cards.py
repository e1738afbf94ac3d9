"""98 Cards over a batch of games (the rules of ``card_envs.ninety_eight_cards.rules``).

State (B games): ``deck`` (B, 98) the draw pile in order, drawn from ``deck_pos``; ``hand``
(B, 8) the hand's card values sorted ascending, then 0 for each empty slot (the scalar
``slots``); ``hand_size`` (B,); ``tops`` (B, 4) the pile tops; ``in_draw`` (B, 98) float32,
1 for each card (value - 2) still in the draw pile; ``played`` and ``turn_played`` (B,).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.ninety_eight_cards.encoding import JUMP_FEATURES, PER_100
from card_envs.ninety_eight_cards.rules import (
    END_TURN,
    FITS,
    HAND_SIZE,
    HIGHEST,
    JUMPS,
    LOWEST,
    NUM_CARDS,
    NUM_PILES,
    START_TOPS,
    NinetyEightCards,
)
from card_envs.vector.base import Dealer, VectorGame, VectorState, random_actions

_FITS = FITS.reshape(-1)
_JUMP_FEATURES = JUMP_FEATURES.reshape(-1)
_JUMPS = JUMPS.reshape(-1)
# the flat index of FITS / JUMPS[pile, top, card] is (pile * 101 + top) * 101 + card
_PILE_BASE = (np.arange(NUM_PILES) * 101)[None, :]
_SLOT = np.arange(HAND_SIZE)
_NO_CARD = 1000  # sorts after every card: the empty slots' key while the hand is sorted


class CardsBatch(VectorState):
    """B games of 98 Cards in progress (see the module docstring)."""

    deck: np.ndarray
    deck_pos: np.ndarray
    hand: np.ndarray
    hand_size: np.ndarray
    tops: np.ndarray
    in_draw: np.ndarray
    played: np.ndarray
    turn_played: np.ndarray


class NinetyEightCardsVector(VectorGame):
    """Batched 98 Cards; ``NinetyEightCardsVector(rules=..., reward=...)`` as the scalar game."""

    name = "ninety_eight_cards"
    numba_kernels = "cards"

    def __init__(self, rules: str = "standard", reward: str = "default"):
        super().__init__(NinetyEightCards(rules=rules, reward=reward))
        self.standard = self.game.standard
        self.shaped = self.game.reward == "original"

    def observation_size(self, encoding: str = "default") -> int:
        return 4 + 8 + 32 + 4 + NUM_CARDS if encoding == "default" else 13

    # --- dealing and drawing --------------------------------------------------------------
    def _new_state(self, num_envs: int, dealer: Dealer) -> CardsBatch:
        s = CardsBatch()
        s.dealer = dealer
        s.current_player = np.zeros(num_envs, np.int64)
        s.terminated = np.zeros(num_envs, bool)
        s.truncated = np.zeros(num_envs, bool)
        s.rewards = np.zeros((num_envs, 1))
        s.steps = np.zeros(num_envs, np.int64)
        s.mask = np.zeros((num_envs, self.num_actions), np.int8)
        s.deck = np.zeros((num_envs, NUM_CARDS), np.int64)
        s.deck_pos = np.zeros(num_envs, np.int64)
        s.hand = np.zeros((num_envs, HAND_SIZE), np.int64)
        s.hand_size = np.zeros(num_envs, np.int64)
        s.tops = np.zeros((num_envs, NUM_PILES), np.int64)
        s.in_draw = np.zeros((num_envs, NUM_CARDS), np.float32)
        s.played = np.zeros(num_envs, np.int64)
        s.turn_played = np.zeros(num_envs, np.int64)
        return s

    def _deal(self, s: CardsBatch, slots: np.ndarray) -> None:
        # NinetyEightCards.init: the cards 2..99 shuffled, the first 8 drawn
        perms = s.dealer.permutations(slots, NUM_CARDS)
        if self.backend == "numba":
            self.kernels.cards_deal(FITS, s.deck, s.deck_pos, s.hand, s.hand_size, s.tops,
                                    s.in_draw, s.played, s.turn_played, s.terminated, s.mask,
                                    slots, perms, self.standard)
            return
        s.deck[slots] = perms + LOWEST
        s.deck_pos[slots] = 0
        s.hand[slots] = 0
        s.hand_size[slots] = 0
        s.tops[slots] = START_TOPS
        s.in_draw[slots] = 1.0
        s.played[slots] = 0
        s.turn_played[slots] = 0
        self._refill(s, slots)
        self._update_mask(s, slots)

    def _refill(self, s: CardsBatch, slots: np.ndarray) -> None:
        """Draw back up to 8 cards (as many as the draw pile has), keeping the hand sorted."""
        pos = s.deck_pos[slots]
        count = np.minimum(HAND_SIZE - s.hand_size[slots], NUM_CARDS - pos)
        drawing = count > 0
        if not drawing.any():
            return
        slots, pos, count = slots[drawing], pos[drawing], count[drawing]
        taken = _SLOT < count[:, None]
        at = np.minimum(pos[:, None] + _SLOT, NUM_CARDS - 1)
        drawn = s.deck[slots[:, None], at]
        rows, cols = np.nonzero(taken)
        s.in_draw[slots[rows], drawn[rows, cols] - LOWEST] = 0.0
        hand = s.hand[slots]
        keys = np.concatenate(
            [np.where(hand > 0, hand, _NO_CARD), np.where(taken, drawn, _NO_CARD)], axis=1
        )
        keys.sort(axis=1)
        keys = keys[:, :HAND_SIZE]
        s.hand[slots] = np.where(keys == _NO_CARD, 0, keys)
        s.hand_size[slots] += count
        s.deck_pos[slots] = pos + count

    def _min_play(self, s: CardsBatch, slots: np.ndarray) -> np.ndarray:
        need = np.where(s.deck_pos[slots] < NUM_CARDS, 2, 1) - s.turn_played[slots]
        return np.maximum(need, 0)

    # --- the rules ------------------------------------------------------------------------
    def _update_mask(self, s: CardsBatch, slots: np.ndarray) -> None:
        # NinetyEightCards._update_legal: which slot fits which pile, the end of the turn once
        # the minimum is played; the game ends when nothing is legal or every card is played
        tops = s.tops[slots]
        hand = s.hand[slots]
        fits = _FITS[((_PILE_BASE + tops) * 101)[:, :, None] + hand[:, None, :]]
        mask = s.mask
        mask[slots, :END_TURN] = fits.reshape(len(slots), END_TURN)
        if self.standard:
            mask[slots, END_TURN] = self._min_play(s, slots) == 0
        all_played = (s.hand_size[slots] == 0) & (s.deck_pos[slots] == NUM_CARDS)
        over = ~mask[slots].any(axis=1) | all_played
        if over.any():
            s.terminated[slots[over]] = True
        mask[slots[over]] = 0

    def _apply_compiled(self, s: CardsBatch, live: np.ndarray, action: np.ndarray) -> None:
        self.kernels.cards_step(FITS, s.deck, s.deck_pos, s.hand, s.hand_size, s.tops, s.in_draw,
                                s.played, s.turn_played, s.terminated, s.truncated, s.rewards,
                                s.steps, s.mask, live, action, self.standard, self.shaped,
                                self.max_steps)

    def _apply(self, s: CardsBatch, live: np.ndarray, action: np.ndarray) -> None:
        self._play(s, live, action)
        self._update_mask(s, live)

    def _play(self, s: CardsBatch, live: np.ndarray, action: np.ndarray) -> None:
        ending = action == END_TURN
        if ending.any():
            at = live[ending]
            s.turn_played[at] = 0
            self._refill(s, at)
        plays = ~ending
        if not plays.any():
            return
        at, action = live[plays], action[plays]
        pile, slot = action // HAND_SIZE, action % HAND_SIZE
        hand = s.hand[at]
        card = hand[np.arange(len(at)), slot]
        # the card leaves its slot; the higher slots move down one
        shifted = np.concatenate([hand, np.zeros((len(at), 1), np.int64)], axis=1)
        s.hand[at] = shifted[np.arange(len(at))[:, None], _SLOT + (_SLOT >= slot[:, None])]
        s.hand_size[at] -= 1
        s.tops[at, pile] = card
        s.played[at] += 1
        if self.standard:
            s.turn_played[at] += 1
        else:
            self._refill(s, at)
        s.rewards[at, 0] = s.played[at] - 1 if self.shaped else 1.0

    def payoffs(self, s: CardsBatch) -> np.ndarray:
        won = np.where(s.played == NUM_CARDS, 1.0, -1.0)
        return np.where(s.terminated, won, 0.0)[:, None]

    def scores(self, s: CardsBatch) -> np.ndarray:
        return s.played.astype(np.float64)[:, None]

    # --- observations ---------------------------------------------------------------------
    def _observe_compiled(self, s: CardsBatch, encoding: str, rows: np.ndarray,
                          seats: np.ndarray) -> np.ndarray:
        obs = np.empty((len(rows), self.observation_size(encoding)), np.float32)
        return self.kernels.cards_observe(PER_100, JUMP_FEATURES, s.deck_pos, s.hand, s.tops,
                                          s.in_draw, s.played, s.turn_played, self.standard,
                                          rows, encoding == "default", obs)

    def _observe(self, s: CardsBatch, encoding: str, seats: np.ndarray) -> np.ndarray:
        b = len(seats)
        tops, hand = s.tops, s.hand
        if encoding == "original":
            obs = np.empty((b, 1 + NUM_PILES + HAND_SIZE), np.float32)
            obs[:, 0] = 99 - s.played
            board = np.concatenate([tops, hand], axis=1)
            board.sort(axis=1)
            obs[:, 1:] = board
            return obs
        obs = np.empty((b, self.observation_size()), np.float32)
        obs[:, :4] = PER_100[tops]
        obs[:, 4:12] = PER_100[hand]
        obs[:, 12:44] = _JUMP_FEATURES[
            ((_PILE_BASE + tops) * 101)[:, :, None] + hand[:, None, :]
        ].reshape(b, 32)
        obs[:, 44] = (NUM_CARDS - s.deck_pos) / (NUM_CARDS - HAND_SIZE)
        obs[:, 45] = s.played / NUM_CARDS
        obs[:, 46] = s.turn_played / HAND_SIZE
        obs[:, 47] = self._min_play(s, np.arange(b)) / 2.0 if self.standard else 0.0
        obs[:, 48:] = s.in_draw
        return obs


# --- the batched rule agent: reads the hand, the pile tops and the mask ----------------------
def greedy(engine: NinetyEightCardsVector, s: CardsBatch, rng: np.random.Generator) -> np.ndarray:
    """GreedyAgent for every game: the play that moves a pile least; under standard rules,
    once the minimum is played, only a free move (jump <= 0), else the end of the turn."""
    b = s.num_envs
    costs = _JUMPS[((_PILE_BASE + s.tops) * 101)[:, :, None] + s.hand[:, None, :]].reshape(b, 32)
    plays = s.mask[:, :END_TURN] != 0
    costs = np.where(plays, costs, 1 << 30)
    best = costs.argmin(axis=1)
    if not engine.standard:
        return best
    may_end = s.mask[:, END_TURN] != 0
    cheap = costs[np.arange(b), best] <= 0  # GreedyAgent.free_jump; False when no play
    return np.where(may_end & ~cheap, END_TURN, best)


AGENTS = {"random": random_actions, "greedy": greedy}

assert HIGHEST - LOWEST + 1 == NUM_CARDS


def vector_env(num_envs: int = 1, **kwargs: Any):
    """The Gymnasium VectorEnv of 98 Cards (the registry's vector entry point)."""
    from card_envs.vector.gym_env import make_vector_env

    return make_vector_env("ninety_eight_cards", num_envs=num_envs, **kwargs)
