"""The Gold hygiene page's lint of the live gold (``scorer.hygiene.lint``), kept until the gold moves.

A lint reads every live case of its selection (7.8 s at 100,000 cases, ~73 s at 1,000,000), so each selection's
last one is kept with the gold set's ``(revision, token)`` it read (``common.gold_state``, moved by every write to
the gold): in this process, so a rerun of the page (every click) costs a dictionary lookup, and in the database
(``kept_lints``, revision 0008), so a restarted server or a second one reads it back instead of linting. While the
state stands the lint is given as it is; once the gold has moved, the page shows a slow one as kept, saying how far
the gold has moved (``KeptHygiene``), until the reviewer asks for a new one.

The database's copy is derived data: one that cannot be read (torn, or written by a future format) is linted again
and replaced; a store that cannot be written (read-only, busy past its timeout) keeps the lint in the process only.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import zlib
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Connection, select
from sqlalchemy.exc import SQLAlchemyError

from labeler.store import tables as t
from labeler.store.common import gold_state
from labeler.store.engine import Database, StoreError, dialect_insert, now_iso
from labeler.store.gold import gold_cases_in

if TYPE_CHECKING:
    from scorer.hygiene_problems import HygieneProblem
    from scorer.model import GoldCase

log = logging.getLogger(__name__)


class GoldHygiene(NamedTuple):
    problems: list[HygieneProblem]
    cases: int
    """How many gold cases were checked."""


class KeptHygiene(NamedTuple):
    """The last lint of a selection (``gold_hygiene``), and where the gold has gone since."""

    hygiene: GoldHygiene
    state: tuple[int, str]
    """The gold set's ``(revision, token)`` the lint read (``common.gold_state``)."""
    current: tuple[int, str] | None
    """The gold set's ``(revision, token)`` now."""
    seconds: float
    """What the lint took."""
    checked_at: str

    @property
    def fresh(self) -> bool:
        return self.state == self.current

    @property
    def changes(self) -> int | None:
        """Writes to the gold since the lint (None when the count is not comparable: the store was replaced)."""
        if self.current is None or self.current[0] < self.state[0]:
            return None
        return self.current[0] - self.state[0]

    @property
    def recheck_on_view(self) -> bool:
        """Whether a view should lint again now: the gold moved and the lint is quick (``recheck_on_view_seconds``).
        A slow one (a large gold set: ~73 s at 1,000,000 cases) waits for the reviewer to ask, the kept problems
        shown meanwhile."""
        return not self.fresh and self.seconds <= recheck_on_view_seconds()


HYGIENE_RECHECK_ON_VIEW_SECONDS = 3.0
RECHECK_ENV = "TOOLGOLD_HYGIENE_RECHECK_SECONDS"


def recheck_on_view_seconds() -> float:
    """How long a lint may have taken for a view of gold that moved on to lint again by itself:
    ``TOOLGOLD_HYGIENE_RECHECK_SECONDS`` (0: always wait for the reviewer), else 3 s."""
    raw = os.environ.get(RECHECK_ENV, "").strip()
    if not raw:
        return HYGIENE_RECHECK_ON_VIEW_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise StoreError(f"{RECHECK_ENV} must be a number of seconds, 0 or more; it is {raw!r}")
    return value


# -- the kept lint's saved form ---------------------------------------------------------------------

KEPT_LINT_FORMAT = "toolgold.kept-lint"
KEPT_LINT_VERSION = 1


def dump_kept_lint(found: GoldHygiene) -> bytes:
    """The saved form of a lint (``kept_lints.body`` before compression): canonical JSON with its format and
    version, each problem without the fields at their defaults."""
    from scorer import canonical

    return canonical.dumps_stored({
        "format": KEPT_LINT_FORMAT, "version": KEPT_LINT_VERSION, "cases": found.cases,
        "problems": [p.model_dump(mode="json", exclude_defaults=True) for p in found.problems],
    }).encode("utf-8")


