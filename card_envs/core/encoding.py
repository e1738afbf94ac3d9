"""Observation encoders built from named pieces packed into one flat float32 vector.

Each encoder declares its layout as a list of ``Piece`` (name, size, low, high,
meaning). The layout gives the Box space, the offsets used while encoding,
named views for readers (``layout.split(obs)``) and the index table printed in
the docs, so the documentation cannot drift from the code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from card_envs.core.game import Game, View


class Piece(NamedTuple):
    name: str
    size: int
    low: float
    high: float
    meaning: str


class MaskedObservationSpace(spaces.Dict):
    """The space of an observation with its action mask: ``{"observation": Box, "action_mask":
    Box}``. A Dict has no bounds; code written for a Box that asks for them (SuperSuit's
    ``dtype_v0``, ``normalize_obs_v0``, ``flatten_v0``, ...) gets an AttributeError that says
    where they are, instead of one about a missing attribute."""

    BOX_ONLY = ("low", "high", "bounded_below", "bounded_above")

    def __init__(self, observation: spaces.Box, num_actions: int):
        super().__init__({"observation": observation,
                          "action_mask": spaces.Box(0, 1, (num_actions,), np.int8)})

    def __getattr__(self, name: str):
        if name in MaskedObservationSpace.BOX_ONLY:
            raise AttributeError(
                f"card_envs observations are a Dict of 'observation' (a Box) and 'action_mask', "
                f"which has no {name!r}: apply a Box-only wrapper to the 'observation' entry "
                "(docs/integrations.md, SuperSuit), or use the Gymnasium view's flat "
                "observation (gym_env(dict_obs=False))")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class Layout:
    """Offsets, bounds and docs of a flat observation made of named pieces."""

    def __init__(self, pieces: list[Piece]):
        self.pieces = list(pieces)
        self.offsets: dict[str, slice] = {}
        start = 0
        for p in self.pieces:
            if p.name in self.offsets:
                raise ValueError(f"duplicate piece name {p.name!r}")
            self.offsets[p.name] = slice(start, start + p.size)
            start += p.size
        self.size = start
        self.low = np.concatenate([np.full(p.size, p.low, np.float32) for p in self.pieces])
        self.high = np.concatenate([np.full(p.size, p.high, np.float32) for p in self.pieces])

    def __getitem__(self, name: str) -> slice:
        return self.offsets[name]

    def start(self, name: str) -> int:
        return self.offsets[name].start

    def space(self) -> spaces.Box:
        return spaces.Box(self.low.copy(), self.high.copy(), (self.size,), np.float32)

    def batch(self, obs: np.ndarray, name: str) -> np.ndarray:
        """Piece ``name`` of a batch of observations (B, size), as float64 (B, piece size)."""
        return obs[:, self.offsets[name]].astype(np.float64)

    def split(self, obs: np.ndarray) -> dict[str, np.ndarray]:
        """Named views into an encoded observation."""
        return {name: obs[sl] for name, sl in self.offsets.items()}

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(indices, name, values, meaning) for each piece, as in the docs table."""
        out = []
        for p in self.pieces:
            sl = self.offsets[p.name]
            idx = str(sl.start) if p.size == 1 else f"{sl.start}-{sl.stop - 1}"
            out.append((idx, p.name, f"{_num(p.low)}..{_num(p.high)}", p.meaning))
        return out

    def markdown(self) -> str:
        lines = ["| index | name | values | meaning |", "|---|---|---|---|"]
        lines += [f"| {i} | `{n}` | {v} | {m} |" for i, n, v, m in self.rows()]
        return "\n".join(lines)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


class Encoder(ABC):
    """Turns a seat's view into a flat float32 observation described by ``self.layout``."""

    name: ClassVar[str]
    description: ClassVar[str] = ""

    def __init__(self, game: Game):
        self.game = game
        self.layout = Layout(self.pieces(game))
        self.size = self.layout.size

    @classmethod
    @abstractmethod
    def pieces(cls, game: Game) -> list[Piece]:
        """The layout of this encoding for ``game``'s configuration."""

    @abstractmethod
    def encode(self, view: View) -> np.ndarray:
        """A new float32 vector of length ``self.size`` for ``view``."""

    def encode_state(self, state, seat: int) -> np.ndarray:
        """The same vector as ``encode(game.view(state, seat))``.

        The environments call this on their hot path; an encoder may override it to read
        the state directly and skip building the view. It must read only what ``seat`` may
        see: the leak and consistency tests run it against ``encode`` of the view.
        """
        return self.encode(self.game.view(state, seat))

    def encode_state_read_only(self, state, seat: int) -> np.ndarray:
        """``encode_state``'s vector, non-writeable (what the AEC env keeps and hands out). An
        encoder that builds its observation as immutable bytes may return them without a copy."""
        obs = self.encode_state(state, seat)
        obs.setflags(write=False)
        return obs

    def space(self) -> spaces.Box:
        return self.layout.space()
