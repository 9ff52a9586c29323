"""The compiled core: the scorer's hot modules built to C extensions by mypyc, used only while they match the source.

``make`` builds them (``python -m scorer.native_build``) into ``<venv>/toolgold-native/``, beside a stamp of each
module's source hash. ``import scorer`` puts that folder first on the package's search path when the stamp still
matches the ``.py`` files next to this one and the running interpreter, so an edited module never runs stale:
it runs as Python until the next build. ``TOOLGOLD_PURE=1`` turns the compiled core off. Both run the same
source, so their results are the same; the tests run with the compiled core and, in part, again without it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# The modules on the scoring path, in dependency order, then those an import's workers convert records with
# (strict_json and formats: parse, validate, canonical text; schemas and hygiene: a gold case's schema warnings). The others stay
# Python: a pydantic model defined in a compiled module loses its field types (model, results, report,
# hygiene_problems, ... hold them), and the rest is not where time goes.
MODULES = ("canonical", "dates", "transforms", "matchers", "facts", "grounding", "arguments", "assignment",
           "verdict", "turn", "api", "strict_json", "schemas", "hygiene", "formats")
GROUP = "scorer.core"  # mypyc's shared library: scorer/core__mypyc.*.so in the build folder
STAMP = "stamp.json"
STAMP_FORMAT = 1
SOURCE_DIR = Path(__file__).resolve().parent


class Status:
    """Whether the compiled core is in use, and why not (or where from)."""

    __slots__ = ("compiled", "reason")

    def __init__(self, compiled: bool, reason: str) -> None:
        self.compiled, self.reason = compiled, reason

    def __str__(self) -> str:
        return f"compiled ({self.reason})" if self.compiled else f"pure Python ({self.reason})"


def build_dir() -> Path:
    """Where ``scorer.native_build`` writes and ``import scorer`` looks: one folder per environment."""
    override = os.environ.get("TOOLGOLD_NATIVE_DIR")
    return Path(override) if override else Path(sys.prefix) / "toolgold-native"


def _modules(source_dir: Path) -> list[str]:
    """Every top-level module, not only the compiled ones: mypyc also compiles in what it learns from the modules
    they import (types, ``Final`` constants)."""
    return sorted(name for name in os.listdir(source_dir) if name.endswith(".py"))


def source_hashes(source_dir: Path = SOURCE_DIR, names: list[str] | None = None) -> dict[str, str]:
    import hashlib  # only when a file's size or time differs from the stamp's: most start-ups never need it

    return {name: hashlib.sha256((source_dir / name).read_bytes()).hexdigest()
            for name in (names if names is not None else _modules(source_dir))}


def _stats(source_dir: Path) -> dict[str, list[int]]:
    found = {}
    for name in _modules(source_dir):
        st = os.stat(source_dir / name)
        found[name] = [st.st_size, st.st_mtime_ns]
    return found


def stamp_for(source_dir: Path = SOURCE_DIR) -> dict[str, object]:
    return {"format": STAMP_FORMAT, "python": sys.implementation.cache_tag, "sources": source_hashes(source_dir),
            "stats": _stats(source_dir)}


def check(folder: Path, source_dir: Path = SOURCE_DIR) -> Status:
    """Whether the build in ``folder`` may stand in for the modules in ``source_dir``, and why not."""
    if os.environ.get("TOOLGOLD_PURE", "") not in ("", "0"):
        return Status(False, "TOOLGOLD_PURE is set")
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Status(False, f"no compiled core in {folder}: run make")
    except (OSError, ValueError) as exc:
        return Status(False, f"unreadable stamp in {folder}: {exc}")
    if not isinstance(stamp, dict) or stamp.get("format") != STAMP_FORMAT \
            or stamp.get("python") != sys.implementation.cache_tag:
        return Status(False, f"the compiled core in {folder} was built for another Python: run make")
    built, built_stats = stamp.get("sources"), stamp.get("stats")
    if not isinstance(built, dict) or not isinstance(built_stats, dict):
        return Status(False, f"unreadable stamp in {folder}")
    try:
        stats = _stats(source_dir)
        # a file of the size and time it had when built is that file; any other is compared by content
        changed = [name for name in stats if built_stats.get(name) != stats[name]]
        sources = source_hashes(source_dir, changed) if changed else {}
    except OSError as exc:
        return Status(False, f"sources unreadable: {exc}")
    stale = sorted({name for name in sources if built.get(name) != sources[name]} | (built.keys() ^ stats.keys()))
    if stale:
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        return Status(False, f"the compiled core is older than {shown}: run make")
    return Status(True, f"mypyc, {len(MODULES)} modules from {folder}")


_status: Status | None = None


def status() -> Status:
    """The compiled core's state in this process, as ``search_path`` decided it."""
    return _status if _status is not None else Status(False, "scorer was not imported through its package")


def search_path(package_path: list[str]) -> list[str]:
    """``scorer.__path__`` with the compiled modules' folder first when they match the source."""
    global _status
    folder = build_dir() / "scorer"
    _status = check(folder)
    return [str(folder), *package_path] if _status.compiled else package_path
