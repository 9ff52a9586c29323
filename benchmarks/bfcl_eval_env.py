"""A benchmark-only environment with BFCL's own checker (``bfcl-eval``), never a toolgold dependency.

``bfcl_python()`` creates ``benchmarks/out/bfcl-venv`` once and returns its interpreter. bfcl-eval is
installed without its dependencies: its AST checker needs only the standard library, and the rest (model
SDKs, sentence-transformers and torch) is for running models, which the benchmarks do not do.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BFCL_EVAL = "bfcl-eval==2026.3.23"
VENV = Path(__file__).resolve().parent / "out" / "bfcl-venv"


def bfcl_python() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / f".{BFCL_EVAL}"
    if not stamp.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", BFCL_EVAL], check=True)
        stamp.touch()
    return python
