"""The numbers the batched engine and its compiled loops share (no numba here, so that the
engine and the batched envs read them without compiling anything).

Agents in the Gymnasium view's turn (``batched_loops.turn_moves``): each seat other than the
learner's is played by a batched agent (its number: ``RANDOM_AGENT``, then the twin's rule
agents from 1), by ``EXTERNAL_AGENT`` (its moves come from outside the loop, a network say)
or by ``LEARNER_AGENT`` (a teammate the learner plays too: its decisions are learner steps).
Each call of the turn is one kind of move: ``NEW_GAME`` (a reset), ``LEARNER_MOVE`` (the
learners' moves) or ``EXTERNAL_MOVE`` (the EXTERNAL seats' moves).
"""

RANDOM_AGENT = 0
EXTERNAL_AGENT = -1
LEARNER_AGENT = -2

NEW_GAME, LEARNER_MOVE, EXTERNAL_MOVE = 0, 1, 2
