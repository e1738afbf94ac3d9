"""98 Cards: the one-player, four-pile solitaire of source 004."""
