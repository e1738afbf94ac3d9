"""Environment factories and text rendering for simple tricks."""

from __future__ import annotations

from card_envs.core.cards import unicode_ok
from card_envs.core.spec import GameSpec
from card_envs.simple_tricks.agents import FirstPlayAgent, HeuristicAgent
from card_envs.simple_tricks.encoding import ENCODERS
from card_envs.simple_tricks.rules import SimpleTricks, TricksState, card_label
from card_envs.simple_tricks.solver import PimcAgent, SolverAgent


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
)

env, raw_env, gym_env = SPEC.factories()
