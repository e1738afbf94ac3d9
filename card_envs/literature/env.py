"""Environment factories and text rendering for Literature."""

from __future__ import annotations

import textwrap

from card_envs.core.board import backs, card, row, seat
from card_envs.core.board import board as make_board
from card_envs.core.cards import unicode_ok
from card_envs.core.make import factories
from card_envs.core.spec import GameSpec, LadderSection
from card_envs.literature.agents import CautiousAgent, HeuristicAgent
from card_envs.literature.deck import (
    CARD_BIT,
    NUM_CARDS,
    card_label,
    cards_in,
    cards_of_half_suit,
    half_suit_label,
    half_suit_of,
    rank_name,
)
from card_envs.literature.encoding import ENCODERS
from card_envs.literature.rules import DISCARDED, LIVE, Literature, LiteratureState
from card_envs.literature.search import LiteratureSearchAgent

TEAM_NAMES = ("even", "odd")


def render(game: Literature, s: LiteratureState, player: int | None = None) -> str:
    """The table as text: every hand when ``player`` is None, else that seat's hand, the hand
    sizes and what that seat has proven about the others' cards. Lines fit 80 columns but
    for long hands and long lists of known cards."""
    uni = unicode_ok()
    rules = ", original rules" if game.original else ""
    lines = [
        f"Literature ({game.num_players} players{rules}), step {s.steps}: half-suits won: "
        f"even seats {s.score[0]}, odd seats {s.score[1]}"
    ]
    lines += _pack("half-suits ", _half_suits_parts(s, uni))
    view = game.view(s, player) if player is not None else None
    for q in range(game.num_players):
        me = " (you)" if q == player else ""
        head = f"player_{q}{me} [{TEAM_NAMES[q % 2]}, {s.sizes[q]} cards]"
        if player is None or q == player:
            lines.append(f"{head}: {_cards(cards_in(s.hands[q]), uni)}")
        else:
            known = [c for c in range(48) if view.holds()[q, c]]
            lines.append(f"{head}: known to hold {_cards(known, uni)}")
    asks = [
        f"player_{asker} asked player_{asked} for {card_label(card, uni)}: "
        f"{'got it' if success else 'no'}"
        for asker, asked, card, success in s.last_asks
    ]
    if asks:
        lines += _pack("last asks: ", asks)
    if s.claim_half >= 0:
        named = (
            ", ".join(
                f"{card_label(s.claim_half * 6 + k, uni)} player_{q}"
                for k, q in enumerate(s.claim_names)
            )
            or "nothing named yet"
        )
        lines.append(f"player_{s.player} claims {half_suit_label(s.claim_half, uni)}: {named}")
    if s.terminal:
        a, b = s.score
        lines.append("game over: " + ("a tie" if a == b else f"the {TEAM_NAMES[a < b]} seats win"))
    elif s.truncated:
        lines.append("game over: the step cap was reached")
    else:
        lines.append(f"player_{s.player} to act")
    return "\n".join(lines)


def _half_suits_parts(s: LiteratureState, uni: bool) -> list[str]:
    """``in play: low ♠, ...``, ``even seats won: high ♥ (player_2)``, ``discarded: ...``."""
    parts: dict[str, list[str]] = {}
    for h in range(8):
        outcome = s.outcome[h]
        label = half_suit_label(h, uni)
        if outcome == LIVE:
            parts.setdefault("in play", []).append(label)
        elif outcome == DISCARDED:
            parts.setdefault("discarded", []).append(label)
        else:
            parts.setdefault(f"{TEAM_NAMES[outcome]} seats won", []).append(
                f"{label} (player_{s.declarer[h]})"
            )
    return [f"{k}: {', '.join(v)}" for k, v in parts.items()]


def _pack(head: str, items: list[str], width: int = 79) -> list[str]:
    """``head`` and the items joined by "; " in lines of ``width``, no item split (if short)."""
    glued = [item.replace(" ", "\u00a0") for item in items]  # textwrap keeps these whole
    lines = textwrap.wrap(head + "; ".join(glued), width, subsequent_indent="  ")
    return [line.replace("\u00a0", " ") for line in lines]


def _cards(cards: list[int], uni: bool) -> str:
    return " ".join(card_label(c, uni) for c in cards) or "-"


def move_text(game: Literature, s: LiteratureState, seat: int, action: int) -> str:
    """A move with absolute seats (``ask player_3 for Q♥``): how players say it at the table."""
    uni = unicode_ok()
    if action < game.num_asks:
        j, card = divmod(action, NUM_CARDS)
        return f"ask player_{game.opponent(seat, j)} for {card_label(card, uni)}"
    if action < game.name_base:
        return f"declare {half_suit_label(action - game.declare_base, uni)}"
    holder = game.teammate(seat, action - game.name_base)
    if s.claim_half >= 0:
        card = list(cards_of_half_suit(s.claim_half))[len(s.claim_names)]
        return f"name player_{holder} as holder of {card_label(card, uni)}"
    return f"name player_{holder}"


