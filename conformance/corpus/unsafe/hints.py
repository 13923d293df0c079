"""Native tools that say they are unsafe in the forms authors write it, or cannot say at all.

``--toolnexus-execute auto`` must call none of them. Each leaves a marker file when
called, in the folder named by ``TOOLNEXUS_CORPUS_MARKERS`` (nothing when unset),
so a test proves that they were not called rather than trusting a skip message.
Not part of the bad/good evidence: these trip no check; they are the safety gate's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolnexus_conformance.corpus import Entry, Hold

from toolnexus_ref import ToolResult

MARKERS = "TOOLNEXUS_CORPUS_MARKERS"
_EMPTY: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


class _Marks:
    """A native tool that leaves ``<name>.called`` behind when it runs."""

    name = "marks"
    description = "Delete every record in the archive (a safety corpus tool)."
    source = "native"
    input_schema: Mapping[str, Any] = _EMPTY

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        folder = os.environ.get(MARKERS)
        if folder:
            (Path(folder) / f"{self.name}.called").write_text("called", encoding="utf-8")
        return ToolResult.ok("deleted")


class DestructiveAsDict(_Marks):
    name = "destructive_as_dict"
    annotations: Mapping[str, Any] = {"destructiveHint": True, "readOnlyHint": False}


class DestructiveAsSnakeCaseDict(_Marks):
    name = "destructive_as_snake_case_dict"
    annotations: Mapping[str, Any] = {"destructive_hint": True}


class DestructiveAsMcpAttributes(_Marks):
    """MCP-style hint attributes written on the tool itself, as some frameworks do."""

    name = "destructive_as_mcp_attributes"
    readOnlyHint = False  # noqa: N815 - the MCP spelling is the point
    destructiveHint = True  # noqa: N815


class _HintsThatRaise:
    @property
    def destructiveHint(self) -> bool:  # noqa: N802 - the MCP spelling
        raise RuntimeError("the hint service is down")


class HintPropertyRaises(_Marks):
    name = "hint_property_raises"
    annotations = _HintsThatRaise()


class AnnotationsPropertyRaises(_Marks):
    name = "annotations_property_raises"

    @property
    def annotations(self) -> Any:
        raise RuntimeError("annotations are computed remotely and the remote is gone")


#: What the hints that never return wait on; the tests release it after each run.
HOLD = Hold()


class AnnotationsNeverReturn(_Marks):
    """Hints computed by a call that never answers: unreadable, so never safe."""

    name = "annotations_never_return"

    @property
    def annotations(self) -> Any:
        HOLD.wait()
        return {"readOnlyHint": True}


class OpenWorld(_Marks):
    name = "open_world"
    description = "Post a message to the team's chat (a safety corpus tool)."
    annotations: Mapping[str, Any] = {"readOnlyHint": False, "openWorldHint": True}


CORPUS = [
    Entry(DestructiveAsDict(), note="destructive, as a dict in the MCP spelling"),
    Entry(DestructiveAsSnakeCaseDict(), note="destructive, as a dict in snake case"),
    Entry(DestructiveAsMcpAttributes(), note="destructive, through MCP-style attributes"),
    Entry(HintPropertyRaises(), note="a hint property that raises"),
    Entry(AnnotationsPropertyRaises(), note="an annotations property that raises"),
    Entry(OpenWorld(), note="open-world (openWorldHint: true)"),
    Entry(
        AnnotationsNeverReturn(),
        note="an annotations property that never returns",
        release=HOLD.release,
    ),
]
