"""Start-up does only the work the run needs: what is warmed, and where."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _processes import alive
from _sessions import RunningSession, Session, early, start_session
from toolnexus_conformance.targets import TargetKind

from pytest_toolnexus._session import explored_here

PY, STDIO = TargetKind.PYTHON, TargetKind.STDIO
#: Every run here: conformance items only, nothing cached. Each session is a fresh
#: interpreter (``fresh=True``), never one forked from the warm starter: what a
#: start-up imports, and when, is what this module is about.
BASE = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-only"]


@pytest.mark.parametrize(
    ("kinds", "isolated", "hooked", "expected"),
    [
        ([STDIO], True, False, True),  # an MCP server's tools are called from pytest's process
        ([PY, PY], True, False, False),  # each worker process warms itself
        ([PY, STDIO], True, False, True),
        ([PY], False, False, True),  # --toolnexus-isolation none: called here
        ([PY], True, True, True),  # a conftest hook may add any target
        ([], True, False, True),  # targets given only at collection
    ],
)
def test_the_generator_is_warmed_where_tools_are_explored(
    kinds: list[TargetKind], isolated: bool, hooked: bool, expected: bool
) -> None:
    assert explored_here(kinds, isolated=isolated, hooked=hooked) is expected


COUNTED_SERVER = '''
import os, sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

with Path(sys.argv[1]).open("a") as starts:
    starts.write(f"{os.getpid()}\\n")
server = MCPServer("counted")


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


if __name__ == "__main__":
    server.run()
'''


#: Holds the kit's import of the MCP SDK until the server has started (or 20 s have
#: passed), and says which it was: a server started only once the SDK is imported
#: never makes the file while it waits.
SDK_WAITS_FOR_THE_SERVER = """
import sys, time
from pathlib import Path

STARTS = Path(__file__).parent / "starts.txt"


class _Waits:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp.client":  # inside ``import mcp``: the SDK is being imported
            sys.meta_path.remove(self)
            deadline = time.monotonic() + 20
            while not STARTS.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            seen = "started first" if STARTS.exists() else "not started"
            (Path(__file__).parent / "sdk.txt").write_text(seen)
        return None


sys.meta_path.insert(0, _Waits())
"""


def _alive_at_end(*starts: Path) -> Callable[[], dict[int, bool]]:
    """Whether each server a session noted (a pid a line, in its ``starts`` files) still
    runs, for ``at_end``: the moment the session ends. A server the run leaves behind may
    end by itself a little later (its stdin closes once pytest exits; a deaf one sleeps
    its time out), before a test reads a session started early: looked at only then, it
    would pass for one the run ended."""

    def look() -> dict[int, bool]:
        noted = [path.read_text().split() for path in starts if path.exists()]
        return {int(pid): alive(int(pid)) for pids in noted for pid in pids}

    return look


@early
def counted_run(folder: Path) -> RunningSession:
    """One run listing the tools of two counted servers, calling none: a ``stdio:``
    target noting its starts in ``stdio-starts.txt``, and an mcp.json entry noting its
    own in ``starts.txt``, for which the kit's import of the SDK waits
    (``SDK_WAITS_FOR_THE_SERVER``). Started early: it mostly waits for its servers."""
    import json
    import sys

    (folder / "counted_server.py").write_text(COUNTED_SERVER)
    (folder / "conftest.py").write_text(SDK_WAITS_FOR_THE_SERVER)
    server = {
        "command": sys.executable,
        "args": [str(folder / "counted_server.py"), str(folder / "starts.txt")],
    }
    servers = {"counted": {**server, "env": {"COUNTED_BY": "the test"}}}
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    stdio = f"stdio:{sys.executable} counted_server.py {folder / 'stdio-starts.txt'}"
    return start_session(
        folder,
        *BASE,
        "--toolnexus-target",
        stdio,
        "--toolnexus-target",
        "mcp.json",
        "--toolnexus-sandbox",
        "off",  # the servers write beside themselves
        "--toolnexus-execute",
        "none",
        timeout=120,
        at_end=_alive_at_end(folder / "stdio-starts.txt", folder / "starts.txt"),
        fresh=True,
    )


@pytest.fixture(scope="module")
def counted(counted_run: RunningSession) -> Session:
    """The counted servers' run (``counted_run``), asserted to pass."""
    pytest.importorskip("mcp.server.mcpserver")
    session = counted_run.result()
    assert session.ret == pytest.ExitCode.OK, session.text()
    return session


def test_a_stdio_server_is_started_once_and_ended(
    counted: Session,
) -> None:
    """Started while the SDK is imported, its process is the one the load talks to."""
    counted.stdout.fnmatch_lines(["stdio:*counted_server.py*: 1 tools*", "*counted_shout*"])
    [pid] = (counted.path / "stdio-starts.txt").read_text().split()
    assert not counted.at_end[int(pid)], f"the server ({pid}) outlived the run"


