"""Build the compiled core (see ``scorer.native``): ``python -m scorer.native_build [--quiet]``.

Compiles ``scorer.native.MODULES`` with mypyc into a fresh folder, stamps it with the hashes of the sources it was
built from, and swaps it in for the previous build in one rename. Without mypyc or a C compiler it says so in one
line and leaves the core in Python (exit 0: the product works the same, only slower); ``--require`` makes that
exit 1 instead.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from scorer import native


def _compile(out: Path, work: Path, quiet: bool) -> None:
    from mypyc.build import mypycify  # only here: mypy is a build-time dependency
    from setuptools import setup

    repo = native.SOURCE_DIR.parent
    sources = [str(Path("scorer") / f"{name}.py") for name in native.MODULES]
    cwd = os.getcwd()
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink) if quiet else contextlib.nullcontext():
            os.chdir(repo)  # mypyc names modules by their path from here and reads pyproject.toml's [tool.mypy]
            extensions = mypycify(sources, opt_level="3", group_name=native.GROUP, target_dir=str(work / "c"))
            os.chdir(work)  # not the repo: setuptools would read the project's own pyproject.toml
            setup(name="toolgold-native", ext_modules=extensions,
                  script_args=["--quiet", "build_ext", "--build-lib", str(out), "--build-temp", str(work / "o"),
                               "--parallel", str(os.cpu_count() or 1)])
    except SystemExit as exc:  # mypyc prints its errors, then exits 1: a quiet build says the first one
        errors = [line for line in sink.getvalue().splitlines() if ": error:" in line]
        if not errors:
            raise
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RuntimeError(f"{errors[0]}{more}") from exc
    finally:
        os.chdir(cwd)


def build(target: Path, quiet: bool = False) -> Path:
    """Compile into ``target`` (replacing what is there) and return it."""
    before = native.stamp_for()
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="toolgold-native-") as work:
            _compile(fresh, Path(work), quiet)
        if native.stamp_for() != before:
            raise RuntimeError("a source changed while it was being compiled: run the build again")
        built = fresh / "scorer"
        missing = [n for n in native.MODULES if not any(built.glob(f"{n}.*.so"))]
        if missing:
            raise RuntimeError(f"mypyc built no extension for {', '.join(missing)}")
        (built / native.STAMP).write_text(json.dumps(before, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        if target.exists():
            target.rename(old)
        fresh.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scorer.native_build", description=__doc__.split("\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only the one-line outcome")
    parser.add_argument("--require", action="store_true", help="exit 1 when the core cannot be compiled")
    args = parser.parse_args(argv)
    target = native.build_dir()
    if native.check(target / "scorer").compiled:
        print(f"compiled core up to date in {target}")
        return 0
    started = time.perf_counter()
    try:
        build(target, quiet=args.quiet)
    except ImportError as exc:
        print(f"compiled core not built ({exc.name or exc} is not installed): scoring runs as Python")
        return 1 if args.require else 0
    except (OSError, RuntimeError, SystemExit) as exc:  # setuptools exits when the C compiler fails
        print(f"compiled core not built ({str(exc).strip() or type(exc).__name__}): scoring runs as Python")
        return 1 if args.require else 0
    print(f"compiled core built in {time.perf_counter() - started:.0f} s: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
