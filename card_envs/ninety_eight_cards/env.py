"""Environment factories and text rendering for 98 Cards."""

from __future__ import annotations

from card_envs.core.board import backs, card, row, seat
from card_envs.core.board import board as make_board
from card_envs.core.make import factories
from card_envs.core.spec import GameSpec, LadderSection
from card_envs.ninety_eight_cards.agents import GreedyAgent
from card_envs.ninety_eight_cards.encoding import ENCODERS
from card_envs.ninety_eight_cards.expert import ExpertAgent, SearchAgent
from card_envs.ninety_eight_cards.rules import (
    ASCENDING,
    END_TURN,
    HAND_SIZE,
    NUM_CARDS,
    CardsState,
    NinetyEightCards,
)


def render(game: NinetyEightCards, s: CardsState, player: int | None = None) -> str:
    """The table as text (the player sees everything but the draw pile's order)."""
    lines = [
        f"98 Cards ({game.rules} rules): {s.played} of {NUM_CARDS} cards played, "
        f"{game.draw_pile_size(s)} in the draw pile"
    ]
    piles = "  ".join(
        f"{p}{'^' if ASCENDING[p] else 'v'} {top:>3}" for p, top in enumerate(s.piles)
    )
    lines.append(f"piles: {piles}   (^ ascending, v descending)")
    lines.append("hand:  " + "  ".join(f"[{i}] {c}" for i, c in enumerate(s.hand)))
    if s.last_play is not None:
        card, pile, below = s.last_play
        trick = (
            " (tens trick)" if abs(card - below) == 10 and (card < below) == ASCENDING[pile] else ""
        )
        lines.append(f"last play: {card} on pile {p_name(pile)} over {below}{trick}")
    if s.terminal:
        verdict = "won: every card played" if s.played == NUM_CARDS else "no legal move left"
        lines.append(f"game over, {verdict}; score {s.played}")
    elif game.standard:
        need = game.min_play(s)
        lines.append(
            f"this turn: {s.turn_played} played"
            + (f", {need} more required" if need else ", you may end the turn")
        )
    return "\n".join(lines)


def move_label(game: NinetyEightCards, s: CardsState, seat: int, action: int) -> str:
    """``play 45 on 2v (60 -> 45)``: the card, the pile and how its top changes."""
    if action == END_TURN:
        return "end turn (draw back up to 8)"
    pile, slot = divmod(action, HAND_SIZE)
    card, top = s.hand[slot], int(s.piles[pile])
    return f"play {card} on {p_name(pile)} ({top} -> {card})"


def move_group(
    game: NinetyEightCards, s: CardsState, seat: int, action: int
) -> tuple[str, str] | None:
    """The moves shown a pile per line: ``2v (top 60): 45 ...``; ending the turn alone."""
    if action == END_TURN:
        return None
    pile, slot = divmod(action, HAND_SIZE)
    return f"{p_name(pile)} (top {int(s.piles[pile])})", str(s.hand[slot])


def move_text(
    game: NinetyEightCards, before: CardsState, seat: int, action: int, after: CardsState
) -> str:
    """``play 45 on 2v`` (or ``end turn``)."""
    if action == END_TURN:
        return "end turn"
    pile, slot = divmod(action, HAND_SIZE)
    return f"play {before.hand[slot]} on {p_name(pile)}"


def board(game: NinetyEightCards, s: CardsState, player: int | None = None) -> dict:
    """The table as data (card_envs/core/board.py): the four piles (two up from 1, two down
    from 100), the hand and the draw pile. Pick a card of the hand, then a pile to play it."""
    legal = game.legal_mask(s) if not s.done else None
    hand = [card(str(c), pick=f"slot{k}" if legal is not None else None)
            for k, c in enumerate(s.hand)]
    last = s.last_play[0] if s.last_play is not None else None
    piles = []
    for p, top in enumerate(s.piles):
        targets = {f"slot{k}": p * HAND_SIZE + k for k in range(len(s.hand))
                   if legal is not None and legal[p * HAND_SIZE + k]}
        arrow = "up from 1" if ASCENDING[p] else "down from 100"
        mark = "new" if last is not None and top == last else None
        piles.append(row(f"{p_name(p)} {arrow}", [card(str(int(top)), mark=mark)],
                         kind="pile", targets=targets))
    draw = game.draw_pile_size(s)
    piles.append(row("draw pile", backs(min(draw, 1)), count=draw, kind="pile"))
    tags = [f"{s.played} of {NUM_CARDS} played"]
    if game.standard and not s.done:
        tags.append(f"{s.turn_played} played this turn")
    lines = render(game, s, player).split("\n")
    info = [line for line in lines[3:] if line.startswith("last play")]
    return make_board("ninety_eight", [seat(0, [row("hand", hand)], tags, acting=not s.done)],
                      piles, lines[-1] if len(lines) > 3 else "", info)


def p_name(pile: int) -> str:
    return f"{pile}{'^' if ASCENDING[pile] else 'v'}"


# the agents by name: the greedy rule agent, the expert planner and its sampling search
AGENTS = {"greedy": GreedyAgent, "expert": ExpertAgent, "ismcts": SearchAgent}


SPEC = GameSpec(
    name="ninety_eight_cards",
    version=0,
    gym_name="NinetyEightCards",
    game_cls=NinetyEightCards,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="random",
    strongest_agent="greedy",
    num_players=(1,),
    move_label=move_label,
    describe_move=move_text,
    move_group=move_group,
    board=board,
    variants=(
        {},
        {"reward": "original"},
        {"rules": "original"},
        {"rules": "original", "reward": "original"},
    ),
    batched="card_envs.ninety_eight_cards.batched",
    features="card_envs.ninety_eight_cards.features",
    potentials="card_envs.ninety_eight_cards.shaping",
    ladder=(LadderSection("98 Cards, standard rules (The Game, solo)", 2000),
            LadderSection("98 Cards, original rules", 2000, {"rules": "original"})),
)

env, raw_env, gym_env = factories(SPEC)