def test_an_mcp_json_server_starts_before_the_sdk_is_imported_and_once(
    counted: Session,
) -> None:
    """Its entry is read without the SDK, so its start-up overlaps the import; started
    with the entry's own environment, it is the process the load adopts."""
    counted.stdout.fnmatch_lines(["mcp.json: 1 tools*", "*counted_shout*"])
    assert (counted.path / "sdk.txt").read_text() == "started first"
    [pid] = (counted.path / "starts.txt").read_text().split()  # adopted: never started twice
    assert not counted.at_end[int(pid)], f"the server ({pid}) outlived the run"


def test_the_servers_started_first_are_those_the_loads_will_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Command line, folder and environment as the transport will have them; entries
    that will not start (disabled, unusable, not stdio), and files that cannot be read,
    start nothing."""
    import json

    from pytest_toolnexus._prestart import ServerStart, server_starts

    monkeypatch.setenv("THE_TOKEN", "s3cret")
    servers = {
        "up": {"command": "node", "args": ["up.js"], "cwd": "work", "env": {"T": "${THE_TOKEN}"}},
        "off": {"command": "node", "args": ["off.js"], "disabled": True},
        "unset": {"command": "node", "env": {"T": "${NOT_SET_ANYWHERE}"}},
        "remote": {"url": "http://127.0.0.1:9/mcp"},
    }
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / "broken.json").write_text("{not json")
    targets = ["mcp.json", "broken.json", "stdio:python -m srv --flag", "pkg.mod:tools", "stdio:'"]
    assert server_starts(targets, tmp_path) == [
        ServerStart(["node", "up.js"], tmp_path / "work", {"T": "s3cret"}),
        ServerStart(["python", "-m", "srv", "--flag"], tmp_path),
    ]


#: Notes, as the summary begins, whether something in this process has begun to import
#: hypothesis (given 10 s to begin: a thread begun with the test loop may not have run yet
#: on a busy machine; nothing else imports it before the summary does).
NOTES_HYPOTHESIS = """
import sys
import time

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    deadline = time.monotonic() + 10
    while "hypothesis" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.01)
    path = terminalreporter.config.rootpath / "at-summary.txt"
    path.write_text(str("hypothesis" in sys.modules))
"""

ONE_TOOL = """
from toolnexus_ref import tool


@tool
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b


tools = [add]
"""


def _start_beside_one_tool(
    folder: Path, *first: str, timeout: float = 120, **files: str
) -> RunningSession:
    """A session in ``folder`` of the one-tool target ``one`` with one live check (TN601),
    so the plugin's threads start and import; ``first`` are its other options, ``files``
    the project's other modules (name: source)."""
    for name, source in {"one": ONE_TOOL, **files}.items():
        (folder / f"{name}.py").write_text(source)
    return start_session(
        folder,
        *first,
        "--toolnexus-target",
        "one:tools",
        "--toolnexus-select",
        "TN601",
        timeout=timeout,
        fresh=True,
    )


def _passed(running: RunningSession) -> pytest.RunResult:
    """The session ``_start_beside_one_tool`` started, asserted to pass."""
    result = running.result().run_result()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return result


@early
def hypothesis_at_summary(folder: Path) -> RunningSession:
    """The one-tool session whose conftest notes, as the summary begins, whether
    hypothesis is imported. Started early: it mostly waits for the tool's process."""
    return _start_beside_one_tool(folder, *BASE, conftest=NOTES_HYPOTHESIS)


def test_what_hypothesiss_summary_imports_is_imported_while_the_tools_are_explored(
    hypothesis_at_summary: RunningSession,
) -> None:
    """hypothesis's pytest plugin imports hypothesis to print its summary, in a session
    that never used it too: that import is made during the test loop, while the tools
    are explored in their own processes, not at the end."""
    session = hypothesis_at_summary.result()
    _passed(hypothesis_at_summary)
    assert (session.path / "at-summary.txt").read_text() == "True"


#: Notes, as the module is imported, which thread holds the import turn.
NOTE_THE_TURN = """
import re
import threading
from pathlib import Path

from toolnexus_conformance._imports import IMPORTS

owner = re.search(r"owner=(\\d+)", repr(IMPORTS))  # CPython's RLock names its owner
names = {thread.ident: thread.name for thread in threading.enumerate()}
Path("turn.txt").write_text(names.get(int(owner[1]), "?") if owner else "nobody")
"""
#: A target that notes it while it is imported.
NOTES_THE_TURN = NOTE_THE_TURN + ONE_TOOL


@early
def imported_here(folder: Path) -> RunningSession:
    """A session importing the noting target in its own process
    (``--toolnexus-isolation none``). Started early: it mostly waits for its imports."""
    (folder / "noted.py").write_text(NOTES_THE_TURN)
    return start_session(
        folder,
        *BASE,
        "--toolnexus-target",
        "noted:tools",
        "--toolnexus-isolation",
        "none",
        "--toolnexus-select",
        "TN101",
        timeout=120,
        fresh=True,
    )


