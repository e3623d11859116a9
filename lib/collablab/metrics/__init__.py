"""Metrics: pure functions of episode records."""
