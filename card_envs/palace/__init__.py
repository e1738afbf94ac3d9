"""Palace: the shedding game of source 000 (3 face-down, 3 face-up, 3 in hand; the last one holding cards loses)."""
