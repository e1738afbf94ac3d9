"""Environment factories and text rendering for simple tricks."""

from __future__ import annotations

from card_envs.core.board import backs, card, clickable, row, seat
from card_envs.core.board import board as make_board
from card_envs.core.cards import unicode_ok
from card_envs.core.make import factories
from card_envs.core.spec import ExactSolver, GameSpec, LadderSection
from card_envs.simple_tricks.agents import FirstPlayAgent, HeuristicAgent
from card_envs.simple_tricks.encoding import ENCODERS
from card_envs.simple_tricks.rules import SimpleTricks, TricksState, card_label
from card_envs.simple_tricks.solver import PimcAgent, SolverAgent, regret


def render(game: SimpleTricks, s: TricksState, player: int | None = None) -> str:
    """The table as text: every hand when ``player`` is None, else only that seat's own cards."""
    n, uni = game.num_values, unicode_ok()

    def cards(cs) -> str:
        return " ".join(card_label(c, n, uni) for c in sorted(cs)) or "-"

    done = s.tricks[0] + s.tricks[1]
    lines = [
        f"Simple tricks: {done} of {n} tricks played; won: player_0 {s.tricks[0]}, "
        f"player_1 {s.tricks[1]}"
    ]
    for p in range(2):
        me = " (you)" if player == p else ""
        if player is None or player == p:
            lines.append(f"player_{p}{me}: {cards(s.hands[p])}")
        else:
            lines.append(f"player_{p}: {len(s.hands[p])} cards")
    if s.last_trick is not None:
        leader, led, followed, winner = s.last_trick
        lines.append(
            f"last trick: player_{leader} led {card_label(led, n, uni)}, "
            f"player_{1 - leader} played {card_label(followed, n, uni)}: "
            f"player_{winner} won"
        )
    if s.terminal:
        t0, t1 = s.tricks
        verdict = "draw" if t0 == t1 else f"player_{0 if t0 > t1 else 1} wins"
        lines.append(f"game over: {verdict}")
    elif s.lead >= 0:
        lines.append(
            f"current trick: player_{s.leader} led {card_label(s.lead, n, uni)}; "
            f"player_{s.player} to follow"
        )
    else:
        lines.append(f"player_{s.player} to lead")
    return "\n".join(lines)


def move_label(game: SimpleTricks, s: TricksState, seat: int, action: int) -> str:
    """``play 3♠``: the card as the hand shows it."""
    return f"play {card_label(action, game.num_values, unicode_ok())}"


def move_text(
    game: SimpleTricks, before: TricksState, seat: int, action: int, after: TricksState
) -> str:
    """A played card, as everyone saw it."""
    return move_label(game, before, seat, action)


def _card(game: SimpleTricks, c: int, act: int | None = None, mark: str | None = None) -> dict:
    """A card drawn: its value, colour 0 as ♠ and colour 1 as ♥ (as the text shows them)."""
    return card(str(game.value(c)), game.colour(c), act, mark)


def board(game: SimpleTricks, s: TricksState, player: int | None = None) -> dict:
    """The table as data (card_envs/core/board.py): the two hands (the other face down unless
    ``player`` is None), the trick on the table and the last one; clicking a card plays it."""
    legal = game.legal_mask(s) if player is not None and s.player == player and not s.done \
        else None
    seats = []
    for p in range(2):
        if player is None or player == p:
            hand = [_card(game, c, clickable(legal, c) if p == player else None)
                    for c in sorted(s.hands[p])]
        else:
            hand = backs(len(s.hands[p]))
        tags = [f"{s.tricks[p]} trick{'s' if s.tricks[p] != 1 else ''}"]
        if s.lead < 0 and s.leader == p and not s.done:
            tags.append("leads")
        seats.append(seat(p, [row("hand", hand)], tags, acting=s.player == p and not s.done))
    center = []
    if s.lead >= 0:
        center.append(row(f"player_{s.leader} led", [_card(game, s.lead, mark="new")],
                          kind="pile"))
    if s.last_trick is not None:
        leader, led, followed, winner = s.last_trick
        center.append(row("last trick", [_card(game, led), _card(game, followed)],
                          note=f"player_{winner} won it", kind="pile"))
    done = s.tricks[0] + s.tricks[1]
    info = [f"{done} of {game.num_values} tricks played"]
    return make_board("tricks", seats, center, render(game, s, player).rsplit("\n", 1)[-1],
                      info)


# the agents by name: rule agents, the exact solver and its PIMC form
AGENTS = {
    "first_play": FirstPlayAgent,
    "heuristic": HeuristicAgent,
    "solver": SolverAgent,
    "ismcts": PimcAgent,
}


SPEC = GameSpec(
    name="simple_tricks",
    version=0,
    gym_name="SimpleTricks",
    game_cls=SimpleTricks,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="random",
    strongest_agent="heuristic",
    num_players=(2,),
    variants=({}, {"num_values": 2}, {"num_values": 5}, {"num_values": 26}),
    move_label=move_label,
    describe_move=move_text,
    batched="card_envs.simple_tricks.batched",
    features="card_envs.simple_tricks.features",
    ladder=(LadderSection("Simple tricks (N = 10)", 100),),
    board=board,
    exact_solver=ExactSolver(
        agent="solver",
        regret=regret,
        note="regret: tricks given away per game against perfect play, on {deals} deals x 2 "
        "seats against the `solver` agent (95% CI).",
    ),
)

env, raw_env, gym_env = factories(SPEC)
