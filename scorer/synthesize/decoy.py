"""Near-duplicate tools: a decoy beside the expected tool, built from its own schema; the expected call stays.

The decoy has the expected tool's name with a suffix (``update_user`` -> ``update_user_preview``, in the
name's own style: ``CreateEvent`` -> ``CreateEventPreview``, ``math.gcd`` -> ``math.gcd_preview``), the same
parameters, and the original description after a sentence that makes it the wrong choice for an ordinary
request (a dry run, a draft, a deprecated predecessor, a staff-only variant). An agent that calls it shows
the confusion as ``wrong_tool`` with the pair in the report.
"""

from __future__ import annotations

import copy
import random

from scorer.model import GoldCase, ToolSpec
from scorer.synthesize.common import derive, rng_for
from scorer.synthesize.model import Candidate, NotApplicable

DECOYS: tuple[tuple[str, str], ...] = (
    ("preview", "Dry run of {name}: checks the arguments and reports what would happen, without doing it."),
    ("draft", "Prepares {name} as a draft for a person to approve later; nothing takes effect until then."),
    ("legacy", "Deprecated predecessor of {name}, kept only for old integrations."),
    ("internal", "Staff-only variant of {name} for back-office tools; not for requests from customers."),
)
"""(suffix, sentence put before the original description)."""


def decoy_name(name: str, suffix: str) -> str:
    """``name`` with ``suffix`` in the same naming style."""
    head, dot, last = name.rpartition(".")
    if "-" in last and "_" not in last:
        new = f"{last}-{suffix}"
    elif "_" not in last and any(c.isupper() for c in last):
        new = last + suffix.capitalize()
    else:
        new = f"{last}_{suffix}"
    return f"{head}{dot}{new}"


def make_decoy(spec: ToolSpec, taken: set[str], rng: random.Random) -> ToolSpec:
    """A decoy of ``spec`` whose name is not in ``taken``."""
    options = [(decoy_name(spec.name, suffix), sentence) for suffix, sentence in DECOYS]
    free = [(n, s) for n, s in options if n not in taken]
    if not free:
        raise NotApplicable(f"every decoy name for {spec.name} is already a tool")
    name, sentence = free[rng.randrange(len(free))]
    description = " ".join(p for p in (sentence.format(name=spec.name), spec.description.strip()) if p)
    return ToolSpec(name=name, description=description, parameters=copy.deepcopy(spec.parameters))


def near_duplicate_tool(case: GoldCase, *, seed: int) -> Candidate:
    """The case with a decoy of one expected tool next to it in the toolkit; raises ``NotApplicable``."""
    if case.expected.behavior != "call":
        raise NotApplicable(f"{case.id}: no expected call to put a decoy beside (the gold says "
                            f"{case.expected.behavior})")
    rng = rng_for(seed, "near_duplicate_tool", case.id)
    expected_tools = list(dict.fromkeys(c.name for c in case.expected.calls))
    offered = [name for name in expected_tools if case.tool(name) is not None]
    if not offered:
        raise NotApplicable(f"{case.id}: the case lists no schema for {', '.join(expected_tools)} to build a decoy "
                            "from")
    target = offered[rng.randrange(len(offered))]
    spec = case.tool(target)
    assert spec is not None
    decoy = make_decoy(spec, {t.name for t in case.tools}, rng)
    at = next(i for i, t in enumerate(case.tools) if t.name == target) + 1
    tools = (*case.tools[:at], decoy, *case.tools[at:])
    return derive(case, "near_duplicate_tool", seed=seed, tools=tools,
                  change=f"added the decoy {decoy.name} next to {target}; the expected call is unchanged")


__all__ = ["DECOYS", "decoy_name", "make_decoy", "near_duplicate_tool"]
