"""The speed benchmark (card_envs/bench.py) runs and its tables add up; it does not judge speed."""

import pytest

from card_envs.bench import profile, report, run
from card_envs.core.make import factories
from card_envs.registry import load_spec


def test_benchmark_times_floors_and_every_door_of_a_game():
    results = run(["simple_tricks_v0"], seconds=0.05, rounds=1)
    labels = [label for label, _, _ in results]
    assert labels == [
        "noop (bare)",
        "noop (classic wrappers)",
        "simple_tricks_v0 env()",
        "simple_tricks_v0 raw_env()",
        "simple_tricks_v0 gymnasium",
    ]
    assert all(rate > 0 for _, _, rate in results)
    table = [_cells(row) for row in report(results).splitlines()]
    assert table[2][3] == "1.00x" and table[3][2] == "1.00x"  # each floor against itself
    assert all(row[2].endswith("x") and row[3].endswith("x") for row in table[2:])
    assert table[4][4].startswith("2.5x wrapped: ") and table[5][4].startswith("0.25x bare: ")
    assert table[6][4] == table[2][4] == ""  # no target for the view or the floors


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def test_report_judges_each_game_against_its_own_target():
    from card_envs.bench import target

    results = [("noop (bare)", "floor-bare", 100.0), ("noop (classic wrappers)", "floor-wrapped",
               10.0), ("literature_v0 env()", "env", 10.4), ("literature_v0 raw_env()", "raw",
               9.0), ("palace_v0 env()", "env", 24.0), ("palace_v0 raw_env()", "raw", 25.0)]
    verdicts = [_cells(row)[4] for row in report(results).splitlines()[4:]]
    assert verdicts == ["1x wrapped: met", "0.1x bare: NOT met (0.090x)",
                        "2.5x wrapped: NOT met (2.400x)", "0.25x bare: met"]
    assert target("palace_v0", "gym") is None


def test_profile_shares_are_a_partition_of_the_time():
    row = profile(["thirty_one_v0"], seconds=0.2).splitlines()[2]
    shares = [int(cell.strip().rstrip("%")) for cell in row.split("|")[2:-1]]
    assert len(shares) == 6
    assert all(0 <= share <= 100 for share in shares), row
    assert 97 <= sum(shares) <= 103, row  # rounded to whole percents
    assert shares[0] >= 5 and shares[2] >= 5, row  # the rules step and encoding are found


def test_env_class_leaves_attribute_lookups_fast():
    # A __getattr__ anywhere in the env's classes stops Python from specialising the env's
    # attribute lookups (about 10% of a step); so does a class attribute (a descriptor) that
    # an instance attribute shadows, for that name: only env()'s class has those, for the
    # before-reset errors, and raw_env()'s class none.
    from card_envs.core.aec import CardGameEnv, ClassicCardGameEnv, _SetByReset

    for cls in (CardGameEnv, ClassicCardGameEnv):
        assert not any("__getattr__" in vars(c) for c in cls.__mro__)
    env = factories(load_spec("simple_tricks_v0")).raw_env()
    assert type(env) is CardGameEnv
    env.reset(seed=0)
    shadowed = [name for name in vars(env) if any(name in vars(c) for c in CardGameEnv.__mro__)]
    assert shadowed == [], shadowed
    assert isinstance(vars(ClassicCardGameEnv)["agents"], _SetByReset)


def test_split_times_each_part_of_a_decision():
    from card_envs.bench import split, split_table

    parts = split(factories(load_spec("palace_v0")).raw_env, seconds=0.2)
    outer = ["last()", "pick", "step()", "game ends", "reset, iteration"]
    assert list(parts) == ["total", *outer, "decisions/game", "rules", "encoding"]
    assert parts["last()"] > 0 and parts["step()"] > 0 and parts["pick"] > 0
    assert abs(sum(parts[k] for k in outer) - parts["total"]) < 1e-6  # they make the total
    assert 0 < parts["rules"] < parts["total"] and 0 < parts["encoding"] < parts["total"]
    rows = [_cells(row) for row in split_table(["simple_tricks_v0"], 0.05).splitlines()]
    assert [row[0] for row in rows[2:]] == ["noop (bare)", "simple_tricks_v0"]
    assert rows[2][-1] == "100.0" and rows[3][-1] == "20.0"  # every game has the same length
    assert rows[2][3] == rows[2][5] == "" and rows[3][3] and rows[3][5]  # no game in the no-op


def test_speed_ab_compares_two_checkouts_run_alternately(capsys):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    script = root / "benchmarks" / "speed_ab.py"
    out = subprocess.run(
        [sys.executable, str(script), str(root), str(root), "simple_tricks_v0", "--reps", "2",
         "--seconds", "0.05", "--rounds", "1"],
        capture_output=True, text=True, check=True,
    )
    rows = out.stdout.splitlines()
    assert rows[0] == "| target | old | new | change |"
    targets = [row.split(" | ")[0].lstrip("| ") for row in rows[2:]]
    assert targets == ["simple_tricks_v0 env()", "simple_tricks_v0 raw_env()",
                       "simple_tricks_v0 gymnasium"]
    assert all(row.endswith("% |") for row in rows[2:])
    assert out.stderr.count("done") == 4  # old, new, new, old
    bad = subprocess.run([sys.executable, str(script), str(root), "/nonexistent"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "new='/nonexistent' is not a checkout" in bad.stderr


def test_vector_speed_prints_every_twin_and_speed_ab_compares_it():
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("numba", reason="the twins are compiled with numba (the test extra)")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "speed_ab.py"), str(root), str(root),
         "--script", "vector_speed.py", "simple_tricks", "--reps", "1", "--seconds", "0.05",
         "--rounds", "1"], capture_output=True, text=True, check=True)
    targets = [row.split(" | ")[0].lstrip("| ") for row in out.stdout.splitlines()[2:]]
    assert targets == ["simple_tricks raw_env()",
                       *(f"simple_tricks {k} B={b}" for k in ("core", "VectorEnv")
                         for b in (64, 1024, 4096))]


def test_speed_ab_reads_train_speed_progress_lines():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("speed_ab", root / "benchmarks" / "speed_ab.py")
    speed_ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed_ab)
    assert speed_ab.script_args("train_speed.py", "5", "3", ["palace_v0"]) == [
        "--seconds", "5", "--forms", "batched", "--envs", "palace_v0"]
    assert speed_ab.script_args("train_speed.py", "5", "3", []) == [
        "--seconds", "5", "--forms", "batched"]
    assert speed_ab.script_args("env_speed.py", "1", "2", ["palace_v0"]) == [
        "--seconds", "1", "--rounds", "2", "palace_v0"]
    # the line train_speed.py prints as each row is timed
    source = (root / "benchmarks" / "train_speed.py").read_text()
    assert 'print(f"# {setting} {algo} {form}: {row[\'rate\']:,.0f} steps/s"' in source
    line = f"# palace_v0 maskable_ppo batched: {13766.4:,.0f} steps/s"
    match = speed_ab.ROWS["train_speed.py"].match(line)
    assert match.groups() == ("palace_v0 maskable_ppo batched", "13,766")
