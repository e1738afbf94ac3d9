"""Environment factories and text rendering for Thirty-One."""

from __future__ import annotations

from card_envs.core.board import backs, card, clickable, row, seat
from card_envs.core.board import board as make_board
from card_envs.core.cards import RANK_NAMES, rank_of, suit_of, unicode_ok
from card_envs.core.make import factories
from card_envs.core.spec import GameSpec, LadderSection
from card_envs.thirty_one.agents import ExpectedValueAgent, GreedyAgent
from card_envs.thirty_one.encoding import ENCODERS
from card_envs.thirty_one.rules import ThirtyOne, ThirtyOneState, describe
from card_envs.thirty_one.search import ThirtyOneSearchAgent


def _hand_text(game: ThirtyOne, s: ThirtyOneState, seat: int, player: int | None, uni: bool) -> str:
    """A seat's hand as the viewer may see it: known cards shown, the others as ??."""
    hand = s.hands[seat]
    if player is None or player == seat:
        return " ".join(describe(c, uni) for c in hand) + f" (score {game.score(hand):g})"
    return " ".join(describe(c, uni) if c >= 0 else "??" for c in s.shown[seat])


def _showdown_text(s: ThirtyOneState, uni: bool) -> str:
    sd = s.showdown
    shown = []
    for q, (hand, score) in enumerate(zip(sd.hands, sd.scores, strict=True)):
        if hand:
            cards = " ".join(describe(c, uni) for c in hand)
            lost = f", -{sd.lost[q]}" if sd.lost[q] else ""
            shown.append(f"player_{q} {cards} = {score:g}{lost}")
    who = f"player_{sd.knocker} knocked" if sd.knocker >= 0 else "no knock"
    revived = "; everyone was out, all back to 1 life" if sd.revived else ""
    return f"showdown of round {sd.round} ({who}): " + "; ".join(shown) + revived


def _count(n: int) -> str:
    return f"{n} card" if n == 1 else f"{n} cards"


def render(game: ThirtyOne, s: ThirtyOneState, player: int | None = None) -> str:
    """The table as text: every hand when ``player`` is None, else what that seat may see."""
    uni = unicode_ok()
    lines = [
        f"Thirty-One: round {s.rounds + 1 if not s.terminal else s.rounds}, "
        f"turn {s.round_turns + 1 if not s.done else s.round_turns} of the round"
    ]
    for q in range(game.num_players):
        me = " (you)" if player == q else ""
        if s.lives[q] <= 0:
            lines.append(f"player_{q}{me}: out")
            continue
        marks = (
            ""
            if s.done
            else "".join(
                [" [opened]" if q == s.opener else "", " [knocked]" if q == s.knocker else ""]
            )
        )
        lines.append(
            f"player_{q}{me}: {s.lives[q]} li{'fe' if s.lives[q] == 1 else 'ves'}{marks}; "
            f"{_hand_text(game, s, q, player, uni)}"
        )
    top = describe(s.discard[-1], uni) if s.discard else "-"
    lines.append(f"discard pile: {_count(len(s.discard))}, top {top}; deck: {_count(len(s.deck))}")
    if s.showdown is not None:
        lines.append(_showdown_text(s, uni))
    if s.terminal:
        lines.append(f"game over: player_{s.winner} wins")
    elif s.truncated:
        lines.append("game over: cut by the step cap")
    elif s.phase:
        how = "took" if s.from_discard else "drew"
        card = describe(s.drawn, uni) if s.from_discard or player in (None, s.player) else "a card"
        lines.append(f"player_{s.player} {how} {card} and must place it")
    else:
        knock = " or knock" if s.knocker < 0 else ""
        lines.append(f"player_{s.player} to draw, take {top}{knock}")
    return "\n".join(lines)


def move_label(game: ThirtyOne, s: ThirtyOneState, seat: int, action: int) -> str:
    """A move as the player choosing it sees it: which card goes, which stays, the new score.

    ``draw from the deck``, ``take 5♥ from the discard pile``, ``knock``, then (holding a
    drawn card) ``discard Q♠, keep 5♥ (score 9)`` or ``discard 5♥, the drawn card (score 10)``.
    """
    uni = unicode_ok()
    if action == 0:
        return "draw from the deck"
    if action == 1 and s.discard:
        return f"take {describe(s.discard[-1], uni)} from the discard pile"
    if 3 <= action <= 5 and s.drawn >= 0:
        hand = list(s.hands[seat])
        out = hand[action - 3]
        hand[action - 3] = s.drawn
        return (f"discard {describe(out, uni)}, keep {describe(s.drawn, uni)} "
                f"(score {game.score(hand):g})")
    if action == 6 and s.drawn >= 0:
        return (f"discard {describe(s.drawn, uni)}, the drawn card "
                f"(score {game.score(s.hands[seat]):g})")
    return game.action_name(action)


