"""card-envs: card-game environments for reinforcement learning.

Importing the package registers every game with PettingZoo and Gymnasium::

    import card_envs, gymnasium, pettingzoo
    from card_envs import simple_tricks_v0
    env = simple_tricks_v0.env(render_mode="ansi")
    env = pettingzoo.make("aec", "card_envs/simple_tricks-v0")
    env = gymnasium.make("card_envs/NinetyEightCards-v0")
    card_envs.list_envs()
"""

from card_envs.core.agents import register_agent_plugin
from card_envs.core.game import IllegalActionError
from card_envs.registry import EnvInfo, env_names, list_envs, load_spec, register_all

__version__ = "0.2.0"
__all__ = ["EnvInfo", "IllegalActionError", "env_names", "list_envs", "load_spec", "__version__"]

register_all()
# Trained models as agents (the train extra), by name: imported only when one is asked for.
register_agent_plugin("model", "card_envs.rl.policy_agent:load_model_agent", "model:PATH", "train")
register_agent_plugin("best", "card_envs.rl.policy_agent:load_model_agent", "best", "train")
# ... and a trained model guiding its game's search agent (the search keeps its move unless
# it finds a clearly better one)
register_agent_plugin("model+search", "card_envs.rl.policy_agent:load_search_agent",
                      "model+search:PATH", "train")
register_agent_plugin("best+search", "card_envs.rl.policy_agent:load_search_agent",
                      "best+search", "train")
# The game's search with its worlds played out on its batched twin (card_envs.core.batched_search)
register_agent_plugin("batched-pimc", "card_envs.core.batched_search:make_batched_pimc_agent",
                      "batched-pimc:WORLDS")
