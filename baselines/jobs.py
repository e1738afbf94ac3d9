"""Running a reproduce's training jobs: one ``baselines.train`` run per setting x algorithm x
seed, ``--jobs`` at a time in worker processes, and each setting's record after them."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from baselines.common import Run
from baselines.config import build_config, game_config, hyperparams
from baselines.final import setting_record
from baselines.train import parser as train_parser
from baselines.train import train


def _train_job(job: tuple) -> str:
    setting, algo, seed, budget, runs, timesteps, bar = job
    argv = ["--env", setting, "--algo", algo, "--seed", str(seed), "--budget", budget,
            "--runs", runs]
    if timesteps:
        argv[-2:-2] = ["--timesteps", str(timesteps), "--eval-freq", str(timesteps // 2)]
    command = f"python -m baselines.train {' '.join(argv[:-2])}"
    run = Run.create(Path(runs), build_config(train_parser().parse_args(argv)), command)
    # a progress bar for one run at a time on a terminal; labelled lines when runs share it
    train(run, progress=True, bar=bar)
    return str(run.path)


def run_all(jobs_list: list[tuple], jobs: int) -> list[str]:
    """Train every job, ``jobs`` at a time, the longest budgets first."""
    jobs_list = sorted(jobs_list, key=_job_steps, reverse=True)
    if jobs <= 1:
        return [_train_job(j) for j in jobs_list]
    # not a multiprocessing.Pool: its workers are daemons, which may not start processes of
    # their own (imitation collects a search agent's games on every core)
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(_train_job, jobs_list))


def _record_job(job: tuple) -> dict:
    setting, runs, budget = job
    print(f"evaluating the rule agents of {setting} on the same deals"
          + (" and the shipped model with its search" if game_config(setting).get("search")
             else ""), flush=True)
    return setting_record(setting, runs, budget)


def record_all(jobs_list: list[tuple], jobs: int) -> dict[str, dict]:
    """Every setting's record (``setting_record``), ``jobs`` at a time, the settings that
    also evaluate a search first (the longest)."""
    jobs_list = sorted(jobs_list, key=lambda j: not game_config(j[0]).get("search"))
    if jobs <= 1 or len(jobs_list) <= 1:
        records = [_record_job(j) for j in jobs_list]
    else:
        with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
            records = list(pool.map(_record_job, jobs_list))
    return {r["setting"]: r for r in records}


def _job_steps(job: tuple) -> int:
    setting, algo, _, budget, _, timesteps, _ = job
    return timesteps or hyperparams(algo, game_config(setting)["env"], budget, setting)[
        "timesteps"]


def seeds_of(setting: str, algo: str, budget: str, override: int | None) -> int:
    """Runs per algorithm: ``--seeds``, else the setting's ``seeds`` (full budget), else 1."""
    if override is not None:
        return override
    if budget == "quick":
        return 1
    return int(game_config(setting).get("seeds", {}).get(algo, 1))
