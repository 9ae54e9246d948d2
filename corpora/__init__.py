"""The corpus catalog and tiny fixtures (installed as structlin.corpora)."""
