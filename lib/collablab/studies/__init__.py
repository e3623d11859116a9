"""The studies, one folder each; each folder's ``__init__`` is that study's face.

Studies are registered for the run grid as entry points of the group ``collablab.studies``
(``pyproject.toml``): ``name = "package.module:episode_function"``. See
:func:`collablab.runs.studies` and docs/architecture.md.
"""
