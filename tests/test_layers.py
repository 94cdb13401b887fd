"""The layering rules the codebase keeps, checked on the sources.

Each rule says where one kind of decision lives (docs/architecture.md has
the map): storage in engine/store.py, the choice of miner in engine/planner.py,
constants in engine/constants.py, flags in engine/cli.py, drawing in pages/.
"""
import ast
import os
import re

from tests.support import ROOT

PACKAGES = ("engine", "pages")


def sources(*folders):
    for folder in folders:
        for base, _, files in os.walk(os.path.join(ROOT, folder)):
            if "__pycache__" in base:
                continue
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(base, name)
                    with open(path, encoding="utf-8") as fh:
                        yield os.path.relpath(path, ROOT), fh.read()


def everything():
    yield from sources(*PACKAGES, "tests", "bench")
    with open(os.path.join(ROOT, "app.py"), encoding="utf-8") as fh:
        yield "app.py", fh.read()


def module_name(path: str) -> str:
    name = path[:-3].replace(os.sep, ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def absolute(path: str, node: ast.ImportFrom) -> str:
    """The module an ImportFrom names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: str, text: str):
    """(module, names) of every import anywhere in the file, functions included."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []
        elif isinstance(node, ast.ImportFrom):
            yield absolute(path, node), [a.name for a in node.names]


def top_modules(path, text):
    return {m.split(".")[0] for m, _ in imports(path, text)}


PROJECT = {module_name(p) for p, _ in everything()}


def test_only_the_store_opens_duckdb():
    users = {p for p, text in everything() if "duckdb" in top_modules(p, text)
             and not p.startswith(("tests", "bench"))}
    assert users == {os.path.join("engine", "store.py")}


def test_kernels_are_pure():
    """engine/kernels: numba and numpy only (no I/O, no storage, no frames),
    and the numba flags of engine/config.py; llvmlite (numba's code
    generator) only for the prefetch intrinsic."""
    for path, text in sources(os.path.join("engine", "kernels")):
        outside = {m for m, _ in imports(path, text) if not m.startswith("engine.kernels") and m != "engine.config"}
        allowed = {"numpy", "numba", "__future__"} | ({"llvmlite"} if path.endswith("prefetch.py") else set())
        assert {m.split(".")[0] for m in outside} <= allowed, (path, outside)


def test_no_kernel_uses_blas_and_loading_one_imports_no_scipy_linalg():
    """engine/config.py answers numba's BLAS probe "no" (it imported
    scipy.linalg, 0.3 s of every process): so no kernel may use np.dot,
    np.linalg or the @ operator, and a process that loads a cached kernel
    must not import scipy.linalg (a numba upgrade that probes elsewhere
    shows here)."""
    import subprocess
    import sys
    for path, text in sources(os.path.join("engine", "kernels")):
        assert not re.search(r"np\.(dot|linalg|matmul|vdot|inner|outer)\b|\w\s@\s\w", text), path
    code = ("import sys, numpy as np\n"
            "from engine.planner import plan_mining\n"
            "plan_mining(np.arange(64, dtype=np.int32) % 5, np.array([0, 32, 64], np.int64), 2, 3)\n"
            "print('scipy.linalg' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_re_mining_a_store_imports_no_pandas(tmp_path):
    """pandas (0.2 s to import) has no part in `mine STORE`: pyarrow imports
    it for any pa.array or pa.scalar of Python or numpy values, so the
    mining path builds its Arrow tables through polars."""
    import subprocess
    import sys
    from tests.support import documents, write_parquet
    write_parquet(tmp_path / "s.parquet", documents(40, seed=1))
    subprocess.run([sys.executable, "-m", "engine.cli", "ingest", "s.parquet", "--db", "s.duckdb", "--quiet"],
                   cwd=tmp_path, check=True, env={**os.environ, "PYTHONPATH": ROOT})
    code = ("import runpy, sys\n"
            "sys.argv = ['boilerscope', 'mine', 's.duckdb', '--sigma', '3', '--out', 'r', '--quiet']\n"
            "try:\n    runpy.run_module('engine.cli', run_name='__main__')\nexcept SystemExit as e:\n"
            "    assert not e.code, e.code\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr
    assert (tmp_path / "r" / "blocks.parquet").exists()


def test_no_module_uses_another_modules_private_names():
    """No ``from x import _name`` and no ``x._name`` of another project module."""
    bad = []
    for path, text in everything():
        me = module_name(path)
        tree = ast.parse(text)
        aliases = {}
        for m, names in imports(path, text):
            if m in PROJECT or m.split(".")[0] in ("engine", "pages", "tests"):
                bad += [(path, m, n) for n in names if n.startswith("_") and not n.startswith("__") and m != me]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:  # "import a.b" binds a; "import a.b as c" binds c to a.b
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = absolute(path, node)
                for a in node.names:
                    full = f"{base}.{a.name}" if base else a.name
                    if full in PROJECT:
                        aliases[a.asname or a.name] = full
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            owner = ast.unparse(node.value)  # a name or a dotted chain (engine.bloomspan._x)
            head, _, rest = owner.partition(".")
            module = aliases.get(head, head) + ("." + rest if rest else "")
            if module in PROJECT and module != me:
                bad.append((path, module, node.attr))
        for node in ast.walk(tree):  # getattr(module, "_name")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and str(node.args[1].value).startswith("_") and not str(node.args[1].value).startswith("__")):
                owner = ast.unparse(node.args[0])
                if aliases.get(owner, owner) in PROJECT:
                    bad.append((path, owner, node.args[1].value))
    assert not bad, bad


def test_no_import_cycles_even_inside_functions():
    graph = {}
    for path, text in sources("engine"):
        me = module_name(path)
        deps = set()
        for m, names in imports(path, text):
            targets = [f"{m}.{n}" for n in names if f"{m}.{n}" in PROJECT] or [m]
            deps |= {t for t in targets if t in PROJECT and t != me and t.startswith("engine")}
        graph[me] = deps
    # the package imports its API at the bottom of __init__; modules never import the package
    for me, deps in graph.items():
        assert me == "engine" or "engine" not in deps, (me, "imports the package engine: import the module instead")
    graph.pop("engine", None)
    state, cycle = {}, []

    def visit(n, stack):
        state[n] = 1
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                cycle.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    assert not cycle, cycle


def test_sql_is_written_by_the_store_and_the_read_layer_only():
    """Outside engine/store.py and engine/views.py no engine module passes SQL
    to the store (tests and benchmarks may)."""
    for path, text in sources("engine"):
        if path in (os.path.join("engine", "store.py"), os.path.join("engine", "views.py")):
            continue
        calls = {n.func.attr for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and ast.unparse(n.func.value) not in ("pa", "pl", "np")}
        assert not calls & {"query", "scalar", "execute", "sql"}, path


def test_pages_draw_and_read_only_through_the_read_layer():
    """Pages hold widgets and drawing: no store, SQL, arrays, vocabulary or cut
    rule of their own, and no private Streamlit API."""
    for path, text in sources("pages"):
        mods = {m for m, _ in imports(path, text)} | {f"{m}.{n}" for m, names in imports(path, text) for n in names}
        assert not {m for m in mods if m.split(".")[0] in ("duckdb", "numpy")
                    or m in ("engine.store", "engine.clean") or m.startswith("engine.kernels")}, (path, mods)
        calls = {n.func.attr for n in ast.walk(ast.parse(text))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
        assert not calls & {"query", "scalar", "execute", "sql", "arrays", "vocabulary", "decision_cut",
                            "store", "open_store"}, path
        assert "SELECT " not in text.upper().replace("SELECTBOX", ""), path
    for path, text in list(sources("pages", os.path.join("engine", "ui"))) + [("app.py", open(
            os.path.join(ROOT, "app.py"), encoding="utf-8").read())]:
        for m, _ in imports(path, text):
            assert not (m.startswith("streamlit.") and m not in ("streamlit.web.cli", "streamlit.testing.v1")), \
                (path, m)


def test_progress_is_one_protocol():
    """``progress`` is a callable (stage, fraction) or None everywhere in the
    engine: never a bool, never tested with callable()."""
    for path, text in sources("engine"):
        if path in (os.path.join("engine", "cli.py"), os.path.join("engine", "progress.py")):
            continue
        assert "callable(progress)" not in text and "progress is True" not in text, path
        for node in ast.walk(ast.parse(text)):
            # a call of a progress callback passes (stage, fraction), never a byte count alone
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("progress", "report"):
                assert len(node.args) == 2, (path, ast.unparse(node))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.args + node.args.kwonlyargs
                defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults \
                    + node.args.kw_defaults
                for a, d in zip(args, defaults):
                    if a.arg == "progress":
                        assert d is None or (isinstance(d, ast.Constant) and d.value is None), (path, node.name)


def test_each_constant_is_defined_once():
    """The names of engine/constants.py are assigned nowhere else, and their
    literal values (the default store, the 31-bit limits) appear only there."""
    from engine import constants
    names = {n for n in vars(constants) if n.isupper()}
    for path, text in sources("engine", "pages"):
        if path == os.path.join("engine", "constants.py"):
            continue
        tree = ast.parse(text)
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                assert not (isinstance(t, ast.Name) and t.id in names), (path, t.id)
            if isinstance(node, ast.Constant) and node.value in (2**31 - 2, 2**31 - 1):
                assert False, (path, "a 31-bit limit spelled as a number: use engine.constants")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert "boilerscope.duckdb" not in node.value, path
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        assert not re.search(r"2\s*\*\*\s*31\s*-\s*2", code), path


def test_the_command_line_reads_its_defaults_from_the_engine():
    from engine.cli import build_parser
    from engine.constants import DEFAULT_MIN_LEN, DEFAULT_SIGMA
    from engine.neardup import DedupConfig
    d = DedupConfig()
    sub = build_parser()._subparsers._group_actions[0].choices
    dd = {a.dest: a.default for a in sub["dedup"]._actions}
    assert (dd["method"], dd["sketch"], dd["shingle"], dd["sketch_size"], dd["threshold"]) == (
        d.method, d.sketch, d.shingle, d.sketch_size, d.threshold)
    m = {a.dest: a.default for a in sub["mine"]._actions}
    assert (m["sigma"], m["min_len"]) == (str(DEFAULT_SIGMA), str(DEFAULT_MIN_LEN))


def test_no_test_imports_another_by_path():
    for path, text in sources("tests"):
        for n in ast.walk(ast.parse(text)):
            assert not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and ast.unparse(n.func.value) == "sys.path"), path
        mods = {m for m, _ in imports(path, text)}
        assert not {m for m in mods if m.startswith("test_") or m in ("conftest", "naive")}, (path, mods)


def test_flags_are_spelled_only_by_the_command_line():
    """Engine messages name parameters as ``{name}`` placeholders
    (:class:`engine.errors.BoilerscopeError`); only engine/cli.py turns them
    into flags (engine/ui/launch.py writes Streamlit's own command line; a
    page may show the whole command that does what it does)."""
    allowed = {os.path.join("engine", "cli.py"), os.path.join("engine", "ui", "launch.py")}
    for path, text in sources("engine", "pages"):
        if path in allowed:
            continue
        tree = ast.parse(text)
        skip = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings
        skip |= {id(part) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)
                 and "boilerscope " in ast.unparse(n) for part in n.values}  # a whole command, shown
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
                    and "boilerscope " not in node.value):
                assert not re.search(r"(?<![\w-])--[a-z][a-z-]*(?![\w.])", node.value), (path, node.value)


def test_an_error_shows_its_parameter_as_each_front_end_names_it():
    from engine.cli import flag
    from engine.errors import BoilerscopeError
    from engine.params import check_max_slot
    try:
        check_max_slot(17)
    except BoilerscopeError as exc:
        assert str(exc).startswith("max_slot 17 is out of range")
        assert exc.render(flag).startswith("--max-slot 17 is out of range")
    else:
        raise AssertionError("17 is not a slot width")
