"""Our live suites beside the MCP testers users already have, on the same real servers.

Run:  .venv/bin/python benchmarks/bench_mcp_peers.py [--repeat 3]
                                                      [--servers time,thinking,everything,filesystem,git,memory]
                                                      [--before PATH] [--fresh]
      .venv/bin/python benchmarks/bench_mcp_peers.py --seeded [--repeat 1]

The first run installs what it compares against, each in its own environment under
``benchmarks/.peers/`` (from PyPI and npm; nothing is committed):

- ``amagi-mcp-probe`` (``amagi-mcp-probe -- CMD``: one call per tool),
- ``mcp-toolproof`` with ``hypothesis==6.150.0``, the version its fuzzer needs
  (``toolproof fuzz --seed 1 -- CMD``),
- ``sdk-client``: the official mcp SDK client doing initialize, tools/list and one
  call per tool, the floor any checker pays,
- the servers: ``mcp-server-time`` (PyPI, two tools),
  ``@modelcontextprotocol/server-sequential-thinking`` (npm, one tool: ``thinking``) and
  ``@modelcontextprotocol/server-everything`` (npm, stdio); with ``--servers`` naming
  them, ``@modelcontextprotocol/server-filesystem`` (npm, 14 tools) over a folder of
  two files, ``mcp-server-git`` (PyPI, 12 tools) over a repository of one commit, and
  ``@modelcontextprotocol/server-memory`` (npm, 9 tools: a knowledge graph its tools
  write to a file, ``MEMORY_FILE_PATH``, here in that folder).

A server over a folder is given a fresh copy of it before every command, and after
each one the run says whether the command left it changed (files written, moved or
deleted): what a checker's calls did to the files a user pointed the server at.

- this project, ``pip install .[mcp]`` in an environment of its own, as a user
  installs it: from a built wheel, not editable (the development environment also
  loads the pytest plugins of every test dependency, langsmith's among them, which
  cost a second at start-up; and an editable install's modules are "local" to
  hypothesis, which then draws the kit's own strings as arguments, and are not
  marked for pytest's assertion rewriting). The checkout is built and installed
  again at every start, so the run measures it as it is.

Each command is a whole process started from nothing (imports, server start-up and
shutdown included), run in turn (ours, amagi, toolproof, ours, ...), ``--repeat``
times. It prints each figure's median wall seconds, our exit status and error count,
and the ratio of ours to each peer. Our run is the plugin as a user runs it:
``pytest --toolnexus-conformance --toolnexus-only --toolnexus-target "stdio:CMD"``.
No test asserts on these numbers.

Ours runs twice in each round: as a user runs it, and as ``ours-quick``, with
``--toolnexus-depth 0`` (the floor and the edge values, no depth): what a quick run
on a pull request costs, and, with ``--seeded``, what it still finds.

``--before PATH`` adds another command to each round: ours from another checkout
(``git worktree add PATH <commit>``), installed the same way in ``.peers/ours-before``
(delete it to install another checkout there), so one run compares the suites
before and after a change.

``--fresh`` runs ours (each of them) as a fresh machine's first pytest process, as in a
CI job: pytest's rewritten bytecode (``*-pytest-*.pyc``, which pytest writes beside the
modules of every installed plugin's distribution on a first run) is deleted from the
environment before each of ours, and each gets an empty user cache (``XDG_CACHE_HOME``,
where the kit keeps hypothesis's tables); pip's own compiled bytecode stays. The peers
run as they always do, so under ``--fresh`` compare ours with ours-before.
Each command's CPU seconds (user + system of it and the processes it waited for) are
printed beside its wall seconds, for a machine shared with other work, and, from the
last round, its calls and every finding it reports (ours: failed records; amagi:
its findings; toolproof: its fuzz findings), one line each.

``--seeded`` runs ours and ``toolproof fuzz --seed 1`` on the seeded-bug server
(``conformance/corpus/servers/seeded_bugs.py``, one input-dependent crash per
``seed_*`` tool, clean ``clean_*`` twins) and prints, for each, the tools it flags,
its calls and its wall seconds, and the ratios. Our flags are the tools with a failed
TN651 record; toolproof's are the tool names on its finding lines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "benchmarks" / ".peers"


def _bin(env: str, name: str) -> Path:
    return PEERS / env / ("Scripts" if os.name == "nt" else "bin") / name


def _venv(name: str, *packages: str) -> None:
    marker = PEERS / name / ".installed"
    if marker.exists():
        return
    print(f"installing {' '.join(packages)} into {PEERS / name}", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(PEERS / name)
    pip = [str(_bin(name, "python")), "-m", "pip", "install", "--quiet", *packages]
    subprocess.run(pip, check=True)
    marker.write_text("ok")


def _ours_env(name: str, checkout: Path) -> None:
    """This project from ``checkout``, installed from a built wheel as a user installs
    it; built and installed again on every start, so it is the checkout as it is now."""
    _venv(name, f"{checkout}[mcp]")
    pip = [str(_bin(name, "python")), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--no-deps", "--force-reinstall", str(checkout)], check=True)


def forget_rewrites(env: str) -> int:
    """Delete pytest's rewritten bytecode from an environment: a fresh machine's state."""
    found = list((PEERS / env).glob("lib/python3*/site-packages/**/*-pytest-*.pyc"))
    for pyc in found:
        pyc.unlink()
    return len(found)


def _npm(package: str) -> Path:
    folder = PEERS / "npm"
    entry = folder / "node_modules" / package
    if not entry.exists():
        if shutil.which("npm") is None:
            raise SystemExit(f"npm is needed for {package}")
        folder.mkdir(parents=True, exist_ok=True)
        print(f"installing {package} with npm into {folder}", flush=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(folder), package], check=True)
    return entry


#: Where a server's folder goes in a command line: each comparison's own scratch folder.
FOLDER = "{folder}"


def servers(names: list[str]) -> dict[str, str]:
    """Each named server's command line; ``FOLDER`` stands for the folder it serves."""
    found: dict[str, str] = {}
    if "time" in names:
        _venv("servers", "mcp-server-time")
        found["mcp-server-time"] = f"{_bin('servers', 'python')} -m mcp_server_time"
    if "everything" in names:
        entry = _npm("@modelcontextprotocol/server-everything")
        found["server-everything"] = f"node {entry / 'dist' / 'index.js'} stdio"
    if "thinking" in names:  # a one-tool server on Node.js
        entry = _npm("@modelcontextprotocol/server-sequential-thinking")
        found["server-sequential-thinking"] = f"node {entry / 'dist' / 'index.js'}"
    if "filesystem" in names:
        entry = _npm("@modelcontextprotocol/server-filesystem")
        found["server-filesystem"] = f"node {entry / 'dist' / 'index.js'} {FOLDER}/data"
    if "git" in names:
        _venv("git-server", "mcp-server-git")
        found["mcp-server-git"] = f"{_bin('git-server', 'python')} -m mcp_server_git" + (
            f" --repository {FOLDER}/repo"
        )
    if "memory" in names:  # tools that write: the graph goes to a file in the folder
        entry = _npm("@modelcontextprotocol/server-memory")
        found["server-memory"] = (
            f"env MEMORY_FILE_PATH={FOLDER}/data/memory.jsonl node {entry / 'dist' / 'index.js'}"
        )
    return found


