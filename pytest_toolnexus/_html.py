"""The HTML report: one self-contained page rendered from the JSON report's data.

Everything is inline (style, script, no font or CDN), so the page opens from a CI
artifact with no network. The page is plain HTML that reads without its script:
each failure is a ``<details>`` element; the script adds only the filters and the
grid's links opening a failure. Every value from the report is escaped with
``html.escape`` where it is written, and nothing from it reaches the script as code.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._report_view import (
    CATEGORIES,
    CheckText,
    Grid,
    check_text,
    is_accepted,
    is_problem,
    status_of,
)

__all__ = ["render_html"]

#: The grid's column heads (the terminal table's short names, full name in the title).
_HEADS = dict(
    zip(
        CATEGORIES,
        ("naming", "descr", "schema", "provid", "result", "errors", "cancel", "timeout", "concur"),
        strict=True,
    )
)
#: What a cell's status says to a person.
_SHOWN = {
    "FAIL": "FAIL",
    "warn": "warn",
    "kit": "not judged",
    "accepted": "accepted",
    "ok": "ok",
    "skip": "skip",
    "-": "",
}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def render_html(report: Mapping[str, Any], *, title: str = "toolnexus conformance") -> str:
    """The page for a report dict (``load_report`` or the run's own)."""
    records: list[Mapping[str, Any]] = list(report.get("results") or [])
    texts: dict[str, CheckText] = {}

    def text(code: str) -> CheckText:
        if code not in texts:
            texts[code] = check_text(code)
        return texts[code]

    problems = [(n, r) for n, r in enumerate(records) if is_problem(r)]
    accepted = [(n, r) for n, r in enumerate(records) if is_accepted(r)]
    anchors = _first_anchors(problems + accepted)
    targets = sorted({str(r["target"]) for r in records})
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<header><h1>{_e(title)}</h1>{_summary(report, records, problems, accepted)}</header>",
        _filters(targets, problems + accepted),
        '<section id="grid"><h2>Verdicts by tool and category</h2>',
        _legend(),
        _grid(records, anchors),
        "</section>",
        '<section id="failures"><h2>Failures <span class="count" id="shown-count"></span></h2>',
    ]
    if problems:
        parts.append(
            '<p class="hint">Click a failure to see what was sent, what came back,'
            " why it matters and how to fix it.</p>"
        )
        parts.extend(_failure(n, r, text(str(r["check"]))) for n, r in problems)
    else:
        parts.append('<p class="none">No check failed.</p>')
    parts.append("</section>")
    parts.append('<section id="accepted"><h2>Accepted findings (baseline)</h2>')
    if accepted:
        parts.append(
            '<p class="hint">Findings the baseline accepts: they do not fail the run.'
            " One that no longer fails can leave the baseline.</p>"
        )
        parts.extend(_failure(n, r, text(str(r["check"]))) for n, r in accepted)
    else:
        parts.append('<p class="none">No finding is accepted by a baseline in this run.</p>')
    parts.append("</section>")
    parts.append(_not_called(report))
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts) + "\n"


def _first_anchors(
    rows: Iterable[tuple[int, Mapping[str, Any]]],
) -> dict[tuple[str, str, str], str]:
    """(target, tool, category) -> the anchor of its first listed failure, for the grid's links."""
    anchors: dict[tuple[str, str, str], str] = {}
    for number, record in rows:
        key = (str(record["target"]), str(record["tool"]), str(record.get("category", "")))
        anchors.setdefault(key, f"r{number}")
    return anchors


def _summary(
    report: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
    problems: Sequence[tuple[int, Mapping[str, Any]]],
    accepted: Sequence[tuple[int, Mapping[str, Any]]],
) -> str:
    statuses = Counter(status_of(r) for r in records)
    tools = {(r["target"], r["tool"]) for r in records if r["tool"] != "*"}
    targets = {r["target"] for r in records}
    counts = [
        ("FAIL", statuses["FAIL"], "failed"),
        ("warn", statuses["warn"], "failed with a warning"),
        ("kit", statuses["kit"], "not judged"),
        ("accepted", len(accepted), "accepted"),
        ("ok", statuses["ok"], "passed"),
        ("skip", statuses["skip"], "skipped"),
    ]
    chips = "".join(
        f'<span class="chip s-{_e(s)}" data-count="{_e(s)}"><b>{n}</b> {_e(label)}</span>'
        for s, n, label in counts
    )
    lines = [
        f'<p class="scope">{len(records)} checks of {len(tools)} tools in {len(targets)}'
        f" target(s)</p>",
        f'<p class="chips">{chips}</p>',
    ]
    if report.get("complete") is False:
        why = report.get("interrupted") or "some items were not judged"
        unjudged = report.get("not_judged") or []
        more = f"; {len(unjudged)} item(s) not judged" if unjudged else ""
        lines.append(f'<p class="incomplete">Incomplete run: {_e(why)}{_e(more)}</p>')
    if not problems:
        lines.append('<p class="verdict pass">Every judged check passed.</p>')
    return "".join(lines)


