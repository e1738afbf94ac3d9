"""A run's settings, from one place: baselines/configs/, resolved once per run.

- ``games.yaml``: each baseline setting (a game's env name, or a named variant of one): its
  rules, training opponent, evaluation, targets, shaping and imitation;
- ``maskable_ppo.yaml`` and ``dqn.yaml``: each algorithm's hyperparameters and budgets, a
  ``default`` block, then the env's block, then the setting's own.

``build_config(args)`` resolves a setting x algorithm x budget and the command line's
overrides into one plain dict, the run's ``config.json``: everything after reads only that
(training, evaluation, reproduce's drift check, the benchmark), batched and scalar paths alike.
Measured results and the notes on how a setting was tuned live in the docs
(docs/baselines_notes.md), not here.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml

from card_envs.core.agents import make_agent
from card_envs.core.game import check_choice
from card_envs.registry import load_spec
from card_envs.rl.policy_agent import ALGOS, read_meta

CONFIGS = Path(__file__).resolve().parent / "configs"
BUDGETS = ("quick", "full")


def load_yaml(name: str) -> dict[str, Any]:
    return yaml.safe_load((CONFIGS / name).read_text()) or {}


def settings() -> list[str]:
    """Every baseline setting of configs/games.yaml, in file order."""
    return list(load_yaml("games.yaml"))


# teammate: the learner plays its teammates' seats too ("learner"), its current policy plays
# them ("self"), or the setting has no teammates (None)
TEAMMATES = (None, "learner", "self")


def _budget_entry(value: Any, budget: str) -> Any:
    """``value[budget]`` for a budget-dependent entry (``{quick: ..., full: ...}``), else
    ``value``."""
    if isinstance(value, dict) and value and set(value) <= set(BUDGETS):
        return value[budget]
    return value


def game_config(name: str, budget: str = "full") -> dict[str, Any]:
    """How baselines train and evaluate a setting of configs/games.yaml.

    A setting is an env name (``thirty_one_v0``) or a named variant of one
    (``ninety_eight_cards_v0-original``, with ``env:`` and its own ``env_kwargs``). Its
    budget-dependent entries (``opponent: {quick: ..., full: ...}``, say) are resolved for
    ``budget``: by default the full budget's, which the docs describe.
    """
    games = load_yaml("games.yaml")
    if name not in games:
        raise ValueError(f"no baseline setting {name!r}; configured: {', '.join(games)}")
    check_choice("budget", budget, BUDGETS)
    block = {key: _budget_entry(value, budget) for key, value in games[name].items()}
    teammate = block.get("teammate")
    if teammate not in TEAMMATES:
        raise ValueError(f"setting {name!r}: teammate {teammate!r} is not valid; choose one of "
                         f"{', '.join(repr(t) for t in TEAMMATES)}")
    return {
        "env": name,
        "env_kwargs": {},
        "opponent": "random",
        "eval_opponents": ["random"],
        "duplicate": False,
        "team": False,
        "mix": None,
        "teammate": None,
        "source": "",
        "targets": [],
        **block,
        "setting": name,
    }


def hyperparams(algo: str, env_name: str, budget: str, setting: str | None = None
                ) -> dict[str, Any]:
    """The algorithm's hyperparameters for a setting: the ``default`` block, then the env's
    own, then the setting's own (when a variant has a block of its name).

    Budget-dependent entries (``{quick: ..., full: ...}``) are resolved for ``budget``.
    """
    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}")
    table = load_yaml(f"{algo}.yaml")
    merged = {**table.get("default", {}), **table.get(env_name, {})}
    if setting is not None and setting != env_name:
        merged.update(table.get(setting, {}))
    return {key: _budget_entry(value, budget) for key, value in merged.items()}


def spec_and_game(env_name: str, env_kwargs: dict[str, Any]):
    spec = load_spec(env_name)
    return spec, spec.make_game(**env_kwargs)


SETTINGS = ("n_envs", "timesteps", "eval_freq", "eval_games", "final_games", "torch_threads",
            "imitate", "imitate_decisions")
DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device: str) -> str:
    """``--device``: ``auto`` is CUDA when torch sees a GPU, else the CPU."""
    check_choice("device", device, DEVICES)
    if device == "cpu":
        return "cpu"
    import torch as th

    if th.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ValueError("--device cuda: torch sees no CUDA device here; choose auto or cpu")
    return "cpu"


def build_config(args: argparse.Namespace) -> dict[str, Any]:
    """Every setting of a run, resolved from the command line and the YAML files."""
    gcfg = game_config(args.env, args.budget)
    hp = hyperparams(args.algo, gcfg["env"], args.budget, gcfg["setting"])
    for item in args.hp or []:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--hp takes KEY=VALUE, got {item!r}")
        hp[key] = _yaml_value(text)
    settings = {k: hp.pop(k) for k in SETTINGS if k in hp}
    hp.pop("stages", None)  # the recipe's later stages (baselines/recipes.py)
    for key in ("timesteps", "n_envs", "eval_freq", "eval_games", "final_games"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    pretrain = _setting_pretrain(gcfg, settings, args.budget)
    gcfg["env_kwargs"] = {**gcfg["env_kwargs"], **parse_sets(args.env_arg)}
    spec, game = spec_and_game(gcfg["env"], gcfg["env_kwargs"])
    opponent = _checked_opponent(args.opponent or gcfg["opponent"], spec, game)
    shaping = parse_shaping(args.shaping) if args.shaping else gcfg.get("shaping")
    if shaping:
        from baselines.shaping import potential

        potential(spec, shaping["potential"])  # an unknown name fails here, naming the game's
    encoding = args.obs_encoding or gcfg.get("obs_encoding", "default")
    if args.init_from:
        _check_init_from(Path(args.init_from), args.algo, gcfg["env"], encoding)
    return {
        "env": gcfg["env"],
        "setting": gcfg["setting"],
        "algo": args.algo,
        "opponent": opponent,
        "mix": args.mix if args.mix is not None else gcfg.get("mix"),
        "teammate": gcfg.get("teammate"),
        "seed": args.seed,
        "budget": args.budget,
        "env_kwargs": gcfg["env_kwargs"],
        "obs_encoding": encoding,
        "eval_opponents": gcfg["eval_opponents"],
        "duplicate": gcfg["duplicate"],
        "team": gcfg["team"],
        "shaping": shaping,
        "select": parse_select(args.select, spec, game) if getattr(args, "select", None)
        else gcfg.get("select"),
        # expert iteration after training (MaskablePPO only; baselines/expert_iteration.py)
        "refine": _for_budget(gcfg.get("refine"), args.budget)
        if args.algo == "maskable_ppo" else None,
        # the setting's imitation, where the algorithm's configs say it imitates (default:
        # it does); --pretrain always applies
        "pretrain": parse_pretrain(args.pretrain) if args.pretrain else pretrain,
        "result_bonus": args.result_bonus if args.result_bonus is not None
        else gcfg.get("result_bonus"),
        "init_from": args.init_from,
        "scalar": bool(args.scalar),
        "device": resolve_device(getattr(args, "device", None) or "auto"),
        "search": gcfg.get("search"),
        "targets": gcfg.get("targets", []),
        **settings,
        "hyperparams": hp,
    }


def _setting_pretrain(gcfg: dict[str, Any], settings: dict[str, Any], budget: str
                      ) -> dict[str, Any] | None:
    """The setting's imitation, where the algorithm's configs say it imitates (``imitate``,
    default true), with the algorithm's own number of decisions (``imitate_decisions``);
    both entries leave ``settings``."""
    imitate = settings.pop("imitate", True)
    decisions = settings.pop("imitate_decisions", None)
    pretrain = _for_budget(gcfg.get("pretrain"), budget) if imitate else None
    if pretrain and decisions is not None and not pretrain.get("records"):
        pretrain = {**pretrain, "decisions": int(decisions)}
    return pretrain


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """``--set KEY=VALUE`` (rules arguments, YAML values) as a dict."""
    out = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        out[key] = _yaml_value(text)
    return out


def _checked_opponent(opponent: str | list[str], spec, game) -> str:
    """A training opponent as one comma-separated name, each name checked."""
    if isinstance(opponent, list):
        opponent = ",".join(opponent)
    if opponent == "self" and game.num_players == 1:
        raise ValueError(f"{spec.env_name} has one player: there is no self-play")
    if opponent not in ("self", "solo"):
        for name in opponent.split(","):
            make_agent(spec, name, game)  # an unknown name fails here, before any run folder
    return opponent


# what a checkpoint can be picked by (train.py's curve columns); losses_rate: lower is better
SELECT_METRICS = ("wins_rate", "decided_rate", "losses_rate", "mean_payoff", "mean_score")


def parse_select(text: str, spec, game) -> dict[str, Any]:
    """``--select AGENT[:METRIC]`` as a setting's ``select`` block."""
    opponent, _, metric = text.partition(":")
    metric = metric or "wins_rate"
    if metric not in SELECT_METRICS:
        raise ValueError(f"--select: unknown metric {metric!r}; choose one of "
                         f"{', '.join(SELECT_METRICS)}")
    if not (opponent == "solo" and game.num_players == 1):  # a one-player game's "opponent"
        make_agent(spec, opponent, game)  # an unknown name fails here, naming the choices
    return {"opponent": opponent, "metric": metric, "higher": metric != "losses_rate"}


