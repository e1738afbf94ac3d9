"""Golden trajectories: show that a speed change leaves every output of a game bit-identical.

    python benchmarks/golden.py record palace_v0 /tmp/palace.pkl   # before the change
    python benchmarks/golden.py check palace_v0 /tmp/palace.pkl    # after it: exit 1 if different

For every variant in the game's spec and every observation encoding it plays seeded random
legal games through ``raw_env()`` and records, per step, a digest of every agent's observation
and mask (not only the actor's), the rewards, terminations, truncations and infos; then seeded
games of the Gymnasium view against every rule-based agent (the agents read the views). Same
seeds, same random-number use and same float32 arithmetic give the same digests.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle

import numpy as np

from card_envs.core.make import factories
from card_envs.registry import load_spec

GAMES_PER_CONFIG = 40
GYM_GAMES = 6


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.blake2b(digest_size=12)
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[int(rng.random() * len(legal))])


def aec_trace(spec, kwargs: dict, seed: int) -> list:
    env = factories(spec).raw_env(**kwargs)
    env.reset(seed=seed)
    rng = np.random.default_rng(1000 + seed)
    out = []
    for agent in env.agent_iter(100_000):
        obs, reward, term, trunc, info = env.last()
        everyone = tuple(
            _digest(env.observe(a)["observation"], env.observe(a)["action_mask"])
            for a in env.possible_agents
        )
        out.append((agent, everyone, reward, term, trunc, repr(sorted(info.items())),
                    tuple(sorted(env.rewards.items()))))
        env.step(None if term or trunc else _pick(rng, obs["action_mask"]))
    return out


def gym_trace(spec, opponent: str, seed: int) -> list:
    env = factories(spec).gym(opponent=opponent)
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(2000 + seed)
    out = [_digest(obs), repr(sorted(info.items()))]
    done = False
    while not done:
        obs, reward, term, trunc, info = env.step(_pick(rng, env.action_masks()))
        out.append((_digest(obs, env.action_masks()), reward, term, trunc,
                    repr(sorted(info.items()))))
        done = term or trunc
    return out


def traces(env_name: str) -> dict:
    spec = load_spec(env_name)
    out = {}
    for i, variant in enumerate(spec.variants):
        for encoding in spec.encoders:
            kwargs = {**variant, "obs_encoding": encoding}
            for seed in range(GAMES_PER_CONFIG):
                out[("aec", i, encoding, seed)] = aec_trace(spec, kwargs, seed)
    for opponent in spec.agents:
        for seed in range(GYM_GAMES):
            out[("gym", opponent, seed)] = gym_trace(spec, opponent, seed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("record", "check"))
    parser.add_argument("game", help="env name, e.g. palace_v0")
    parser.add_argument("path", help="the recorded traces (a pickle file)")
    args = parser.parse_args(argv)
    got = traces(args.game)
    if args.mode == "record":
        with open(args.path, "wb") as f:
            pickle.dump(got, f)
        print(f"recorded {len(got)} traces, {sum(map(len, got.values()))} steps")
        return 0
    with open(args.path, "rb") as f:
        want = pickle.load(f)
    different = [key for key in want if got.get(key) != want[key]]
    for key in different[:3]:
        print(f"different: {key}")
    print(f"{len(want) - len(different)}/{len(want)} traces identical")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