def _filters(targets: Sequence[str], listed: Sequence[tuple[int, Mapping[str, Any]]]) -> str:
    categories = [c for c in CATEGORIES if any(r.get("category") == c for _, r in listed)]

    def select(name: str, label: str, values: Sequence[tuple[str, str]]) -> str:
        options = "".join(f'<option value="{_e(v)}">{_e(t)}</option>' for v, t in values)
        return (
            f'<label>{_e(label)} <select id="filter-{name}" data-filter="{name}">'
            f'<option value="">all</option>{options}</select></label>'
        )

    return (
        '<nav id="filters" aria-label="filters">'
        + select("severity", "severity", [("error", "error"), ("warning", "warning")])
        + select("category", "category", [(c, c) for c in categories])
        + select("target", "target", [(t, t) for t in targets])
        + '<button type="button" id="filter-clear">show all</button></nav>'
    )


def _legend() -> str:
    shown = ("FAIL", "warn", "kit", "accepted", "ok", "skip")
    return (
        '<p class="legend">'
        + "".join(f'<span class="cell s-{s}">{_e(_SHOWN[s])}</span>' for s in shown)
        + "</p>"
    )


def _grid(records: Sequence[Mapping[str, Any]], anchors: Mapping[tuple[str, str, str], str]) -> str:
    grid = Grid.of(records)
    out: list[str] = []
    for target, tools in grid.cells.items():
        out.append(f'<div class="target" data-target="{_e(target)}"><h3>{_e(target)}</h3>')
        whole = tools.get("*")
        if whole:
            cells = " ".join(
                f'<a class="cell s-{_e(s)}" href="#{_e(anchors.get((target, "*", c), ""))}">'
                f"{_e(c)}: {_e(_SHOWN.get(s, s))}</a>"
                if (target, "*", c) in anchors
                else f'<span class="cell s-{_e(s)}">{_e(c)}: {_e(_SHOWN.get(s, s))}</span>'
                for c, s in whole.items()
            )
            out.append(f'<p class="whole">the target as a whole: {cells}</p>')
        names = [t for t in tools if t != "*"]
        if not names:
            out.append("</div>")
            continue
        heads = "".join(
            f'<th data-category="{c}" title="{c}">{_e(_HEADS[c])}</th>' for c in CATEGORIES
        )
        out.append(
            f'<table class="grid"><thead><tr><th class="tool">tool</th>{heads}</tr></thead><tbody>'
        )
        for name in names:
            row = [f'<th class="tool" scope="row">{_e(name)}</th>']
            for category in CATEGORIES:
                status = tools[name].get(category, "-")
                label = _e(_SHOWN.get(status, status))
                anchor = anchors.get((target, name, category))
                inner = f'<a href="#{anchor}" data-open="{anchor}">{label}</a>' if anchor else label
                row.append(
                    f'<td class="cell s-{_e(status)}" data-category="{category}"'
                    f' data-status="{_e(status)}">{inner}</td>'
                )
            out.append(f'<tr data-tool="{_e(name)}">{"".join(row)}</tr>')
        out.append("</tbody></table></div>")
    if not out:
        return '<p class="none">The report has no records.</p>'
    return "\n".join(out)