def _check_init_from(path: Path, algo: str, env: str, encoding: str) -> None:
    """A model to start from must exist, with its metadata, for the same algorithm, env and
    observation encoding (its weights are loaded into the run's network; a network of
    another shape fails there, with train.InitFromError)."""
    if path.suffix != ".zip" or not path.is_file():
        raise ValueError(f"--init-from: {path} is not a model file (MODEL.zip with its "
                         "MODEL.json beside it)")
    meta = read_meta(path)
    if meta["algo"] != algo:
        raise ValueError(f"--init-from: {path} is a {meta['algo']} model; this run trains "
                         f"{algo} (choose --algo {meta['algo']} or a {algo} model)")
    if meta["env"] != env:
        raise ValueError(f"--init-from: {path} was trained on {meta['env']}; this run "
                         f"trains on {env}")
    seen = meta.get("obs_encoding", "default")
    if seen != encoding:
        raise ValueError(f"--init-from: {path} sees the {seen!r} observation encoding; this "
                         f"run's is {encoding!r} (choose --obs-encoding {seen})")


def _for_budget(block: dict[str, Any] | None, budget: str) -> dict[str, Any] | None:
    """A config block with its ``{quick: ..., full: ...}`` entries resolved for ``budget``."""
    if not block:
        return block
    return {k: v[budget] if isinstance(v, dict) and set(v) <= set(BUDGETS) and v else v
            for k, v in block.items()}


