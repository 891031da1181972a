"""Metrics: pure functions that score fetched states the way OSWorld's metrics do."""
