"""The research workspace (`igot serve`): watch, highlight and tag interviews, and gather quotes
across the library, in a local web app."""
