"""A baseline of accepted findings: a project adopts the suites without a red build on day one.

The file (TOML) lists findings by what stays the same from run to run: the target's
label, the tool's name and the check's code, never the message, which holds values
that change. Each entry's value is why it is accepted (``""`` for no reason given)::

    [accepted."mytools:tools".search]
    TN301 = "the schema is generated; fixed upstream in 2.0"

A finding the baseline accepts is reported as pytest reports an expected failure
(xfail, with the reason). An accepted finding that no longer fails fails its item,
as ``xfail(strict=True)`` does, whether or not the run is ``--toolnexus-strict``: an
entry left behind would accept the same finding again the day it comes back, so
the baseline may only shrink, and the message says how. A finding it does not list
fails as it always did. ``--toolnexus-update-baseline`` rewrites the file from the
run: it adds what failed, removes what passed, and keeps every entry the run did
not judge (deselected with ``-k``, skipped, or of a target not given), sorted so
that its diff reviews well.

Records (``Verdict.as_record()``) carry the state under ``RECORD_FIELD``, which is
how the table, the JSON report and an xdist controller, which runs no item, know it.
"""

from __future__ import annotations

import tomllib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_conformance._report import ACCEPTED, FIXED
from toolnexus_conformance._report import BASELINE_FIELD as RECORD_FIELD

if TYPE_CHECKING:
    from toolnexus_conformance._model import Verdict

__all__ = [
    "ACCEPTED",
    "FIXED",
    "NEW",
    "REASON_FIELD",
    "RECORD_FIELD",
    "Baseline",
    "BaselineError",
    "BaselineWarning",
    "Key",
]

#: ``(target label, tool name, check code)``: ``"*"`` is the tool of a target's own checks.
Key = tuple[str, str, str]

#: The record's key for the state (``RECORD_FIELD``): ``ACCEPTED``, a finding the
#: baseline lists, reported as xfail; ``FIXED``, a check it lists that passed, whose
#: item fails (XPASS strict); ``NEW``, a finding it does not list, failing (or warning)
#: as without a baseline; ``None`` for the rest.
NEW = "new"
#: The record's key for the reason an accepted (or fixed) finding's entry gives.
REASON_FIELD = "baseline_reason"