def seed_folder(folder: Path) -> None:
    """The files a folder-serving server is pointed at, made afresh: two files, and a
    git repository of one commit."""
    for name in ("data", "repo"):
        shutil.rmtree(folder / name, ignore_errors=True)
    (folder / "data" / "notes").mkdir(parents=True)
    (folder / "data" / "hello.txt").write_text("hello\n")
    (folder / "data" / "notes" / "todo.md").write_text("- nothing\n")
    repo = folder / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("hello\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    for step in (
        ["init", "-q", "-b", "main"],
        ["add", "README.md"],
        ["commit", "-q", "-m", "first"],
    ):
        subprocess.run([*git, *step], check=True)


def folder_state(folder: Path) -> dict[str, bytes]:
    """Every file under the served folders, by path: what a command may have changed
    (a repository's index and refs included, its object store left out)."""
    state: dict[str, bytes] = {}
    for name in ("data", "repo"):
        for path in sorted((folder / name).rglob("*")):
            if path.is_file() and "objects" not in path.relative_to(folder).parts:
                state[str(path.relative_to(folder))] = path.read_bytes()
    return state


def changes(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """The paths written, made or deleted between two states."""
    return sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )


def _cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


#: Every command's environment: this one's, as a user's shell has it by default, so
#: without ``PYTHONDONTWRITEBYTECODE`` (set in many CI images): with it, every Python
#: process here (ours, the Python peers, the servers) compiles each module it imports
#: on every start, and pytest rewrites its plugins' modules too.
_USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

#: CPU seconds of the last ``_timed`` command (it and the processes it waited for).
LAST_CPU = [0.0]


