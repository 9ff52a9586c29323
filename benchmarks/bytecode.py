"""The project's own modules compiled to bytecode before a benchmark times fresh processes.

pip writes bytecode for what it installs, but the editable project's own modules (``scorer``, ``labeler``) get
theirs on first import, and not at all where ``PYTHONDONTWRITEBYTECODE`` is set (as in some CI and sandbox
shells): every timed process then compiles each module it imports from source again (~20 modules, ~56 ms of a
``toolgold score`` start-up by cProfile), which a user's second run never does. ``py_compile`` writes the cache
whatever that variable says, and a process that may not write bytecode still reads it."""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scorer", "labeler")


def cache_bytecode(folders: tuple[Path, ...] = tuple(ROOT / name for name in PACKAGES)) -> None:
    """Compile every module under ``folders`` whose cached bytecode is missing or stale (quietly)."""
    for folder in folders:
        if not compileall.compile_dir(folder, quiet=2):
            raise SystemExit(f"could not compile the modules under {folder}")
