"""collablab: notebooks and a small library for studying how LLM agents collaborate."""

__version__ = "0.1.0"
