"""Trained models as agents, and saving/loading them with what is needed to use them.

A model is saved as ``NAME.zip`` (the SB3 file) next to ``NAME.json``: the algorithm,
the env name, the rules arguments it was trained with and the observation encoding.
``load_model_agent(spec, "model:PATH", game)`` gives an agent that plays any seat of
``game``; ``"best"`` loads the model shipped for that game (``card_envs/rl/models/``).
``"best+search"`` and ``"model+search:PATH"`` (``load_search_agent``) put the model in front of
its game's search agent, which keeps the model's move unless it finds a clearly better one.
"""

from __future__ import annotations

import json
import os
import zipfile
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import torch as th

from card_envs.core.agents import BaseAgent
from card_envs.core.game import Game, View

ALGOS = ("maskable_ppo", "dqn")


def algo_class(algo: str):
    """The SB3 class of an algorithm name."""
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    if algo == "dqn":
        from card_envs.rl.masked_dqn import MaskedDQN

        return MaskedDQN
    raise ValueError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGOS)}")


class PolicyAgent(BaseAgent):
    """Plays with a trained SB3 policy: encodes its seat's view and picks a legal action.

    ``deterministic`` picks the most likely (PPO) or highest-valued (DQN) legal action;
    otherwise PPO samples from its masked distribution.
    """

    name = "model"

    def __init__(
        self,
        game: Game,
        encoder,
        policy,
        algo: str,
        deterministic: bool = True,
        label: str = "model",
    ):
        super().__init__(game)
        self.encoder = encoder
        self.policy = policy
        self.algo = algo
        self.deterministic = deterministic
        self.name = label

    def player(self, seed: int = 0):
        """This model's batched form (``card_envs.vector.selfplay.Player``): its greedy or
        sampled actions for a batch of observations in one forward pass (a sampling model
        draws from a generator of its own, seeded with ``seed``)."""
        from card_envs.vector.selfplay import Player

        rng = np.random.default_rng([seed, 7])

        def policy(obs, mask, rows, state):
            return policy_actions(self.policy, self.algo, obs, mask, self.deterministic, rng)

        return Player(policy, self.encoder.name, name=self.name)

    def act(self, view: View, rng: np.random.Generator) -> int:
        policy = self.policy
        device = getattr(policy, "device", None)  # an SB3 policy's; None: the CPU
        obs = th.as_tensor(self.encoder.encode(view), device=device).unsqueeze(0)
        mask = view.legal
        with th.inference_mode():
            if self.algo == "dqn":
                batch = {"observation": obs,
                         "action_mask": th.as_tensor(mask[None].copy(), device=device)}
                return _best_legal(policy.q_net(batch)[0].cpu().numpy(), mask)
            # the masked distribution's logits, without building the distribution
            features = policy.extract_features(obs, policy.pi_features_extractor)
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features))[0].cpu()
        if self.deterministic:
            return _best_legal(logits.numpy(), mask)
        # sample from the softmax over the legal actions (what the masked distribution is)
        legal = np.flatnonzero(mask)
        z = logits.numpy()[legal].astype(np.float64)
        probs = np.exp(z - z.max())
        probs /= probs.sum()
        return int(legal[rng.choice(len(legal), p=probs)])

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name!r}, {self.algo})"


def policy_scores(policy, algo: str, obs: np.ndarray, mask: np.ndarray) -> th.Tensor:
    """(k, actions): a policy's logits (PPO) or q-values (DQN) for a batch of observations
    (one forward pass), before masking; a per-action PPO policy scores only the legal
    actions (the others 0)."""
    device = getattr(policy, "device", None)  # an SB3 policy's; None: the CPU
    obs_t = th.as_tensor(obs, device=device)
    with th.inference_mode():
        if algo == "dqn":
            batch = {"observation": obs_t, "action_mask": th.as_tensor(mask, device=device)}
            return policy.q_net(batch).cpu()
        with scoring_legal_only(policy, mask):
            features = policy.extract_features(obs_t, policy.pi_features_extractor)
            return policy.action_net(policy.mlp_extractor.forward_actor(features)).cpu()


def scoring_legal_only(policy, masks):
    """A context in which a MaskablePPO ``policy`` that can (a per-action policy,
    card_envs.rl.action_heads) scores only the actions ``masks`` allows, for logits that
    are masked right after; for any other policy, nothing changes."""
    legal_only = getattr(policy, "legal_only", None)
    return legal_only(masks) if legal_only is not None else nullcontext()


