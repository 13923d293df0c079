"""GitHub Actions output: an annotation per failed check, and the job summary in Markdown.

Workflow commands (``::error file=…,line=…,title=…::message``) are read from the
step's standard output; GitHub shows each beside the file and line it names, in
the pull request's diff. Values are escaped as the runner unescapes them:
``%``, CR and LF in the message; those and ``:`` and ``,`` in a property. The
summary is Markdown appended to the file ``$GITHUB_STEP_SUMMARY`` names.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._report_view import (
    CATEGORIES,
    Grid,
    check_text,
    is_accepted,
    is_problem,
    status_of,
)

__all__ = [
    "annotation",
    "annotation_lines",
    "escape_data",
    "escape_property",
    "in_github_actions",
    "summary_markdown",
]

#: Rows of one target's table and failures listed in the summary; the rest are counted.
SUMMARY_TOOLS = 50
SUMMARY_FAILURES = 100
#: GitHub's bound on a step summary is 1 MiB; stay well below it.
SUMMARY_BYTES = 512 * 1024


def in_github_actions(environ: Mapping[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, **properties: str | int | None) -> str:
    """One workflow command; properties that are ``None`` are left out."""
    shown = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{level}{' ' + shown if shown else ''}::{escape_data(message)}"


def annotation_lines(
    records: Iterable[Mapping[str, Any]],
    *,
    rootdir: Path,
    workspace: Path | None,
    strict: bool = False,
) -> list[str]:
    """One command per failed check (not those the baseline accepts).

    An error-severity failure, or any failure under ``strict``, is an ``error``;
    a warning is a ``warning``; a check the kit could not judge is an ``error``
    (the run does not pass); a finding the baseline accepts that no longer fails
    is a ``notice``. The file is the tool's declaration (``declared_at``),
    relative to the workspace; a file outside it is left out, as GitHub could not
    show it.
    """
    lines = []
    for record in records:
        if is_accepted(record) and record.get("outcome") == "passed":
            lines.append(_fixed(record, rootdir, workspace))
            continue
        if not is_problem(record):
            continue
        status = status_of(record)
        level = "warning" if status == "warn" and not strict else "error"
        code, tool, target = str(record["check"]), str(record["tool"]), str(record["target"])
        text = check_text(code)
        who = "the target" if tool == "*" else tool
        title = f"{code} {text.slug}: {who}".strip() if text.slug else f"{code}: {who}"
        message = str(record.get("message") or "")
        if record.get("kit_failure"):
            message = f"the kit could not judge this tool: {message}"
        body = f"{message}\ntarget: {target}"
        if text.fix:
            body += f"\nfix: {text.fix}"
        file, line = _file_line(record.get("declared_at"), rootdir, workspace)
        lines.append(annotation(level, body, file=file, line=line, title=title))
    return lines


def _fixed(record: Mapping[str, Any], rootdir: Path, workspace: Path | None) -> str:
    """A notice: the baseline accepts a finding this run no longer has."""
    code, tool = str(record["check"]), str(record["tool"])
    file, line = _file_line(record.get("declared_at"), rootdir, workspace)
    return annotation(
        "notice",
        f"the baseline accepts {code} for {tool} ({record['target']}), which no longer fails:"
        " remove it from the baseline",
        file=file,
        line=line,
        title=f"{code}: {tool} is fixed",
    )


def _file_line(where: Any, rootdir: Path, workspace: Path | None) -> tuple[str | None, int | None]:
    if not isinstance(where, Mapping) or not isinstance(where.get("file"), str):
        return None, None
    path = Path(where["file"])
    if not path.is_absolute():
        path = rootdir / path
    line = where.get("line")
    number = line if isinstance(line, int) and line > 0 else 1
    base = workspace if workspace is not None else rootdir
    try:
        return path.resolve().relative_to(base.resolve()).as_posix(), number
    except (ValueError, OSError):
        return None, None


def _md(text: Any, limit: int = 300) -> str:
    """Text safe in a Markdown table cell or list item: one line, no markup."""
    value = " ".join(str(text).split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    for char in "\\`*_[]<>|#":
        value = value.replace(char, "\\" + char)
    return value


def _code(text: Any) -> str:
    """Text as a code span: backticks cannot close it early, and nothing in it is markup."""
    value = " ".join(str(text).split())[:80].replace("`", "'")
    return f"`{value}`"


_ICON = {
    "FAIL": "❌ FAIL",
    "warn": "⚠️ warn",
    "kit": "❓ not judged",
    "accepted": "☑️ accepted",
    "ok": "✅",
    "skip": "➖ skip",
    "-": "",
}


def summary_markdown(report: Mapping[str, Any], *, html: str | None = None) -> str:
    """The job summary: the counts, each target's grid, the failures, the accepted findings."""
    records: Sequence[Mapping[str, Any]] = list(report.get("results") or [])
    statuses = Counter(status_of(r) for r in records)
    accepted = [r for r in records if is_accepted(r)]
    problems = [r for r in records if is_problem(r)]
    verdict = "❌" if statuses["FAIL"] or statuses["kit"] else "✅"
    out = [
        f"## {verdict} toolnexus conformance",
        "",
        f"**{statuses['FAIL']} failed**, {statuses['warn']} failed with a warning,"
        f" {statuses['kit']} not judged, {len(accepted)} accepted by the baseline,"
        f" {statuses['ok']} passed, {statuses['skip']} skipped"
        f" ({len(records)} checks).",
    ]
    if report.get("complete") is False:
        out += ["", f"**Incomplete run:** {_md(report.get('interrupted') or 'items not judged')}"]
    if html:
        out += ["", f"The HTML report, `{_md(html)}`, has each failure's details."]
    for target, tools in Grid.of(records).cells.items():
        names = [t for t in tools if t != "*"]
        out += ["", f"### {_md(target)}", ""]
        whole = tools.get("*", {})
        if whole:
            cells = ", ".join(f"{c}: {_ICON.get(s, s)}" for c, s in whole.items())
            out += [f"The target as a whole: {cells}", ""]
        if not names:
            continue
        out.append("| tool | " + " | ".join(CATEGORIES) + " |")
        out.append("|---|" + "---|" * len(CATEGORIES))
        for name in names[:SUMMARY_TOOLS]:
            row = [_ICON.get(tools[name].get(c, "-"), "") for c in CATEGORIES]
            out.append(f"| {_md(name, 60)} | " + " | ".join(row) + " |")
        if len(names) > SUMMARY_TOOLS:
            out.append(f"\n… and {len(names) - SUMMARY_TOOLS} more tools.")
    if problems:
        out += ["", "### Failures", ""]
        out += [_item(r) for r in problems[:SUMMARY_FAILURES]]
        if len(problems) > SUMMARY_FAILURES:
            out.append(f"- … and {len(problems) - SUMMARY_FAILURES} more")
    if accepted:
        out += ["", "<details><summary>Accepted findings (baseline)</summary>", ""]
        out += [_item(r) for r in accepted[:SUMMARY_FAILURES]]
        if len(accepted) > SUMMARY_FAILURES:
            out.append(f"- … and {len(accepted) - SUMMARY_FAILURES} more")
        out += ["", "</details>"]
    text = "\n".join(out) + "\n"
    if len(text.encode()) > SUMMARY_BYTES:
        text = text.encode()[:SUMMARY_BYTES].decode(errors="ignore") + "\n\n… (cut)\n"
    return text


def _item(record: Mapping[str, Any]) -> str:
    status = status_of(record)
    tool = "the target" if record["tool"] == "*" else record["tool"]
    passed = is_accepted(record) and record.get("outcome") == "passed"
    shown = "no longer fails" if passed else _ICON.get(status, status)
    return (
        f"- {shown} **{_md(record['check'])}** {_code(tool)} ({_md(record['target'], 80)}):"
        f" {_md(record.get('message', ''))}"
    )
