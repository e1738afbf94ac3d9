"""Train and evaluate every baseline setting x algorithm, then write the results table.

    python -m baselines.reproduce --budget quick     # minutes: one short run each, printed
    python -m baselines.reproduce --budget full --jobs 2 --ship
                                                     # docs/baselines.md, docs/img/, models

Settings come from configs/games.yaml, hyperparameters and budgets from
configs/<algo>.yaml. Each run keeps its best checkpoint (chosen on selection deals, greedy or
sampled play, whichever did better) and is then evaluated in both modes against every rule
agent of its setting on deals no run trains or selects on (``FINAL_SEED``). The rule agents
are evaluated on the same deals in the model's seat, as reference figures.

``full`` trains the setting's seeds (``seeds:`` in games.yaml, default one per algorithm),
records every setting's results in docs/baselines.json and renders docs/baselines.md, the
learning curves under docs/img/ and each game page's copy of its results from it; running
some ``--settings`` updates their sections and keeps the others. ``quick`` trains one seed
each and prints, per game, a short table beside the full-budget figures (nothing in docs/
changes). ``--ship`` copies each setting's best run (by its selection figure, not by the
final evaluation) to baselines/models/<setting>.zip, where the agent name ``best`` finds it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from baselines.common import (
    BUDGETS,
    Run,
    evaluate_agent,
    game_config,
    hyperparams,
    result_row,
    settings,
    spec_and_game,
)
from baselines.train import FINAL_SEED, build_config, selection, train
from baselines.train import parser as train_parser
from card_envs.core.agents import make_agent
from card_envs.core.evaluation import Z95, wilson
from card_envs.doctables import page_path
from card_envs.rl.policy_agent import ALGOS, guided_search, load_model_agent, write_json

ROOT = Path(__file__).resolve().parents[1]
MODELS = Path(__file__).resolve().parent / "models"
RESULTS = ROOT / "docs" / "baselines.json"
ALGO_NAMES = {"maskable_ppo": "MaskablePPO", "dqn": "DQN (masked)"}
METRIC_NAMES = {
    "wins_rate": "win rate",
    "decided_rate": "wins of decided games",
    "losses_rate": "loss rate",
    "mean_score": "mean score",
    "mean_payoff": "mean payoff",
}


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
    with mp.get_context("spawn").Pool(jobs) as pool:
        return pool.map(_train_job, jobs_list, chunksize=1)


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
        with mp.get_context("spawn").Pool(jobs) as pool:
            records = pool.map(_record_job, jobs_list, chunksize=1)
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


def pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Results of several runs against one opponent, pooled: counts add up."""
    out: dict[str, Any] = {"opponent": rows[0]["opponent"], "kind": rows[0]["kind"]}
    for what in ("wins", "draws", "losses", "games"):
        out[what] = sum(r[what] for r in rows)
    for what in ("wins", "draws", "losses"):
        out[f"{what}_rate"] = out[what] / out["games"]
        out[f"{what}_low"], out[f"{what}_high"] = wilson(out[what], out["games"])
    decided = out["wins"] + out["losses"]
    out["decided_rate"] = out["wins"] / decided if decided else 0.0
    out["decided_low"], out["decided_high"] = wilson(out["wins"], decided)
    if "mean_score" in rows[0]:
        n = out["games"]
        total = sum(r["score_sum"] for r in rows)
        sq = sum(r["score_sq_sum"] for r in rows)
        mean = total / n
        var = max(0.0, (sq - n * mean * mean) / max(n - 1, 1))
        half = Z95 * (var / n) ** 0.5
        # inside the range of the runs' own intervals, which lie inside the scores seen
        low = max(mean - half, min(r["score_low"] for r in rows))
        high = min(mean + half, max(r["score_high"] for r in rows))
        out.update(mean_score=mean, score_low=low, score_high=high)
    if "mean_place" in rows[0]:
        counts = [sum(c) for c in zip(*(r["place_counts"] for r in rows), strict=True)]
        out["place_counts"] = counts
        out["mean_place"] = sum(k * c for k, c in enumerate(counts, 1)) / max(sum(counts), 1)
    out["per_seed"] = [r.get("mean_score", r["wins_rate"]) for r in rows]
    return out


