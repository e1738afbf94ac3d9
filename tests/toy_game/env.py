"""High card's spec: its identity, rules, encoder, agents and text rendering, declared once."""

from __future__ import annotations

from card_envs.core.make import factories
from card_envs.core.spec import GameSpec
from tests.toy_game.agents import AGENTS
from tests.toy_game.encoding import ENCODERS
from tests.toy_game.rules import HighCard, HighCardState


def render(game: HighCard, s: HighCardState, player: int | None = None) -> str:
    """The table as text: both hands when ``player`` is None, else only that seat's."""
    lines = [f"High card: rounds won player_0 {s.won[0]}, player_1 {s.won[1]}"]
    for p in range(2):
        if player is None or player == p:
            me = " (you)" if player == p else ""
            lines.append(f"player_{p}{me}: {' '.join(map(str, s.hands[p])) or '-'}")
        else:
            lines.append(f"player_{p}: {len(s.hands[p])} cards")
    if s.terminal:
        lines.append("game over")
    elif s.lead >= 0:
        lines.append(f"player_{s.leader} led {s.lead}; player_{s.player} to answer")
    else:
        lines.append(f"player_{s.player} to lead")
    return "\n".join(lines)


SPEC = GameSpec(
    name="high_card",
    version=0,
    gym_name="HighCard",
    game_cls=HighCard,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="cheapest_win",
    strongest_agent="cheapest_win",
    num_players=(2,),
    variants=({}, {"hand_size": 1}, {"hand_size": 4, "num_cards": 12}),
    batched="tests.toy_game.batched",
    features="tests.toy_game.features",
)

env, raw_env, gym_env = factories(SPEC)
