"""The package as users install it: the sdist and the wheel build and pass ``twine check``, and
the wheel, installed alone in a fresh virtual environment outside the source tree, lists and
plays every game, evaluates a shipped model, replays the record it wrote and serves the web
app, all from its own files (the models, the web app's files and the rules pages ship in it).

The new environment borrows this one's installed dependencies (a path file naming this
environment's site-packages; its .pth files, the checkout's editable install among them, are
not run), so the only card_envs it can import is the wheel's: the tests assert it. Needs the
``build`` and ``twine`` packages (the test extra).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ENV_NAMES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "card_envs"


def _require_build_tools() -> None:
    pytest.importorskip("build", reason="building the wheel needs the build package (test extra)")
    pytest.importorskip("twine", reason="checking the wheel needs twine (test extra)")


def _source_copy(dest: Path) -> Path:
    """The checkout's files (tracked and not ignored) copied to ``dest``: the build writes its
    egg-info and build/ folders there, not into the checkout."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                                capture_output=True, check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: all but the clutter
        skip = shutil.ignore_patterns(".git", ".venv", "runs", "build", "dist", "site",
                                      "__pycache__", "*.egg-info", ".pytest_cache")
        shutil.copytree(ROOT, dest, ignore=skip)
        return dest
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def _build(tmp_path: Path) -> tuple[Path, Path]:
    """(sdist, wheel) built from a copy of the checkout with this environment's setuptools."""
    source = _source_copy(tmp_path / "source")
    out = tmp_path / "dist"
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                          str(source)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    (sdist,) = out.glob("*.tar.gz")
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def test_the_sdist_and_the_wheel_build_pass_twine_check_and_hold_what_they_must(tmp_path):
    _require_build_tools()
    sdist, wheel = _build(tmp_path)
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist),
                            str(wheel)], capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr

    from card_envs import __version__

    assert wheel.name == f"card_envs-{__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    # the package alone: no baselines, docs or tests beside it
    assert {n.split("/")[0] for n in names} == {"card_envs", f"card_envs-{__version__}.dist-info"}
    shipped = [p.relative_to(ROOT).as_posix() for p in (PACKAGE / "rl" / "models").iterdir()
               if p.suffix in (".zip", ".json")]
    web = [p.relative_to(ROOT).as_posix() for p in (PACKAGE / "web" / "static").iterdir()]
    rules = [p.relative_to(ROOT).as_posix() for p in PACKAGE.glob("*/how_to_play.md")]
    assert len(shipped) >= 2 * len(ENV_NAMES) and "card_envs/web/static/index.html" in web
    assert len(rules) == len(ENV_NAMES)
    missing = [n for n in [*shipped, *web, *rules, "card_envs/py.typed"] if n not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert f"card_envs-{__version__}.dist-info/licenses/LICENSE" in names

    top = f"card_envs-{__version__}/"
    in_sdist = set(tarfile.open(sdist).getnames())
    for name in ("LICENSE", "CITATION.cff", "CHANGELOG.md", "mkdocs.yml", "README.md",
                 "baselines/configs/games.yaml", "docs/index.md", "tests/test_wheel.py"):
        assert top + name in in_sdist, f"{name} is not in the sdist"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, answer.read()


def test_the_wheel_installed_alone_plays_evaluates_replays_and_serves(tmp_path):
    _require_build_tools()
    pytest.importorskip("sb3_contrib", reason="the shipped models play with the train extra")
    pytest.importorskip("uvicorn", reason="card-envs serve needs the web extra")
    _, wheel = _build(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--no-deps", "--no-index", "--quiet", str(wheel)], check=True, timeout=600)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # this environment's dependencies, as plain paths (no .pth file of theirs is run)
    borrowed = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")

    work = tmp_path / "work"  # the working directory: no checkout, no docs/
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONNOUSERSITE="1", OMP_NUM_THREADS="1", CARD_ENVS_ASCII="1")

    def run(*argv: str, timeout: float = 600) -> str:
        done = subprocess.run(list(argv), cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)
        assert done.returncode == 0, f"{argv}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    card_envs = str(venv / "bin" / "card-envs")
    where = json.loads(run(str(python), "-c", (
        "import json, sys, card_envs; import card_envs.rl.policy_agent as p; "
        "print(json.dumps({'file': card_envs.__file__, 'version': card_envs.__version__, "
        "'models': str(p.models_dir())}))")))
    for key in ("file", "models"):
        assert Path(where[key]).resolve().is_relative_to(venv.resolve()), where
    from card_envs import __version__

    assert where["version"] == __version__

    listed = run(card_envs, "list")
    assert all(name in listed for name in ENV_NAMES), listed

    episodes = run(str(python), "-c", EPISODES)
    assert episodes.split() == [f"{name}:ok" for name in ENV_NAMES], episodes

    record = work / "games.jsonl"
    printed = run(card_envs, "evaluate", "simple_tricks", "best", "heuristic", "--games", "20",
                  "--record", str(record))
    assert "best@0: win" in printed and "20 games" in printed, printed
    replayed = run(card_envs, "replay", str(record))
    assert "20 games" in replayed and "replayed exactly" in replayed, replayed

    # the ladder writes docs only into a checkout it is given; here there is none
    refused = subprocess.run([card_envs, "ladder", "simple_tricks", "--write"], cwd=work,
                             env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "no docs/ folder" in refused.stderr, refused.stderr

    port = _free_port()
    server = subprocess.Popen([card_envs, "serve", "--port", str(port)], cwd=work, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                status, page = _get(base + "/")
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                assert time.monotonic() < deadline, "card-envs serve did not answer"
                time.sleep(0.5)
        assert status == 200 and b"/static/app.js" in page
        status, body = _get(base + "/api/catalog")
        catalog = json.loads(body)
        games = catalog["games"] if isinstance(catalog, dict) else catalog
        assert status == 200 and sorted(g["env"] for g in games) == sorted(ENV_NAMES)
        assert all(g["how_to_play"].strip() for g in games)  # the rules pages
        assert _get(base + "/static/favicon.svg")[0] == 200
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    assert not (site / "docs").exists() and not (site / "baselines").exists()
    assert sorted(p.name for p in work.iterdir()) == ["games.jsonl"]


# One episode of every registered env, masked random actions, from the installed package.
EPISODES = """
import importlib
import numpy as np
import card_envs

rng = np.random.default_rng(0)
for name in card_envs.env_names():
    env = importlib.import_module(f"card_envs.{name}").env()
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        legal = np.flatnonzero(obs["action_mask"])
        env.step(None if termination or truncation else int(rng.choice(legal)))
    print(f"{name}:ok")
"""
