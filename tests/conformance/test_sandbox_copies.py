"""Writable copies (``--toolnexus-writable-copy``): a folder the sandboxed processes may
change, each sandbox in a copy of its own, while the folder itself stays as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from toolnexus_conformance.process._sandbox import (
    Sandbox,
    SandboxError,
    _arguments,
    copy_folder,
    overlay_refused,
    probe,
    refused_copy,
)

needs_overlay = pytest.mark.skipif(
    not probe().available or overlay_refused() is not None,
    reason=str(overlay_refused()),
)


def test_a_copy_is_of_the_folder_or_of_the_folder_holding_the_file(tmp_path: Path) -> None:
    database = tmp_path / "app.db"
    database.write_text("")
    assert copy_folder(tmp_path) == tmp_path
    assert copy_folder(database) == tmp_path
    # One the server creates at start: its folder, where SQLite also writes its journal.
    assert copy_folder(tmp_path / "new.db") == tmp_path


def test_a_copy_is_mounted_over_what_is_shown_and_under_the_scratch(tmp_path: Path) -> None:
    """After the read-only binds (a copy of a shown folder is writable), before the
    scratch and the kit's folders (which stay the real ones inside a copy)."""
    project, storage = tmp_path / "project", tmp_path / "project" / ".pytest_cache"
    storage.mkdir(parents=True)
    argv = _arguments(
        "bwrap",
        tmp_path / "scratch",
        network=False,
        readable=[project],
        writable=[storage],
        copies=[project / "data.db"],
    )
    shown = argv.index(str(project))  # bound back read-only: tmp_path is in /tmp, hidden
    assert argv[shown - 1] == "--ro-bind"
    overlay = argv.index("--tmp-overlay")
    assert argv[overlay - 2 : overlay + 2] == [
        "--overlay-src",
        str(project),
        "--tmp-overlay",
        str(project),
    ]
    assert shown < overlay < argv.index(str(storage)) - 1
    assert argv.index(str(tmp_path / "scratch")) > overlay


def test_a_folder_the_sandbox_hides_whole_or_one_missing_has_no_copy(tmp_path: Path) -> None:
    assert refused_copy(tmp_path / "data") is None  # a folder of its own inside /tmp
    assert "its copy would be of /tmp, which is /tmp" in str(refused_copy(Path("/tmp/app.db")))
    assert "which holds /tmp" in str(refused_copy(Path("/")))
    missing = tmp_path / "no-such-folder" / "app.db"
    assert "neither it nor its folder exists" in str(refused_copy(missing))


def test_without_the_sandbox_a_copy_is_refused_never_written_through(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match=r"needs the sandbox.*turned off"):
        Sandbox(mode="off", copies=(tmp_path,)).check()
    with pytest.raises(SandboxError, match="which is /tmp"):
        Sandbox(mode="auto", copies=(Path("/tmp/app.db"),)).check()


@needs_overlay
def test_a_folder_overlayfs_cannot_read_from_is_refused_before_anything_starts() -> None:
    """/proc's files are no lower layer overlayfs takes (neither are some network and
    FUSE file systems): said once, at the start, not as each server's failed start."""
    with pytest.raises(SandboxError, match=r"cannot overlay /proc/sys/kernel here \(bwrap: "):
        Sandbox(copies=(Path("/proc/sys/kernel"),)).check()


def _run(box: Sandbox, script: str) -> subprocess.CompletedProcess[str]:
    argv, env = box.wrap(["sh", "-c", script], {"PATH": "/usr/bin:/bin"}, None)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)


@needs_overlay
def test_writes_in_a_copy_are_seen_inside_and_never_reach_the_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "state.txt").write_text("orig\n")
    box = Sandbox(copies=(data / "state.txt",))
    box.check()
    script = (
        f"echo changed > {data}/state.txt && echo new > {data}/made.txt"
        f" && cat {data}/state.txt {data}/made.txt"
    )
    done = _run(box, script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "changed\nnew\n"
    assert (data / "state.txt").read_text() == "orig\n"
    assert sorted(p.name for p in data.iterdir()) == ["state.txt"]
    # Each sandbox starts from the folder as it is, not from what the last one wrote.
    again = _run(box, f"cat {data}/state.txt; ls {data}")
    assert again.stdout == "orig\nstate.txt\n"
    # Without the copy the folder is read-only there, as everything outside scratch.
    refused = _run(Sandbox(readable=(data,)), f"echo changed > {data}/state.txt")
    assert refused.returncode != 0
    assert (data / "state.txt").read_text() == "orig\n"
