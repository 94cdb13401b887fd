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