def _failure(number: int, record: Mapping[str, Any], text: CheckText) -> str:
    """One failure's screen: the check, the tool, each finding's evidence, why, the fix."""
    status = status_of(record)
    code, tool, target = str(record["check"]), str(record["tool"]), str(record["target"])
    category, severity = str(record.get("category", "")), str(record.get("severity", ""))
    shown_tool = "the target as a whole" if tool == "*" else tool
    if is_accepted(record) and record.get("outcome") == "passed":
        badge, status = "no longer fails", "ok"
    else:
        badge = _SHOWN.get(status, status)
    slug = f" {text.slug}" if text.slug else ""
    head = (
        f'<span class="cell s-{_e(status)}">{_e(badge)}</span> <code>{_e(code)}</code>{_e(slug)}'
        f' <span class="tool">{_e(shown_tool)}</span> <span class="where">({_e(target)})</span>'
        f' <span class="message">{_e(_cut(str(record.get("message", "")), 200))}</span>'
    )
    rows = [
        (
            "check",
            f"{code}{slug} [{category}, {severity}]" + (f": {text.title}" if text.title else ""),
        ),
        ("tool", f"{shown_tool}   (target {target})"),
    ]
    where = record.get("declared_at")
    if isinstance(where, Mapping) and where.get("file"):
        rows.append(("declared", f"{where['file']}:{where.get('line', 1)}"))
    if record.get("kit_failure"):
        rows.append(("note", "the kit could not judge this tool: the run does not pass"))
    reason = record.get("baseline_reason")
    if is_accepted(record):
        rows.append(("accepted", str(reason) if reason else "by the baseline (no reason given)"))
    body = [
        "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows) + "</dl>",
        _findings(record),
    ]
    about = []
    if text.why:
        about.append(f"<dt>why</dt><dd>{_e(text.why)}</dd>")
    if text.fix:
        about.append(f'<dt>fix</dt><dd class="fix">{_e(text.fix)}</dd>')
    if text.reference:
        about.append(f"<dt>source</dt><dd>{_e(text.reference)}</dd>")
    if about:
        body.append("<dl>" + "".join(about) + "</dl>")
    return (
        f'<details class="finding" id="r{number}" data-severity="{_e(severity)}"'
        f' data-category="{_e(category)}" data-target="{_e(target)}" data-status="{_e(status)}">'
        f"<summary>{head}</summary>"
        f'<div class="screen">{"".join(body)}</div></details>'
    )


def _findings(record: Mapping[str, Any]) -> str:
    findings = [str(f) for f in record.get("findings") or []] or [str(record.get("message", ""))]
    evidence = record.get("evidence")
    entries = evidence if isinstance(evidence, list) else []
    items = []
    for index, message in enumerate(findings):
        extra = (
            entries[index] if index < len(entries) and isinstance(entries[index], Mapping) else {}
        )
        lines = [f'<div class="found">{_e(message)}</div>']
        for key, label in (("path", "at"), ("sent", "sent"), ("got", "got")):
            if extra.get(key) is not None:
                lines.append(
                    f'<div class="evidence"><span class="label">{label}</span>'
                    f"<pre>{_e(extra[key])}</pre></div>"
                )
        items.append(f"<li>{''.join(lines)}</li>")
    return '<ol class="findings">' + "".join(items) + "</ol>"


