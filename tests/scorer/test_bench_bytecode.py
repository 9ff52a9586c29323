"""Benchmarks that time fresh processes compile the project's modules first (``benchmarks.bytecode``), so a
shell with ``PYTHONDONTWRITEBYTECODE`` set does not make every timed start-up compile them from source."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.bytecode import cache_bytecode


def test_the_cache_is_written_even_where_bytecode_writing_is_off(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "inner").mkdir(parents=True)
    modules = [package / "__init__.py", package / "inner" / "__init__.py", package / "inner" / "mod.py"]
    for module in modules:
        module.write_text("VALUE = 1\n", encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tmp_path)}
    subprocess.run([sys.executable, "-c", "import pkg.inner.mod"], env=env, check=True)
    assert not any(Path(importlib.util.cache_from_source(str(m))).exists() for m in modules)
    cache_bytecode((package,))
    assert all(Path(importlib.util.cache_from_source(str(m))).exists() for m in modules)
