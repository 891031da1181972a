"""OSWorld evaluate() semantics with registries of getters and metrics."""
