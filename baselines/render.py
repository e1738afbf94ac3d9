"""Rendering a reproduce's records: docs/baselines.md, the learning curves under docs/img/,
each game page's copy of its section, and the quick budget's terminal tables.

A setting's notes (how it was tuned, what was tried) come from docs/baselines_notes.md, one
``## `setting` `` section each; measured results come from the records only."""

from __future__ import annotations

import re
from pathlib import Path

from baselines.config import game_config, settings, spec_and_game
from baselines.final import ROOT, _figure, _row, check_target, headline, seed_summary
from baselines.jobs import seeds_of
from baselines.recipes import digest, recipe, recipe_lines, shipped_status
from baselines.train import selection
from card_envs.doctables import page_path
from card_envs.rl.policy_agent import ALGOS

ALGO_NAMES = {"maskable_ppo": "MaskablePPO", "dqn": "DQN (masked)"}


METRIC_NAMES = {
    "wins_rate": "win rate",
    "decided_rate": "wins of decided games",
    "losses_rate": "loss rate",
    "mean_score": "mean score",
    "mean_payoff": "mean payoff",
}


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
    tuned = (", fine-tuned from an earlier model (its notes say which)"
             if run.get("init_from") else "")
    return f"{ALGO_NAMES[run['algo']]} seed {run['seed']}{tuned} ({run['mode']} play)"


SEARCH_SENTENCE = (
    "The *shipped + search* rows are the shipped model guiding the game's search agent "
    "(`card-envs evaluate GAME best+search OPPONENT`): the search keeps the model's move unless "
    "another beats it clearly on worlds sampled from the seat's view (docs/policies.md).")


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


NOTES = ROOT / "docs" / "baselines_notes.md"


def setting_notes(setting: str, path: Path | None = None) -> str:
    """A setting's notes: its ``## `setting` `` section of docs/baselines_notes.md, joined
    into one paragraph ("" when it has none)."""
    path = path or NOTES
    if not path.exists():
        return ""
    text = path.read_text()
    head = f"## `{setting}`\n"
    if head not in text:
        return ""
    body = text.split(head, 1)[1].split("\n## ", 1)[0]
    return " ".join(body.split())


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
    """The markdown section of one setting, from its record in docs/baselines.json: its
    tables, targets, recipe, command and curves (how it was tuned: the notes page)."""
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
    lines += result_tables(record, cfg) + seed_table(record) + run_table(record, cfg)
    if cfg["targets"]:
        lines += ["", "Targets for the shipped model:", ""]
        for target in cfg["targets"]:
            ok, detail = check_target(target, record)
            lines.append(f"- {target_text(target)}: **{'reached' if ok else 'not reached'}** "
                         f"({detail})")
    lines += recipe_block(record)
    if setting_notes(setting):
        lines += ["", f"How this setting was tuned and what was tried: "
                      f"[notes]({NOTES.name}#{setting})."]
    if img:
        lines += ["", f"![learning curves of {setting}]({img})"]
    return lines + [""]


def result_tables(record: dict, cfg: dict) -> list[str]:
    """The shipped model's rows (and with its search), and the rule agents' on its deals."""
    runs, shipped, search = record["runs"], record.get("shipped"), record.get("search")
    games = runs[0]["final_games"] if runs else 0
    lines = ["", f"Final evaluation: {games} games (pairs where duplicate) per opponent, seats "
             f"rotated, on deals of seed {record['final_seed']} that no run trained or "
             "selected its checkpoint on. The rule agents' rows put that agent in the "
             "model's place on the same deals." + (f" {SEARCH_SENTENCE}" if search else ""),
             "", *TABLE_HEAD]
    if shipped:
        for row in shipped["results"]:
            lines.append(_table_row(f"shipped: {_run_name(shipped)}", row))
    if shipped and search:
        for row in search["results"]:
            lines.append(_table_row(f"shipped + search: {search_label(search)}", row))
    for agent, rows in record["reference"].items():
        for opponent in cfg["eval_opponents"]:
            lines.append(_table_row(f"rule agent `{agent}`", rows[opponent]))
    return lines