_TABLE = "accepted"
_HEADER = """\
# Findings pytest-toolnexus accepts: each is reported as xfail, not as a failure.
# [accepted."<target>"."<tool>"] <check code> = "<why it is accepted>" ("" for no reason).
# --toolnexus-update-baseline rewrites this file; an accepted finding that no longer
# fails fails the run until its line is removed.

"""
#: How many entries a warning about entries absent from the run lists.
LISTED = 20


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message says where and why."""


class BaselineWarning(UserWarning):
    """Baseline entries that name no target, tool or check of the run."""


@dataclass
class Baseline:
    """The accepted findings of one file, and whether this run rewrites it."""

    path: Path
    entries: dict[Key, str] = field(default_factory=dict)
    #: ``--toolnexus-update-baseline``: every finding is accepted, the file rewritten.
    updating: bool = False
    #: ``(key, outcome)`` of each record the run judged (``observe``).
    judged: dict[Key, str] = field(default_factory=dict)
    #: The entries written at the end of an update (``write``), for the summary.
    written: dict[Key, str] | None = None

    # -- reading --------------------------------------------------------------------
    @classmethod
    def read(cls, path: Path, *, updating: bool = False) -> Baseline:
        """The file's entries; a file that is missing is empty only when it is to be written."""
        if not path.exists():
            if updating:
                return cls(path, updating=True)
            raise BaselineError(f"{path} does not exist; write it with --toolnexus-update-baseline")
        try:
            with path.open("rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise BaselineError(f"{path}: cannot be read as TOML: {exc}") from None
        return cls(path, parse_entries(data, str(path)), updating=updating)

    # -- judging ----------------------------------------------------------------------
    def state(self, verdict: Verdict) -> str | None:
        """The verdict's state (``ACCEPTED``, ``FIXED``, ``NEW``) or ``None``."""
        if verdict.kit_failure or verdict.outcome.value == "skipped":
            return None
        listed = _key(verdict) in self.entries
        if verdict.is_failure:
            return ACCEPTED if listed or self.updating else NEW
        return FIXED if listed and not self.updating else None

    def reason(self, verdict: Verdict) -> str:
        return self.entries.get(_key(verdict), "")

    def mark(self, record: dict[str, Any], verdict: Verdict) -> str | None:
        """Put the verdict's state (and its entry's reason) in its record; return the state."""
        state = self.state(verdict)
        record[RECORD_FIELD] = state
        reason = self.reason(verdict)
        if reason and state in (ACCEPTED, FIXED):
            record[REASON_FIELD] = reason
        return state

    def xfail_reason(self, accepted: Sequence[Verdict]) -> str:
        """What pytest shows for the xfail: each code, and why it is accepted."""
        parts = []
        for verdict in accepted:
            reason = self.reason(verdict)
            parts.append(f"{verdict.check.code}" + (f" ({reason})" if reason else ""))
        return f"accepted in {self.path.name}: " + ", ".join(parts)

    def fixed_message(self, fixed: Sequence[Verdict]) -> str:
        """Why an item whose accepted findings no longer fail fails: and what to do."""
        lines = [
            f"[XPASS(strict)] accepted in {self.path.name}, and no longer failing:"
            " remove the entry (or run --toolnexus-update-baseline) so that the finding"
            " fails if it comes back"
        ]
        for verdict in fixed:
            table = f"[{_TABLE}.{_toml_key(verdict.target)}.{_toml_key(verdict.tool)}]"
            lines.append(f"  {table} {verdict.check.code}")
        return "\n".join(lines)

    # -- entries that name nothing -------------------------------------------------
    def absent(
        self,
        present: Iterable[Key],
        tools: Mapping[str, Iterable[str]],
        unloaded: Iterable[str] = (),
    ) -> str | None:
        """A warning's text for entries naming nothing collected, listing what there is.

        ``present``: the keys of the items collected (before ``-k``, so a deselected
        item's entry is present); ``tools``: each target's tools. An entry of a
        target that did not load is not listed: its TN001 says why.
        """
        have = set(present)
        skip = set(unloaded)
        lost = [k for k in sorted(self.entries) if k not in have and k[0] not in skip]
        if not lost:
            return None
        lines = [
            f"{self.path.name}: {len(lost)} entr{'y' if len(lost) == 1 else 'ies'} name"
            " nothing this run collected (kept, and not judged):"
        ]
        for target, tool, code in lost[:LISTED]:
            if target not in tools:
                why = (
                    f"no target {target!r}; the targets are: {', '.join(sorted(tools)) or '(none)'}"
                )
            elif tool != "*" and tool not in set(tools[target]):
                names = sorted(set(tools[target]))
                why = f"{target!r} has no tool {tool!r}; its tools are: {', '.join(names)}"
            else:
                here = sorted(c for t, n, c in have if (t, n) == (target, tool))
                why = _absent_check(target, tool, code, here)
            lines.append(f"  {target}::{tool} {code}: {why}")
        if len(lost) > LISTED:
            lines.append(f"  ... and {len(lost) - LISTED} more")
        return "\n".join(lines)

    def warn_absent(
        self,
        present: Iterable[Key],
        tools: Mapping[str, Iterable[str]],
        unloaded: Iterable[str] = (),
    ) -> None:
        text = self.absent(present, tools, unloaded)
        if text is not None:  # said of the file, not of the line of the kit that noticed
            warnings.warn_explicit(BaselineWarning(text), BaselineWarning, str(self.path), 0)

    # -- the run's records, and the rewrite ------------------------------------------
    def observe(self, record: Mapping[str, Any]) -> None:
        """Note a record's outcome (any process's: records reach the xdist controller)."""
        if record.get("kit_failure"):
            return
        key = (str(record["target"]), str(record["tool"]), str(record["check"]))
        self.judged[key] = str(record["outcome"])

    def updated(self) -> dict[Key, str]:
        """The entries after this run: its failures added, its passes removed, the rest kept."""
        entries = {k: v for k, v in self.entries.items() if self.judged.get(k) != "passed"}
        for key, outcome in self.judged.items():
            if outcome == "failed":
                entries.setdefault(key, "")
        return entries

    def write(self) -> None:
        """Rewrite the file from the run (``updating``), sorted by target, tool and code."""
        import tomli_w

        entries = self.updated()
        table: dict[str, dict[str, dict[str, str]]] = {}
        for (target, tool, code), reason in sorted(entries.items()):
            table.setdefault(target, {}).setdefault(tool, {})[code] = reason
        text = _HEADER + (tomli_w.dumps({_TABLE: table}) if table else "")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{self.path.name}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(self.path)
        self.written = entries

    def summary_lines(self) -> list[str]:
        """The terminal summary's lines on the baseline."""
        if self.written is not None:
            added = len(self.written.keys() - self.entries.keys())
            removed = len(self.entries.keys() - self.written.keys())
            return [
                f"baseline written to {self.path}: {len(self.written)} accepted finding(s)"
                f" ({added} added, {removed} removed)"
            ]
        accepted = sum(
            1 for k, outcome in self.judged.items() if outcome == "failed" and k in self.entries
        )
        fixed = sorted(
            k for k, outcome in self.judged.items() if outcome == "passed" and k in self.entries
        )
        line = f"baseline {self.path}: {accepted} accepted finding(s) reported as xfail"
        if fixed:
            line += (
                f"; {len(fixed)} no longer fail (XPASS, failing the run): remove them or run"
                " --toolnexus-update-baseline"
            )
        return [line]


def parse_entries(data: Any, where: str) -> dict[Key, str]:
    """The entries of a baseline's data; ``BaselineError`` for anything not exactly right."""
    if not isinstance(data, Mapping):
        raise BaselineError(f"{where}: the top level must be a table")
    unknown = sorted(str(k) for k in data if k != _TABLE)
    if unknown:
        raise BaselineError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; the only key is {_TABLE!r}"
        )
    targets = data.get(_TABLE, {})
    if not isinstance(targets, Mapping):
        raise BaselineError(f"{where}: {_TABLE!r} must be a table of targets")
    entries: dict[Key, str] = {}
    for target, tools in targets.items():
        if not isinstance(tools, Mapping):
            raise BaselineError(f"{where}: {_TABLE}.{target} must be a table of tools")
        for tool, checks in tools.items():
            if not isinstance(checks, Mapping):
                raise BaselineError(
                    f"{where}: {_TABLE}.{target}.{tool} must be a table of check codes"
                )
            for code, reason in checks.items():
                if not isinstance(reason, str):
                    raise BaselineError(
                        f"{where}: {_TABLE}.{target}.{tool}.{code} must be a string (why the"
                        f' finding is accepted, "" for no reason), got {reason!r}'
                    )
                entries[(str(target), str(tool), str(code))] = reason
    return entries


def _key(verdict: Verdict) -> Key:
    return (verdict.target, verdict.tool, verdict.check.code)


def _toml_key(text: str) -> str:
    import re

    if re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return text
    import json

    return json.dumps(text, ensure_ascii=False)


def _absent_check(target: str, tool: str, code: str, here: Sequence[str]) -> str:
    from toolnexus_conformance._registry import load_catalog

    known = code in {info.code for info in load_catalog().infos()}
    why = "not selected, ignored, or not run on tools of its kind" if known else "no such check"
    return (
        f"check {code} is not collected for {target}::{tool} ({why}); its checks here are:"
        f" {', '.join(here) or '(none)'}"
    )
