"""The strength ladder: a quick run of every docs setting, ratings, docs blocks, the CLI."""

from __future__ import annotations

import pytest

from card_envs.cli import main as cli_main
from card_envs.core.agents import BaseAgent, search_budgets
from card_envs.core.make import make_batched
from card_envs.ladder import (
    SETTINGS,
    Setting,
    agent_names,
    fit_ratings,
    replace_block,
    run_ladder,
    write_docs,
)
from card_envs.registry import load_spec

pytest.importorskip("openskill")


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.key for s in SETTINGS])
def test_every_setting_runs_a_quick_ladder(setting):
    """One game per match with every agent the spec lists (search agents at their lower
    budget; the shipped model is left to the full ladder, which loads it when it can)."""
    spec = load_spec(setting.env_name)
    names = agent_names(spec, quick=True)
    result = run_ladder(setting, games=1, quick=True, names=names)
    assert sorted(r.name for r in result.rows) == sorted(names)
    assert result.games > 0
    lines = result.table()
    assert len(lines) == 2 + len(names)
    if result.kind == "solo":
        assert all(r.rating is None and r.tally.games == 1 for r in result.rows)
    else:
        assert all(r.rating is not None for r in result.rows)
        ratings = [r.rating[0] for r in result.rows]
        assert ratings == sorted(ratings, reverse=True), "rows go from the best rating down"
    if spec.name == "simple_tricks":
        solver = next(r for r in result.rows if r.name == "solver")
        assert solver.extra["regret [95% CI]"].startswith("0.000")


def test_every_search_agent_plays_at_two_budgets():
    for setting in SETTINGS:
        spec = load_spec(setting.env_name)
        for name, cls in spec.agents.items():
            budgets = search_budgets(cls)
            if budgets is not None:
                low, high = budgets
                assert 1 <= low < high
                assert {f"{name}:{low}", f"{name}:{high}"} <= set(agent_names(spec))


def test_budgets_default_to_a_quarter_and_the_whole_default():
    class Search(BaseAgent):
        takes_budget = True

        def __init__(self, game=None, budget: int = 100):
            super().__init__(game)

    assert search_budgets(Search) == (25, 100)
    assert search_budgets(BaseAgent) is None

    class Budgeted(BaseAgent):  # the budget argument defaults to None: the class says it
        takes_budget = True
        default_budget = 48

        def __init__(self, game=None, budget: int | None = None):
            super().__init__(game)

    assert search_budgets(Budgeted) == (12, 48)


def test_ratings_order_agents_by_their_results():
    results = [(["strong", "weak"], [1, 2])] * 30 + [(["strong", "weak"], [2, 1])] * 5
    results += [(["weak", "middle"], [2, 1])] * 20 + [(["middle", "strong"], [2, 1])] * 20
    ratings = fit_ratings(["strong", "middle", "weak"], results, seed=0)
    assert ratings["strong"][0] > ratings["middle"][0] > ratings["weak"][0]


def test_docs_blocks_are_written_and_replaced(tmp_path):
    setting = Setting("simple_tricks_v0", {}, 1, "Simple tricks (N = 10)")
    (tmp_path / "docs" / "games").mkdir(parents=True)
    game_page = tmp_path / "docs" / "games" / "simple_tricks.md"
    game_page.write_text("# Simple tricks\n\n## Agents\n\ntable\n\n## Trained baselines\n\nx\n")
    result = run_ladder(setting, games=1, names=["random", "solver"])
    for _ in range(2):  # a rerun replaces its blocks
        write_docs(result, root=tmp_path)
    page = (tmp_path / "docs" / "ladder.md").read_text()
    assert page.startswith("# Strength ladder")
    assert page.count("<!-- BEGIN LADDER simple_tricks_v0 -->") == 1
    assert "card-envs ladder simple_tricks_v0 --games 1 --seed 0 --write" in page
    text = game_page.read_text()
    assert text.count("<!-- BEGIN LADDER simple_tricks_v0 -->") == 1
    assert text.index("BEGIN LADDER") < text.index("## Trained baselines")
    assert "`solver`" in text and "regret" in text


def test_replace_block_appends_when_there_is_no_anchor():
    text = replace_block("intro\n", "k", "<!-- BEGIN LADDER k -->\nx\n<!-- END LADDER k -->")
    assert text.endswith("<!-- END LADDER k -->\n")
    again = replace_block(text, "k", "<!-- BEGIN LADDER k -->\ny\n<!-- END LADDER k -->")
    assert "x" not in again.split("intro")[1] and again.count("BEGIN LADDER k") == 1


