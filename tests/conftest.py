import os
import sys

import pytest



@pytest.fixture
def cli(tmp_path):
    """Run the command line in a subprocess; returns (status, stdout, stderr)."""
    import subprocess

    def run(*args, cwd=None):
        p = subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                           capture_output=True, text=True, cwd=cwd or tmp_path)
        return p.returncode, p.stdout, p.stderr

    return run
