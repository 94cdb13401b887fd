"""The layering rules the codebase keeps (checked on the sources)."""
import ast
import os

from conftest import ROOT


def sources(folder):
    for base, _, files in os.walk(os.path.join(ROOT, folder)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as fh:
                    yield os.path.relpath(path, ROOT), fh.read()


def imported(text):
    out = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def test_only_the_store_and_the_sql_peer_open_duckdb():
    users = {path for folder in ("engine", "pages") for path, text in sources(folder) if "duckdb" in imported(text)}
    users |= {"app.py"} if "duckdb" in imported(open(os.path.join(ROOT, "app.py")).read()) else set()
    assert users == {os.path.join("engine", "store.py"), os.path.join("engine", "sqlpeer.py")}


def test_pages_write_no_sql():
    """Pages call named functions of engine.views; no SQL text, no raw query."""
    for path, text in sources("pages"):
        calls = {n.func.attr for n in ast.walk(ast.parse(text))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        assert not calls & {"query", "scalar", "execute", "sql"}, path
        assert "SELECT " not in text.upper().replace("SELECTBOX", ""), path


def test_kernels_are_pure():
    """engine/kernels: numba and numpy only (no I/O, no storage, no frames)."""
    for path, text in sources(os.path.join("engine", "kernels")):
        assert imported(text) <= {"numpy", "numba", "__future__"}, (path, imported(text))


def test_one_source_of_defaults():
    """The README states the defaults the code uses (CLI, API and pages read
    them from engine.api and engine.neardup.DedupConfig)."""
    import re

    from engine.api import DEFAULT_MIN_LEN, DEFAULT_SIGMA
    from engine.cli import build_parser
    from engine.neardup import DedupConfig
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    d = DedupConfig()
    line = re.search(r"`dedup` defaults: `([^`]*)`", readme).group(1)
    assert line == (f"--method {d.description} --sketch {d.scheme} --shingle {d.w} "
                    f"--sketch-size {d.n} --threshold {d.t}")
    assert f"(`{DEFAULT_SIGMA}`, the default)" in readme and f"(default {DEFAULT_MIN_LEN}, at least 2)" in readme
    sub = build_parser()._subparsers._group_actions[0].choices
    dd = {a.dest: a.default for a in sub["dedup"]._actions}
    assert (dd["method"], dd["sketch"], dd["shingle"], dd["sketch_size"], dd["threshold"]) == (
        d.description, d.scheme, d.w, d.n, d.t)
    m = {a.dest: a.default for a in sub["mine"]._actions}
    assert (m["sigma"], m["min_len"]) == (str(DEFAULT_SIGMA), str(DEFAULT_MIN_LEN))
