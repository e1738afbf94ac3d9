"""baselines.handoff: one agent until K cards are played, another after."""

import pytest

from baselines.handoff import handoff, main, parse_points


def test_the_ends_of_the_handover_are_each_agent_alone():
    alone_greedy = handoff("greedy", "expert", [98], games=6, seed=3)[0]
    then_greedy = handoff("expert", "greedy", [0], games=6, seed=3)[0]
    assert alone_greedy["mean_cards"] == then_greedy["mean_cards"]
    mixed = handoff("expert", "greedy", [0, 30, 98], games=6, seed=3)
    assert [r["at"] for r in mixed] == [0, 30, 98]
    # the expert plays more cards than greedy on these deals
    assert mixed[2]["mean_cards"] > mixed[0]["mean_cards"]
    for r in mixed:
        assert r["cards_low"] <= r["mean_cards"] <= r["cards_high"]
        assert 0.0 <= r["wins_low"] <= r["wins_rate"] + 1e-12
        assert r["wins_rate"] <= r["wins_high"] <= 1.0


def test_original_rules_are_played_when_asked():
    standard = handoff("greedy", "greedy", [98], games=4, seed=1)[0]
    original = handoff("greedy", "greedy", [98], games=4, seed=1, rules={"rules": "original"})[0]
    assert standard["mean_cards"] != original["mean_cards"]


@pytest.mark.parametrize("text", ["", "0,99", "-1", "a,b"])
def test_bad_handover_points_name_the_argument(text):
    with pytest.raises(ValueError, match="--at"):
        parse_points(text)


def test_cli_errors_are_one_line_and_exit_2(capsys):
    assert main(["--at", "0,120", "--games", "2"]) == 2
    assert main(["--first", "nobody", "--games", "2", "--at", "98"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: ") for line in err)
    assert "choose one of" in err[1]
