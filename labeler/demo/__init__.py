"""Where the bundled demo data is, and (``build_demo``) how it is made.

The data itself (toolgold JSON Lines, the sources' licenses, a README with their origins) lives in the
repository's ``data/demo/``, beside the default database ``data/toolgold.db``; this package holds only code.
A checkout and an editable install (``make deps``) read ``data/demo/`` in place; a built wheel carries the
same files as package data under ``labeler/demo/data/`` (a link to ``data/demo`` in the source tree, which
the build copies), so ``toolgold init --demo-if-empty`` finds the demo from any working directory.
"""

from __future__ import annotations

from pathlib import Path

CHECKOUT_DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
PACKAGED_DEMO = Path(__file__).resolve().parent / "data"


def demo_dir() -> Path:
    """The directory holding the demo's ``*.jsonl`` files (the checkout's ``data/demo``, else the copy
    installed with the package)."""
    if any(CHECKOUT_DEMO.glob("*.jsonl")):
        return CHECKOUT_DEMO
    return PACKAGED_DEMO


__all__ = ["CHECKOUT_DEMO", "PACKAGED_DEMO", "demo_dir"]
