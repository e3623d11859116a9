"""Test-session settings shared by pytest and the nbval-executed notebooks."""

import os
import tempfile

# Notebooks and tests write their run folders to a fresh place, so a test never resumes a
# developer's earlier run (the notebook kernels inherit this environment).
os.environ.setdefault("COLLABLAB_OUTPUTS", tempfile.mkdtemp(prefix="collablab-test-outputs-"))
