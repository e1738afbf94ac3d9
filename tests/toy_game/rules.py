"""High card rules: two seats, a few cards each; the higher card takes each round."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from card_envs.core.dtypes import INT8
from card_envs.core.game import Game, State, View, check_int, frozen


class HighCardState(State):
    """Hands, the cards played so far, the card led in the current round, rounds won."""

    __slots__ = ("hands", "played", "lead", "leader", "won", "unseen")
    _deep = ("hands", "played", "won", "unseen")

    def __init__(self, hands: list[list[int]], unseen: list[int]):
        super().__init__(player=0)
        self.hands = hands
        self.unseen = unseen  # cards nobody holds
        self.played: list[tuple[int, int]] = []  # (seat, card) of completed rounds, in order
        self.lead = -1  # the card led in the current round, -1 before the lead
        self.leader = 0
        self.won = [0, 0]


class HighCardView(View):
    """One seat's knowledge: its hand, every card played, the lead, the rounds won."""

    __slots__ = ("hand", "played", "lead", "won", "to_act")

    def __init__(self, player, legal, hand, played, lead, won, to_act):
        self.player, self.legal = player, legal
        self.hand, self.played, self.lead, self.won, self.to_act = hand, played, lead, won, to_act


class HighCard(Game):
    """Cards 0..num_cards-1 (all different); each seat gets ``hand_size``. The leader plays a
    card face up, the other seat answers; the higher card wins the round and leads the next.
    More rounds won wins (+1 / -1; 0 for a tie)."""

    name: ClassVar[str] = "high_card"
    score_name: ClassVar[str] = "rounds won"
    num_players = 2

    def __init__(self, hand_size: int = 3, num_cards: int = 9):
        self.hand_size = check_int("hand_size", hand_size, 1, 4)
        self.num_cards = check_int("num_cards", num_cards, 2 * self.hand_size, 12)
        self.num_actions = self.num_cards
        self.max_steps = 2 * self.hand_size
        self._config = {"hand_size": self.hand_size, "num_cards": self.num_cards}

    def init(self, rng: np.random.Generator) -> HighCardState:
        deck = rng.permutation(self.num_cards).tolist()
        k = self.hand_size
        return HighCardState([sorted(deck[:k]), sorted(deck[k : 2 * k])], sorted(deck[2 * k :]))

    def _legal_mask(self, s: HighCardState) -> np.ndarray:
        mask = np.zeros(self.num_actions, INT8)
        mask[s.hands[s.player]] = 1
        mask.setflags(write=False)  # masks are read-only (Game._legal_mask)
        return mask

    def _apply(self, s: HighCardState, action: int, rng: np.random.Generator):
        s.hands[s.player].remove(action)
        if s.lead < 0:
            s.lead, s.leader = action, s.player
            s.player = 1 - s.player
            return None
        winner = s.leader if s.lead > action else s.player
        s.played += [(s.leader, s.lead), (s.player, action)]
        s.won[winner] += 1
        s.lead, s.player = -1, winner
        if not s.hands[0] and not s.hands[1]:
            s.terminal = True
            return self.payoffs(s)
        return None

    def view(self, s: HighCardState, player: int) -> HighCardView:
        to_act = s.player == player and not s.done
        legal = self.legal_mask(s) if to_act else frozen(np.zeros(self.num_actions, INT8))
        return HighCardView(player, legal, tuple(s.hands[player]), tuple(s.played), s.lead,
                            tuple(s.won), to_act)

    def payoffs(self, s: HighCardState) -> np.ndarray:
        if not s.terminal:
            return np.zeros(2)
        sign = float(np.sign(s.won[0] - s.won[1]))
        return np.array([sign, -sign])

    def scores(self, s: HighCardState) -> np.ndarray:
        return np.array(s.won, dtype=np.int64)

    def action_name(self, action: int) -> str:
        return f"play {action}"

    def action_table(self) -> list[tuple[str, str]]:
        return [(f"0-{self.num_actions - 1}", "play card c (cards are numbered 0..num_cards-1)")]

    def check_invariants(self, s: HighCardState) -> None:
        cards = [*s.hands[0], *s.hands[1], *s.unseen, *(c for _, c in s.played)]
        cards += [s.lead] if s.lead >= 0 else []
        assert sorted(cards) == list(range(self.num_cards)), cards
        assert sum(s.won) == len(s.played) // 2

    def randomize_hidden(self, s: HighCardState, player: int, rng) -> HighCardState:
        new = s.copy()
        other = 1 - player
        pool = rng.permutation(new.hands[other] + new.unseen).tolist()
        k = len(new.hands[other])
        new.hands[other], new.unseen = sorted(pool[:k]), sorted(pool[k:])
        new.mask = None
        return new
