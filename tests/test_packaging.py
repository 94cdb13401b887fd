"""The wheel: `pip install .` (not editable) ships the dashboard, its pages,
its settings and the demo, and the installed package finds them from any folder."""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.support import ROOT

SOURCES = ("pyproject.toml", "README.md", "app.py", "engine", "pages", "data", ".streamlit")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a copy of the sources (the build writes build/ beside them)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    for name in SOURCES:
        path = os.path.join(ROOT, name)
        (shutil.copytree(path, src / name, ignore=ignore) if os.path.isdir(path) else shutil.copy(path, src / name))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                        "-w", str(tmp / "dist"), str(src)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    (whl,) = (tmp / "dist").iterdir()
    return whl


def test_the_wheel_ships_the_dashboard(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    pages = [n[:-3] for n in os.listdir(os.path.join(ROOT, "pages")) if n.endswith(".py") and n != "__init__.py"]
    expected = {f"engine/ui/screens/{p}.py" for p in pages} | {
        "engine/ui/app.py", "engine/ui/demo/demo.parquet", "engine/ui/settings/config.toml",
        "engine/ui/settings/icon.png", "engine/kernels/bloomspan.py", "engine/__main__.py"}
    assert expected <= names, sorted(expected - names)
    # nothing lands at the top of site-packages but the package itself
    assert {n.split("/")[0] for n in names if not n.startswith("boilerscope-")} == {"engine"}


def test_the_installed_package_finds_its_pages_from_any_folder(wheel, tmp_path):
    target = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                        str(target), str(wheel)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import os, engine; from engine.ui import launch, nav, paths; "
            "print(engine.__file__); print(paths.demo_file()); print(paths.db_path()); "
            "print(all(os.path.isfile(nav.script(p.script)) for p in nav.PAGES)); print(os.path.isfile(launch.ENTRY))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=elsewhere,
                       env={**os.environ, "PYTHONPATH": str(target)})
    assert p.returncode == 0, p.stderr[-2000:]
    package, demo, db, pages_ok, entry_ok = p.stdout.split("\n")[:5]
    assert package.startswith(str(target)) and demo.startswith(str(target)) and os.path.isfile(demo)
    assert db.startswith(str(elsewhere)) and pages_ok == "True" and entry_ok == "True"
