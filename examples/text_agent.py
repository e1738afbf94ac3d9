"""A text agent for card-envs (docs/text_agents.md): a random legal move for every message.

    card-envs evaluate palace cmd:"python examples/text_agent.py" heuristic heuristic --games 50
"""

import json
import random
import sys

choose = random.Random(0)  # seeded: the same messages get the same answers
for line in sys.stdin:  # one JSON message a line; the input ends with the run
    message = json.loads(line)
    move = choose.choice(message["moves"])  # {"number": 1, "label": "play 3", "action": 3}
    print(json.dumps({"move": move["number"]}), flush=True)