def parse_kept_lint(data: bytes) -> GoldHygiene:
    """``dump_kept_lint``'s bytes read back; ``ValueError`` saying why for anything else."""
    from pydantic import ValidationError

    from scorer.errors import InvalidRecord
    from scorer.strict_json import loads

    try:
        value = loads(data)
    except InvalidRecord as exc:
        raise ValueError(exc.message) from None  # "not valid JSON: ...", "not valid UTF-8 ..."
    if not isinstance(value, dict) or value.get("format") != KEPT_LINT_FORMAT \
            or type(value.get("version")) is not int:
        raise ValueError(f"not a {KEPT_LINT_FORMAT} document")
    if value["version"] != KEPT_LINT_VERSION:
        raise ValueError(f"{KEPT_LINT_FORMAT} version {value['version']}; this toolgold reads version "
                         f"{KEPT_LINT_VERSION}")
    cases, problems = value.get("cases"), value.get("problems")
    if type(cases) is not int or cases < 0 or not isinstance(problems, list) or set(value) != {
            "format", "version", "cases", "problems"}:
        raise ValueError("wrong fields: 'cases' (a count) and 'problems' (a list) are expected, and only them")
    try:
        return GoldHygiene(_problems_adapter().validate_python(problems), cases)
    except ValidationError as exc:
        raise ValueError(f"problems do not validate ({exc.error_count()} error(s))") from None


@cache
def _problems_adapter() -> Any:
    from pydantic import TypeAdapter

    from scorer.hygiene_problems import HygieneProblem

    return TypeAdapter(list[HygieneProblem])


# -- kept in this process ---------------------------------------------------------------------------

_Kept = tuple[tuple[int, str], GoldHygiene, float, str]
"""A kept lint: the gold state it read, the lint, its seconds, when."""
_HYGIENE_LOCK = threading.Lock()
_HYGIENE: dict[tuple[str, str | None, str | None], _Kept] = {}
"""The last lint of each selection this process ran or read (by database URL, split and status)."""
HYGIENE_KEPT = 16
"""Selections kept in the process (a page offers 3 splits × 3 statuses); the oldest goes first."""
HYGIENE_KEPT_PROBLEMS = 150_000
"""Problems kept in the process over all selections (~2 KB each: ~300 MB), the oldest selection going first; the
newest is kept whatever its size (a store of 1,000,000 cases: ~140,000 problems, the selection whose lint takes
73 s). What leaves the process stays in the database."""


def _keep_in_process(key: tuple[str, str | None, str | None], kept: _Kept, current: tuple[int, str] | None,
                     ) -> bool:
    """Keep ``kept`` unless a later lint of the selection is kept already (of the gold's history up to
    ``current``, its state now); whether it was."""
    with _HYGIENE_LOCK:  # the app's sessions run on threads of one process
        newer = _HYGIENE.get(key)
        if newer is not None and kept[0][0] < newer[0][0] <= (current[0] if current is not None else newer[0][0]):
            return False  # another session kept a later lint meanwhile
        _HYGIENE.pop(key, None)
        while _HYGIENE and (len(_HYGIENE) >= HYGIENE_KEPT or len(kept[1].problems) + sum(
                len(other[1].problems) for other in _HYGIENE.values()) > HYGIENE_KEPT_PROBLEMS):
            del _HYGIENE[next(iter(_HYGIENE))]
        _HYGIENE[key] = kept
        return True


def forget_hygiene() -> None:
    """Drop every lint this process keeps (tests: a restart; the database keeps its own)."""
    with _HYGIENE_LOCK:
        _HYGIENE.clear()


# -- kept in the database ---------------------------------------------------------------------------


def _read_kept(conn: Connection, split: str | None, status: str | None, *, only: tuple[int, str] | None = None,
               newer_than: tuple[int, str] | None = None) -> _Kept | None:
    """The database's kept lint of the selection (only the one that read ``only``, or one that is not the lint of
    ``newer_than`` nor older, when given); None if there is none, or it cannot be read (said in the log: it is
    linted again)."""
    where = (t.KeptLintRow.split == (split or ""), t.KeptLintRow.status == (status or ""))
    head = conn.execute(select(t.KeptLintRow.revision, t.KeptLintRow.token, t.KeptLintRow.seconds,
                               t.KeptLintRow.checked_at).where(*where)).first()
    if head is None or (only is not None and (head.revision, head.token) != only) or (
            newer_than is not None and ((head.revision, head.token) == newer_than or head.revision < newer_than[0])):
        return None  # the body (megabytes at a million cases) is read only when it is the one wanted
    body = conn.scalar(select(t.KeptLintRow.body).where(*where))
    try:
        found = parse_kept_lint(zlib.decompress(bytes(body or b"")))
    except (ValueError, zlib.error) as exc:
        log.warning("the kept lint of split %r, status %r cannot be read (%s): the gold is linted again",
                    split or "any", status or "any", exc)
        return None
    return (int(head.revision), str(head.token)), found, float(head.seconds), str(head.checked_at)


