"""Running a reproduce's training jobs: one ``baselines.train`` run per setting x algorithm x
seed, ``--jobs`` at a time in worker processes, and each setting's record after them."""

from __future__ import annotations

import multiprocessing as mp
import time
from collections import Counter, deque
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np
import torch as th

from baselines.common import Run
from baselines.config import build_config, game_config, spec_and_game
from baselines.envs import batched_part, uses_twin, vec_masks
from baselines.final import collect, reference_rows, search_row, setting_record, shipped_run
from baselines.recipes import recipe
from baselines.train import parser as train_parser
from baselines.train import train
from card_envs.core.gym_env import LEARNER, teammate_places
from card_envs.core.make import make_batched
from card_envs.rl.policy_agent import ALGOS


def _train_job(job: tuple) -> str:
    """Every stage of a setting's recipe for one algorithm and seed, from scratch, each in its
    own folder (``RUNS/SETTING/ALGO-seedN/stageK-NAME``); a stage already finished is kept, an
    interrupted one resumes from its last checkpoint. Returns the last stage's folder."""
    setting, algo, seed, budget, runs, timesteps, bar, demonstrations, device, command = job
    folder = Path(runs) / setting / f"{algo}-seed{seed}"
    previous: Path | None = None
    for cfg in recipe(setting, algo, budget, seed, timesteps, device):
        path = folder / f"stage{cfg['stage']}-{cfg['stage_name'].replace(' ', '-')}"
        if previous is not None:
            cfg["init_from"] = str(previous / "model.zip")
        run = Run.at(path, cfg, command)
        if not run.finished():
            # a progress bar for one run at a time on a terminal; labelled lines else
            train(run, progress=True, bar=bar, demonstrations=demonstrations)
        previous = path
    return str(previous)


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
    rule = next((n for n in names if n in make_batched(spec, **cfg["env_kwargs"]).agents),
                "random")
    mates = teammate_places(game) if cfg["teammate"] == "learner" else []
    seats = None if game.num_players == 1 else [
        LEARNER if k in mates else rule for k in range(1, game.num_players)]
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
    games), ("search", setting, model_file, opponent, games) or ("train", *job)."""
    if task[0] == "warm":
        return _warm_job(task[1:])
    if task[0] == "reference":
        return _reference_job(task)
    if task[0] == "search":
        return _record_job(task)
    return _train_job(task[1:])


def _search_tasks(setting: str, runs: list[dict], budget: str) -> list[tuple]:
    """The play with search of a setting's shipped run (games.yaml ``search``), one task
    per evaluation opponent; none for a setting without a search or a shipped run."""
    cfg, shipped = game_config(setting, budget), shipped_run(setting, runs)
    if not cfg.get("search") or shipped is None:
        return []
    games = runs[0]["final_games"]
    if budget == "quick":  # the search plays scalar games: at most its quick_games
        games = min(games, int(cfg["search"].get("quick_games", games)))
    return [("search", setting, Path(shipped["path"]) / "model.zip", opponent, games)
            for opponent in cfg["eval_opponents"]]


def collect_runs(dirs: list[str]) -> list[dict]:
    """The finished runs of ``dirs`` as ``collect`` gives them, in the records' order (by
    setting, then algorithm as ALGOS lists them, then seed)."""
    return sorted((collect(d) for d in dirs),
                  key=lambda r: (r["setting"], list(ALGOS).index(r["algo"]), r["seed"]))


def run_all(jobs_list: list[tuple], jobs: int, references: dict[str, int] | None = None
            ) -> tuple[list[str], dict[str, dict]]:
    """Train every job, ``jobs`` at a time, the longest first (by ``_job_cost``), so that
    the last jobs to finish are short ones and no worker waits long for another; returns the
    run folders and what the same workers measured beside them for the records:
    ``{"reference": {setting: (games, rows)}, "search": {setting: (model_file, rows)}}``.

    With more than one job at a time the workers also compile each game's twin once
    (``_warm_job``: all but the first job's game, beside that job, which compiles its own)
    before the jobs of that game, play the reference rule agents of ``references``
    ({setting: final games}) in the middle of the queue, and the play with search of a
    setting's shipped run as soon as the setting's runs are done (ahead of the jobs still
    waiting), where a worker would otherwise wait at the end."""
    jobs_list = sorted(jobs_list, key=_job_cost, reverse=True)
    references = references or {}
    measured: dict[str, dict] = {"reference": {}, "search": {}}
    progress = Progress(len(jobs_list))
    if jobs <= 1:
        return [progress.done(_train_job(j)) for j in jobs_list], measured
    train = [("train", *job) for job in jobs_list]
    pending = _queue(train, references)
    left = Counter(job[0] for job in jobs_list)  # each setting's runs not yet done
    finished: dict[tuple, str] = {}
    searches: dict[str, list] = {}
    # not a multiprocessing.Pool: its workers are daemons, which may not start processes of
    # their own (imitation collects a search agent's games on every core)
    # (one torch thread per worker, as each run sets for itself: the search rows' models)
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                             initializer=th.set_num_threads, initargs=(1,)) as pool:
        running: dict = {}
        while pending or running:
            while pending and len(running) < jobs:  # the queue's head goes next
                task = pending.popleft()
                running[pool.submit(_task, task)] = task
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                task, out = running.pop(future), future.result()
                if task[0] == "reference":
                    measured["reference"][out[0]] = (out[1], out[2])
                elif task[0] == "search":
                    searches.setdefault(task[1], []).append((task, out))
                elif task[0] == "train":
                    finished[task] = progress.done(out)
                    left[task[1]] -= 1
                    if not left[task[1]]:  # the setting's runs are done: its search next
                        runs = collect_runs([d for t, d in finished.items() if t[1] == task[1]])
                        searching = _search_tasks(task[1], runs, task[4])
                        if searching:
                            print(f"evaluating the model of {task[1]} with its search",
                                  flush=True)
                        pending.extendleft(reversed(searching))
    for setting, rows in searches.items():  # in the order of the evaluation opponents
        by_opponent = {task[3]: out for task, out in rows}
        measured["search"][setting] = (
            rows[0][0][2], [by_opponent[o] for o in game_config(setting)["eval_opponents"]])
    return [finished[t] for t in train], measured


def _queue(train: list[tuple], references: dict[str, int]) -> deque:
    """The tasks of ``run_all``'s pool in order: the longest training job, the warming of
    every other game's twin, the first half of the training jobs, the reference rows, the
    rest."""
    first = game_config(train[0][1])["env"]
    games: dict[str, tuple] = {}  # one setting per game: its twin's code serves them all
    for task in train:
        env = game_config(task[1])["env"]
        if env != first:
            games.setdefault(env, ("warm", task[1], task[4]))
    half = max(1, len(train) // 2)  # train[0] goes first in any case
    return deque([train[0], *games.values(), *train[1:half],
                  *(("reference", s, n) for s, n in references.items()), *train[half:]])


class Progress:
    """Where a reproduce stands: a line as each run finishes (runs done of all, time so far,
    and a guess at the time left from the runs' mean)."""

    def __init__(self, total: int):
        self.total, self.count, self.started = total, 0, time.time()

    def done(self, run_dir: str) -> str:
        self.count += 1
        spent = time.time() - self.started
        left = spent / self.count * (self.total - self.count)
        print(f"[reproduce] {self.count}/{self.total} runs done ({run_dir}); "
              f"{spent / 60:.0f} min so far, about {left / 60:.0f} min left", flush=True)
        return run_dir


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
               measured: dict[str, dict] | None = None) -> dict[str, dict]:
    """Every setting's record (``setting_record``), ``jobs`` at a time. The play with search
    (the longest part, for the settings that have one) goes first, one task per opponent,
    so that it is spread over the workers; the other settings' records beside it. What
    ``run_all`` measured beside the training (``measured``: reference rows on the runs'
    final games, the search rows of the shipped run's model) is used, not played again."""
    measured = measured or {}
    references, searched = measured.get("reference", {}), measured.get("search", {})

    def reference(setting: str, runs: list[dict]) -> dict | None:
        games, rows = references.get(setting, (None, None))
        return rows if games == runs[0]["final_games"] else None

    searches: dict[str, list[tuple]] = {}
    known: dict[str, list[dict]] = {}
    for setting, runs, budget in jobs_list:
        tasks = _search_tasks(setting, runs, budget)
        model_file, rows = searched.get(setting, (None, None))
        if tasks and model_file == tasks[0][2] and rows is not None:
            known[setting] = rows
        elif tasks:
            print(f"evaluating the model of {setting} with its search", flush=True)
            searches[setting] = tasks
    if jobs <= 1 or len(jobs_list) + sum(map(len, searches.values())) <= 1:
        rows = {s: [_record_job(t) for t in tasks] for s, tasks in searches.items()}
        records = [_record_job(("record", s, runs, b, known.get(s, rows.get(s)),
                                reference(s, runs)))
                   for s, runs, b in jobs_list]
        return {r["setting"]: r for r in records}
    # the models play with one torch thread per worker: more fight each other on a few cores
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                             initializer=th.set_num_threads, initargs=(1,)) as pool:
        # the strongest opponents, listed last, play the longest games: submitted first
        pending = {s: [pool.submit(_record_job, t) for t in reversed(tasks)][::-1]
                   for s, tasks in searches.items()}
        later = [pool.submit(_record_job, ("record", s, runs, b, known.get(s),
                                           reference(s, runs)))
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
    setting, algo, _, budget, _, timesteps = job[:6]
    cfg = game_config(setting)
    steps = sum(stage["timesteps"] for stage in recipe(setting, algo, budget, 0, timesteps))
    return steps * spec_and_game(cfg["env"], cfg["env_kwargs"])[1].num_players


def seeds_of(setting: str, algo: str, budget: str, override: int | None) -> int:
    """Runs per algorithm: ``--seeds``, else the quick budget's one, else the setting's
    ``seeds`` (full budget), else ``DEFAULT_SEEDS``."""
    if override is not None:
        return override
    if budget == "quick":
        return 1
    return int(game_config(setting).get("seeds", {}).get(algo, DEFAULT_SEEDS))


# runs per algorithm and setting at the full budget, unless games.yaml `seeds` says more
DEFAULT_SEEDS = 3