def test_ladder_command_prints_a_table(capsys):
    argv = ["ladder", "simple_tricks", "--games", "1", "--set", "num_values=4",
            "--agents", "random", "solver"]
    assert cli_main(argv) == 0
    out = capsys.readouterr().out
    assert "| rank | agent |" in out and "`solver`" in out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["ladder", "nonsense"], "unknown game"),
        (["ladder", "simple_tricks", "--quick", "--write"], "--write needs the full ladder"),
        (["ladder", "all", "--set", "rules=original"], "--set cannot go with 'all'"),
        (["ladder", "simple_tricks", "--agents", "solver", "nobody"], "unknown agent 'nobody'"),
    ],
)
def test_ladder_command_errors_are_one_line(argv, message, capsys):
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.slow
def test_full_simple_tricks_ladder_puts_perfect_play_on_top():
    """The full ladder of simple tricks: the solver is rated above every rule agent."""
    result = run_ladder(SETTINGS[0])
    top = result.rows[0]
    assert top.name in ("solver", "ismcts:1", "ismcts:8")
    rules = [r for r in result.rows if r.name in ("heuristic", "first_play")]
    assert all(top.interval[0] > r.interval[1] for r in rules)


def test_verdict_compares_the_best_search_agent_with_the_best_rule_agent():
    from card_envs.core.evaluation import Tally
    from card_envs.ladder import LadderResult, Row, verdict

    def row(name, mu, sigma):
        return Row(name, Tally(name), 0.0, (mu, sigma))

    setting = SETTINGS[0]
    clear = LadderResult(setting, "duplicate", 2,
                         [row("ismcts:8", 40, 1), row("heuristic", 20, 1), row("random", 5, 1)],
                         3, 6, 0, 0.0)
    assert verdict(clear, ["heuristic"]).startswith("The search is clearly above the rules")
    close = LadderResult(setting, "duplicate", 2,
                         [row("ismcts:8", 22, 2), row("heuristic", 20, 2)], 1, 2, 0, 0.0)
    assert "overlap" in verdict(close, ["heuristic"])
    none = LadderResult(setting, "duplicate", 2, [row("heuristic", 20, 2)], 1, 2, 0, 0.0)
    assert verdict(none, ["heuristic"]).startswith("No search agent")


def test_standing_says_where_best_is_against_the_best_rule_and_search_agents():
    from card_envs.core.evaluation import Tally
    from card_envs.ladder import LadderResult, Row, standing

    def row(name, mu, sigma):
        return Row(name, Tally(name), 0.0, (mu, sigma))

    def result(*rows):
        return LadderResult(SETTINGS[0], "duplicate", 2, list(rows), 3, 6, 0, 0.0)

    mixed = result(row("ismcts:8", 40, 1), row("best", 30, 1), row("heuristic", 20, 1),
                   row("lowest", 35, 1))
    # the best rule agent is the highest rated one (`lowest` here), whatever the names say
    assert standing(mixed, ["heuristic", "lowest"]) == (
        "The shipped model `best` (rating 30.0 [28.0, 32.0]) is clearly below the best rule "
        "agent `lowest` (35.0 [33.0, 37.0]) and clearly below the best search agent "
        "`ismcts:8` (40.0 [38.0, 42.0]).")
    level = result(row("best", 21, 2), row("heuristic", 20, 2))
    assert standing(level, ["heuristic"]) == (
        "The shipped model `best` (rating 21.0 [17.1, 24.9]) is level with (the intervals "
        "overlap) the best rule agent `heuristic` (20.0 [16.1, 23.9]).")
    above = result(row("best", 30, 1), row("heuristic", 20, 1), row("ismcts:8", 25, 1))
    assert "clearly above the best rule agent" in standing(above, ["heuristic"])
    assert "clearly above the best search agent" in standing(above, ["heuristic"])
    assert standing(result(row("heuristic", 20, 1)), ["heuristic"]) == (
        "No shipped model on this ladder.")


@pytest.mark.parametrize("key", ["palace_v0", "literature_v0-original", "thirty_one_v0-2",
                                 "ninety_eight_cards_v0"])
def test_matches_on_the_twin_are_the_games_of_the_scalar_ladder(key):
    pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")
    setting = next(s for s in SETTINGS if s.key == key)
    spec = load_spec(setting.env_name)
    rule_agents = ["random", *make_batched(spec, **setting.game_args).agents]
    runs = [run_ladder(setting, games=6, names=rule_agents, scalar=scalar)
            for scalar in (False, True)]
    for batched, scalar in zip(runs[0].rows, runs[1].rows, strict=True):
        assert batched.name == scalar.name
        assert batched.tally.summary() == scalar.tally.summary()
        assert batched.rating == scalar.rating


