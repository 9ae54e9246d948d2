"""Feature sets as data: TOML files naming templates (installed as structlin.features)."""