def seed_table(record: dict) -> list[str]:
    """The headline figure over each algorithm's seeds: mean and IQM with bootstrap
    intervals, worst and best seed."""
    setting = record["setting"]
    head = headline(setting)
    lines = ["", f"Over seeds ({METRIC_NAMES[head['metric']]} against `{head['opponent']}`, "
             "final deals; 95% percentile-bootstrap intervals over seeds, IQM the mean of the "
             "middle half; the shipped model is the best seed on the selection deals):", "",
             "| algorithm | seeds | mean [95% CI] | IQM [95% CI] | worst seed | best seed |",
             "|---|---|---|---|---|---|"]
    for algo in ALGOS:
        summary = seed_summary([r for r in record["runs"] if r["algo"] == algo], setting)
        if summary is None:
            continue
        fmt = _metric_format(head["metric"])

        def ci(name: str, s: dict = summary, fmt=fmt) -> str:
            if s["n"] == 1:
                return f"{fmt(s[name])} (one seed: no interval)"
            return f"{fmt(s[name])} [{fmt(s[name + '_low'])}, {fmt(s[name + '_high'])}]"

        lines.append(f"| {ALGO_NAMES[algo]} | {summary['n']} | {ci('mean')} | {ci('iqm')} "
                     f"| {fmt(summary['worst'])} | {fmt(summary['best'])} |")
    return lines


def _metric_format(metric: str):
    """How a metric's value reads: a percentage for rates, two decimals else."""
    if metric.endswith("_rate"):
        return lambda v: f"{v:.1%}"
    return lambda v: f"{v:.2f}"


def run_table(record: dict, cfg: dict) -> list[str]:
    """Greedy and sampled play of every run on the final deals, and what each kept."""
    sel = selection(cfg)
    lines = ["", f"Greedy and sampled play of each run ({METRIC_NAMES[sel['metric']]} against "
             f"`{sel['opponent']}`, final deals; the run keeps the mode that did better on the "
             "selection deals):", "",
             "| run | steps trained | checkpoint kept | greedy | sampled | kept | wall time |",
             "|---|---|---|---|---|---|---|"]
    for r in record["runs"]:
        figures = {}
        for mode in ("greedy", "sampled"):
            row = _row(r["by_mode"].get(mode, []), sel["opponent"])
            figures[mode] = _figure(row, sel["metric"]) if row else "(greedy only)"
        lines.append(f"| {ALGO_NAMES[r['algo']]} seed {r['seed']} | {r['trained_timesteps']:,} "
                     f"| {r['timesteps']:,} | {figures['greedy']} | {figures['sampled']} "
                     f"| {r['mode']} | {_wall(r['wall_s'])} |")
    return lines


# what a section says of its shipped model against the recipe (recipes.shipped_status)
RECIPE_STATUS = {
    "matches": "was trained by this recipe",
    "differs": "was trained by an earlier form of this recipe",
    "no recipe": "records no recipe (it was trained before recipes, some by hand-run "
                 "commands: baselines_notes.md); retrain it with this command",
}


