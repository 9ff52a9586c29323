"""BFCL's own checker (``bfcl-eval``'s ``ast_checker``) in a separate virtualenv, never a runtime dependency.

``bfcl_python()`` creates ``benchmarks/out/bfcl-venv`` on first use and returns its interpreter. The full
``bfcl-eval`` package pulls in torch (sentence-transformers), faiss and six model SDKs for its agentic and
multi-turn categories; its AST checker needs none of them, only the standard library and the package's own
``constants`` and ``type_convertor`` modules. So the package is installed with ``--no-deps``, and the one
import of the checker that drags in every model handler (``constants.model_config``, read only to decide
whether a model writes ``.`` in function names as ``_``) is answered by a stub saying "no": toolgold's runs
keep BFCL's own function names.

``check(items)`` runs the checker on ``{"functions", "output", "answer", "category"}`` items (BFCL's question
``function`` list, the model's calls as ``[{name: {arg: value}}]``, the ``ground_truth`` list and the test
category) in one subprocess and returns BFCL's verdict per item: ``{"valid": bool, "error_type": str}``.
The ``perf`` benchmarks may reuse both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BFCL_EVAL = "bfcl-eval==2026.3.23"
VENV = Path(__file__).resolve().parent / "out" / "bfcl-venv"

RUNNER = r'''
import json, sys, types

# The checker reads MODEL_CONFIG_MAPPING only in convert_func_name: "no model renames dots".
stub = types.ModuleType("bfcl_eval.constants.model_config")
class _NoRename(dict):
    def __missing__(self, key):
        return types.SimpleNamespace(underscore_to_dot=False)
stub.MODEL_CONFIG_MAPPING = _NoRename()
sys.modules["bfcl_eval.constants.model_config"] = stub

from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

for line in sys.stdin:
    item = json.loads(line)
    try:
        verdict = ast_checker(item["functions"], item["output"], item["answer"], Language.PYTHON,
                              item["category"], "toolgold")
        out = {"valid": bool(verdict["valid"]), "error_type": verdict.get("error_type", "")}
    except Exception as exc:  # a checker crash is a verdict too: BFCL counts it as invalid
        out = {"valid": False, "error_type": f"checker_crash:{type(exc).__name__}"}
    sys.stdout.write(json.dumps(out) + "\n")
'''


def bfcl_python() -> Path:
    """The interpreter of a virtualenv with ``bfcl-eval`` (created on first use, a minute or so)."""
    python = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", BFCL_EVAL], check=True)
        (VENV / ".installed").write_text(BFCL_EVAL + "\n")
    return python


def check(items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's verdict on each item, from its own ``ast_checker``."""
    payload = "".join(json.dumps(item) + "\n" for item in items)
    done = subprocess.run([str(bfcl_python()), "-c", RUNNER], input=payload, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        sys.exit(f"bfcl-eval's checker failed: {done.stderr.strip().splitlines()[-1:]}")
    return [json.loads(line) for line in done.stdout.splitlines()]


__all__ = ["BFCL_EVAL", "VENV", "bfcl_python", "check"]