def test_a_target_imported_in_pytests_process_takes_the_import_turn(
    imported_here: RunningSession,
) -> None:
    """Under ``--toolnexus-isolation none`` the target is imported on a thread of the
    plugin while the warm-up imports hypothesis on another: its load holds the turn
    (``toolnexus_conformance._imports``) while the loop imports it, so the two never
    import at once."""
    session = imported_here.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert (session.path / "turn.txt").read_text().startswith("toolnexus-load")


def _start_collected_beside_one_tool(folder: Path, module: str, timeout: float) -> RunningSession:
    """A session of the project's test module ``module`` (one test) beside the one-tool
    target, so the plugin's threads import while it is collected."""
    return _start_beside_one_tool(
        folder,
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        timeout=timeout,
        test_module=module,
    )


def _collected_beside_one_tool(running: RunningSession) -> Session:
    """The session ``_start_collected_beside_one_tool`` started, asserted to pass both
    its items (the module's test and the tool's check)."""
    _passed(running).assert_outcomes(passed=2)
    return running.result()


@early
def collected_in_the_turn(folder: Path) -> RunningSession:
    """A test module noting, as it is imported, which thread holds the import turn.
    Started early: it mostly waits for the plugin's threads and the tool's process."""
    return _start_collected_beside_one_tool(
        folder, NOTE_THE_TURN + "\n\ndef test_it():\n    pass\n", timeout=120
    )


def test_a_test_module_is_collected_in_the_import_turn(
    collected_in_the_turn: RunningSession,
) -> None:
    """The project's own modules are imported on pytest's thread while the plugin's
    threads import the SDK and hypothesis: collection holds the turn, so a test module
    that imports what they import is never handed it half made."""
    session = _collected_beside_one_tool(collected_in_the_turn)
    assert (session.path / "turn.txt").read_text() == "MainThread"


#: A test module that runs the suites, live checks included, as it is imported.
RUNS_THE_SUITES = """
from one import tools
from toolnexus_conformance import assert_conforms

VERDICTS = assert_conforms(tools, select=["TN601"])


def test_it():
    assert VERDICTS
"""


@early
def suites_run_at_collection(folder: Path) -> RunningSession:
    """A test module running the suites as it is imported. A stall lasts 120 s; the
    run takes a few seconds: its timeout (60 s) fails a run that stalls. Started early:
    it mostly waits for the tools' processes."""
    return _start_collected_beside_one_tool(folder, RUNS_THE_SUITES, timeout=60)


def test_a_module_running_the_suites_as_it_is_collected_does_not_wait_for_the_turn(
    suites_run_at_collection: RunningSession,
) -> None:
    """Its searches take the import turn that collection holds: its exploration sets
    it aside while it waits for them. Kept, the module waited for the warm-up's bound
    (two minutes) before its searches could start."""
    _collected_beside_one_tool(suites_run_at_collection)


def test_the_exit_leaves_the_suites_objects_to_the_system() -> None:
    """Frozen at exit: the interpreter's last collections skip them (``_exit``)."""
    import subprocess
    import sys

    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print(gc.get_freeze_count() > 0))\n"
        "print(gc.get_freeze_count() > 0)\n"
        "from pytest_toolnexus._exit import skip_exit_collection\n"
        "skip_exit_collection()\n"
        "skip_exit_collection()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


#: Records its start, then neither reads stdin nor exits: only a signal ends it.
DEAF_SERVER = """
import os, sys, time
from pathlib import Path

with Path(sys.argv[1]).open("a") as starts:
    starts.write(f"{os.getpid()}\\n")
time.sleep(120)
"""


@early
def stopped_at_a_usage_error(folder: Path) -> RunningSession:
    """A run given a deaf server and an arguments file it cannot read. Started early:
    it waits for the server's start before it stops."""
    import sys

    (folder / "deaf_server.py").write_text(DEAF_SERVER)
    (folder / "arguments.json").write_text("{not json")
    return start_session(
        folder,
        *BASE,
        "--toolnexus-target",
        f"stdio:{sys.executable} deaf_server.py {folder / 'starts.txt'}",
        "--toolnexus-sandbox",
        "off",
        "--toolnexus-arguments",
        "arguments.json",
        timeout=120,
        at_end=_alive_at_end(folder / "starts.txt"),
        fresh=True,
    )


def test_a_run_that_stops_at_a_usage_error_leaves_no_server(
    stopped_at_a_usage_error: RunningSession,
) -> None:
    """The server starts before the session reads its files; a bad one still ends it."""
    session = stopped_at_a_usage_error.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    starts = session.path / "starts.txt"
    started = starts.read_text().split() if starts.exists() else []
    assert not [pid for pid in started if session.at_end[int(pid)]]