def policy_actions(policy, algo: str, obs: np.ndarray, mask: np.ndarray, deterministic: bool,
                   rng: np.random.Generator) -> np.ndarray:
    """(k,) int64: a batch's actions, as ``PolicyAgent.act`` picks them one at a time: the
    best legal action, or (PPO, not ``deterministic``) one drawn from the softmax over the
    legal actions (Gumbel-max: the same distribution, one draw for the whole batch)."""
    scores = policy_scores(policy, algo, obs, mask).numpy().astype(np.float64)
    legal = np.asarray(mask, dtype=bool)
    if not deterministic and algo != "dqn":
        scores = scores - np.log(-np.log(rng.random(scores.shape)))
    return np.where(legal, scores, -np.inf).argmax(1)


def _best_legal(values: np.ndarray, mask: np.ndarray) -> int:
    """The legal action with the highest value (the first one on ties)."""
    legal = np.flatnonzero(mask)
    return int(legal[np.argmax(values[legal])])


# what SB3 saves of the rollout's last step, read only by a training run that goes on
# (``_last_obs`` holds every training game's last observation: 5.4 MB of a 7.5 MB
# Literature model trained on 1024 games)
TRAINING_ONLY = ("_last_obs", "_last_original_obs", "_last_episode_starts")


def save_model(model, path: Path, meta: dict[str, Any], for_play: bool = False) -> None:
    """Write ``path.zip`` and ``path.json`` atomically (a crash never leaves half a file).

    ``for_play`` writes a model that is kept to play, not to go on training: without the
    optimizer's state (Adam's moments: twice the weights' size) and ``TRAINING_ONLY``,
    compressed (``compact``). A checkpoint to resume from keeps everything.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.zip")
    try:
        if for_play:
            model.policy.optimizer.state.clear()
        model.save(tmp)
        if for_play:
            compact(tmp, path.with_suffix(".zip"))
        else:
            os.replace(tmp, path.with_suffix(".zip"))
    finally:
        tmp.unlink(missing_ok=True)
    write_json(path.with_suffix(".json"), meta)


def compact(src: Path, dst: Path) -> None:
    """Write the SB3 model file ``src`` to ``dst`` without ``TRAINING_ONLY``, compressed;
    the weights are unchanged (``src`` and ``dst`` may be the same file)."""
    with zipfile.ZipFile(src) as zin:
        files = {info.filename: zin.read(info) for info in zin.infolist()}
    data = json.loads(files["data"])
    for key in TRAINING_ONLY:
        data.pop(key, None)
    files["data"] = json.dumps(data, indent=4).encode()
    dst = Path(dst)
    tmp = dst.with_name(dst.name + ".compact.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zout:
            for name, content in files.items():
                zout.writestr(name, content)
        tmp.replace(dst)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(path: Path, data: Any) -> None:
    """Write JSON through a temporary file and a rename."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_meta(path: Path) -> dict[str, Any]:
    meta_path = Path(path).with_suffix(".json")
    if not meta_path.exists():
        raise ValueError(f"{meta_path} is missing: a model needs its metadata file beside it")
    return json.loads(meta_path.read_text())


def models_dir() -> Path:
    """The shipped models: this package's data (``card_envs/rl/models/``; ``reproduce
    --ship`` writes them, a plain ``pip install`` carries them)."""
    return Path(__file__).resolve().parent / "models"


def shipped_models(env_name: str) -> list[Path]:
    """The models shipped for ``env_name`` (``models_dir()``): ``<env>.zip`` (default
    rules) first, then the variants' ``<env>-<variant>.zip``."""
    root = models_dir()
    exact = root / f"{env_name}.zip"
    return ([exact] if exact.exists() else []) + sorted(root.glob(f"{env_name}-*.zip"))


def shipped_model(env_name: str, game: Game | None = None) -> Path | None:
    """The shipped model for ``env_name`` (trained on ``game``'s rules, if given), or None.

    Rules here are the game's configuration less its reward scheme, which a trained policy
    does not depend on (31's model, trained on per-round rewards, plays any 2-player match).
    """
    for path in shipped_models(env_name):
        if game is None or _rules(_game_of(path, env_name)) == _rules(game):
            return path
    return None


def _rules(game: Game) -> dict[str, Any]:
    return {k: v for k, v in game.config().items() if k != "reward"}