def _timed(
    command: list[str], cwd: Path, env: dict[str, str] | None = None
) -> tuple[float, int, str]:
    cpu = _cpu()
    started = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        env={**_USER_ENV, **(env or {})},
    )
    LAST_CPU[0] = _cpu() - cpu
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


def ours(server: str, cwd: Path, report: str = "report.json") -> list[str]:
    return [
        str(_bin("ours", "python")),
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{server}",
        "--toolnexus-report",
        str(cwd / report),
    ]


def ours_quick(server: str, cwd: Path, report: str = "report-quick.json") -> list[str]:
    """Ours with ``--toolnexus-depth 0``: the floor and the edge values, no depth (the
    quick run the docs offer for a pull request)."""
    return [*ours(server, cwd, report), "--toolnexus-depth", "0"]


def ours_before(server: str, cwd: Path) -> list[str]:
    """Ours from the other checkout, installed the same way in an environment of its own."""
    command = ours(server, cwd, "report-before.json")
    command[0] = str(_bin("ours-before", "python"))
    return command


#: A finding, as printed: (code, tool, one line).
Found = tuple[str, str, str]


def _line(text: object) -> str:
    """A finding on one line; a long one keeps its end, where a message gives its reason
    (TN604's "(invalid: ...)" follows the arguments it sent)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= 240 else f"{flat[:130]} … {flat[-100:]}"


def ours_findings(report: Path) -> tuple[list[Found], int | None]:
    """Our failed records, and the calls made (per tool, summed; ``None`` before the
    report counted them)."""
    records = json.loads(report.read_text())["results"]
    found = [
        (r["check"], r["tool"], f"{r['severity']}: {_line(r['message'])}")
        for r in records
        if r["outcome"] == "failed"
    ]
    calls: dict[str, int] = {}
    for r in records:
        if isinstance(r.get("calls"), int):
            calls[r["tool"]] = max(calls.get(r["tool"], 0), r["calls"])
    return found, sum(calls.values()) if calls else None


def amagi_findings(output: str) -> tuple[list[Found], int | None]:
    """amagi's findings (``--format json``); it calls each tool it does not skip once."""
    data = json.loads(output[output.index("{") :])
    found: list[Found] = []
    calls = 0
    for server in data["servers"]:
        for f in server.get("findings", []):
            found.append((f["check"], "*", f"{f['severity']}: {_line(f['message'])}"))
        for tool in server.get("tools", []):
            calls += tool.get("skip_reason") is None
            for f in tool.get("findings", []):
                found.append((f["check"], tool["name"], f"{f['severity']}: {_line(f['message'])}"))
    return found, calls


def toolproof_findings(report: Path) -> tuple[list[Found], int | None]:
    """toolproof's fuzz findings and calls (``--json``)."""
    data = json.loads(report.read_text())
    found: list[Found] = []
    calls = 0
    for tool in (data.get("fuzz") or {}).get("tools", []):
        calls += tool.get("calls") or 0
        for f in tool.get("findings", []):
            kind = f.get("kind") or f.get("type") or f.get("check") or "finding"
            found.append((str(kind), tool["tool"], _line(json.dumps(f, ensure_ascii=False))))
    for c in data.get("checks", []):
        if not c.get("passed", True):
            found.append((str(c.get("name", "check")), "*", _line(c.get("message", ""))))
    return found, calls


SEEDED = ROOT / "conformance" / "corpus" / "servers" / "seeded_bugs.py"


def _seeded_tools() -> list[str]:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "seeded", ROOT / "conformance/corpus/seeded/bugs.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules["seeded"] = module
    spec.loader.exec_module(module)
    return [seed.name for seed in (*module.BUGGY, *module.CLEAN)]


def _ours_flagged(report: Path) -> tuple[set[str], int | None]:
    records = json.loads(report.read_text())["results"]
    flagged = {
        r["tool"].removeprefix("seeded_")
        for r in records
        if r["check"] == "TN651" and r["outcome"] == "failed"
    }
    calls = {r["tool"]: r["calls"] for r in records if r.get("calls") is not None}
    return flagged, sum(calls.values()) if calls else None


