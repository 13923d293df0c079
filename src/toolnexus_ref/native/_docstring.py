"""Reading a docstring the way a model should see it: a summary and per-argument text.

Three common styles are understood for the per-argument part: Google (``Args:``),
NumPy (``Parameters`` underlined by dashes) and Sphinx (``:param name: text``).
Anything else is left alone; an explicit ``Annotated``/``Param`` description always
wins over the docstring.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_GOOGLE_HEADERS = frozenset({"args", "arguments", "parameters", "params", "keyword args"})
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(:.*)?$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_UNDERLINE = re.compile(r"^-{3,}\s*$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(summary, {param: description})``; the summary is the first paragraph on one line."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip() or _starts_section(lines, index):
            break
        summary.append(line.strip())
    params = _google(lines) or _numpy(lines) or _sphinx(lines)
    return " ".join(summary), params


def _starts_section(lines: list[str], index: int) -> bool:
    line = lines[index].strip()
    if line.lower().rstrip(":") in _GOOGLE_HEADERS and line.endswith(":"):
        return True
    if line.startswith(":param"):
        return True
    return index + 1 < len(lines) and bool(_UNDERLINE.match(lines[index + 1].strip()))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    inside = False
    base = 0
    current: str | None = None
    item_indent = 0
    for line in lines:
        stripped = line.strip()
        if not inside:
            if stripped.lower().rstrip(":") in _GOOGLE_HEADERS and stripped.endswith(":"):
                inside, base, current = True, _indent(line), None
            continue
        if not stripped:
            continue
        if _indent(line) <= base:  # the next section (Returns:, Raises:, ...) or prose
            inside = False
            if stripped.lower().rstrip(":") in _GOOGLE_HEADERS and stripped.endswith(":"):
                inside, base, current = True, _indent(line), None
            continue
        match = _GOOGLE_ITEM.match(stripped)
        if match and (current is None or _indent(line) <= item_indent):
            current, item_indent = match.group(1).lstrip("*"), _indent(line)
            out[current] = match.group(3).strip()
        elif current is not None:
            out[current] = f"{out[current]} {stripped}".strip()
    return out


def _numpy(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    start = None
    for index in range(len(lines) - 1):
        if lines[index].strip().lower() in ("parameters", "other parameters") and _UNDERLINE.match(
            lines[index + 1].strip()
        ):
            start = index + 2
            break
    if start is None:
        return out
    base = _indent(lines[start - 2])
    current: str | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        stripped = line.strip()
        if index + 1 < len(lines) and _UNDERLINE.match(lines[index + 1].strip()):
            break  # the next section
        if not stripped:
            continue
        if _indent(line) <= base:
            match = _NUMPY_ITEM.match(stripped)
            if match is None:
                break
            current = match.group(1)
            out[current] = ""
        elif current is not None:
            out[current] = f"{out[current]} {stripped}".strip()
    return {k: v for k, v in out.items() if v}


def _sphinx(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        match = _SPHINX_PARAM.match(stripped)
        if match:
            current = match.group(1)
            out[current] = match.group(2).strip()
        elif stripped.startswith(":"):
            current = None
        elif current is not None and stripped:
            out[current] = f"{out[current]} {stripped}".strip()
    return out
