import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)


def mine_token_lists(docs, sigma, min_len, workers=1, memory=None):
    """Mine documents given as token lists; answer as {phrase tuple: (df, occ)}.
    ``memory``: the budget (a tiny one forces the out-of-core path)."""
    from engine.bloomspan import mine_tokens

    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in ids])
    res = mine_tokens(flat, off, len(vocab), sigma, min_len, workers=workers, memory=memory)
    inv = {v: k for k, v in vocab.items()}
    answer = {}
    for i in np.flatnonzero(res.node_max):
        r, m = int(res.node_rep[i]), int(res.node_len[i])
        answer[tuple(inv[int(x)] for x in flat[r:r + m])] = (int(res.node_df[i]), int(res.node_occ[i]))
    return answer, [int(c) for c in res.covered], res, flat, off


@pytest.fixture
def cli(tmp_path):
    """Run the command line in a subprocess; returns (status, stdout, stderr)."""
    import subprocess

    def run(*args, cwd=None):
        p = subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)],
                           capture_output=True, text=True, cwd=cwd or tmp_path,
                           env={**os.environ, "PYTHONPATH": ROOT})
        return p.returncode, p.stdout, p.stderr

    return run
