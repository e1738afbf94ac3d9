"""The quick run's terminal table (baselines/render.py, quick_report): columns never touch."""

from __future__ import annotations

import re

import pytest


def _results(opponents, wins: float) -> list[dict]:
    return [{"opponent": o, "wins_rate": wins, "losses_rate": 1 - wins} for o in opponents]


def test_the_quick_table_keeps_every_column_apart():
    pytest.importorskip("sb3_contrib", reason="the baselines need the train extra")
    from baselines.config import game_config
    from baselines.render import quick_report

    opponents = game_config("thirty_one_v0")["eval_opponents"]
    run = {"algo": "maskable_ppo", "trained_timesteps": 3_000_000, "mode": "greedy",
           "final_games": 100, "results": _results(opponents, 0.99)}
    record = {"runs": [run], "reference": {
        "expected_value": {r["opponent"]: r for r in _results(opponents, 0.99)},
        # a longer label than any the settings have today
        "an_agent_with_a_long_name_for_the_test": {
            r["opponent"]: r for r in _results(opponents, 0.5)},
    }}
    full = {"shipped": {**run, "results": _results(opponents, 1.0)}}
    lines = quick_report("thirty_one_v0", record, full).splitlines()
    table = lines[lines.index(next(x for x in lines if x.strip().startswith("against:"))):-1]
    assert "   rule agent expected_value (same deals)  " in "\n".join(table)
    labels = ["against:", "MaskablePPO, 3,000,000 steps (greedy)",
              "rule agent expected_value (same deals)",
              "rule agent an_agent_with_a_long_name_for_the_test (same deals)",
              "full budget: MaskablePPO (shipped)"]
    starts = set()
    for line, label in zip(table, labels, strict=True):
        assert line.startswith("   " + label + "  "), line
        cells = [m.start() for m in re.finditer(r"(?<=  )\S", line) if m.start() > len(label) + 3]
        assert len(cells) == len(opponents), line  # every cell stands apart from the one before
        starts.add(tuple(cells))
    assert len(starts) == 1  # and the columns line up
