"""Palace's per-action facts for the per-action policies (card_envs.core.action_features)."""

from __future__ import annotations

import numpy as np
import torch as th

from card_envs.core.action_features import ActionFeatures, pad
from card_envs.core.encoding import Encoder
from card_envs.core.game import Game
from card_envs.palace.rules import BURN_RUN, NUM_PLAY_ACTIONS, PLAYABLE, TEN


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
        return pad(parts, self.num_features)


FACT_SETS = {"basic": PalaceFeatures}