def reference_rows(setting: str, games: int, seed: int = FINAL_SEED) -> dict[str, dict]:
    """The setting's reference rule agents in the model's place, on the final evaluation's
    deals: ``{agent: {opponent: result row}}``."""
    cfg = game_config(setting)
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    out: dict[str, dict] = {}
    for agent_name in reference_agents(setting):
        rows = out[agent_name] = {}
        for opponent in cfg["eval_opponents"]:
            agent = make_agent(spec, agent_name, game)
            result = evaluate_agent(spec, game, agent, opponent, games, seed, cfg["duplicate"],
                                    cfg["team"])
            rows[opponent] = result_row(result, opponent)
    return out


def reference_agents(setting: str) -> list[str]:
    """The rule agents a setting's table shows as reference: ``reference`` in games.yaml,
    else the game's strongest rule agent."""
    cfg = game_config(setting)
    spec, _ = spec_and_game(cfg["env"], cfg["env_kwargs"])
    return list(cfg.get("reference") or [spec.strongest_agent])


def collect(run_dir: str) -> dict[str, Any]:
    """A finished run's results (eval.json), learning curve and settings, as plain data."""
    run = Run(Path(run_dir))
    cfg = run.config
    ev = json.loads((run.path / "eval.json").read_text())
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    return {
        "setting": cfg["setting"],
        "algo": cfg["algo"],
        "seed": cfg["seed"],
        "timesteps": ev["timesteps"],
        "trained_timesteps": ev.get("trained_timesteps", ev["timesteps"]),
        "wall_s": ev["wall_s"],
        "mode": ev.get("mode", "greedy"),
        "selection": ev.get("selection"),
        "results": ev["results"],
        "by_mode": ev.get("by_mode", {"greedy": ev["results"]}),
        "final_games": cfg["final_games"],
        "curve": run.curve(),
        "path": run_dir,
        "solo": game.num_players == 1,
    }


