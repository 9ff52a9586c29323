"""The compiled core (scorer/native.py): used where it was built, never when it no longer matches the source,
and scoring exactly as the Python it was compiled from.

``TOOLGOLD_REQUIRE_NATIVE=1`` (set by .ci/run) turns "no compiled core here" from a skip into a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scorer import native
from tests.conftest import REPO

REQUIRED = os.environ.get("TOOLGOLD_REQUIRE_NATIVE", "") not in ("", "0")


def _built() -> Path:
    if os.environ.get("TOOLGOLD_PURE", "") not in ("", "0"):
        pytest.skip("TOOLGOLD_PURE is set: this pass is the Python core's (make test's pytest-pure)")
    folder = native.build_dir() / "scorer"
    if not native.check(folder).compiled:
        if REQUIRED:
            pytest.fail(f"TOOLGOLD_REQUIRE_NATIVE is set but the compiled core is not usable: {native.check(folder)}")
        pytest.skip(f"no compiled core in this environment: {native.check(folder)}")
    return folder


def _python(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("TOOLGOLD_PURE", "TOOLGOLD_NATIVE_DIR")}
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env={**clean, **env}, capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


WHERE_FROM = ("import json, scorer, scorer.native as n; from importlib import import_module; "
              "print(json.dumps([str(n.status()), "
              "{m: import_module('scorer.' + m).__file__ for m in n.MODULES}]))")


def test_every_hot_module_runs_compiled_where_the_core_was_built() -> None:
    folder = _built()
    status, files = json.loads(_python(WHERE_FROM))
    assert status.startswith("compiled"), status
    # (mypyc names some modules' __file__ one folder too deep when another compiled module imports them first)
    assert all(folder in Path(f).parents and f.endswith(".so") for f in files.values()), files
    # and TOOLGOLD_PURE turns it off, for every module
    status, files = json.loads(_python(WHERE_FROM, TOOLGOLD_PURE="1"))
    assert status == "pure Python (TOOLGOLD_PURE is set)"
    assert all(Path(f).parent == REPO / "scorer" and f.endswith(".py") for f in files.values()), files


def test_a_build_older_than_any_scorer_module_is_not_used(tmp_path: Path) -> None:
    """The stamp covers every top-level scorer module, the compiled ones and those they import, and the
    interpreter: a build that differs in any of them is set aside whole, and the Python runs."""
    folder = _built()
    copy = tmp_path / "scorer"
    shutil.copytree(folder, copy)
    status, files = json.loads(_python(WHERE_FROM, TOOLGOLD_NATIVE_DIR=str(tmp_path)))
    assert status.startswith("compiled") and all(copy in Path(f).parents for f in files.values())
    stamp = json.loads((copy / native.STAMP).read_text(encoding="utf-8"))
    for module, edit in (("turn.py", "sources"), ("model.py", "sources"), (None, "python")):
        changed = json.loads(json.dumps(stamp))
        if module is None:
            changed["python"] = "cpython-10"
        else:
            changed["sources"][module] = "0" * 64
            changed["stats"][module] = [0, 0]  # (a file of the stamp's size and time is taken as built)
        (copy / native.STAMP).write_text(json.dumps(changed), encoding="utf-8")
        status, files = json.loads(_python(WHERE_FROM, TOOLGOLD_NATIVE_DIR=str(tmp_path)))
        assert status.startswith("pure Python") and (module or "another Python") in status, (edit, status)
        assert all(f.endswith(".py") for f in files.values()), files


def test_the_stamp_check_reads_the_sources_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``native.check`` on a copy of the sources: fresh, then stale after a one-byte edit, a new module or a
    removed one; missing or unreadable stamps are reasons, never errors."""
    monkeypatch.delenv("TOOLGOLD_PURE", raising=False)
    sources, build = tmp_path / "src", tmp_path / "build"
    shutil.copytree(REPO / "scorer", sources, ignore=shutil.ignore_patterns("__pycache__", "importers", "render",
                                                                              "synthesize"))
    build.mkdir()
    assert "no compiled core" in native.check(build, sources).reason
    (build / native.STAMP).write_text("{not json", encoding="utf-8")
    assert "unreadable stamp" in native.check(build, sources).reason
    (build / native.STAMP).write_text(json.dumps(native.stamp_for(sources)), encoding="utf-8")
    assert native.check(build, sources).compiled
    os.utime(sources / "turn.py", ns=(10**18, 10**18))  # a checkout's new time, the same bytes: still the build's
    assert native.check(build, sources).compiled
    (sources / "codes.py").write_bytes((sources / "codes.py").read_bytes() + b"\n")
    assert native.check(build, sources).reason.endswith("older than codes.py: run make")
    (build / native.STAMP).write_text(json.dumps(native.stamp_for(sources)), encoding="utf-8")
    (sources / "extra.py").write_text("X = 1\n", encoding="utf-8")
    assert "extra.py" in native.check(build, sources).reason
    (sources / "extra.py").unlink()
    (sources / "stats.py").unlink()
    assert "stats.py" in native.check(build, sources).reason
    monkeypatch.setenv("TOOLGOLD_PURE", "1")
    (build / native.STAMP).write_text(json.dumps(native.stamp_for(sources)), encoding="utf-8")
    assert native.check(build, sources).reason == "TOOLGOLD_PURE is set"


