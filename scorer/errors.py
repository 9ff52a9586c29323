"""The exceptions toolgold raises. The CLI turns each into one clear line and an exit code."""

from __future__ import annotations


class ToolgoldError(Exception):
    """Base class of every error toolgold raises on purpose."""


class InvalidRecord(ToolgoldError):
    """A record in an input file is malformed; carries the file and 1-based line it came from."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        super().__init__(str(self))

    def located(self, source: str | None, line: int | None) -> InvalidRecord:
        """The same error, placed at a file and line (keeps an existing location)."""
        return type(self)(self.message, source=self.source or source, line=self.line or line)

    def __str__(self) -> str:
        where = ""
        if self.source is not None:
            where = f"{self.source}:{self.line}: " if self.line is not None else f"{self.source}: "
        elif self.line is not None:
            where = f"line {self.line}: "
        return f"{where}{self.message}"


class UnknownFormat(InvalidRecord):
    """A record names a `format` (or version) toolgold does not read."""


class UnrecognizedInput(ToolgoldError):
    """A file's format could not be detected; pass --from explicitly."""


class ScoringInputError(ToolgoldError):
    """Gold cases and runs do not fit together (unknown case ids, duplicates, wrong kinds)."""


class ScoringInterrupted(ToolgoldError):
    """A process scoring a file died before it finished (killed, or out of memory): nothing was scored."""


class InvalidThreshold(ToolgoldError):
    """A quality gate (``--fail-under metric=value``) names an unknown metric or is not a number."""


class InvalidReport(ToolgoldError):
    """A baseline report is not a ``toolgold.report/1`` file toolgold can read."""
