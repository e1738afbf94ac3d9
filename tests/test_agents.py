"""Agent lookup by name: rule agents, and search agents with a ``NAME:BUDGET`` suffix."""

from dataclasses import replace

import pytest

from card_envs.core.agents import BaseAgent, make_agent
from card_envs.registry import load_spec


class _Budgeted(BaseAgent):
    takes_budget = True

    def __init__(self, game, budget: int = 7):
        super().__init__(game)
        self.budget = budget


def _spec_with_budgeted():
    spec = load_spec("simple_tricks")
    return replace(spec, agents={**spec.agents, "budgeted": _Budgeted})


def test_budget_suffix_builds_the_agent_with_that_budget():
    spec = _spec_with_budgeted()
    game = spec.make_game()
    assert make_agent(spec, "budgeted", game).budget == 7
    assert make_agent(spec, "budgeted:250", game).budget == 250


@pytest.mark.parametrize("name", ["budgeted:0", "budgeted:-3", "budgeted:x", "budgeted:"])
def test_bad_budget_names_the_agent_and_the_rule(name):
    spec = _spec_with_budgeted()
    with pytest.raises(ValueError, match="positive integer"):
        make_agent(spec, name, spec.make_game())


def test_budget_suffix_only_for_agents_that_take_one():
    spec = _spec_with_budgeted()
    with pytest.raises(ValueError, match=r"unknown agent 'heuristic:5'.*budgeted\[:BUDGET\]"):
        make_agent(spec, "heuristic:5", spec.make_game())
