"""Running a reproduce's training jobs: one ``baselines.train`` run per setting x algorithm x
seed, ``--jobs`` at a time in worker processes, and each setting's record after them."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch as th

from baselines.common import Run
from baselines.config import build_config, game_config, hyperparams, spec_and_game
from baselines.final import search_row, setting_record, shipped_run
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


def run_all(jobs_list: list[tuple], jobs: int) -> list[str]:
    """Train every job, ``jobs`` at a time, the longest first (by ``_job_cost``), so that
    the last jobs to finish are short ones and no worker waits long for another."""
    jobs_list = sorted(jobs_list, key=_job_cost, reverse=True)
    if jobs <= 1:
        return [_train_job(j) for j in jobs_list]
    # not a multiprocessing.Pool: its workers are daemons, which may not start processes of
    # their own (imitation collects a search agent's games on every core)
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(_train_job, jobs_list))


def _record_job(job: tuple):
    """A setting's record (its search rows given), or one opponent's row of its search."""
    if job[0] == "search":
        _, setting, model_file, opponent, games = job
        return search_row(setting, model_file, opponent, games)
    _, setting, runs, budget, search = job
    print(f"evaluating the rule agents of {setting} on the same deals", flush=True)
    return setting_record(setting, runs, budget, search)


def record_all(jobs_list: list[tuple], jobs: int) -> dict[str, dict]:
    """Every setting's record (``setting_record``), ``jobs`` at a time. The play with search
    (the longest part, for the settings that have one) goes first, one task per opponent,
    so that it is spread over the workers; the other settings' records beside it."""
    searches: dict[str, list[tuple]] = {}
    for setting, runs, _ in jobs_list:
        cfg, shipped = game_config(setting), shipped_run(setting, runs)
        if cfg.get("search") and shipped is not None:
            print(f"evaluating the model of {setting} with its search", flush=True)
            searches[setting] = [("search", setting, Path(shipped["path"]) / "model.zip",
                                  opponent, runs[0]["final_games"])
                                 for opponent in cfg["eval_opponents"]]
    if jobs <= 1 or len(jobs_list) + sum(map(len, searches.values())) <= 1:
        rows = {s: [_record_job(t) for t in tasks] for s, tasks in searches.items()}
        records = [_record_job(("record", s, runs, b, rows.get(s))) for s, runs, b in jobs_list]
        return {r["setting"]: r for r in records}
    # the models play with one torch thread per worker: more fight each other on a few cores
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                             initializer=th.set_num_threads, initargs=(1,)) as pool:
        # the strongest opponents, listed last, play the longest games: submitted first
        pending = {s: [pool.submit(_record_job, t) for t in reversed(tasks)][::-1]
                   for s, tasks in searches.items()}
        later = [pool.submit(_record_job, ("record", s, runs, b, None))
                 for s, runs, b in jobs_list if s not in searches]
        later += [pool.submit(_record_job, ("record", s, runs, b,
                                            [f.result() for f in pending[s]]))
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