def recipe_block(record: dict) -> list[str]:
    """The setting's recipe as the configs give it today, per algorithm, its command, and
    whether the shipped model was made by it."""
    setting = record["setting"]
    lines = ["", "Recipe (`baselines/configs/`, full budget; every stage from scratch):", ""]
    for algo in ALGOS:
        chain = recipe(setting, algo, "full")
        lines.append(f"- {ALGO_NAMES[algo]}, {seeds_of(setting, algo, 'full', None)} seeds, "
                     f"recipe `{digest(chain)[:12]}`:")
        lines += [f"    {line}" for line in recipe_lines(chain)]
    status = next((r for r in shipped_status() if r["setting"] == setting), None)
    made = RECIPE_STATUS.get(status["status"] if status else "", "")
    lines += ["", f"Reproduce: `python -m baselines.reproduce --budget full --settings {setting}"
                  f" --ship`; check one seed: `python -m baselines.reproduce --verify "
                  f"{setting}`." + (f" The shipped model {made}." if made else "")]
    return lines


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
        # the page sits one folder down: links to the docs' pages go up one
        body.append(re.sub(r"\]\((?=[a-z_]+\.md)", "](../", line))
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
    """Each algorithm's learning curve over its seeds (the selection figure, greedy play:
    the mean, and a band from the worst to the best seed), against training steps and
    against wall-clock seconds, with a line per reference rule agent's figure on the final
    deals; returns the legend's labels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setting = record["setting"]
    sel = selection(game_config(setting))
    key = sel["metric"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for i, algo in enumerate(ALGOS):
        curves = [[c for c in r["curve"] if key in c] for r in record["runs"]
                  if r["algo"] == algo]
        curves = [c for c in curves if c]
        if not curves:
            continue
        label = f"{ALGO_NAMES[algo]} ({len(curves)} seed{'s' if len(curves) > 1 else ''})"
        for ax, x in zip(axes, ("timesteps", "wall_s"), strict=True):
            grid, mean, low, high = _band(curves, x, key)
            ax.plot(grid, mean, color=f"C{i}", label=label)
            ax.fill_between(grid, low, high, color=f"C{i}", alpha=0.2, linewidth=0)
    for i, (agent, rows) in enumerate(record["reference"].items()):
        row = rows.get(sel["opponent"])
        if row is not None and key in row:
            for ax in axes:
                ax.axhline(row[key], color=f"C{7 + i}", linestyle="--", linewidth=1,
                           label=f"rule agent {agent}")
    axes[0].set_ylabel(f"{METRIC_NAMES[key]} vs {sel['opponent']}")
    axes[0].set_xlabel("training steps")
    axes[1].set_xlabel("wall-clock seconds")
    fig.suptitle(f"{setting} (greedy play on selection deals; band: worst to best seed)",
                 fontsize=10)
    axes[0].legend(fontsize=7)
    labels = [text.get_text() for text in axes[0].get_legend().get_texts()]
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return labels


def _band(curves: list[list[dict]], x: str, key: str):
    """Several seeds' curves on one grid of ``x`` (each interpolated, held flat past its
    end): the grid, the mean, the lowest and the highest."""
    import numpy as np

    grid = np.unique(np.concatenate([[c[x] for c in curve] for curve in curves]))
    ys = np.array([np.interp(grid, [c[x] for c in curve], [c[key] for c in curve])
                   for curve in curves])
    return grid, ys.mean(0), ys.min(0), ys.max(0)


SUMMARY_HEAD = [
    "| setting | headline figure | shipped network alone | shipped with its search "
    "| best rule agent (same deals) | PPO over seeds | DQN over seeds | shipped model from its "
    "recipe | source | ladder: `best` (and `best+search`) and the best search agent |",
    "|---|---|---|---|---|---|---|---|---|---|",
]
# the shipped model against the recipe the configs give today (recipes.shipped_status)
MADE = {"matches": "yes", "differs": "an earlier form of it", "no recipe": "none recorded",
        "no model": "-", "unknown setting": "-"}


def _over_seeds(summary: dict, fmt) -> str:
    """A figure over seeds: the mean with its bootstrap interval and the number of seeds."""
    if summary["n"] == 1:
        return f"{fmt(summary['mean'])} (1 seed)"
    return (f"{fmt(summary['mean'])} [{fmt(summary['mean_low'])}, {fmt(summary['mean_high'])}]"
            f" ({summary['n']} seeds)")


def summary_table(records: list[dict]) -> list[str]:
    """One line per setting: the headline figure of the shipped network (alone and with its
    search), the best reference rule agent on the same deals, each algorithm's mean over
    seeds with its interval, the source's figure, and a link to the setting's ladder."""
    lines = list(SUMMARY_HEAD)
    status = {r["setting"]: r["status"] for r in shipped_status()}
    for record in records:
        setting = record["setting"]
        cfg, head = game_config(setting), headline(setting)
        fmt = _metric_format(head["metric"])

        def cell(row: dict | None, metric: str = head["metric"]) -> str:
            if row is None:
                return "-"
            if metric == "decided_rate" and not row["wins"] + row["losses"]:
                return "no decided games"
            return _figure(row, metric)

        shipped = record.get("shipped")
        alone = cell(_row(shipped["results"], head["opponent"]) if shipped else None)
        search = record.get("search")
        guided = cell(_row(search["results"], head["opponent"])) if search else "-"
        rules = {agent: rows.get(head["opponent"]) for agent, rows in record["reference"].items()}
        rules = {a: r for a, r in rules.items() if r is not None}
        best_rule = "-"
        if rules:
            pick = (max if head["higher"] else min)(rules, key=lambda a: rules[a][head["metric"]])
            best_rule = f"`{pick}` {cell(rules[pick])}"
        over = []
        for algo in ALGOS:
            s = seed_summary([r for r in record["runs"] if r["algo"] == algo], setting)
            over.append("-" if s is None else _over_seeds(s, fmt))
        source = cfg["source"] or "-"
        made = status.get(setting, "no model")
        ladder = ladder_cell(setting)
        lines.append(f"| [`{setting}`](#{setting}) | {METRIC_NAMES[head['metric']]} against "
                     f"`{head['opponent']}` | {alone} | {guided} | {best_rule} | {over[0]} "
                     f"| {over[1]} | {MADE[made]} | {source} | {ladder} |")
    return lines


def ladder_cell(setting: str, path: Path | None = None) -> str:
    """The ladder's first figure (rating, or win rate where there is none) of the shipped
    model ``best``, of ``best+search`` (the model guiding its search) where the section has
    it, and of the highest search agent in the setting's section of
    docs/ladder.md, or a note that the ladder has no section for it."""
    path = path or ROOT / "docs" / "ladder.md"
    cfg = game_config(setting)
    # the ladder's key of a game and its rules (card_envs.ladder.Setting.key)
    key = "-".join([cfg["env"], *(str(v) for v in cfg["env_kwargs"].values())])
    text = path.read_text() if path.exists() else ""
    begin = f"<!-- BEGIN LADDER {key} -->"
    if begin not in text:
        return "no ladder section"
    block = text.split(begin, 1)[1].split("<!-- END LADDER", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in block.splitlines() if line.startswith("| ")]
    head, body = rows[0], rows[1:]
    col = head.index("agent")
    figure = col + 1
    found = {}
    for row in body:
        name = row[col].strip("`")
        kind = name if name in ("best", "best+search") else "search" if (
            ":" in name or name == "solver") and not name.startswith("best") else None
        if kind and kind not in found:  # the table is sorted, strongest first
            found[kind] = f"`{name}` {row[figure]}"
    cells = [found[k] for k in ("best", "best+search", "search") if k in found]
    return f"{head[figure]} ([ladder](ladder.md)): " + ", ".join(cells)


def budget_sentence(records: list[dict]) -> str:
    """The training time of the runs recorded, in all and per setting, beside the number of
    runs the full budget trains."""
    planned = sum(seeds_of(s, a, "full", None) for s in settings() for a in ALGOS)
    runs = sum(len(r["runs"]) for r in records)
    wall = sum(run["wall_s"] for r in records for run in r["runs"])
    per = ", ".join(f"`{r['setting']}` {_wall(sum(x['wall_s'] for x in r['runs']))}"
                    for r in records)
    return (f"Training time of the {runs} runs recorded here: {wall / 3600:.1f} h in all "
            f"({per}; each on the machine its section names). The full "
            f"budget trains {planned} runs (every setting, algorithm and seed).")


def render_text(results: dict, img_dir: str | None) -> tuple[str, dict[str, list[str]]]:
    """docs/baselines.md's text from every setting's record, in configs/games.yaml order,
    with plots under ``img_dir`` (relative to the page; None: no plots), and each game
    page's sections."""
    records = [results["settings"][s] for s in settings() if s in results["settings"]]
    lines = [
        "# Baselines",
        "",
        "Generated by `python -m baselines.reproduce --budget full --ship` from "
        "docs/baselines.json; do not edit (`--settings X` redoes X and keeps the rest). "
        "Each figure has its 95% interval (Wilson for rates, normal for mean scores; over "
        "seeds, a percentile bootstrap); the number of seeds is in brackets.",
        "",
        *summary_table(records),
        "",
        budget_sentence(records),
        "",
        "How to read a section. Each setting's recipe (below each section, from "
        "`baselines/configs/`) trains MaskablePPO and masked DQN (SB3), every stage from "
        "scratch, several seeds each; a run keeps its best checkpoint, judged on selection "
        "deals, in greedy play (the most likely legal action) or sampled play, whichever did "
        "better. The shipped model (`best` in `card-envs evaluate` and `play`) is the run with "
        "the best selection figure. The final figures come from deals that no run trained or "
        "selected on: *win*, *draw* and *loss* are the game's own outcome for the model's seat "
        "(or team, or duplicate pair); *won of decided* is wins / (wins + losses); the score is "
        "the game's own count, named per setting. `python -m baselines.reproduce --list` says "
        "whether each shipped model still matches its recipe. The ladder column quotes "
        "[ladder.md](ladder.md) as last run: a section run before its setting's model was "
        "retrained rates the earlier model (each section gives its command). Policies, "
        "self-play, imitation "
        "and the choice of checkpoints: [policies.md](policies.md); how each setting was "
        "tuned, and what was tried: [baselines_notes.md](baselines_notes.md).",
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


def render(results: dict, img_dir: Path | None, out: Path, plot: bool = True,
           root: Path = ROOT) -> str:
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
    if out.resolve() == (root / "docs" / "baselines.md").resolve():
        for env_name, section in pages.items():
            write_game_page(env_name, section, root)
    return text


def render_docs(results: dict, root: Path = ROOT, plot: bool = False) -> Path:
    """Render ``root``'s docs/baselines.md, its plots when ``plot``, and the game pages'
    sections from ``results`` (the records of docs/baselines.json); returns the page's path."""
    out = root / "docs" / "baselines.md"
    render(results, out.parent / "img", out, plot=plot, root=root)
    return out


def text_table(rows: list[tuple[str, list[str]]]) -> list[str]:
    """Rows of a terminal table, indented: every column as wide as its widest entry and two
    spaces, so no two ever run together."""
    label_width = max(len(label) for label, _ in rows) + 2
    widths = [max(len(cells[k]) for _, cells in rows) + 2 for k in range(len(rows[0][1]))]
    return [("   " + label.ljust(label_width)
             + "".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))).rstrip()
            for label, cells in rows]


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

    def cell(row: dict | None) -> str:
        if row is None:
            return "-"
        if solo:
            return f"{row['mean_score']:.1f} [{row['score_low']:.1f}, {row['score_high']:.1f}]"
        return f"{row['wins_rate']:.0%} / {row['losses_rate']:.0%}"

    rows: list[tuple[str, list[str]]] = [("against:", list(opponents))]

    def line(label: str, row_of) -> None:
        """One table row: ``label``, then ``row_of(opponent)``'s cell per opponent."""
        rows.append((label, [cell(row_of(o)) for o in opponents]))

    for r in record["runs"]:
        line(f"{ALGO_NAMES[r['algo']]}, {r['trained_timesteps']:,} steps ({r['mode']})",
             lambda o, r=r: _row(r["results"], o))
    search = record.get("search")
    if search and record.get("shipped"):
        line(f"{ALGO_NAMES[record['shipped']['algo']]} + {search['agent']}:{search['budget']} "
             "search", lambda o: _row(search["results"], o))
    for agent, ref in record["reference"].items():
        line(f"rule agent {agent} (same deals)", ref.get)
    if full and full.get("shipped"):
        shipped = full["shipped"]
        line(f"full budget: {ALGO_NAMES[shipped['algo']]} (shipped)",
             lambda o: _row(shipped["results"], o))
        if full.get("search"):
            line("full budget: shipped + search", lambda o: _row(full["search"]["results"], o))
    out += text_table(rows)
    if full is None:
        out.append("   (no full-budget result for this setting in docs/baselines.json yet)")
    games = record["runs"][0]["final_games"]
    out.append(f"   ({games} {'pairs' if cfg['duplicate'] else 'games'} per cell; the quick "
               "budget trains for minutes, the full one for up to 45 minutes per run: see "
               "docs/baselines.md)")
    return "\n".join(out)
