"""``gitmem ui``: memory's state in a local web page, served on loopback behind a token."""
