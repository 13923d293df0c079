"""Merge the JSON reports of N shards (``--toolnexus-shard K/N``) into one report.

Run:  python -m pytest_toolnexus.merge_reports merged.json shard-1.json shard-2.json ...

The shards of one run split targets and tools without overlap, so the merged
report holds every shard's records, and its summary and ``not_called`` counts are
made again from them, as a single run would have made them. An mcp.json whose
servers were shared out over the shards has its own verdicts (``TN851``, ...)
judged in each shard on that shard's servers: they are joined into one, failed if
any shard's failed. The merged report is complete only if every shard's was;
``interrupted`` names the shards that were not; ``not_judged`` joins theirs.
Reports of another format version are refused. A file given twice, two reports of
one shard, a tool found in two shards, or a target's own verdict found in two
reports that are not shards of one run, is an error: verdicts would be counted twice.
So are shards cut by different costs (``shard_costs``, ``--toolnexus-shard-costs``):
a server may then have run in two shards, or in none.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["MergeError", "main", "merge"]

#: Keys of a report that are made again from the merged records, or merged by rule.
_MADE = (
    "version",
    "complete",
    "interrupted",
    "not_judged",
    "results",
    "summary",
    "not_called",
    "shard",
)


class MergeError(ValueError):
    """The reports cannot be merged into one (what, and in which file, is said)."""


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MergeError(f"{path}: not a readable JSON report: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise MergeError(f"{path}: not a toolnexus report (no results list)")
    return data


def _identity(record: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(record.get("target")), str(record.get("tool")), str(record.get("check")))


def _extra(reports: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, Any]:
    """Facts about the run besides the records (the sandbox, ...): one value if all agree,
    else each shard's, by file name."""
    keys = dict.fromkeys(k for _, r in reports for k in r if k not in _MADE)
    out: dict[str, Any] = {}
    for key in keys:
        values = [r[key] for _, r in reports if key in r]
        if all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = {str(path): r[key] for path, r in reports if key in r}
    return out


#: Which of several verdicts a joined one takes: a failure in any shard fails it.
_PRECEDENCE = {"failed": 0, "passed": 1, "skipped": 2}


def _shards(reports: Sequence[tuple[Path, Mapping[str, Any]]]) -> bool:
    """Whether the reports are distinct shards of one ``--toolnexus-shard K/N`` run
    (a report without ``shard`` predates it, or was not a shard); two of one shard
    are an error."""
    given = [r.get("shard") for _, r in reports]
    if not all(isinstance(g, str) and g.count("/") == 1 for g in given):
        return False
    if len({str(g).split("/")[1] for g in given}) != 1:
        return False
    shards_given(reports)  # two of one shard: an error
    cut_by = {str(r.get("shard_costs", "none")): path for path, r in reports}
    if len(cut_by) > 1:  # each cut the run by other costs: servers may be in two, or in none
        said = ", ".join(f"{path} by {digest}" for digest, path in cut_by.items())
        raise MergeError(
            f"the shards were cut by different costs ({said}): give every shard the same"
            " --toolnexus-shard-costs file, or none"
        )
    return True


def shards_given(reports: Sequence[tuple[Path, Mapping[str, Any]]]) -> dict[str, Path]:
    """The shard (``K/N``) each report is, of those that are one, and its file; a shard
    given twice is an error (its verdicts would count twice)."""
    found: dict[str, Path] = {}
    for path, report in reports:
        shard = report.get("shard")
        if not isinstance(shard, str) or shard.count("/") != 1:
            continue
        if shard in found:
            raise MergeError(f"{path} and {found[shard]} are both shard {shard}: give each once")
        found[shard] = path
    return found


def _joined(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One verdict of a target's own check from each shard that judged it: the worst
    outcome, with the messages and findings of the shards that gave it."""
    worst = min(records, key=lambda r: _PRECEDENCE.get(str(r.get("outcome")), 3))
    same = [r for r in records if r.get("outcome") == worst.get("outcome")]
    joined = dict(worst)
    messages = [str(r["message"]) for r in same if r.get("message")]
    joined["message"] = "; ".join(dict.fromkeys(messages))
    joined["findings"] = [f for r in same for f in r.get("findings") or ()]
    return joined


def merge(paths: Sequence[Path], out: Path) -> dict[str, int]:
    """Write the merged report of ``paths`` to ``out``; the merged summary."""
    from toolnexus_conformance._report import REPORT_VERSION, Records

    if not paths:
        raise MergeError("no report to merge")
    reports = [(path, _read(path)) for path in paths]
    for path, report in reports:
        if report.get("version") != REPORT_VERSION:
            raise MergeError(
                f"{path}: report version {report.get('version')!r}; this kit reads and writes"
                f" version {REPORT_VERSION}: merge reports of the same kit version"
            )
    given = [path.resolve() for path in paths]
    for number, path in enumerate(given):
        if path in given[:number]:
            raise MergeError(f"{paths[number]} is given twice")
    shards = _shards(reports)
    records = Records()
    # A target's own checks are judged in one shard, or, for an mcp.json whose servers
    # were shared out, in each shard holding some: found in two reports that are not
    # shards of one run, they would count twice. (Tools may share a name in a target.)
    seen: dict[tuple[str, str, str], Path] = {}
    tools: dict[tuple[str, str], Path] = {}  # which report holds each tool
    own: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    try:
        for path, report in reports:
            for record in report["results"]:
                key = _identity(record)
                if key[1] != "*":
                    # A tool is explored whole in one shard (tools of one name too):
                    # found in two shards, the shards cut the run differently.
                    holder = tools.setdefault(key[:2], path)
                    if shards and holder != path:
                        raise MergeError(
                            f"{path}: tool {key[1]!r} of {key[0]} is also in {holder}:"
                            " the shards did not cut the same run alike"
                        )
                    records.add(record)
                    continue
                if seen.get(key, path) != path and not shards:
                    raise MergeError(
                        f"{path}: the verdict of {key[2]} on {key[0]} is also in {seen[key]}:"
                        " these are not shards of one run"
                    )
                seen[key] = path
                own.setdefault(key, []).append(record)
        for found in own.values():
            records.add(found[0] if len(found) == 1 else _joined(found))
        unfinished = [(p, r) for p, r in reports if not r.get("complete", False)]
        interrupted = "; ".join(
            f"{p}: {r.get('interrupted') or 'incomplete'}" for p, r in unfinished
        )
        not_judged = [n for _, r in reports for n in r.get("not_judged") or ()]
        extra = _extra(reports)
        extra["not_called"] = records.not_called()
        out.parent.mkdir(parents=True, exist_ok=True)
        records.write_report(
            out,
            complete=not unfinished,
            interrupted=interrupted or None,
            not_judged=not_judged,
            extra=extra,
        )
        return records.summary()
    finally:
        records.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_toolnexus.merge_reports",
        description="Merge the JSON reports of the shards of one conformance run.",
    )
    parser.add_argument("output", type=Path, help="where the merged report is written")
    parser.add_argument("reports", type=Path, nargs="+", help="the shards' reports")
    args = parser.parse_args(argv)
    try:
        summary = merge(args.reports, args.output)
    except MergeError as exc:
        print(f"merge_reports: {exc}", file=sys.stderr)
        return 2
    print(
        f"{args.output}: {len(args.reports)} reports, {summary['targets']} targets,"
        f" {summary['tools']} tools, {summary['checks']} checks: {summary['passed']} passed,"
        f" {summary['failed']} failed, {summary['skipped']} skipped"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
