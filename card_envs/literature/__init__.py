"""Literature: the team card game of source 002, with knowledge-state observations."""
