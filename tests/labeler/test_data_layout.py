"""The layout the design promises: the bundled demo and sample data under ``data/demo/`` (with licenses and
origins), the default database beside it and git-ignored, and the demo found from any working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from labeler.demo import demo_dir
from labeler.store import Store
from tests.app.conftest import REPO

DEMO_FILES = ["LICENSE-bfcl", "LICENSE-tau-bench", "LICENSE-tooltalk", "README.md", "bfcl.jsonl",
              "tau-bench-airline.jsonl", "tooltalk.jsonl"]


def test_the_demo_and_its_licenses_live_in_data_demo() -> None:
    for entry in ["pyproject.toml", "README.md", "labeler", "scorer", "tests", "data", ".streamlit"]:
        assert (REPO / entry).exists(), entry
    assert sorted(p.name for p in (REPO / "data" / "demo").iterdir() if p.is_file()) == DEMO_FILES
    tracked = subprocess.run(["git", "ls-files", "labeler"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    assert not [f for f in tracked if f.endswith((".jsonl", ".md")) or "LICENSE" in f]  # code, not data
    assert demo_dir().resolve() == (REPO / "data" / "demo").resolve()
    readme = (REPO / "data" / "demo" / "README.md").read_text(encoding="utf-8")
    assert "## Attribution" in readme and "python -m labeler.demo.build_demo" in readme


def test_the_default_database_sits_beside_the_demo_and_is_not_committed() -> None:
    from labeler.store.engine import DEFAULT_DB

    assert Path(DEFAULT_DB).parent == Path("data")
    for name in ("data/toolgold.db", "data/toolgold.db-wal"):
        ignored = subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO, check=False)
        assert ignored.returncode == 0, f"{name} is not git-ignored"
    assert subprocess.run(["git", "check-ignore", "-q", "data/demo/bfcl.jsonl"], cwd=REPO,
                          check=False).returncode == 1


def test_init_seeds_the_demo_from_another_working_directory(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TOOLGOLD_DB"}
    done = subprocess.run([sys.executable, "-m", "labeler.cli", "init", "--demo-if-empty"], cwd=elsewhere,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "demo: 42 transcripts added (208 decision points), 55 gold cases added"
    # The default database is relative to where toolgold runs: data/toolgold.db there.
    store = Store(elsewhere / "data" / "toolgold.db")
    try:
        assert store.count_transcripts() == 42
    finally:
        store.close()


def test_a_built_wheel_carries_the_demo_as_package_data() -> None:
    """``labeler/demo/data`` is a link to ``data/demo`` (one copy in the tree), which a wheel build copies;
    the package-data patterns name every demo file through it."""
    import fnmatch
    import tomllib

    link = REPO / "labeler" / "demo" / "data"
    assert link.is_symlink() and link.resolve() == (REPO / "data" / "demo").resolve()
    patterns = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["labeler"]
    carried = [name for name in DEMO_FILES if any(fnmatch.fnmatch(f"demo/data/{name}", p) for p in patterns)]
    assert carried == DEMO_FILES
