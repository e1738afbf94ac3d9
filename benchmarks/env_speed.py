"""Speed of every registered environment (see card_envs/bench.py).

Run: python benchmarks/env_speed.py [--help]
"""

import sys

from card_envs.bench import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