def move_text(
    game: ThirtyOne, before: ThirtyOneState, seat: int, action: int, after: ThirtyOneState
) -> str:
    """A move as the table saw it: taken and discarded cards are public, drawn ones are not."""
    uni = unicode_ok()
    if action == 0:
        return "draw from the deck"
    if action == 1 and before.discard:
        return f"take {describe(before.discard[-1], uni)} from the discard pile"
    if 3 <= action <= 5 and before.drawn >= 0:
        out = describe(before.hands[seat][action - 3], uni)
        kept = describe(before.drawn, uni) if before.from_discard else "the drawn card"
        return f"discard {out}, keep {kept}"
    if action == 6 and before.drawn >= 0:
        return f"discard {describe(before.drawn, uni)}, the drawn card"
    return game.action_name(action)


def _card(c: int, act: int | None = None, mark: str | None = None) -> dict:
    return card(RANK_NAMES[rank_of(c)], suit_of(c), act, mark)


def board(game: ThirtyOne, s: ThirtyOneState, player: int | None = None) -> dict:
    """The table as data (card_envs/core/board.py): every seat's three cards (another seat's
    face down but for those it took from the discard pile, unless ``player`` is None), lives,
    the deck and the discard pile, the card being placed, the last showdown. Clicking the deck
    draws, the discard pile takes its top, a hand card is swapped for the drawn card."""
    to_act = player is not None and s.player == player and not s.done
    legal = game.legal_mask(s) if to_act else None
    seats = []
    for q in range(game.num_players):
        if s.lives[q] <= 0:
            seats.append(seat(q, [], ["out"], out=True))
            continue
        hand = s.hands[q]
        if player is None or player == q:
            cards = [_card(c, clickable(legal, 3 + k) if q == player else None)
                     for k, c in enumerate(hand)]
        else:
            cards = [_card(c, mark="known") if c >= 0 else {"back": True} for c in s.shown[q]]
        rows = [row("hand", cards)]
        if s.phase and s.player == q and not s.done:
            seen = player is None or player == q or s.from_discard
            drawn = [_card(s.drawn, clickable(legal, 6), "new")] if seen else backs(1)
            rows.append(row("taken" if s.from_discard else "drawn", drawn))
        lives = s.lives[q]
        tags = [f"{lives} li{'fe' if lives == 1 else 'ves'}"]
        if player is None or player == q:
            tags.append(f"score {game.score(hand):g}")
        if not s.done:
            tags += (["opened"] if q == s.opener else []) + (["knocked"] if q == s.knocker else [])
        seats.append(seat(q, rows, tags, acting=s.player == q and not s.done))
    top = [_card(s.discard[-1])] if s.discard else []
    center = [
        row("deck", backs(min(len(s.deck), 1)), count=len(s.deck), kind="pile",
            act=clickable(legal, 0)),
        row("discard pile", top, count=len(s.discard), kind="pile", act=clickable(legal, 1)),
    ]
    info = [_showdown_text(s, unicode_ok())] if s.showdown is not None else []
    text = render(game, s, player).split("\n")
    return make_board("thirty_one", seats, center, text[-1], [text[0], *info])


# the agents by name: rule agents and the determinized search
AGENTS = {"greedy": GreedyAgent, "expected_value": ExpectedValueAgent,
          "ismcts": ThirtyOneSearchAgent}


SPEC = GameSpec(
    name="thirty_one",
    version=0,
    gym_name="ThirtyOne",
    game_cls=ThirtyOne,
    encoders=ENCODERS,
    render=render,
    agents=AGENTS,
    default_opponent="greedy",
    strongest_agent="expected_value",
    num_players=(2, 3, 4, 5, 6, 7),
    variants=(
        {},
        {"num_players": 2},
        {"num_players": 7, "lives": 1},
        {"three_of_a_kind": True, "instant_31": True},
        {"reward": "original", "max_round_turns": 6},
    ),
    gym_defaults={"num_players": 2},
    move_label=move_label,
    describe_move=move_text,
    batched="card_envs.thirty_one.batched",
    potentials="card_envs.thirty_one.shaping",
    ladder=(LadderSection("Thirty-One, 2 players", 100, {"num_players": 2}, 1000),),

    board=board,
)

env, raw_env, gym_env = factories(SPEC)