def move_group(
    game: Literature, s: LiteratureState, seat: int, action: int
) -> tuple[str, str] | None:
    """Asks shown an opponent per line (``ask player_3 for: Q♥ ...``), declarations on one."""
    uni = unicode_ok()
    if action < game.num_asks:
        j, card = divmod(action, NUM_CARDS)
        return f"ask player_{game.opponent(seat, j)} for", card_label(card, uni)
    if action < game.name_base:
        return "declare", half_suit_label(action - game.declare_base, uni)
    return None


def outcome_text(
    game: Literature, before: LiteratureState, seat: int, action: int, after: LiteratureState
) -> str:
    """A move as everyone saw it, with the ask's answer or the claim's outcome."""
    text = move_text(game, before, seat, action)
    if action < game.num_asks:
        card = action % NUM_CARDS
        return text + (": given" if after.hands[seat] >> CARD_BIT[card] & 1 else ": no")
    if action >= game.name_base and after.claim_half < 0:
        h = before.claim_half
        outcome = after.outcome[h]
        result = (
            "discarded" if outcome == DISCARDED else f"scored by the {TEAM_NAMES[outcome]} seats"
        )
        return f"{text}; {half_suit_label(h, unicode_ok())} {result}"
    return text


def _card(c: int, mark: str | None = None) -> dict:
    """A Literature card drawn: its rank (A-6 or 8-K) and suit."""
    return card(rank_name(c), half_suit_of(c) // 2, mark=mark)


def board(game: Literature, s: LiteratureState, player: int | None = None) -> dict:
    """The table as data (card_envs/core/board.py): the seats of both teams with their hands
    (another seat's face down but for the cards ``player`` knows it holds; every hand when
    ``player`` is None), the eight half-suits and who won them, the last asks, the claim
    being named."""
    uni = unicode_ok()
    known = game.view(s, player).holds() if player is not None else None
    seats = []
    for q in range(game.num_players):
        if player is None or q == player:
            cards = [_card(c) for c in cards_in(s.hands[q])]
        else:
            held = [c for c in range(NUM_CARDS) if known[q, c]]
            cards = [_card(c, "known") for c in held] + backs(s.sizes[q] - len(held))
        tags = [f"{TEAM_NAMES[q % 2]} team", f"{s.sizes[q]} card{'s' if s.sizes[q] != 1 else ''}"]
        seats.append(seat(q, [row("hand", cards)], tags, acting=s.player == q and not s.done,
                          out=s.sizes[q] == 0, team=q % 2))
    chips = []
    for h in range(8):
        outcome = s.outcome[h]
        label = half_suit_label(h, uni)
        if outcome == LIVE:
            chips.append({"text": label, "mark": "live"})
        elif outcome == DISCARDED:
            chips.append({"text": f"{label}: discarded", "mark": "discarded"})
        else:
            chips.append({"text": f"{label}: {TEAM_NAMES[outcome]} (player_{s.declarer[h]})",
                          "mark": f"team{outcome}"})
    center = [row(f"half-suits won: even {s.score[0]}, odd {s.score[1]}", chips=chips,
                  kind="chips")]
    info = [f"player_{asker} asked player_{asked} for {card_label(card_, uni)}: "
            f"{'got it' if success else 'no'}" for asker, asked, card_, success in s.last_asks]
    lines = render(game, s, player).split("\n")
    if s.claim_half >= 0:
        info.append(lines[-2])  # the claim being named
    return make_board("literature", seats, center, lines[-1], info)


# the agents by name: rule agents and the determinized search
AGENTS = {"cautious": CautiousAgent, "heuristic": HeuristicAgent,
          "ismcts": LiteratureSearchAgent}


SPEC = GameSpec(
    name="literature",
    version=0,
    gym_name="Literature",
    game_cls=Literature,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="heuristic",
    strongest_agent="heuristic",
    num_players=(4, 6, 8),
    variants=({}, {"num_players": 4}, {"num_players": 8}, {"rules": "original"},
              {"num_players": 4, "max_steps": 60}),  # the step cap within a test's games
    move_label=move_text,
    describe_move=outcome_text,
    move_group=move_group,
    board=board,
    batched="card_envs.literature.batched",
    features="card_envs.literature.features",
    potentials="card_envs.literature.shaping",
    ladder=(LadderSection("Literature, 4 players, original rules", 100, {"rules": "original"},
                          1000),
            LadderSection("Literature, 6 players, standard rules", 100, batched_games=1000)),
)

env, raw_env, gym_env = factories(SPEC)
