"""The import contract: core imports no game, registry, rl or tool; games import only core;
no package has an import circle inside it.

The layers above the games (``baselines > rl > tools > registry > core``) are the
import-linter contract in pyproject.toml; the per-game contracts are made here from the
registry, so that a new game is checked without anyone listing it, and so is the one that
forbids circles among the modules (and subpackages) of every package of card_envs: the
package itself, core, rl, vector, web, each game. Imports inside functions and under
``TYPE_CHECKING`` count: grimp (import-linter's graph) reads every import statement of a module, and
``test_the_contract_sees_every_import_statement`` checks that against the modules' own
syntax trees.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from card_envs.registry import env_names, load_spec

grimp = pytest.importorskip("grimp", reason="the import contract needs the test extra")
pytest.importorskip("importlinter")

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("card_envs", "baselines")
NO_CIRCLES = "no import circle inside any package of card_envs"


def game_packages() -> list[str]:
    """The packages of the registered games that live in card_envs (``card_envs.palace``)."""
    out = []
    for name in env_names():
        package = load_spec(name).package
        if package.startswith("card_envs.") and package not in out:
            out.append(package)
    return out


def _ini_list(values: list[str]) -> str:
    return "".join(f"\n    {v}" for v in values)


def contract_ini(top_level: list[str]) -> str:
    """pyproject.toml's contracts plus the per-game ones, as one import-linter INI file."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = ["[importlinter]", f"root_packages ={_ini_list(config['root_packages'])}", ""]
    for k, contract in enumerate(config["contracts"]):
        lines += [f"[importlinter:contract:pyproject-{k}]"]
        lines += [f"{key} = {_ini_list(v) if isinstance(v, list) else v}"
                  for key, v in contract.items()]
        lines.append("")
    games = game_packages()
    lines += [
        "[importlinter:contract:core-imports-no-game]",
        "name = core imports no game",
        "type = forbidden",
        "source_modules = card_envs.core",
        f"forbidden_modules ={_ini_list(games)}",
        "",
    ]
    lines += [
        "[importlinter:contract:no-circles]",
        f"name = {NO_CIRCLES}",
        "type = acyclic_siblings",
        "ancestors = card_envs",
        "",
    ]
    for game in games:
        others = [m for m in top_level if m not in (game, "card_envs.core")]
        lines += [
            f"[importlinter:contract:{game}]",
            f"name = {game} imports only card_envs.core",
            "type = forbidden",
            f"source_modules = {game}",
            f"forbidden_modules ={_ini_list([*others, 'baselines'])}",
            "",
        ]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_the_import_contract_is_kept(graph, tmp_path):
    top_level = sorted(graph.find_children("card_envs"))
    assert "card_envs.core" in top_level and "card_envs.registry" in top_level
    config = tmp_path / "contracts.ini"
    config.write_text(contract_ini(top_level))
    # in a process of its own: import-linter prints through a console made when it is first
    # imported, which may be a stream that pytest has closed since
    run = subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
         f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))"],
        capture_output=True, text=True, cwd=ROOT)
    printed = run.stdout + run.stderr
    assert run.returncode == 0, printed
    for game in game_packages():
        assert f"{game} imports only card_envs.core KEPT" in printed, printed
    assert f"{NO_CIRCLES} KEPT" in printed, printed


def test_core_and_games_do_not_import_the_package_root(graph):
    # ``import card_envs`` runs the registry, so a core or game module that imports the root
    # package depends on everything above it.
    low = ["card_envs.core", *game_packages()]
    for module in sorted(graph.modules):
        if any(module == p or module.startswith(p + ".") for p in low):
            assert not graph.direct_import_exists(importer=module, imported="card_envs"), module


