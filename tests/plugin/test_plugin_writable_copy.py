"""``--toolnexus-writable-copy``: a Python target's tools write a folder of the project,
in a copy that ends with their sandbox; the folder itself is never changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toolnexus_conformance.process._sandbox import overlay_refused, probe

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, TARGET, WRITABLE_COPY

NOTES = """
from toolnexus_ref import BaseTool


class AppendNote(BaseTool):
    name = "append_note"
    description = "Appends a note to the notes file and says how many lines it holds."
    input_schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 20}},
        "required": ["text"],
        "additionalProperties": False,
    }

    def run(self, args, ctx):
        with open(NOTES, "a") as notes:
            notes.write(args["text"].replace("\\n", " ") + "\\n")
        with open(NOTES) as notes:
            return {"lines": sum(1 for _ in notes)}


tools = [AppendNote()]
"""

RUN = (CONFORMANCE, ONLY, TARGET, "notes:tools", "--toolnexus-select", "TN601,TN607")


def _project(pytester: pytest.Pytester) -> Path:
    data = pytester.mkdir("data")
    (data / "notes.txt").write_text("kept\n")
    pytester.makepyfile(notes=f"NOTES = {str(data / 'notes.txt')!r}\n" + NOTES)
    pytester.syspathinsert()
    return data


@pytest.mark.skipif(
    not probe().available or overlay_refused() is not None, reason=str(overlay_refused())
)
def test_a_tool_writes_its_copy_and_the_folder_stays_as_it_was(pytester: pytest.Pytester) -> None:
    data = _project(pytester)
    copied = pytester.runpytest_subprocess(
        *RUN, WRITABLE_COPY, "data", REPORT, "report.json", "-p", "no:cacheprovider", "-W", "error"
    )
    copied.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["sandbox"]["writable_copies"] == [str(data)]
    assert (data / "notes.txt").read_text() == "kept\n"
    assert [p.name for p in data.iterdir()] == ["notes.txt"]
    # Without the copy the folder is read-only: the tool's write is refused and named.
    refused = pytester.runpytest_subprocess(*RUN, "-p", "no:cacheprovider", "-rA")
    refused.stdout.fnmatch_lines(["*TN607*write *data/notes.txt*"])
    assert (data / "notes.txt").read_text() == "kept\n"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (("--toolnexus-sandbox", "off", WRITABLE_COPY, "data"), "needs the sandbox"),
        ((WRITABLE_COPY, "missing/notes.txt"), "neither it nor its folder exists"),
    ],
)
def test_a_copy_that_cannot_be_had_is_a_usage_error(
    pytester: pytest.Pytester, given: tuple[str, ...], said: str
) -> None:
    _project(pytester)
    result = pytester.runpytest_subprocess(*RUN, *given, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {WRITABLE_COPY} *{said}*"])


@pytest.mark.skipif(
    not probe().available or overlay_refused() is not None, reason=str(overlay_refused())
)
def test_the_ini_keys_paths_are_from_rootdir_the_command_lines_from_where_pytest_runs(
    pytester: pytest.Pytester,
) -> None:
    data = _project(pytester)
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntoolnexus_writable_copy = ["data"]\n')
    (pytester.path / "sub" / "more").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(pytester.path / "sub")
        result = pytester.runpytest_subprocess(
            *RUN, WRITABLE_COPY, "more", REPORT, "report.json", "-p", "no:cacheprovider"
        )
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "sub" / "report.json").read_text())
    assert report["sandbox"]["writable_copies"] == [str(pytester.path / "sub" / "more"), str(data)]