def config_drift(run_dir: str, timesteps: int | None = None) -> list[str]:
    """How a finished run's settings differ from what configs/ gives its setting, algorithm,
    seed and budget today (and ``--timesteps``, if given; empty when they agree): a table
    rebuilt by ``--collect`` must describe what ``reproduce`` would train."""
    cfg = Run(Path(run_dir)).config
    argv = ["--env", cfg["setting"], "--algo", cfg["algo"], "--seed", str(cfg["seed"]),
            "--budget", cfg["budget"]]
    if timesteps:
        argv += ["--timesteps", str(timesteps), "--eval-freq", str(timesteps // 2)]
    expected = build_config(train_parser().parse_args(argv))
    unused = {"pretrain"} if cfg["algo"] != "maskable_ppo" else set()  # only PPO imitates
    return [f"{key}: run {cfg.get(key)!r}, configs {expected.get(key)!r}"
            for key in sorted((set(cfg) | set(expected)) - unused)
            if cfg.get(key) != expected.get(key)]


def shipped_run(setting: str, runs: list[dict]) -> dict | None:
    """The run to ship: the best figure on the selection deals (never the final ones)."""
    candidates = [r for r in runs if r.get("selection")]
    if not candidates:
        return None
    higher = selection(game_config(setting))["higher"]
    return (max if higher else min)(candidates, key=lambda r: r["selection"]["value"])


def ship(setting: str, run: dict) -> None:
    """Copy a run's final model into baselines/models/ as the setting's shipped model."""
    MODELS.mkdir(exist_ok=True)
    for suffix in (".zip", ".json"):
        shutil.copyfile(Path(run["path"]) / f"model{suffix}", MODELS / f"{setting}{suffix}")
    print(f"shipped {run['path']} as baselines/models/{setting}.zip", flush=True)


def _row(rows: list[dict], opponent: str) -> dict | None:
    return next((x for x in rows if x["opponent"] == opponent), None)


def check_target(target: dict, record: dict) -> tuple[bool, str]:
    """Whether the shipped model meets ``target``, with the figures that say so."""
    played = record.get("search") if target.get("play") == "search" else record.get("shipped")
    row = _row(played["results"], target["opponent"]) if played else None
    if row is None:
        return False, "not measured"
    metric = target["metric"]
    value = row[metric]
    shown = _figure(row, metric)
    if "beats_agent" in target:
        ref = record["reference"].get(target["beats_agent"], {}).get(target["opponent"])
        if ref is None:
            return False, f"{shown}; {target['beats_agent']} not measured"
        margin = target.get("margin", 0)
        ok = value > ref[metric] + margin
        return ok, f"{shown} vs {target['beats_agent']} {_figure(ref, metric)} on the same deals"
    if "below" in target:
        return value < target["below"], f"{shown}"
    if "above" in target:
        return value > target["above"], f"{shown}"
    return value >= target["at_least"], f"{shown}"


def _figure(row: dict, metric: str) -> str:
    """A metric of a result row with its 95% interval."""
    if metric == "mean_score":
        return f"{row['mean_score']:.2f} [{row['score_low']:.2f}, {row['score_high']:.2f}]"
    if metric == "mean_payoff":
        return f"{row['mean_payoff']:+.3f}"
    what = metric.removesuffix("_rate")
    return f"{row[metric]:.1%} [{row[f'{what}_low']:.1%}, {row[f'{what}_high']:.1%}]"


def target_text(target: dict) -> str:
    """A target in words; ``play: search`` targets the model playing with its search."""
    text = _target_words(target)
    return f"with search, {text}" if target.get("play") == "search" else text


def _target_words(target: dict) -> str:
    metric = METRIC_NAMES[target["metric"]]
    if "beats_agent" in target:
        margin = target.get("margin", 0)
        by = f" by more than {margin:g}" if margin else ""
        return f"{metric} above `{target['beats_agent']}`'s{by}"
    if "below" in target:
        return f"{metric} against `{target['opponent']}` below {target['below']:.1%}"
    if "above" in target:
        return f"{metric} against `{target['opponent']}` above {target['above']:.1%}"
    return f"{metric} against `{target['opponent']}` at least {target['at_least']:.1%}"


def _pct(row: dict, what: str) -> str:
    return f"{row[f'{what}_rate']:.1%} [{row[f'{what}_low']:.1%}, {row[f'{what}_high']:.1%}]"


def _score(row: dict) -> str:
    if "mean_place" in row and "mean_score" not in row:
        return f"mean place {row['mean_place']:.2f}"
    if "mean_score" not in row:
        return ""
    low, high = row["score_low"], row["score_high"]
    return f"{row['mean_score']:.2f} [{low:.2f}, {high:.2f}]"


def _wall(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def search_label(search: dict) -> str:
    """How a setting's search is named in tables: the agent name that plays it."""
    return f"the model guiding `{search['agent']}:{search['budget']}` (`best+search`)"


def _run_name(run: dict) -> str:
    return f"{ALGO_NAMES[run['algo']]} seed {run['seed']} ({run['mode']} play)"


SEARCH_SENTENCE = (
    "The *shipped + search* rows are the shipped model guiding the game's search agent "
    "(`card-envs evaluate GAME best+search OPPONENT`): the search keeps the model's move unless "
    "another beats it clearly on worlds sampled from the seat's view; see the notes above.")

TABLE_HEAD = [
    "| agent | opponent | games | win [95% CI] | draw | loss [95% CI] "
    "| won of decided [95% CI] | mean score [95% CI] |",
    "|---|---|---|---|---|---|---|---|",
]


def _table_row(agent: str, row: dict) -> str:
    unit = " pairs" if row["kind"] == "duplicate" else ""
    return (f"| {agent} | `{row['opponent']}` | {row['games']}{unit} | {_pct(row, 'wins')} "
            f"| {row['draws_rate']:.1%} | {_pct(row, 'losses')} | {_pct(row, 'decided')} "
            f"| {_score(row)} |")


def opponent_words(opponent: str | list[str]) -> str:
    """``[a, a, b, a]`` -> "`a` (3 of 4 environments) and `b` (1 of 4)"."""
    if isinstance(opponent, str):
        return f"`{opponent}`"
    counts = {name: opponent.count(name) for name in dict.fromkeys(opponent)}
    if len(counts) == 1:
        return f"`{opponent[0]}`"
    n = len(opponent)
    parts = [f"`{name}` ({k} of {n} environments)" if i == 0 else f"`{name}` ({k} of {n})"
             for i, (name, k) in enumerate(counts.items())]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def rules_sentence(setting: str) -> str:
    cfg = game_config(setting)
    args = ", ".join(f"{k}={v!r}" for k, v in cfg["env_kwargs"].items()) or "default rules"
    text = f"Rules: {args}. Training opponent: {opponent_words(cfg['opponent'])}"
    if cfg.get("mix"):
        text += f" (mixed with `{cfg['mix']}`)"
    text += ". "
    if cfg["duplicate"]:
        text += ("Duplicate deals: each deal is played twice, seats swapped; a pair is won by "
                 "the side that scores more over both games. ")
    if cfg["team"]:
        text += "The model plays every seat of its team (the opponents every seat of theirs). "
    return text


def setting_section(record: dict, img: str | None) -> list[str]:
    """The markdown section of one setting, from its record in docs/baselines.json."""
    setting = record["setting"]
    cfg = game_config(setting)
    runs = record["runs"]
    wall = sum(r["wall_s"] for r in runs)
    lines = [f"## `{setting}`", "", rules_sentence(setting), "",
             f"Trained on {record['date']}, {record['machine']}, budget `{record['budget']}`: "
             f"{len(runs)} runs, {_wall(wall)} of training."]
    if cfg.get("score"):
        lines += ["", f"Score: {cfg['score']}."]
    if cfg["source"]:
        lines += ["", f"Source: {cfg['source']}."]
    if cfg.get("notes"):
        lines += ["", " ".join(cfg["notes"].split())]
    shipped = record.get("shipped")
    games = runs[0]["final_games"] if runs else 0
    lines += ["", f"Final evaluation: {games} games (pairs where duplicate) per opponent, seats "
              f"rotated, on deals of seed {record['final_seed']} that no run trained or "
              "selected its checkpoint on. The rule agents' rows put that agent in the "
              "model's place on the same deals."
              + (f" {SEARCH_SENTENCE}" if record.get("search") else ""), ""]
    lines += TABLE_HEAD
    if shipped:
        for row in shipped["results"]:
            lines.append(_table_row(f"shipped: {_run_name(shipped)}", row))
    search = record.get("search")
    if shipped and search:
        for row in search["results"]:
            lines.append(_table_row(f"shipped + search: {search_label(search)}", row))
    for agent, rows in record["reference"].items():
        for opponent in cfg["eval_opponents"]:
            lines.append(_table_row(f"rule agent `{agent}`", rows[opponent]))
    lines += ["", "Every run, pooled per algorithm (each run in the play mode it kept):", "",
              TABLE_HEAD[0].replace("| agent |", "| algorithm | runs |"),
              TABLE_HEAD[1] + "---|"]
    for algo in ALGOS:
        mine = [r for r in runs if r["algo"] == algo]
        if not mine:
            continue
        for opponent in cfg["eval_opponents"]:
            row = pooled([_row(r["results"], opponent) for r in mine])
            lines.append(_table_row(f"{ALGO_NAMES[algo]} | {len(mine)}", row))
    sel = selection(cfg)
    lines += ["", f"Greedy and sampled play of each run ({METRIC_NAMES[sel['metric']]} against "
              f"`{sel['opponent']}`, final deals; the run keeps the mode that did better on the "
              "selection deals):", "",
              "| run | steps trained | checkpoint kept | greedy | sampled | kept | wall time |",
              "|---|---|---|---|---|---|---|"]
    for r in runs:
        figures = {}
        for mode in ("greedy", "sampled"):
            row = _row(r["by_mode"].get(mode, []), sel["opponent"])
            figures[mode] = _figure(row, sel["metric"]) if row else "(greedy only)"
        lines.append(f"| {ALGO_NAMES[r['algo']]} seed {r['seed']} | {r['trained_timesteps']:,} "
                     f"| {r['timesteps']:,} | {figures['greedy']} | {figures['sampled']} "
                     f"| {r['mode']} | {_wall(r['wall_s'])} |")
    if cfg["targets"]:
        lines += ["", "Targets for the shipped model:", ""]
        for target in cfg["targets"]:
            ok, detail = check_target(target, record)
            lines.append(f"- {target_text(target)}: **{'reached' if ok else 'not reached'}** "
                         f"({detail})")
    if img:
        lines += ["", f"![learning curves of {setting}]({img})"]
    return lines + [""]


BASELINES_BEGIN = "<!-- BEGIN BASELINES -->"
BASELINES_END = "<!-- END BASELINES -->"


def game_page_block(section: list[str]) -> str:
    """A game page's copy of its settings' sections of docs/baselines.md."""
    body = []
    for line in section:
        if line.startswith("## "):
            line = "#" + line
        elif line.startswith("!["):
            line = line.replace("](img/", "](../img/")
        body.append(line.replace("](sources.md", "](../sources.md"))
    return "\n".join(
        [
            BASELINES_BEGIN,
            "<!-- copied from docs/baselines.md by `python -m baselines.reproduce --budget full`;"
            " do not edit -->",
            "",
            *body,
            BASELINES_END,
        ]
    )


def write_game_page(env_name: str, section: list[str], root: Path = ROOT) -> None:
    """Put the trained baselines' results in the game's docs page (before its version history)."""
    path = page_path(env_name, root)
    text = path.read_text()
    block = game_page_block(section)
    if BASELINES_BEGIN in text:
        start = text.index(BASELINES_BEGIN)
        end = text.index(BASELINES_END, start) + len(BASELINES_END)
        text = text[:start] + block + text[end:]
    else:
        head, sep, tail = text.partition("## Version history")
        intro = (
            "## Trained baselines\n\nMaskablePPO and masked DQN trained by `baselines/` "
            "(see [the baselines page](../baselines.md) for every game, the hyperparameters and "
            "how to rerun them).\n\n"
        )
        text = head + intro + block + "\n\n" + sep + tail
    path.write_text(text)


def plot_curves(record: dict, path: Path) -> list[str]:
    """Every run's learning curve (the selection figure, greedy play) with a line per
    reference rule agent's figure on the final deals; returns the legend's labels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setting = record["setting"]
    sel = selection(game_config(setting))
    key = sel["metric"]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for r in record["runs"]:
        curve = [c for c in r["curve"] if key in c]
        if curve:
            ax.plot([c["timesteps"] for c in curve], [c[key] for c in curve],
                    label=f"{ALGO_NAMES[r['algo']]} seed {r['seed']}")
    for i, (agent, rows) in enumerate(record["reference"].items()):
        row = rows.get(sel["opponent"])
        if row is not None and key in row:
            ax.axhline(row[key], color=f"C{7 + i}", linestyle="--", linewidth=1,
                       label=f"rule agent {agent}")
    ax.set_ylabel(f"{METRIC_NAMES[key]} vs {sel['opponent']}")
    ax.set_xlabel("training steps")
    ax.set_title(f"{setting} (greedy play on selection deals)")
    ax.legend(fontsize=7)
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return labels


def search_rows(setting: str, model_file: Path, games: int, seed: int = FINAL_SEED
                ) -> dict[str, Any] | None:
    """The setting's ``search`` (games.yaml: a search agent and its budget) guided by the
    model in ``model_file``, against every evaluation opponent on the final evaluation's deals
    (``card-envs evaluate GAME best+search OPPONENT`` for a shipped model); None when the
    setting plays without search."""
    cfg = game_config(setting)
    if not cfg.get("search"):
        return None
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    model = load_model_agent(spec, f"model:{model_file}", game)
    rows = []
    for opponent in cfg["eval_opponents"]:
        agent = guided_search(spec, model, game, cfg["search"])
        result = evaluate_agent(spec, game, agent, opponent, games, seed, cfg["duplicate"],
                                cfg["team"])
        rows.append(result_row(result, opponent))
    return {**cfg["search"], "results": rows}


def setting_record(setting: str, runs: list[dict], budget: str) -> dict:
    """What docs/baselines.json keeps of a setting: its runs, the shipped one (and its play
    with search, for a setting that has one), the rule agents' reference rows."""
    games = runs[0]["final_games"]
    shipped = shipped_run(setting, runs)
    search = (None if shipped is None
              else search_rows(setting, Path(shipped["path"]) / "model.zip", games))
    return {
        "setting": setting,
        "budget": budget,
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()} with {mp.cpu_count()} CPUs, no GPU",
        "final_seed": FINAL_SEED,
        "runs": [{k: v for k, v in r.items() if k != "path"} for r in runs],
        "shipped": None if shipped is None else {k: v for k, v in shipped.items()
                                                 if k not in ("path", "curve")},
        "search": search,
        "reference": reference_rows(setting, games),
    }


def load_results(path: Path | None = None) -> dict:
    """docs/baselines.json: every setting's record of its last full-budget run."""
    path = path or RESULTS
    return json.loads(path.read_text()) if path.exists() else {"settings": {}}


def render_text(results: dict, img_dir: str | None) -> tuple[str, dict[str, list[str]]]:
    """docs/baselines.md's text from every setting's record, in configs/games.yaml order,
    with plots under ``img_dir`` (relative to the page; None: no plots), and each game
    page's sections."""
    records = [results["settings"][s] for s in settings() if s in results["settings"]]
    lines = [
        "# Baselines",
        "",
        "Generated by `python -m baselines.reproduce --budget full --jobs 2 --ship` from "
        "docs/baselines.json (each setting's section says when and on what machine it ran). "
        "Do not edit: rerun it (`--settings X` redoes X and keeps the rest).",
        "",
        "How to read a section. Each setting trains MaskablePPO and masked DQN (SB3) against "
        "its training opponent; a run keeps its best checkpoint, judged on selection deals, "
        "in greedy play (the most likely legal action) or sampled play, whichever did better. "
        "The shipped model (`best` in `card-envs evaluate` and `play`) is the run with the "
        "best selection figure. All figures come from a final evaluation on fresh deals with "
        "95% intervals (Wilson for rates, normal for mean scores): *win*, *draw* and *loss* "
        "are the game's own outcome for the model's seat (or team, or duplicate pair); *won of "
        "decided* is wins / (wins + losses); the score is the game's own count, named per "
        "setting. Policies, self-play, imitation and the choice of checkpoints: "
        "[policies.md](policies.md). Hyperparameters and budgets: `baselines/configs/`; "
        "settings and targets: `baselines/configs/games.yaml`.",
        "",
    ]
    pages: dict[str, list[str]] = {}
    for record in records:
        setting = record["setting"]
        img = None if img_dir is None else str(Path(img_dir) / f"{setting}.png")
        section = setting_section(record, img)
        lines += section
        pages.setdefault(game_config(setting)["env"], []).extend(section)
    return "\n".join(lines), pages


def render(results: dict, img_dir: Path | None, out: Path, plot: bool = True) -> str:
    """Write docs/baselines.md (or ``out``) from the records, the plots into ``img_dir``,
    and, for docs/baselines.md itself, each game page's copy of its sections."""
    if img_dir is not None and plot:
        for setting, record in results["settings"].items():
            if setting in settings():
                plot_curves(record, img_dir / f"{setting}.png")
    rel = None if img_dir is None else str(img_dir.resolve().relative_to(out.parent.resolve()))
    text, pages = render_text(results, rel)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    if out.resolve() == (ROOT / "docs" / "baselines.md").resolve():
        for env_name, section in pages.items():
            write_game_page(env_name, section, ROOT)
    return text


def quick_report(setting: str, record: dict, full: dict | None) -> str:
    """A short plain-text table of one setting for the terminal: this run beside the rule
    agents on the same deals and the full-budget shipped model from docs/baselines.json."""
    cfg = game_config(setting)
    spec, game = spec_and_game(cfg["env"], cfg["env_kwargs"])
    solo = game.num_players == 1
    head = f"== {setting}: {spec.name.replace('_', ' ')}, {game.num_players} player(s)"
    head += ", duplicate deals" if cfg["duplicate"] else ""
    head += ", team play" if cfg["team"] else ""
    out = [head]
    if cfg.get("score"):
        out.append(f"   score = {cfg['score']}")
    if solo:
        out.append("   each cell: mean score [95% interval] over the games played")
    else:
        unit = "pairs" if cfg["duplicate"] else "games"
        out.append(f"   each cell: {unit} won / lost, in % (the rest are draws), against that "
                   "opponent in every other seat" + (" of the other team" if cfg["team"] else ""))
    opponents = cfg["eval_opponents"]
    width = 22

    def cell(row: dict | None) -> str:
        if row is None:
            return "-".ljust(width)
        if solo:
            return f"{row['mean_score']:.1f} [{row['score_low']:.1f}, {row['score_high']:.1f}]" \
                .ljust(width)
        return f"{row['wins_rate']:.0%} / {row['losses_rate']:.0%}".ljust(width)

    label_width = 38

    def line(label: str, row_of) -> None:
        """One table line: ``label``, then ``row_of(opponent)``'s cell per opponent."""
        out.append("   " + label.ljust(label_width) + "".join(cell(row_of(o)) for o in opponents))

    out.append("   " + "against:".ljust(label_width) + "".join(o.ljust(width) for o in opponents))
    for r in record["runs"]:
        line(f"{ALGO_NAMES[r['algo']]}, {r['trained_timesteps']:,} steps ({r['mode']})",
             lambda o, r=r: _row(r["results"], o))
    search = record.get("search")
    if search and record.get("shipped"):
        line(f"{ALGO_NAMES[record['shipped']['algo']]} + {search['agent']}:{search['budget']} "
             "search", lambda o: _row(search["results"], o))
    for agent, rows in record["reference"].items():
        line(f"rule agent {agent} (same deals)", rows.get)
    if full and full.get("shipped"):
        shipped = full["shipped"]
        line(f"full budget: {ALGO_NAMES[shipped['algo']]} (shipped)",
             lambda o: _row(shipped["results"], o))
        if full.get("search"):
            line("full budget: shipped + search", lambda o: _row(full["search"]["results"], o))
    elif full is None:
        out.append("   (no full-budget result for this setting in docs/baselines.json yet)")
    games = record["runs"][0]["final_games"]
    out.append(f"   ({games} {'pairs' if cfg['duplicate'] else 'games'} per cell; the quick "
               "budget trains for minutes, the full one for up to 45 minutes per run: see "
               "docs/baselines.md)")
    return "\n".join(out)


def update_search(chosen: list[str]) -> int:
    """``--search-only``: the shipped models' play with search, measured again on the final
    deals, into docs/baselines.json and the pages rendered from it (no training)."""
    results = load_results()
    for setting in chosen:
        record = results["settings"].get(setting)
        if not game_config(setting).get("search"):
            print(f"error: setting {setting!r} has no search in configs/games.yaml",
                  file=sys.stderr)
            return 2
        if record is None or not record.get("shipped") or not (MODELS / f"{setting}.zip").exists():
            print(f"error: no full-budget shipped model for {setting!r}: run reproduce --budget "
                  "full --ship for it first", file=sys.stderr)
            return 2
        print(f"evaluating the shipped model of {setting} with its search", flush=True)
        record["search"] = search_rows(setting, MODELS / f"{setting}.zip",
                                       record["runs"][0]["final_games"], record["final_seed"])
    write_json(RESULTS, results)
    out = ROOT / "docs" / "baselines.md"
    render(results, out.parent / "img", out, plot=False)
    print(f"wrote {RESULTS} and {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m baselines.reproduce", description=__doc__.split("\n")[0]
    )
    p.add_argument("--budget", choices=BUDGETS, default="quick")
    p.add_argument("--settings", nargs="*", help="settings of configs/games.yaml (default: all)")
    p.add_argument("--algos", nargs="*", choices=ALGOS, default=list(ALGOS))
    p.add_argument("--seeds", type=int,
                   help="runs per setting and algorithm (quick: 1; full: the setting's seeds)")
    p.add_argument("--jobs", type=int, default=min(2, mp.cpu_count()),
                   help="training runs in parallel (default: 2, or 1 on a one-core machine)")
    p.add_argument("--timesteps", type=int,
                   help="every run's training steps instead of the budget's (a smoke test)")
    p.add_argument("--runs", help="runs folder (default runs/reproduce-<budget>)")
    p.add_argument("--out", help="markdown output (default: docs/baselines.md for full)")
    p.add_argument("--ship", action="store_true", help="copy the best models to baselines/models")
    p.add_argument(
        "--collect",
        action="store_true",
        help="skip training; rebuild the table from the finished runs in --runs",
    )
    p.add_argument(
        "--search-only",
        action="store_true",
        help="no training: evaluate each chosen setting's shipped model with its search "
        "(games.yaml `search`) on the final deals and update its record (full budget)",
    )
    args = p.parse_args(argv)
    known = settings()
    chosen = args.settings or known
    for s in chosen:
        if s not in known:
            print(f"error: no baseline setting {s!r}; configured: {', '.join(known)}",
                  file=sys.stderr)
            return 2
    if args.search_only:
        return update_search(chosen)
    runs_root = args.runs or f"runs/reproduce-{args.budget}"
    started = time.time()
    if args.collect:
        dirs = [str(d) for d in sorted(Path(runs_root).glob("*/*")) if (d / "eval.json").exists()]
        dirs = [d for d in dirs if Run(Path(d)).config["setting"] in chosen]
        for d in dirs:
            drift = config_drift(d, args.timesteps)
            if drift:
                print(f"error: {d} was not trained as configs/ says now; rerun it or change "
                      f"configs/: " + "; ".join(drift), file=sys.stderr)
                return 2
    else:
        jobs = [
            (s, a, seed, args.budget, runs_root, args.timesteps,
             args.jobs == 1 and sys.stdout.isatty())
            for s in chosen
            for a in args.algos
            for seed in range(seeds_of(s, a, args.budget, args.seeds))
        ]
        print(f"{len(jobs)} training runs, {args.jobs} at a time; each prints labelled "
              "progress lines", flush=True)
        dirs = run_all(jobs, args.jobs)
    runs = sorted((collect(d) for d in dirs),
                  key=lambda r: (r["setting"], list(ALGOS).index(r["algo"]), r["seed"]))
    full = args.budget == "full"
    results = load_results()
    fresh = {"settings": {}}
    records = record_all([(s, [r for r in runs if r["setting"] == s], args.budget)
                          for s in chosen if any(r["setting"] == s for r in runs)], args.jobs)
    for setting in chosen:
        mine = [r for r in runs if r["setting"] == setting]
        if not mine:
            continue
        record = records[setting]
        fresh["settings"][setting] = record
        if args.ship and record["shipped"] is not None:
            ship(setting, next(r for r in mine if r["seed"] == record["shipped"]["seed"]
                               and r["algo"] == record["shipped"]["algo"]))
    if full and not args.out:
        results["settings"].update(fresh["settings"])
        write_json(RESULTS, results)
        out = ROOT / "docs" / "baselines.md"
        render(results, out.parent / "img", out, plot=True)
        print(f"wrote {RESULTS} and {out}")
    else:
        out = Path(args.out) if args.out else Path(runs_root) / "baselines.md"
        render(fresh, out.parent if (full or args.out) else None, out, plot=True)
        write_json(out.with_suffix(".json"), fresh)
        print()
        for setting, record in fresh["settings"].items():
            print(quick_report(setting, record, results["settings"].get(setting)))
            print()
        print(f"wrote {out} ({_wall(time.time() - started)} in all); the full-budget table is "
              "docs/baselines.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
