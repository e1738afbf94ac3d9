"""Thirty-One (31): 2-7 players with 3 lives each, the match of source 001."""