def _imports(path: Path, module: str, modules: set[str]) -> set[str]:
    """Every module of ours that ``path`` imports, at any depth (inside functions too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base = parts[: len(parts) - node.level + is_package]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            for alias in node.names:  # ``from package import submodule`` imports the submodule
                sub = f"{stem}.{alias.name}"
                found.add(sub if sub in modules else stem)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def test_the_contract_sees_every_import_statement(graph):
    """Each import statement of ours, module-level or inside a function, is an edge of the
    graph the contract checks (so an import hidden in a function cannot slip through)."""
    missing, seen = [], 0
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(
                ".__init__"
            )
            for imported in _imports(path, module, graph.modules) - {module}:
                seen += 1
                if not graph.direct_import_exists(importer=module, imported=imported):
                    missing.append(f"{module} -> {imported}")
    assert not missing, missing
    assert seen > 100


def test_importing_card_envs_imports_neither_torch_nor_the_rl_package():
    code = ("import sys, card_envs; card_envs.list_envs(); "
            "print(sorted(m for m in ('torch', 'card_envs.rl', 'card_envs.cli', 'mcp', "
            "'card_envs.mcp_server', 'card_envs.core.cmd_agent') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_the_package_reads_no_file_of_the_baselines_layer():
    """``card_envs`` names no path or resource of ``baselines`` (the shipped models are its
    own package data, ``card_envs/rl/models``): a string constant naming the baselines
    package as a place to read from is a read across the layers."""
    offending = []
    for path in (ROOT / "card_envs").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    node.value == "baselines" or "baselines/" in node.value):
                offending.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not offending, offending


# --- the generic layers name no game ---------------------------------------------------------
GENERIC = ("card_envs/core", "card_envs/vector", "card_envs/rl", "card_envs/records.py",
           "card_envs/ladder.py", "card_envs/web", "card_envs/mcp_server.py", "baselines")
# Where a generic layer names a game on purpose, and why: (file, the name it contains).
NAMED_ON_PURPOSE = {
    # the example of a game name in the error message for a bad argument
    ("card_envs/vector/sb3.py", "simple_tricks"),
    # examples of an env or setting name in command-line help texts
    ("baselines/evaluate.py", "thirty_one_v0"),
    ("baselines/evaluate.py", "literature_v0"),
    ("baselines/expert_iteration.py", "simple_tricks_v0"),
    ("baselines/train.py", "thirty_one_v0"),
    # two analysis scripts about one game's play each (where a 98 Cards network loses ground
    # to the expert; how often a Literature model asks hopelessly): tools for that game, run
    # by hand, that no other module imports
    ("baselines/handoff.py", "ninety_eight_cards_v0"),
    ("baselines/literature_asks.py", "literature_v0"),
    ("baselines/literature_asks.py", "card_envs.literature.deck"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of a module's tree (they may name games as examples)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def test_the_generic_layers_name_no_game():
    """No module of the generic layers imports a game's package or names a game in a string
    (its name, env name or Gymnasium name) outside docstrings, but for NAMED_ON_PURPOSE: a
    game's knowledge lives in its folder and reaches the tools through its spec."""
    specs = [load_spec(name) for name in env_names()]
    names = {n for s in specs for n in (s.name, s.env_name, s.gym_name)}
    word = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    packages = tuple(s.package for s in specs)
    found, seen = set(), 0
    for top in GENERIC:
        for path in sorted((ROOT / top).rglob("*.py") if (ROOT / top).is_dir() else [ROOT / top]):
            seen += 1
            where = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text())
            docs = _docstrings(tree)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                               else [node.module or ""])
                    found |= {(where, m) for m in modules
                              if m in packages or m.startswith(tuple(p + "." for p in packages))}
                elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
                      and id(node) not in docs):
                    found |= {(where, m) for m in word.findall(node.value)}
    assert seen > 20
    assert found - NAMED_ON_PURPOSE == set()
    assert NAMED_ON_PURPOSE - found == set(), "an exception no longer needed: remove it"



# --- no long functions ------------------------------------------------------------------------
MAX_LINES = 80  # issue 58: from a function's ``def`` line to its last line
# Functions allowed past MAX_LINES, and why: (file, qualified name). None so far.
LONG_ON_PURPOSE: dict[tuple[str, str], str] = {}


def _functions(node: ast.AST, prefix: str = ""):
    """Every function under ``node`` with its qualified name (``Class.method``,
    ``outer.inner``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + child.name
            if not isinstance(child, ast.ClassDef):
                yield name, child
            yield from _functions(child, name + ".")
        else:
            yield from _functions(child, prefix)


def test_no_function_is_longer_than_max_lines():
    """Every function of card_envs, the compiled kernels included, fits in MAX_LINES lines
    from its ``def`` line to its last (but for LONG_ON_PURPOSE): a longer one is split into
    named steps."""
    lengths = {}
    for path in sorted((ROOT / "card_envs").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for name, node in _functions(ast.parse(path.read_text(), filename=str(path))):
            lengths[where, name] = (node.lineno, node.end_lineno - node.lineno + 1)
    assert len(lengths) > 1000
    long = [f"{where}:{line}: {name} ({length} lines)"
            for (where, name), (line, length) in lengths.items()
            if length > MAX_LINES and (where, name) not in LONG_ON_PURPOSE]
    assert not long, f"functions over {MAX_LINES} lines: split them\n" + "\n".join(long)
    stale = [key for key in LONG_ON_PURPOSE if lengths.get(key, (0, 0))[1] <= MAX_LINES]
    assert not stale, f"an exception no longer needed: remove it {stale}"
