"""Environment factories and text rendering for Palace."""

from __future__ import annotations

from card_envs.core.cards import NUM_RANKS, RANK_NAMES
from card_envs.core.spec import GameSpec
from card_envs.palace.agents import AGENTS
from card_envs.palace.encoding import ENCODERS
from card_envs.palace.rules import BLIND_FAIL, PICKED_UP, Palace, PalaceState, Play


def cards_text(counts) -> str:
    """Rank counts as text, low to high, e.g. ``4 9 9 K`` (``-`` for none)."""
    return " ".join(RANK_NAMES[r] for r in range(NUM_RANKS) for _ in range(int(counts[r]))) or "-"


def play_text(play: Play) -> str:
    """One history entry in words, e.g. ``player_2 played 9 9 (burned the pile)``."""
    who = f"player_{play.seat}"
    if play.kind == PICKED_UP:
        return f"{who} picked up the pile ({_cards(play.count)})"
    if play.kind == BLIND_FAIL:
        return (f"{who} turned up {RANK_NAMES[play.rank]} blind, could not play it, and took "
                f"it with the pile ({_cards(play.count)})")
    where = {0: "", 1: "face-up ", 2: "blind: "}[play.kind]
    text = f"{who} played {where}{' '.join([RANK_NAMES[play.rank]] * play.count)}"
    return text + (" (burned the pile)" if play.burned else "")


def render(game: Palace, s: PalaceState, player: int | None = None) -> str:
    """The table as text: every card when ``player`` is None, else only what that seat sees."""
    n = game.num_players
    top = "empty" if s.top < 0 else f"top {RANK_NAMES[s.top]}" + (f" x{s.run}" if s.run > 1 else "")
    lines = [f"Palace, {n} players: draw pile {len(s.draw)}, pile {s.pile_size} ({top}), "
             f"out of the game {int(s.out_cards.sum())}"]
    for q in range(n):
        me = " (you)" if player == q else ""
        if player is None or player == q:
            hand = cards_text(s.hand[q])
        else:
            known = int(s.known[q].sum())
            hand = f"{s.hand_size[q]} cards"
            if known:
                hand += f", known {cards_text(s.known[q])}"
        down = f"{s.face_down_size[q]}"
        if player is None and s.face_down_size[q]:
            down += f" [{' '.join(RANK_NAMES[r] for r in sorted(s.face_down[q]))}]"
        status = f"  out ({_ordinal(s.finished.index(q) + 1)})" if s.is_out[q] else ""
        lines.append(f"player_{q}{me}: hand {hand} | face-up {cards_text(s.face_up[q])} | "
                     f"face-down {down}{status}")
    if s.history:
        lines.append("last play: " + play_text(s.history[-1]))
    if s.terminal:
        lines.append(f"game over: player_{s.loser} is left holding cards and loses")
    elif s.truncated:
        lines.append(f"game over: cut at the {game.max_steps}-step cap (everyone scores 0)")
    elif s.swapping:
        lines.append(f"swap phase: player_{s.player} may swap hand and face-up cards")
    else:
        lines.append(f"player_{s.player} to play")
    return "\n".join(lines)


def _cards(k: int) -> str:
    return f"{k} card" if k == 1 else f"{k} cards"


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")


SPEC = GameSpec(
    name="palace",
    version=0,
    gym_name="Palace",
    game_cls=Palace,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="lowest_first",
    strongest_agent="heuristic",
    num_players=(2, 3, 4, 5),
    variants=({}, {"num_players": 2}, {"num_players": 4, "reward": "original"},
              {"num_players": 5}, {"swap_phase": True}),
    batched="card_envs.palace.batched",
)

env, raw_env, gym_env = SPEC.factories()
