"""The list of games, their registration with PettingZoo and Gymnasium, and ``list_envs()``.

Adding a game: one folder ``card_envs/<name>/`` with its ``SPEC``, a thin
``card_envs/<name>_v<N>.py`` module, and one line in ``GAMES`` below.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import pettingzoo

# (game name, version, Gymnasium name): one line per game.
GAMES: tuple[tuple[str, int, str], ...] = (
    ("simple_tricks", 0, "SimpleTricks"),
    ("ninety_eight_cards", 0, "NinetyEightCards"),
    ("thirty_one", 0, "ThirtyOne"),
    ("palace", 0, "Palace"),
    ("literature", 0, "Literature"),
)


def env_names() -> list[str]:
    """Every registered environment module name, e.g. ``simple_tricks_v0``."""
    return [f"{name}_v{version}" for name, version, _ in GAMES]


def load_spec(env_name: str):
    """The GameSpec of ``simple_tricks_v0`` (or ``simple_tricks``); ValueError if unknown."""
    for name, version, _ in GAMES:
        if env_name in (name, f"{name}_v{version}"):
            return importlib.import_module(f"card_envs.{name}_v{version}").SPEC
    raise ValueError(f"unknown game {env_name!r}; choose one of {', '.join(env_names())}")


def register_all() -> None:
    """Register every game with PettingZoo (AEC) and Gymnasium; calling it again does nothing."""
    for name, version, gym_name in GAMES:
        module = f"card_envs.{name}_v{version}"
        pz_id = f"card_envs/{name}-v{version}"
        if pz_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", pz_id, entry_point=f"{module}:env")
        gym_id = f"card_envs/{gym_name}-v{version}"
        if gym_id not in gymnasium.registry:
            gymnasium.register(id=gym_id, entry_point=f"{module}:gym_env",
                               vector_entry_point=_vector_entry_point(name))


def _vector_entry_point(name: str) -> str | None:
    """The Gymnasium vector entry point of a game with a batched engine (card_envs/vector/)."""
    has_engine = (Path(__file__).parent / "vector" / f"{name}.py").exists()
    return f"card_envs.vector.{name}:vector_env" if has_engine else None


@dataclass(frozen=True)
class EnvInfo:
    env_name: str
    pettingzoo_id: str
    gymnasium_id: str
    num_players: tuple[int, ...]
    default_players: int
    num_actions: int
    obs_shape: tuple[int, ...]
    encodings: tuple[str, ...]
    agents: tuple[str, ...]


def list_envs() -> list[EnvInfo]:
    """Every registered env with its players, action count and (default) observation shape."""
    rows = []
    for env_name in env_names():
        spec = load_spec(env_name)
        game, encoder, _ = spec.build({})
        rows.append(
            EnvInfo(
                env_name=env_name,
                pettingzoo_id=spec.pettingzoo_id,
                gymnasium_id=spec.gymnasium_id,
                num_players=spec.num_players,
                default_players=game.num_players,
                num_actions=game.num_actions,
                obs_shape=(encoder.size,),
                encodings=tuple(spec.encoders),
                agents=("random", *spec.agents),
            )
        )
    return rows