def _yaml_value(text: str) -> Any:
    """A command-line value read as YAML, with ``1e-4`` a number (YAML 1.1 reads a string)."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


def parse_shaping(text: str) -> dict[str, Any] | None:
    """``"lives_lead:0.5"`` -> {potential: lives_lead, scale: 0.5}; ``"none"`` -> None."""
    if text == "none":
        return None
    name, _, scale = text.partition(":")
    try:
        return {"potential": name, "scale": float(scale) if scale else 1.0}
    except ValueError as err:
        raise ValueError(f"--shaping takes POTENTIAL[:SCALE] or none, got {text!r}") from err


def parse_pretrain(text: str) -> dict[str, Any]:
    """``"heuristic,20000,10"`` -> {agent: heuristic, decisions: 20000, epochs: 10};
    ``"records:FILE,10"`` -> {records: FILE, epochs: 10} (recorded games, docs/records.md)."""
    if text.startswith("records:"):
        path, _, epochs = text[len("records:"):].partition(",")
        if not path or (epochs and not epochs.isdigit()):
            raise ValueError(f"--pretrain takes records:FILE[,EPOCHS], got {text!r}")
        return {"records": path, **({"epochs": int(epochs)} if epochs else {})}
    parts = text.split(",")
    if len(parts) not in (2, 3) or not all(x.isdigit() for x in parts[1:]):
        raise ValueError(f"--pretrain takes AGENT,DECISIONS[,EPOCHS], got {text!r}")
    out: dict[str, Any] = {"agent": parts[0], "decisions": int(parts[1])}
    if len(parts) == 3:
        out["epochs"] = int(parts[2])
    return out
