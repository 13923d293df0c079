"""The JSON report and the terminal table, built from verdict records alone.

Records are plain dicts (``Verdict.as_record()``) so that they cross process
boundaries under pytest-xdist and a serial run and a distributed one give the same
report. ``Records`` keeps them on disk as they arrive, with only their positions,
the counts and the table's cells in memory, so a run of ten thousand tools does not
hold a million dicts.

Whether the run was complete (``complete``, ``interrupted``, ``not_judged``) is in
no record: the caller, who knows what was meant to run, says so.
"""

from __future__ import annotations

import json
import os
import tempfile
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ._model import Category, Outcome, Severity

__all__ = [
    "REPORT_VERSION",
    "LiveReport",
    "Records",
    "build_report",
    "cell_status",
    "render_table",
]

REPORT_VERSION = 1
#: A record's state in a baseline of accepted findings (written by the pytest plugin):
#: ``accepted`` (a finding it lists), ``fixed`` (a check it lists that passed), ``new``
#: (a finding it does not list) or ``None``. Absent when the run uses no baseline.
#: A target's start and load checks: skipped, none of the target's tools was judged.
UNJUDGED_IF_SKIPPED = frozenset({"TN001", "TN851"})
BASELINE_FIELD = "baseline"
ACCEPTED = "accepted"
FIXED = "fixed"