def _toolproof_flagged(output: str, tools: list[str]) -> tuple[set[str], int | None]:
    """Tools on FAIL rows of toolproof's table, and the sum of its Calls column (a cut-off
    name, ``seed_over_3_…``, is matched by its prefix)."""
    import re

    flagged: set[str] = set()
    calls = 0
    for line in output.splitlines():
        row = re.match(r"^│\s*(\w+)\s*│\s*(\S+)\s*│\s*(\d+)\s*│", line)
        if row is None:
            continue
        status, shown, count = row.groups()
        calls += int(count)
        prefix = shown.rstrip("…")
        named = [t for t in tools if t == prefix or (shown.endswith("…") and t.startswith(prefix))]
        if status == "FAIL" and len(named) == 1:
            flagged.add(named[0])
    return flagged, calls or None


def seeded(repeat: int) -> None:
    python = str(_bin("ours", "python"))
    server = f"{python} {SEEDED}"
    tools = _seeded_tools()
    bugs = {t for t in tools if t.startswith("seed_")}
    rows: dict[str, list[tuple[float, set[str], int | None]]] = {
        "ours": [],
        "ours-quick": [],
        "mcp-toolproof": [],
    }
    with tempfile.TemporaryDirectory() as scratch:
        cwd = Path(scratch)
        for _ in range(repeat):
            wall, _code, _out = _timed(ours(server, cwd), cwd)
            rows["ours"].append((wall, *_ours_flagged(cwd / "report.json")))
            wall, _code, _out = _timed(ours_quick(server, cwd), cwd)
            rows["ours-quick"].append((wall, *_ours_flagged(cwd / "report-quick.json")))
            command = [
                str(_bin("toolproof", "toolproof")),
                "fuzz",
                "--seed",
                "1",
                "--",
                *server.split(),
            ]
            wall, _code, output = _timed(command, cwd, {"COLUMNS": "250"})
            (cwd / "toolproof.txt").write_text(output)
            rows["mcp-toolproof"].append((wall, *_toolproof_flagged(output, tools)))
        print(
            f"\nseeded-bug server ({len(bugs)} bugs, {len(tools) - len(bugs)} clean tools), {repeat} run(s):"
        )
        for name, runs in rows.items():
            wall = statistics.median(r[0] for r in runs)
            found = runs[-1][1]
            calls = runs[-1][2]
            print(
                f"  {name:14} bugs found {len(found & bugs):2}/{len(bugs)}  clean flagged"
                f" {len(found - bugs)}  calls {calls}  wall {wall:.1f} s"
            )
            print(f"    missed: {sorted(bugs - found)}")
        ours_run, peer_run = rows["ours"][-1], rows["mcp-toolproof"][-1]
        print(f"  toolproof's bugs we miss: {sorted((peer_run[1] - ours_run[1]) & bugs)}")
        walls = [statistics.median(r[0] for r in rows[n]) for n in ("ours", "mcp-toolproof")]
        print(f"  ours / toolproof: wall {walls[0] / walls[1]:.2f}", end="")
        if ours_run[2] and peer_run[2]:
            print(f", calls {ours_run[2] / peer_run[2]:.2f}")
        else:
            print()
        print(f"  (toolproof's output: {cwd / 'toolproof.txt'} while the run lasts)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--servers", default="time,thinking,everything")
    parser.add_argument("--seeded", action="store_true", help="the seeded-bug server only")
    parser.add_argument(
        "--before", type=Path, help="another checkout of this project, run as ours-before"
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="ours without pytest's rewritten bytecode and with an empty user cache, each run",
    )
    args = parser.parse_args()
    _ours_env("ours", ROOT)
    if args.seeded:
        _venv("toolproof", "mcp-toolproof", "hypothesis==6.150.0")
        seeded(args.repeat)
        return
    _venv("amagi", "amagi-mcp-probe")
    _venv("toolproof", "mcp-toolproof", "hypothesis==6.150.0")
    if args.before is not None:
        _ours_env("ours-before", args.before.resolve())
    for label, server in servers(args.servers.split(",")).items():
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "served" if FOLDER in server else None
            if folder is not None:
                server = server.replace(FOLDER, str(folder))
            compare(label, server, Path(scratch), args.repeat, args.before, args.fresh, folder)


#: The floor: the official mcp SDK client doing what any checker must (initialize,
#: tools/list, one call per tool with empty arguments), nothing more.
SDK_CLIENT = """
import asyncio, sys
from mcp import Client, StdioServerParameters

async def main(command):
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            try:
                await client.call_tool(tool.name, {})
            except Exception:
                pass
    print(len(tools), "tools")

asyncio.run(main(sys.argv[1:]))
"""


#: How each command is started, and how its findings are read: name -> (argv, env, read).
Runner = tuple[list[str], dict[str, str] | None, Callable[[str], tuple[list[Found], int | None]]]