def test_matches_of_batched_agents_play_their_own_number_of_games():
    """``batched_games``: a match whose every agent has a batched form plays that many games,
    the others ``games``; the same tallies and ratings when every match is played game by
    game; the command and the section say both numbers."""
    pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")
    from card_envs.ladder import section_lines, setting_for

    setting = setting_for("simple_tricks", {}, 3, 8)
    assert setting.command() == ("card-envs ladder simple_tricks_v0 --games 3 --batched-games 8 "
                                 "--seed 0 --write")
    names = ["random", "heuristic", "solver"]  # the solver has no batched form
    runs = [run_ladder(setting, names=names, scalar=scalar) for scalar in (False, True)]
    games = {r.name: r.tally.games for r in runs[0].rows}
    assert games == {"solver": 3 + 3, "random": 8 + 3, "heuristic": 8 + 3}
    assert runs[0].games == 2 * (8 + 3 + 3)
    for batched, scalar in zip(runs[0].rows, runs[1].rows, strict=True):
        assert batched.name == scalar.name and batched.rating == scalar.rating
        assert batched.tally.summary() == scalar.tally.summary()
    line = section_lines(runs[0], None)[2]
    assert "3 duplicate deals (two games) per pair of agents (8 where the twin plays" in line
    assert setting.with_games(5).games_batched == 5  # --games alone sets both
    assert setting.with_games(None) is setting


def test_ladder_command_rejects_a_count_of_no_games(capsys):
    assert cli_main(["ladder", "simple_tricks", "--batched-games", "0"]) == 2
    err = capsys.readouterr().err
    assert "--batched-games 0: give a positive number of games" in err and err.count("\n") == 1


def test_standing_of_a_solo_game_compares_mean_scores():
    from card_envs.core.evaluation import Tally
    from card_envs.ladder import LadderResult, Row, standing

    def row(name, scores):
        tally = Tally(name)
        for score in scores:  # no game won: win rates alone could not tell these apart
            tally.add(0.0, score)
        return Row(name, tally, 0.0)

    setting = next(s for s in SETTINGS if s.key == "ninety_eight_cards_v0")
    result = LadderResult(setting, "solo", 1, [row("expert", [85, 86, 87] * 20),
                                               row("best", [80, 81, 82] * 20)], 2, 120, 0, 0.0)
    text = standing(result, ["expert"])
    assert text.startswith("The shipped model `best` (mean score 81.00 [")
    assert "clearly below the best rule agent `expert` (86.00 [" in text


def test_standing_of_the_guided_model_is_its_own_sentence():
    """``best+search`` gets the same comparison as ``best`` (and is neither a rule agent nor
    one of the search agents it is compared with); a section without it has no sentence."""
    from card_envs.core.evaluation import Tally
    from card_envs.ladder import LadderResult, Row, section_lines, standing

    def row(name, mu, sigma):
        return Row(name, Tally(name), 0.0, (mu, sigma))

    setting = next(s for s in SETTINGS if s.key == "palace_v0")
    rows = [row("best+search", 40, 1), row("ismcts:100", 33, 1), row("best", 31, 1),
            row("heuristic", 30, 1)]
    result = LadderResult(setting, "free for all", 3, rows, 4, 12, 0, 0.0)
    text = standing(result, ["heuristic"], name="best+search")
    assert text == (
        "The shipped model guiding its search, `best+search` (rating 40.0 [38.0, 42.0]) is "
        "clearly above the best rule agent `heuristic` (30.0 [28.0, 32.0]) and clearly above "
        "the best search agent `ismcts:100` (33.0 [31.0, 35.0]).")
    assert standing(result, ["heuristic"]).startswith("The shipped model `best` (rating 31.0")
    lines = section_lines(result, None)
    assert lines[-1] == text
    alone = LadderResult(setting, "free for all", 3, rows[1:], 3, 9, 0, 0.0)
    assert standing(alone, ["heuristic"], name="best+search") == ""
    assert section_lines(alone, None)[-1].startswith("The shipped model `best` (rating")


def test_the_full_ladder_adds_the_guided_model_where_a_search_takes_a_guide():
    pytest.importorskip("sb3_contrib", reason="the shipped models need the train extra")
    from card_envs.ladder import with_best

    for key, guided in (("palace_v0", True), ("ninety_eight_cards_v0", True),
                        ("simple_tricks_v0", False)):
        setting = next(s for s in SETTINGS if s.key == key)
        spec = load_spec(setting.env_name)
        names, note = with_best(spec, spec.make_game(**setting.game_args), ["random"])
        if guided:
            assert names == ["random", "best", "best+search"] and note == ""
        else:
            assert names == ["random", "best"]
            assert note.startswith("`best+search` is not on this ladder: search agent 'ismcts'")