def keep_in_database(db: Database, split: str | None, status: str | None, kept: KeptHygiene) -> None:
    """Write ``kept`` as the database's lint of the selection, unless the one there read later gold (another
    process's lint that finished first). A store that cannot take the write keeps it in the process only."""
    if db.read_only:
        return
    body = zlib.compress(dump_kept_lint(kept.hygiene), 1)
    row = {"split": split or "", "status": status or "", "revision": kept.state[0], "token": kept.state[1],
           "cases": kept.hygiene.cases, "seconds": kept.seconds, "checked_at": kept.checked_at, "body": body}
    try:
        with db.write() as conn:
            current = gold_state(conn)
            stmt = dialect_insert(conn, t.KeptLintRow).values(**row)
            offered = stmt.excluded  # this lint's row; the table's columns name the row there
            # One statement, so two servers keeping a lint at once cannot interleave: the row there is replaced
            # unless it read later gold of the same history (above the count now: a restored backup's history).
            later = t.KeptLintRow.revision > offered.revision
            if current is not None:
                later = later & (t.KeptLintRow.revision <= current[0])
            conn.execute(stmt.on_conflict_do_update(
                index_elements=["split", "status"], where=~later,
                set_={name: getattr(offered, name) for name in row if name not in ("split", "status")}))
    except (StoreError, SQLAlchemyError) as exc:
        log.warning("the lint of split %r, status %r is kept in this process only: %s", split or "any",
                    status or "any", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


# -- what the page and the CLI ask -------------------------------------------------------------------


def gold_hygiene(db: Database, *, split: str | None = None, status: str | None = None) -> GoldHygiene:
    """``scorer.hygiene.lint`` of the live gold cases of ``split`` and ``status``, read as checked (memory flat:
    the cases are not kept). The result is kept with the gold set's state, in this process and in the database, and
    given again without reading a case while no write to the gold has moved it: the Gold hygiene page asks on
    every view and every click."""
    from scorer.hygiene import lint

    key = (db.url, split or None, status or None)
    with db.read() as conn:
        state = gold_state(conn)  # read before the cases: a write after it makes the next call lint again
        kept = _HYGIENE.get(key)
        if kept is not None and state is not None and kept[0] == state:
            return _given(kept[1])
        stored = _read_kept(conn, split, status, only=state) if state is not None else None
        if stored is not None:
            _keep_in_process(key, stored, state)
            return _given(stored[1])
        started = time.perf_counter()
        count = [0]

        def counted() -> Iterator[GoldCase]:
            for gold in gold_cases_in(conn, split, status):
                count[0] += 1
                yield gold

        found = GoldHygiene(lint(counted()), count[0])
    if state is not None:
        made: _Kept = (state, found, time.perf_counter() - started, now_iso())
        with db.read() as conn:
            now = gold_state(conn)  # what "later" means: a lint above it read another history (a restore)
        if _keep_in_process(key, made, now):
            keep_in_database(db, split, status, KeptHygiene(found, state, None, made[2], made[3]))
    return _given(found)


def _given(found: GoldHygiene) -> GoldHygiene:
    return GoldHygiene(list(found.problems), found.cases)  # the caller's list: the kept one is never changed


def kept_gold_hygiene(db: Database, *, split: str | None = None, status: str | None = None) -> KeptHygiene | None:
    """The last lint of ``split`` and ``status``, fresh or not, without linting: this process's while it is fresh,
    else the database's when that one is later (another server's, or this one's after a restart); None if there is
    none."""
    key = (db.url, split or None, status or None)
    with db.read() as conn:
        current = gold_state(conn)
        kept = _HYGIENE.get(key)
        if kept is None or kept[0] != current:  # none here, or older than the gold: another server's may be later
            stored = _read_kept(conn, split, status, newer_than=kept[0] if kept is not None else None)
            if stored is not None:
                kept = stored
                _keep_in_process(key, kept, current)
        if kept is None:
            return None
    state, found, seconds, checked_at = kept
    return KeptHygiene(_given(found), state, current, seconds, checked_at)


__all__ = ["HYGIENE_KEPT", "HYGIENE_KEPT_PROBLEMS", "HYGIENE_RECHECK_ON_VIEW_SECONDS", "KEPT_LINT_FORMAT",
           "KEPT_LINT_VERSION", "RECHECK_ENV", "GoldHygiene", "KeptHygiene", "dump_kept_lint", "forget_hygiene",
           "gold_hygiene", "keep_in_database", "kept_gold_hygiene", "parse_kept_lint", "recheck_on_view_seconds"]
