"""Simple tricks: the 2-player, 2-colour trick-taking game of source 003."""
