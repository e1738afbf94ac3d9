"""Running a reproduce's training jobs: one ``baselines.train`` run per setting x algorithm x
seed, ``--jobs`` at a time in worker processes, and each setting's record after them."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch as th

from baselines.common import Run
from baselines.config import build_config, game_config, hyperparams, spec_and_game
from baselines.envs import batched_part, uses_twin, vec_masks
from baselines.final import reference_rows, search_row, setting_record, shipped_run
from baselines.train import parser as train_parser
from baselines.train import train


def _train_job(job: tuple) -> str:
    setting, algo, seed, budget, runs, timesteps, bar, demonstrations = job
    argv = ["--env", setting, "--algo", algo, "--seed", str(seed), "--budget", budget,
            "--runs", runs]
    if timesteps:
        argv[-2:-2] = ["--timesteps", str(timesteps), "--eval-freq", str(timesteps // 2)]
    command = f"python -m baselines.train {' '.join(argv[:-2])}"
    run = Run.create(Path(runs), build_config(train_parser().parse_args(argv)), command)
    # a progress bar for one run at a time on a terminal; labelled lines when runs share it
    train(run, progress=True, bar=bar, demonstrations=demonstrations)
    return str(run.path)


def _warm_job(job: tuple) -> str:
    """Compile a setting's twin (numba writes it to its on-disk cache): its training VecEnv
    stepped with random legal moves, each batched agent's move and a few evaluation games.
    The training jobs after it then load the compiled code instead of compiling it, two
    at a time, side by side (a twin takes some 20-60 s to compile)."""
    setting, budget = job
    argv = ["--env", setting, "--algo", "maskable_ppo", "--budget", budget]
    cfg = build_config(train_parser().parse_args(argv))
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    if not uses_twin(cfg):
        return setting
    from card_envs.vector.evaluation import evaluate

    names = [] if cfg["opponent"] in ("solo", "self") else cfg["opponent"].split(",")
    rule = next((n for n in names if n in spec.make_batched(**cfg["env_kwargs"]).agents),
                "random")
    seats = None if game.num_players == 1 else [
        "learner" if game.num_players > 2 and k % 2 == 0 and cfg["teammate"] == "learner"
        else rule for k in range(1, game.num_players)]
    venv = batched_part(cfg, 8, seats)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        masks = vec_masks(venv)
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    engine, state = venv.env.engine, venv.env.state
    for agent in engine.agents:
        engine.act(state, agent)
    evaluate(spec, game, [rule] * game.num_players, 2, 0)
    return setting


def _reference_job(job: tuple) -> tuple[str, int, dict]:
    """A setting's reference rule agents on its final deals (``reference_rows``): they do not
    depend on the runs, so they are played beside the training jobs."""
    _, setting, games = job
    print(f"evaluating the rule agents of {setting} on the same deals", flush=True)
    return setting, games, reference_rows(setting, games)


def _task(task: tuple):
    """One task of ``run_all``'s pool: ("warm", setting, budget), ("reference", setting,
    games) or ("train", *job)."""
    if task[0] == "warm":
        return _warm_job(task[1:])
    if task[0] == "reference":
        return _reference_job(task)
    return _train_job(task[1:])


def run_all(jobs_list: list[tuple], jobs: int, references: dict[str, int] | None = None
            ) -> tuple[list[str], dict[str, tuple[int, dict]]]:
    """Train every job, ``jobs`` at a time, the longest first (by ``_job_cost``), so that
    the last jobs to finish are short ones and no worker waits long for another; returns the
    run folders and the reference rows of ``references`` (setting: final games), as
    {setting: (games, rows)}.

    With more than one job at a time the same workers also compile each game's twin once
    (``_warm_job``: all but the first job's game, beside that job, which compiles its own)
    before the jobs of that game, and play the reference rule agents in the middle of the
    queue, where a worker would otherwise wait at the end."""
    jobs_list = sorted(jobs_list, key=_job_cost, reverse=True)
    references = references or {}
    if jobs <= 1:
        return [_train_job(j) for j in jobs_list], {}
    first = game_config(jobs_list[0][0])["env"]
    games: dict[str, tuple] = {}  # one setting per game: its twin's code serves them all
    for job in jobs_list:
        env = game_config(job[0])["env"]
        if env != first:
            games.setdefault(env, ("warm", job[0], job[3]))
    train = [("train", *job) for job in jobs_list]
    half = len(train) // 2
    tasks = [train[0], *games.values(), *train[1:half],
             *(("reference", s, n) for s, n in references.items()), *train[half:]]
    # not a multiprocessing.Pool: its workers are daemons, which may not start processes of
    # their own (imitation collects a search agent's games on every core)
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
        done = list(pool.map(_task, tasks))
    dirs = [d for task, d in zip(tasks, done, strict=True) if task[0] == "train"]
    refs = {d[0]: (d[1], d[2]) for task, d in zip(tasks, done, strict=True)
            if task[0] == "reference"}
    return dirs, refs


def _record_job(job: tuple):
    """A setting's record (its search rows given), or one opponent's row of its search."""
    if job[0] == "search":
        _, setting, model_file, opponent, games = job
        return search_row(setting, model_file, opponent, games)
    _, setting, runs, budget, search, reference = job
    if reference is None:
        print(f"evaluating the rule agents of {setting} on the same deals", flush=True)
    return setting_record(setting, runs, budget, search, reference)


def record_all(jobs_list: list[tuple], jobs: int,
               references: dict[str, tuple[int, dict]] | None = None) -> dict[str, dict]:
    """Every setting's record (``setting_record``), ``jobs`` at a time. The play with search
    (the longest part, for the settings that have one) goes first, one task per opponent,
    so that it is spread over the workers; the other settings' records beside it. A
    setting's reference rows in ``references`` ({setting: (games, rows)}, from ``run_all``)
    are used where they were played on its final games."""
    references = references or {}

    def reference(setting: str, runs: list[dict]) -> dict | None:
        games, rows = references.get(setting, (None, None))
        return rows if games == runs[0]["final_games"] else None

    searches: dict[str, list[tuple]] = {}
    for setting, runs, budget in jobs_list:
        cfg, shipped = game_config(setting, budget), shipped_run(setting, runs)
        if cfg.get("search") and shipped is not None:
            print(f"evaluating the model of {setting} with its search", flush=True)
            games = runs[0]["final_games"]
            if budget == "quick":  # the search plays scalar games: at most its quick_games
                games = min(games, int(cfg["search"].get("quick_games", games)))
            searches[setting] = [("search", setting, Path(shipped["path"]) / "model.zip",
                                  opponent, games)
                                 for opponent in cfg["eval_opponents"]]
    if jobs <= 1 or len(jobs_list) + sum(map(len, searches.values())) <= 1:
        rows = {s: [_record_job(t) for t in tasks] for s, tasks in searches.items()}
        records = [_record_job(("record", s, runs, b, rows.get(s), reference(s, runs)))
                   for s, runs, b in jobs_list]
        return {r["setting"]: r for r in records}
    # the models play with one torch thread per worker: more fight each other on a few cores
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                             initializer=th.set_num_threads, initargs=(1,)) as pool:
        # the strongest opponents, listed last, play the longest games: submitted first
        pending = {s: [pool.submit(_record_job, t) for t in reversed(tasks)][::-1]
                   for s, tasks in searches.items()}
        later = [pool.submit(_record_job, ("record", s, runs, b, None, reference(s, runs)))
                 for s, runs, b in jobs_list if s not in searches]
        later += [pool.submit(_record_job, ("record", s, runs, b,
                                            [f.result() for f in pending[s]],
                                            reference(s, runs)))
                  for s, runs, b in jobs_list if s in searches]
        records = [f.result() for f in later]
    return {r["setting"]: r for r in records}


def _job_cost(job: tuple) -> int:
    """A job's length, roughly: its training steps times the game's seats (every step also
    plays the other seats' moves, which cost most of a step in the many-player games)."""
    setting, algo, _, budget, _, timesteps, _, _ = job
    cfg = game_config(setting)
    steps = timesteps or hyperparams(algo, cfg["env"], budget, setting)["timesteps"]
    return steps * spec_and_game(cfg["env"], cfg["env_kwargs"])[1].num_players


def seeds_of(setting: str, algo: str, budget: str, override: int | None) -> int:
    """Runs per algorithm: ``--seeds``, else the setting's ``seeds`` (full budget), else 1."""
    if override is not None:
        return override
    if budget == "quick":
        return 1
    return int(game_config(setting).get("seeds", {}).get(algo, 1))
