"""Palace: the shedding game of source 000; the last player holding cards loses."""
