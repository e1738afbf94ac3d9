"""Environment factories and text rendering for Palace."""

from __future__ import annotations

from card_envs.core.board import backs, card, clickable, row, seat
from card_envs.core.board import board as make_board
from card_envs.core.cards import NUM_RANKS, RANK_NAMES
from card_envs.core.make import factories
from card_envs.core.spec import GameSpec, LadderSection
from card_envs.palace.agents import HeuristicAgent, LowestFirstAgent
from card_envs.palace.encoding import ENCODERS
from card_envs.palace.rules import (
    BLIND,
    BLIND_FAIL,
    FACE_UP_BASE,
    PICK_UP,
    PICKED_UP,
    Palace,
    PalaceState,
    Play,
)
from card_envs.palace.search import PalaceSearchAgent


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


def _rank_cards(counts, act=None, mark: str | None = None) -> list:
    """Cards by rank counts, low to high (Palace has no suits); ``act(rank)`` the action of
    clicking one (or None)."""
    return [card(RANK_NAMES[r], None, act(r) if act else None, mark)
            for r in range(NUM_RANKS) for _ in range(int(counts[r]))]


def board(game: Palace, s: PalaceState, player: int | None = None) -> dict:
    """The table as data (card_envs/core/board.py): each seat's face-down cards with its
    face-up cards on them and its hand, the draw pile, the pile and the cards out of play;
    only what ``player`` sees (every card when None). A card click plays one card of its
    rank, a face-down card is played blind, the pile is picked up."""
    legal = game.legal_mask(s) if player is not None and s.player == player and not s.done \
        else None
    seats = []
    for q in range(game.num_players):
        mine = player is None or player == q
        if player is None:
            down = _rank_cards(_counts(s.face_down[q]), mark="down")
        else:
            down = backs(s.face_down_size[q], clickable(legal, BLIND) if q == player else None)
        up = _rank_cards(s.face_up[q], (lambda r: clickable(legal, FACE_UP_BASE + r))
                         if q == player else None)
        if mine:
            hand = _rank_cards(s.hand[q], (lambda r: clickable(legal, r)) if q == player
                               else None)
        else:
            known = s.known[q]
            hand = _rank_cards(known, mark="known") + backs(s.hand_size[q] - int(known.sum()))
        tags = [f"{s.hand_size[q]} in hand"]
        if s.is_out[q]:
            tags.append(f"out ({_ordinal(s.finished.index(q) + 1)})")
        if s.terminal and s.loser == q:
            tags.append("loses")
        rows = [row("face-down", down, kind="down"), row("face-up", up, kind="up"),
                row("hand", hand)]
        seats.append(seat(q, rows, tags, acting=s.player == q and not s.done, out=s.is_out[q]))
    top = []
    if s.top >= 0:
        top = [card(RANK_NAMES[s.top]) for _ in range(min(s.run, 3))]
    note = "empty" if s.top < 0 else f"top {RANK_NAMES[s.top]}" + (f" x{s.run}" if s.run > 1
                                                                    else "")
    center = [
        row("draw pile", backs(min(len(s.draw), 1)), count=len(s.draw), kind="pile"),
        row("pile", top, count=s.pile_size, note=note, kind="pile",
            act=clickable(legal, PICK_UP)),
        row("out of play", backs(min(int(s.out_cards.sum()), 1)), count=int(s.out_cards.sum()),
            kind="pile"),
    ]
    info = [play_text(play) for play in s.history[-3:]]
    return make_board("palace", seats, center, render(game, s, player).rsplit("\n", 1)[-1],
                      info)


def _counts(ranks) -> list[int]:
    counts = [0] * NUM_RANKS
    for r in ranks:
        counts[r] += 1
    return counts


# the agents by name: rule agents and the determinized search
AGENTS = {"lowest_first": LowestFirstAgent, "heuristic": HeuristicAgent,
          "ismcts": PalaceSearchAgent}


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
    board=board,
    batched="card_envs.palace.batched",
    features="card_envs.palace.features",
    ladder=(LadderSection("Palace, 3 players", 100, batched_games=1000),),
)

env, raw_env, gym_env = factories(SPEC)