def _runners(server: str, cwd: Path, before: Path | None) -> dict[str, Runner]:
    runners: dict[str, Runner] = {
        "ours": (ours(server, cwd), None, lambda _out: ours_findings(cwd / "report.json")),
        "ours-quick": (
            ours_quick(server, cwd),
            None,
            lambda _out: ours_findings(cwd / "report-quick.json"),
        ),
    }
    if before is not None:
        runners["ours-before"] = (
            ours_before(server, cwd),
            None,
            lambda _out: ours_findings(cwd / "report-before.json"),
        )
    runners["amagi-mcp-probe"] = (
        [str(_bin("amagi", "amagi-mcp-probe")), "--format", "json", "--", *server.split()],
        None,
        amagi_findings,
    )
    runners["mcp-toolproof"] = (
        [
            str(_bin("toolproof", "toolproof")),
            "fuzz",
            "--seed",
            "1",
            "--json",
            str(cwd / "toolproof.json"),
            "--",
            *server.split(),
        ],
        None,
        lambda _out: toolproof_findings(cwd / "toolproof.json"),
    )
    # The floor: what any checker must do, with the official SDK client (finds nothing).
    (cwd / "sdk_client.py").write_text(SDK_CLIENT)
    runners["sdk-client"] = (
        [str(_bin("ours", "python")), str(cwd / "sdk_client.py"), *server.split()],
        None,
        lambda _out: ([], None),
    )
    return runners


def compare(
    label: str,
    server: str,
    cwd: Path,
    repeat: int,
    before: Path | None,
    fresh: bool = False,
    folder: Path | None = None,
) -> None:
    """Every command on one server, interleaved; ``folder``, when the server serves
    one, is seeded afresh before each command and read after it."""
    runners = _runners(server, cwd, before)
    changed: dict[str, list[str]] = {name: [] for name in runners}
    walls: dict[str, list[float]] = {name: [] for name in runners}
    cpus: dict[str, list[float]] = {name: [] for name in runners}
    last: dict[str, tuple[list[Found], int | None]] = {}
    counts: dict[str, list[int]] = {name: [] for name in runners}
    codes: list[int] = []
    for _ in range(repeat):
        for name, (command, env, read) in runners.items():  # interleaved: A B C A B C ...
            cache = None
            if fresh and name.startswith("ours"):
                forget_rewrites("ours-before" if name == "ours-before" else "ours")
                cache = Path(tempfile.mkdtemp(prefix="user-cache-", dir=cwd))
                env = {**(env or {}), "XDG_CACHE_HOME": str(cache)}
            if folder is not None:
                seed_folder(folder)
                seeded_state = folder_state(folder)
            wall, code, output = _timed(command, cwd, env)
            if folder is not None:
                changed[name] = changes(seeded_state, folder_state(folder))
            if cache is not None:
                shutil.rmtree(cache, ignore_errors=True)
            walls[name].append(wall)
            cpus[name].append(LAST_CPU[0])
            last[name] = read(output)
            counts[name].append(len(last[name][0]))
            if name == "ours":
                codes.append(code)
    median = {name: statistics.median(values) for name, values in walls.items()}
    start = "a fresh machine's first pytest process" if fresh else "set-up included"
    print(f"\n{label} (stdio), {repeat} interleaved runs, median seconds ({start}):")
    for name, value in median.items():
        spread = f"{min(walls[name]):.1f}-{max(walls[name]):.1f}"
        found, calls = last[name]
        print(
            f"  {name:16} wall {value:6.1f} s (min-max {spread})  cpu"
            f" {statistics.median(cpus[name]):6.1f} s  calls {calls}  findings per run"
            f" {counts[name]}"
        )
    print(f"  ours: exit status {codes}")
    for name in runners:
        if name != "ours":
            print(f"  ours / {name}: wall {median['ours'] / median[name]:.2f}")
    for name in ("amagi-mcp-probe", "sdk-client"):
        print(f"  ours-quick / {name}: wall {median['ours-quick'] / median[name]:.2f}")
    if folder is not None:
        for name, paths in changed.items():
            what = ", ".join(paths) if paths else "nothing"
            print(f"  {name} changed in the served folder (last run): {what}")
    for name, (found, _calls) in last.items():
        print(f"  {name} findings (last run):")
        for check, tool, line in found:
            print(f"    {check} {tool}: {line}")


if __name__ == "__main__":
    main()