def _game_of(path: Path, env_name: str) -> Game:
    from card_envs.registry import load_spec

    return load_spec(env_name).make_game(**read_meta(path).get("game_args", {}))


def load_policy(path: Path):
    """The policy of a saved model, on the CPU, in evaluation mode, and its metadata."""
    path = Path(path).with_suffix(".zip")
    if not path.exists():
        raise ValueError(f"no model file {path}")
    meta = read_meta(path)
    model = algo_class(meta["algo"]).load(path, device="cpu")
    model.policy.set_training_mode(False)
    return model.policy, meta


def load_model_agent(spec, name: str, game: Game, deterministic: bool | None = None
                     ) -> BaseAgent:
    """An agent from ``model:PATH`` or ``best`` (the shipped model; ValueError if none).

    It plays greedily or samples as its metadata says (``deterministic``, the mode that
    did better when it was trained; greedy if unsaid), unless ``deterministic`` is given.
    """
    return _model_agent(spec, name, game, deterministic)[0]


def _model_agent(spec, name: str, game: Game, deterministic: bool | None = None
                 ) -> tuple[BaseAgent, dict[str, Any]]:
    """``load_model_agent``'s agent and the model's metadata."""
    path = _model_path(spec, name, game)
    policy, meta = load_policy(path)
    if meta["env"] != spec.env_name:
        raise ValueError(f"{path} was trained on {meta['env']}, not {spec.env_name}")
    encoder = spec.encoders[meta.get("obs_encoding", "default")](game)
    expected = policy.observation_space
    size = expected["observation"].shape[0] if hasattr(expected, "spaces") else expected.shape[0]
    if size != encoder.size or policy.action_space.n != game.num_actions:
        raise ValueError(
            f"{path} expects observations of {size} and {policy.action_space.n} actions; "
            f"this game has {encoder.size} and {game.num_actions} ({game!r}; the model was "
            f"trained with {meta.get('game_args', {})})"
        )
    label = "best" if name == "best" else f"model:{Path(path).stem}"
    if deterministic is None:
        deterministic = bool(meta.get("deterministic", True))
    return PolicyAgent(game, encoder, policy, meta["algo"], deterministic, label), meta


def _model_path(spec, name: str, game: Game) -> Path:
    """The model file that ``best`` or ``model:PATH`` names."""
    if name == "best":
        path = shipped_model(spec.env_name, game)
        if path is None:
            shipped = [p.stem for p in shipped_models(spec.env_name)]
            raise ValueError(
                f"no trained model ships for {spec.env_name} with {game!r}"
                + (f"; shipped: {', '.join(shipped)}" if shipped else "")
            )
        return path
    return Path(name.removeprefix("model:"))


def guided_search(spec, model: BaseAgent, game: Game, search: dict[str, Any] | None = None
                  ) -> BaseAgent:
    """``model`` guiding the game's search agent: ``search`` names the agent and its budget
    (``{"agent": "ismcts", "budget": 25}``; default the game's ``ismcts`` at its default
    budget). The search keeps the model's move unless another beats it clearly
    (``card_envs.core.search.SearchAgent``'s ``guide``)."""
    search = search or {}
    agent = search.get("agent", "ismcts")
    guided = [n for n, c in spec.agents.items() if _takes_guide(c)]
    if agent not in guided:
        raise ValueError(f"search agent {agent!r}: {spec.env_name}'s agents that a model can "
                         f"guide are: {', '.join(guided) or 'none'}")
    budget = {} if search.get("budget") is None else {"budget": search["budget"]}
    return spec.agents[agent](game, guide=model, **budget)


def _takes_guide(cls) -> bool:
    """Whether an agent class is a search that keeps a guide's move unless beaten (PIMC; 98
    Cards' plan search): its ``takes_guide()`` says so."""
    takes = getattr(cls, "takes_guide", None) if isinstance(cls, type) else None
    return callable(takes) and bool(takes())


def load_search_agent(spec, name: str, game: Game) -> BaseAgent:
    """``best+search`` or ``model+search:PATH``: the model guiding its game's search agent as
    the model's metadata says (``search``, written for settings that play with search; else
    the game's ``ismcts`` at its default budget). See ``guided_search``."""
    model_name = "best" if name == "best+search" else "model:" + name.partition(":")[2]
    model, meta = _model_agent(spec, model_name, game)
    return guided_search(spec, model, game, meta.get("search"))