def test_the_compiled_core_scores_every_probe_exactly_as_python() -> None:
    """tests/scorer/native_parity_probe.py run by both cores side by side: every result (and exception) the
    same, byte for byte, and the report over them."""
    _built()
    clean = {k: v for k, v in os.environ.items() if k not in ("TOOLGOLD_PURE", "TOOLGOLD_NATIVE_DIR")}
    command = [sys.executable, "-m", "tests.scorer.native_parity_probe"]
    compiled = subprocess.Popen(command, cwd=REPO, env=clean, stdout=subprocess.PIPE, text=True)
    pure = subprocess.run(command, cwd=REPO, env={**clean, "TOOLGOLD_PURE": "1"}, capture_output=True, text=True,
                          check=True).stdout.splitlines()
    out, _ = compiled.communicate()
    assert compiled.returncode == 0
    lines = out.splitlines()
    assert lines[0] == "core: compiled" and pure[0] == "core: pure"
    assert len(lines) == len(pure) > 2000
    for n, (mine, theirs) in enumerate(zip(lines[1:], pure[1:], strict=True), start=2):
        assert mine == theirs, f"line {n} of the probe differs"
    assert sum('"status":"fail"' in line for line in lines) > 500  # the probe reaches the diagnosing paths


def test_the_native_extra_brings_every_stub_the_compiled_modules_need() -> None:
    # mypyc type-checks what it compiles: without a library's stubs the build fails and `make run` / `make bench`
    # (which install only `.[native]`, not `.[test]`) would score with the Python core, said in one easy-to-miss line.
    import ast
    import tomllib
    from importlib import metadata

    imported: set[str] = set()
    for module in native.MODULES:
        tree = ast.parse((REPO / "scorer" / f"{module}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    native_extra = {req.split("[")[0].split("=")[0].split(">")[0].split("<")[0].strip().lower() for req in extras["native"]}
    needed = set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"].lower()
        if not name.startswith("types-"):
            continue
        tops = {str(f).split("/")[0].removesuffix("-stubs") for f in dist.files or () if "-stubs/" in str(f)}
        if tops & imported:
            needed.add(name)
    assert needed, "no stub distribution found for the compiled modules' imports (is `.[test]` installed?)"
    assert needed <= native_extra, f"add to pyproject's native extra: {sorted(needed - native_extra)}"


FRAMES_PROBE = r"""
import json, sys
from scorer.api import score_case
from tests.scorer.kit import calls, call, case, run, tool

# A failing call of each kind the fast path writes: a wrong enum value (and a string the note quotes with
# json), an unknown parameter, a dropped required argument, a wrong tool, two parallel calls.
tools = (tool("find_movie", ("genre",), genre={"type": "string", "enum": ["Action", "Drama", "Sci-fi"]},
              city={"type": "string"}, year={"type": "integer"}),
         tool("book_seat", ("seat",), seat={"type": "string"}, row={"type": "integer"}),
         tool("tag_movie", ("tags",), tags={"type": "array", "items": {"type": "string"}}, score={"type": "number"}))
cases = [case(calls(call("find_movie", genre="Action", city="Berlin")), id=f"c{n}", tools=tools) for n in range(5)]
cases.append(case(calls(call("find_movie", genre="Drama"), call("book_seat", seat="A1")), id="c5", tools=tools))
cases.append(case(calls(call("tag_movie", tags=["noir", "crime"], score=7.5)), id="c6", tools=tools))
runs = [run(("find_movie", {"genre": "Horror", "city": "Berlin"}), case_id="c0"),
        run(("find_movie", {"genre": "Action", "city": "Don't know"}), case_id="c1"),
        run(("find_movie", {"genre": "Action", "city": "Berlin", "mood": "line\nbreak"}), case_id="c2"),
        run(("find_movie", {"city": "Berlin"}), case_id="c3"),
        run(("book_seat", {"seat": "A1"}), case_id="c4"),
        run(("find_movie", {"genre": "Drama"}), ("book_seat", {"seat": 7}), case_id="c5"),
        run(("tag_movie", {"tags": ["noir", "heist"], "score": 8.25}), case_id="c6")]  # a list and a float shown
for gold, made in zip(cases, runs):
    score_case(gold, made)  # the first pass may import and compile what it uses
interpreted = []

def seen(frame, event, arg):
    if event == "call":
        interpreted.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

for gold, made in zip(cases, runs):
    fresh = gold.model_copy(update={"tools": tuple(t.model_copy(update={"parameters": json.loads(
        json.dumps(t.parameters))}) for t in gold.tools)})  # schemas seen for the first time, as in a new gold set
    sys.setprofile(seen)
    result = score_case(fresh, made)
    sys.setprofile(None)
    assert result.status == "fail", result
print(json.dumps(sorted(set(interpreted))))
"""


def test_the_compiled_core_scores_failing_calls_without_entering_interpreted_python() -> None:
    """Every interpreted frame on the compiled path is a Python function call the compiled core pays for
    (a dataclass ``__init__``, ``json.dumps`` building an encoder): scoring a failing call, notes and all,
    against a schema the fast checker takes, enters none."""
    _built()
    assert json.loads(_python(FRAMES_PROBE)) == []


def test_a_quiet_build_that_fails_type_checking_says_the_first_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``make`` builds quietly; a scorer edit that mypyc refuses used to end in "compiled core not built (1)", the
    reason swallowed with the rest of its output, and scoring then ran as Python without saying why."""
    import mypyc.build

    from scorer import native_build

    def refuses(*_: object, **__: object) -> None:  # what mypyc does with a type error: print it, then exit 1
        print("scorer/report.py:433: error: Returning Any from function declared to return \"bool\"  [no-any-return]")
        print("scorer/turn.py:9: error: Name \"x\" is not defined  [name-defined]")
        print("Found 2 errors in 2 files (checked 80 source files)")
        raise SystemExit(1)

    monkeypatch.setattr(mypyc.build, "mypycify", refuses)
    monkeypatch.setenv("TOOLGOLD_NATIVE_DIR", str(tmp_path))
    monkeypatch.delenv("TOOLGOLD_PURE", raising=False)
    assert native_build.main(["--quiet"]) == 0
    assert capsys.readouterr().out.strip() == (
        "compiled core not built (scorer/report.py:433: error: Returning Any from function declared to return "
        "\"bool\"  [no-any-return] (and 1 more)): scoring runs as Python")
    assert native_build.main(["--quiet", "--require"]) == 1
    assert not any(tmp_path.iterdir())  # nothing half-built left behind
