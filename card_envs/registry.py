"""The list of games, their registration with PettingZoo and Gymnasium, and ``list_envs()``.

A game declares its identity once, in the ``GameSpec`` named ``SPEC`` of one module
(``card_envs/<game>/env.py``). The registry holds one line per game, that module's path;
everything else is derived from the spec: the env name (``palace_v0``), the PettingZoo and
Gymnasium ids and their registrations, ``list_envs()`` and the PettingZoo-style import
module ``card_envs.palace_v0`` (made on first import from the spec, no file of its own).

Adding a game: its folder ``card_envs/<game>/`` and one line in ``GAMES`` below.
``register_game(module_path)`` adds a game from anywhere at run time (the tests register a
toy game this way; ``unregister_game`` takes it away again), and so does naming its module in
the environment variable ``CARD_ENVS_GAMES``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys
from dataclasses import dataclass
from types import ModuleType

import gymnasium
import pettingzoo

from card_envs.core.make import factories
from card_envs.core.spec import GameSpec, record_home

# One line per game: the module that defines the game's ``SPEC``.
GAMES: tuple[str, ...] = (
    "card_envs.simple_tricks.env",
    "card_envs.ninety_eight_cards.env",
    "card_envs.thirty_one.env",
    "card_envs.palace.env",
    "card_envs.literature.env",
)

_SPECS: dict[str, GameSpec] = {}  # env name -> spec, in registration order
_HOMES: dict[str, str] = {}  # env name -> the module path its spec came from


def _spec_of(module_path: str) -> GameSpec:
    """The ``SPEC`` of ``module_path``; ValueError if the module has none."""
    spec = getattr(importlib.import_module(module_path), "SPEC", None)
    if not isinstance(spec, GameSpec):
        raise ValueError(f"{module_path} has no GameSpec named SPEC")
    return spec


def register_game(module_path: str) -> GameSpec:
    """Add the game whose ``SPEC`` lives in ``module_path`` and register its ids.

    Registering the same module again does nothing; a second game that claims a taken
    env name, PettingZoo id or Gymnasium id raises ValueError naming both.
    """
    spec = _spec_of(module_path)
    known = _SPECS.get(spec.env_name)
    if known is spec:
        return spec
    for other in _SPECS.values():
        for what in ("env_name", "pettingzoo_id", "gymnasium_id"):
            if getattr(other, what) == getattr(spec, what):
                raise ValueError(
                    f"{module_path}: {what} {getattr(spec, what)!r} is already taken by "
                    f"{_HOMES[other.env_name]}"
                )
    for taken in (spec.pettingzoo_id in pettingzoo.aec_registry and spec.pettingzoo_id,
                  spec.gymnasium_id in gymnasium.registry and spec.gymnasium_id):
        if taken:
            raise ValueError(f"{module_path}: {taken} is already registered by another package")
    _SPECS[spec.env_name] = spec
    _HOMES[spec.env_name] = module_path
    record_home(spec, module_path)
    module = f"card_envs.{spec.env_name}"
    pettingzoo.register("aec", spec.pettingzoo_id, entry_point=f"{module}:env")
    gymnasium.register(id=spec.gymnasium_id, entry_point=f"{module}:gym_env",
                       vector_entry_point=_vector_entry_point(spec))
    return spec


def unregister_game(env_name: str) -> None:
    """Take a game registered by ``register_game`` away again (ids, import module and all)."""
    spec = load_spec(env_name)
    del _SPECS[spec.env_name], _HOMES[spec.env_name]
    pettingzoo.aec_registry.pop(spec.pettingzoo_id, None)
    gymnasium.registry.pop(spec.gymnasium_id, None)
    sys.modules.pop(f"card_envs.{spec.env_name}", None)
    sys.modules["card_envs"].__dict__.pop(spec.env_name, None)


def env_names() -> list[str]:
    """Every registered environment module name, e.g. ``simple_tricks_v0``."""
    return list(_SPECS)


def load_spec(env_name: str) -> GameSpec:
    """The GameSpec of ``simple_tricks_v0`` (or ``simple_tricks``); ValueError if unknown."""
    spec = _SPECS.get(env_name)
    if spec is not None:
        return spec
    for spec in _SPECS.values():
        if spec.name == env_name:
            return spec
    raise ValueError(f"unknown game {env_name!r}; choose one of {', '.join(env_names())}")


def register_all() -> None:
    """Register every game in ``GAMES`` with PettingZoo and Gymnasium; again does nothing.

    Games named in the environment variable ``CARD_ENVS_GAMES`` (spec module paths, comma
    separated) are registered too: a game under development, outside the package, then
    works in every tool, ``card-envs`` commands run in a new process included.
    """
    if _MODULES not in sys.meta_path:
        sys.meta_path.append(_MODULES)
    extra = [m.strip() for m in os.environ.get("CARD_ENVS_GAMES", "").split(",") if m.strip()]
    for module_path in (*GAMES, *extra):
        register_game(module_path)


def _vector_entry_point(spec: GameSpec) -> str | None:
    """The Gymnasium vector entry point of a game with a batched twin (its spec says so): the
    batched VectorEnv, ``card_envs.vector.gym_env``, of that game."""
    return None if spec.batched is None else f"card_envs.vector.gym_env:{spec.env_name}"


class _EnvModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Makes ``card_envs.<env name>`` (e.g. ``card_envs.palace_v0``) from the game's spec."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, env_name = fullname.partition(".")
        if package == "card_envs" and env_name in _SPECS:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        spec = _SPECS[module.__name__.partition(".")[2]]
        made = factories(spec)
        module.__doc__ = (
            f"The {spec.env_name} environments, made from the GameSpec in "
            f"{_HOMES[spec.env_name]}: ``env()`` (PettingZoo AEC, classic wrappers), "
            f"``raw_env()``, ``gym_env()`` (Gymnasium, one learning seat) and ``SPEC``; "
            f"the rules class is ``{spec.game_cls.__name__}``."
        )
        module.SPEC = spec
        module.env, module.raw_env, module.gym_env = made.env, made.raw_env, made.gym
        setattr(module, spec.game_cls.__name__, spec.game_cls)
        module.__all__ = ["SPEC", spec.game_cls.__name__, "env", "gym_env", "raw_env"]


_MODULES = _EnvModules()


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