def build_report(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The report as one dict (for small runs and tests; the plugin streams it)."""
    sink = Records(keep=False).extend(records)
    try:
        return {
            "version": REPORT_VERSION,
            # Checks run in-process to the end: nothing was left unjudged.
            "complete": True,
            "interrupted": None,
            "not_judged": [],
            "results": [dict(r) for r in records],
            "summary": sink.summary(),
        }
    finally:
        sink.close()


def cell_status(records: Iterable[Mapping[str, Any]]) -> str:
    """One table cell: the worst outcome among the records of a tool and a category.

    A record a baseline accepts (``baseline``: ``accepted``) is ``xfail``, one it lists
    that passed (``fixed``) is ``XPASS``, as pytest names them.
    """
    worst = "-"
    for r in records:
        status = _status(r)
        if worst == "-" or _RANK[status] < _RANK[worst]:
            worst = status
    return worst


def _status(record: Mapping[str, Any]) -> str:
    """One record's cell status (``cell_status`` of that record alone)."""
    state = record.get(BASELINE_FIELD)
    if state == ACCEPTED:
        return "xfail"
    if state == FIXED:
        return "XPASS"
    outcome = record["outcome"]
    if outcome == Outcome.FAILED:
        return "FAIL" if record["severity"] == Severity.ERROR else "warn"
    if outcome == Outcome.SKIPPED:
        return "skip"
    return "ok"


#: Why records counted by ``Records(keep=False)`` cannot be read back.
_NOT_KEPT = "these records were counted, not kept (Records(keep=False))"

#: Cell statuses, worst first.
_RANK = {"FAIL": 0, "XPASS": 1, "warn": 2, "xfail": 3, "ok": 4, "skip": 5, "-": 6}


def _json_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False)``, with the encoder made once, not per record.

    ``json.dumps`` with any option builds a ``JSONEncoder``, and its ``encode`` a C
    encoder, at every call: most of the cost of a small record.
    """
    plain = json.JSONEncoder(ensure_ascii=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - an interpreter without json's C speedups
        return plain.encode
    # No circular check: a record is built of plain values, never of itself.
    encode = make(
        None,
        plain.default,
        json.encoder.encode_basestring,
        None,
        plain.key_separator,
        plain.item_separator,
        False,
        False,
        True,
    )

    def dumps(value: Any) -> str:
        if isinstance(value, str):
            return json.encoder.encode_basestring(value)
        return "".join(encode(value, 0))

    return dumps


_dumps = _json_encoder()


def render_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """A compact table per target: tools down, the nine categories across."""
    sink = Records(keep=False).extend(records)
    try:
        return sink.table()
    finally:
        sink.close()


class Records:
    """Verdict records streamed to a temporary file; the report and table come from it.

    A record may carry ``position`` (a list of ints): the report is sorted by it and
    leaves it out, so records that arrive in any order (xdist) give one report.
    """

    def __init__(self, *, keep: bool = True) -> None:
        #: Whether the records themselves are kept, for ``sorted`` and ``write_report``.
        #: Without them (a run that writes no report, an xdist worker) only the counts
        #: and the table's cells are: encoding half a million records nobody reads
        #: was a tenth of a ten-thousand-tool run.
        self.keep = keep
        self._count = 0
        # Lives as long as the run: closed by ``close()``, removed by the OS at exit.
        self._file: IO[bytes] | None = (
            tempfile.TemporaryFile(prefix="toolnexus-records-")  # noqa: SIM115
            if keep
            else None
        )
        #: Where the file ends, and whether it is positioned there: records are appended
        #: through the write buffer, with no seek (a flush) per record.
        self._end = 0
        self._at_end = True
        #: Each record's place in the file and its position, in arrival order, packed:
        #: positions ``_starts[i]`` to ``_starts[i + 1]`` of ``_positions`` are record i's.
        #: A run of ten thousand tools keeps half a million of them.
        self._offsets = array("q")
        self._lengths = array("q")
        self._positions = array("q")
        self._starts = array("q", [0])
        self._outcomes: Counter[str] = Counter()
        self._errors = 0
        #: Findings a baseline accepts, and checks it lists that passed.
        self._accepted = 0
        self._fixed = 0
        #: target -> tool -> category -> the cell's worst status
        self._cells: dict[str, dict[str, dict[str, str]]] = {}
        self._loads: dict[str, list[str]] = {}
        self._statuses: dict[str, Counter[str]] = {}
        #: (target, tool) -> why no live check may call it
        self._not_called: dict[tuple[str, str], str] = {}
        #: target -> why it could not be judged at all (its start or load was skipped)
        self._unjudged: dict[str, str] = {}

    def __len__(self) -> int:
        return self._count

    def not_called(self) -> dict[str, int]:
        """How many tools no live check may call, by reason: read from the records, so
        an xdist controller, which loads no target, counts what its workers judged."""
        return dict(Counter(self._not_called.values()))

    def unjudged(self) -> dict[str, str]:
        """Targets whose start or load check skipped, and why: none of their tools was
        judged, and a run of such targets alone would otherwise read as green."""
        return dict(self._unjudged)

    def add(self, record: Mapping[str, Any]) -> None:
        self._count += 1
        shown = record
        if self._file is not None:
            if "position" in record:
                shown = dict(record)
                del shown["position"]
            self._store(_dumps(shown).encode(), record.get("position", ()))
        target, tool = str(shown["target"]), str(shown["tool"])
        if shown.get("not_called"):
            self._not_called[(target, tool)] = str(shown["message"]).split("; allow it", 1)[0]
        outcome = shown["outcome"]
        if tool == "*" and shown["check"] in UNJUDGED_IF_SKIPPED and outcome == "skipped":
            self._unjudged[target] = str(shown["message"])
        self._outcomes[str(outcome)] += 1
        failed = outcome == Outcome.FAILED
        state = shown.get(BASELINE_FIELD)
        if state is not None:
            if failed and state == ACCEPTED:
                self._accepted += 1
            elif state == FIXED:
                self._fixed += 1
        if failed and state != ACCEPTED and shown["severity"] == Severity.ERROR:
            self._errors += 1
        status = _status(shown)
        tools = self._cells.get(target)
        if tools is None:  # a target's first record: its cells and counts begin
            tools = self._cells[target] = {}
            self._statuses[target] = Counter()
        self._statuses[target][status] += 1
        if tool == "*":
            if failed:
                # As its cell would say: FAIL, warn (a warning's severity), or xfail.
                self._loads.setdefault(target, []).append(
                    f"  {shown['check']} {status}: {shown['message']}"
                )
            return
        cells = tools.get(tool)
        if cells is None:
            cells = tools[tool] = {}
        category = str(shown["category"])
        current = cells.get(category)
        if current is None or _RANK[status] < _RANK[current]:
            cells[category] = status

    def _store(self, data: bytes, position: Iterable[int] | None) -> None:
        """One record's JSON appended to the file, its place and position noted."""
        assert self._file is not None
        self._positions.fromlist([int(p) for p in position or ()])
        if not self._at_end:  # read since the last write (``sorted``)
            self._file.seek(self._end)
            self._at_end = True
        self._offsets.append(self._end)
        self._lengths.append(len(data))
        self._starts.append(len(self._positions))
        self._file.write(data)
        self._end += len(data)

    def extend(self, records: Iterable[Mapping[str, Any]]) -> Records:
        for record in records:
            self.add(record)
        return self

    def _order(self) -> list[int]:
        """Every record's number, in position order (arrival order among equal positions)."""
        positions, starts = self._positions, self._starts
        return sorted(
            range(len(self._offsets)),
            key=lambda i: tuple(positions[starts[i] : starts[i + 1]]),
        )

    def _raw(self) -> Iterable[bytes]:
        """Each record's JSON as it was written, in position order."""
        if self._file is None:
            raise RuntimeError(_NOT_KEPT)
        offsets, lengths, file = self._offsets, self._lengths, self._file
        for number in self._order():
            self._at_end = False
            file.seek(offsets[number])
            yield file.read(lengths[number])

    def sorted(self) -> Iterable[dict[str, Any]]:
        """The records in position order (arrival order among equal positions)."""
        for data in self._raw():
            yield json.loads(data)

    def summary(self) -> dict[str, int]:
        """Counts of checks. ``failed`` (``errors`` and ``warnings``) leaves out the findings
        a baseline accepts, counted in ``accepted``; ``fixed`` counts the checks it lists
        that passed, also in ``passed``."""
        failed = self._outcomes.get(Outcome.FAILED, 0) - self._accepted
        return {
            "targets": len(self._cells),  # every target's first record makes its entry
            "tools": sum(len(tools) for tools in self._cells.values()),
            "checks": self._count,
            "passed": self._outcomes.get(Outcome.PASSED, 0),
            "failed": failed,
            "skipped": self._outcomes.get(Outcome.SKIPPED, 0),
            "errors": self._errors,
            "warnings": failed - self._errors,
            "accepted": self._accepted,
            "fixed": self._fixed,
        }

    def write_report(
        self,
        path: Path,
        *,
        complete: bool = True,
        interrupted: str | None = None,
        not_judged: Sequence[str] = (),
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """The JSON report, written record by record: never the whole report in memory.

        ``complete`` is false when the run stopped early (``interrupted`` says why:
        ``"SIGTERM"``, ``"KeyboardInterrupt"``, ``"an xdist worker crashed: gw0"``) or
        left items without a verdict (``not_judged``, their node ids). These keys come
        before the results, so that a reader of a large report learns it first.
        """
        if self._file is None:
            raise RuntimeError(_NOT_KEPT)
        # Written beside and moved into place: a reader (or a run killed now) never
        # sees half of it.
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with partial.open("w", encoding="utf-8") as out:
            out.write(f'{{\n  "version": {REPORT_VERSION},')
            out.write(f'\n  "complete": {json.dumps(bool(complete))},')
            out.write(f'\n  "interrupted": {json.dumps(interrupted, ensure_ascii=False)},')
            out.write('\n  "not_judged": [')
            for number, nodeid in enumerate(not_judged):
                out.write(",\n    " if number else "\n    ")
                out.write(json.dumps(nodeid, ensure_ascii=False))
            out.write("\n  ]," if not_judged else "],")
            for key, value in (extra or {}).items():  # facts about the run (the sandbox...)
                out.write(f"\n  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
            out.write('\n  "results": [')
            for number, data in enumerate(self._raw()):  # as written: no decoding again
                out.write(",\n    " if number else "\n    ")
                out.write(data.decode())
            out.write("\n  ]," if self._count else "],")
            summary = json.dumps(self.summary(), indent=2).replace("\n", "\n  ")
            out.write(f'\n  "summary": {summary}\n}}\n')
        os.replace(partial, path)

    def table(self) -> list[str]:
        """A compact table per target: tools down, the nine categories across.

        Its counts are of checks; pytest counts items, and passes a check that fails
        at warning severity (with a warning) unless the run is strict.
        """
        lines: list[str] = []
        categories = [c.value for c in Category]
        for target in self._cells:
            tools = self._cells.get(target, {})
            names = list(tools)
            counts = self._statuses.get(target, Counter())
            baseline = ""
            if counts.get("xfail"):
                baseline += f", {counts['xfail']} accepted by the baseline (xfail)"
            if counts.get("XPASS"):
                baseline += f", {counts['XPASS']} accepted but passing (XPASS)"
            lines.append(
                f"{target}: {len(names)} tools, {sum(counts.values())} checks:"
                f" {counts.get('ok', 0)} passed, {counts.get('warn', 0)} passed with a warning,"
                f" {counts.get('FAIL', 0)} failed, {counts.get('skip', 0)} skipped{baseline}"
            )
            lines.extend(self._loads.get(target, []))
            if not names:
                lines.append("")
                continue
            width = min(max([len("tool"), *(len(t) for t in names)]), 40)
            lines.append(
                "  " + "tool".ljust(width) + "  " + "  ".join(h.ljust(7) for h in _HEADERS)
            )
            for name in names:
                row = [tools[name].get(c, "-") for c in categories]
                shown = name if len(name) <= width else name[: width - 1] + "…"
                lines.append("  " + shown.ljust(width) + "  " + "  ".join(s.ljust(7) for s in row))
            lines.append("")
        return lines

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


#: What an unfinished report says: the run ended (or was killed) before it wrote the last.
UNFINISHED = "the run did not finish: this report holds the records judged until it ended"


class LiveReport:
    """The JSON report kept on disk, valid, as records arrive: a killed run leaves what it judged.

    The file always has the report's shape, with ``complete: false``; each record is
    added with one positioned write of the record and a new tail (the results'
    closing bracket and the summary so far) over the old tail. A write is one
    system call, so a process killed at any moment leaves either the file before it
    or the file after it. Records are in arrival order here; the final report
    (``Records.write_report``) replaces the file, sorted, when the run ends.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        head = (
            f'{{\n  "version": {REPORT_VERSION},\n  "complete": false,'
            f'\n  "interrupted": {json.dumps(UNFINISHED)},\n  "not_judged": [],'
            '\n  "results": ['
        ).encode()
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._end = len(head)
        self._count = 0
        os.write(self._fd, head + self._tail({}))

    @staticmethod
    def _tail(summary: Mapping[str, int]) -> bytes:
        shown = json.dumps(dict(summary), indent=2).replace("\n", "\n  ")
        return f'\n  ],\n  "summary": {shown}\n}}\n'.encode()

    def add(self, record: Mapping[str, Any], summary: Mapping[str, int]) -> None:
        shown = {k: v for k, v in record.items() if k != "position"}
        body = (
            (",\n    " if self._count else "\n    ") + json.dumps(shown, ensure_ascii=False)
        ).encode()
        data = body + self._tail(summary)
        os.pwrite(self._fd, data, self._end)
        self._end += len(body)
        self._count += 1
        os.ftruncate(self._fd, self._end + len(data) - len(body))

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


_HEADERS = (
    "naming",
    "descr",
    "schema",
    "provid",
    "result",
    "errors",
    "cancel",
    "timeout",
    "concur",
)