def _not_called(report: Mapping[str, Any]) -> str:
    counts = report.get("not_called")
    if not isinstance(counts, Mapping) or not counts:
        return ""
    items = "".join(
        f"<li><b>{_e(n)}</b> {_e(why)}</li>"
        for why, n in sorted(counts.items(), key=lambda kv: -int(kv[1]))
    )
    return f'<section id="not-called"><h2>Tools no live check called</h2><ul>{items}</ul></section>'


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_CSS = """
:root{--fail:#b31d28;--fail-bg:#ffdce0;--warn:#735c0f;--warn-bg:#fff5b1;--ok:#22863a;
--ok-bg:#dcffe4;--skip:#586069;--skip-bg:#f1f2f4;--kit:#5a32a3;--kit-bg:#e6dcfd;
--acc:#0366d6;--acc-bg:#dbedff}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:0 24px 48px;
color:#1f2328;background:#fff}
header{padding:16px 0 4px;border-bottom:1px solid #d0d7de}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}h3{font-size:15px;margin:18px 0 6px}
.chips .chip{display:inline-block;margin:0 8px 4px 0;padding:2px 10px;border-radius:12px}
.cell,.chip{white-space:nowrap}
.s-FAIL{background:var(--fail-bg);color:var(--fail);font-weight:600}
.s-warn{background:var(--warn-bg);color:var(--warn)}
.s-kit{background:var(--kit-bg);color:var(--kit)}
.s-accepted{background:var(--acc-bg);color:var(--acc)}
.s-ok{background:var(--ok-bg);color:var(--ok)}
.s-skip{background:var(--skip-bg);color:var(--skip)}
.incomplete{background:var(--fail-bg);color:var(--fail);padding:6px 10px;font-weight:600}
.verdict.pass{color:var(--ok);font-weight:600}
nav#filters{position:sticky;top:0;background:#f6f8fa;border-bottom:1px solid #d0d7de;
padding:8px 0;margin:0 -24px;padding-left:24px;z-index:1}
nav#filters label{margin-right:16px}
table.grid{border-collapse:collapse;margin:4px 0 8px}
table.grid th,table.grid td{border:1px solid #d0d7de;padding:3px 8px;text-align:center}
table.grid th.tool{text-align:left;font-weight:500;max-width:28em;overflow-wrap:anywhere}
table.grid thead th{background:#f6f8fa;font-weight:600}
table.grid td a{color:inherit;text-decoration:none;display:block}
table.grid td a:hover{text-decoration:underline}
.legend .cell,.whole .cell{display:inline-block;padding:1px 8px;margin-right:6px;border-radius:3px}
.hidden{display:none!important}
details.finding{border:1px solid #d0d7de;border-radius:6px;margin:6px 0;scroll-margin-top:56px}
details.finding>summary{cursor:pointer;padding:6px 10px;list-style-position:inside}
details.finding>summary .cell{padding:1px 6px;border-radius:3px}
details.finding[open]>summary{border-bottom:1px solid #d0d7de;background:#f6f8fa}
details.finding .tool{font-weight:600}.where{color:#57606a}
.message{display:block;color:#57606a;margin:2px 0 0 1.2em}
.screen{padding:8px 14px}
.screen dl{display:grid;grid-template-columns:7em 1fr;gap:2px 12px;margin:6px 0}
.screen dt{color:#57606a;font-weight:600}.screen dd{margin:0;overflow-wrap:anywhere}
.screen dd.fix{background:var(--ok-bg);padding:2px 6px;border-radius:3px}
ol.findings{margin:6px 0;padding-left:22px}
.evidence{display:flex;gap:8px;margin:2px 0}
.evidence .label{color:#57606a;min-width:3em}
.evidence pre{margin:0;padding:2px 6px;background:#f6f8fa;white-space:pre-wrap;
overflow-wrap:anywhere;flex:1;font-size:12.5px}
.hint,.none{color:#57606a}
:target{outline:2px solid var(--acc)}
"""

_JS = """
(function(){
  "use strict";
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  function chosen(){
    var out = {};
    selects.forEach(function(s){ out[s.getAttribute("data-filter")] = s.value; });
    return out;
  }
  function apply(){
    var f = chosen(), shown = 0, total = 0;
    document.querySelectorAll("#failures details.finding").forEach(function(d){
      var ok = ["severity","category","target"].every(function(k){
        return !f[k] || d.getAttribute("data-" + k) === f[k];
      });
      d.classList.toggle("hidden", !ok);
      total += 1; if (ok) { shown += 1; }
    });
    document.querySelectorAll("#accepted details.finding").forEach(function(d){
      var ok = ["severity","category","target"].every(function(k){
        return !f[k] || d.getAttribute("data-" + k) === f[k];
      });
      d.classList.toggle("hidden", !ok);
    });
    document.querySelectorAll("#grid .target").forEach(function(t){
      t.classList.toggle("hidden", !!f.target && t.getAttribute("data-target") !== f.target);
    });
    document.querySelectorAll("#grid [data-category]").forEach(function(c){
      c.classList.toggle("hidden", !!f.category && c.getAttribute("data-category") !== f.category);
    });
    var count = document.getElementById("shown-count");
    if (count) { count.textContent = "(" + shown + " of " + total + " shown)"; }
  }
  function open(id){
    var d = document.getElementById(id);
    if (!d) { return; }
    if (d.classList.contains("hidden")) {
      selects.forEach(function(s){ s.value = ""; });
      apply();
    }
    d.open = true;
    d.scrollIntoView({block: "start"});
  }
  selects.forEach(function(s){ s.addEventListener("change", apply); });
  var clear = document.getElementById("filter-clear");
  if (clear) {
    clear.addEventListener("click", function(){
      selects.forEach(function(s){ s.value = ""; });
      apply();
    });
  }
  document.addEventListener("click", function(ev){
    var a = ev.target.closest ? ev.target.closest("a[href^='#r']") : null;
    if (!a) { return; }
    ev.preventDefault();
    var id = a.getAttribute("href").slice(1);
    open(id);
    if (history.replaceState) { history.replaceState(null, "", "#" + id); }
  });
  apply();
  if (location.hash.length > 1) { open(location.hash.slice(1)); }
})();
"""
