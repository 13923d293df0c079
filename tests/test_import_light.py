"""The pytest11 module stays import-light: installing the plugin costs no heavy imports.

Proved the way pytest loads it: through the ``pytest11`` entry point, in a fresh
interpreter, and in real pytest runs compared with runs that block the plugin.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from _sessions import (
    UNUSED_PLUGINS,
    RunningSession,
    Session,
    SessionsByKey,
    early,
    start_session,
)

#: Libraries the plugin may import only once a user asks for the suites or a fixture.
HEAVY_MODULES = (
    "hypothesis",
    "jsonschema",
    "httpx",
    "respx",
    "syrupy",
    "mcp",
    "a2a",
    "anyio",
    "yaml",
    "openai",
    "anthropic",
)
ENTRY_POINT_GROUP = "pytest11"
ENTRY_POINT_NAME = "toolnexus"
MARKER = "TOOLNEXUS_HEAVY="

_LOAD_ENTRY_POINT = textwrap.dedent(
    """
    import json, sys
    from importlib.metadata import entry_points
    {extra}
    (ep,) = [e for e in entry_points(group={group!r}) if e.name == {name!r}]
    plugin = ep.load()
    heavy = {heavy!r}
    print(json.dumps({{
        "plugin": plugin.__name__,
        "loaded": sorted(m for m in heavy if m in sys.modules),
    }}))
    """
)


def load_entry_point(extra: str = "") -> dict[str, object]:
    code = _LOAD_ENTRY_POINT.format(
        group=ENTRY_POINT_GROUP, name=ENTRY_POINT_NAME, heavy=HEAVY_MODULES, extra=extra
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_entry_point_module_imports_no_heavy_library() -> None:
    outcome = load_entry_point()
    assert outcome["plugin"] == "pytest_toolnexus.plugin"
    assert outcome["loaded"] == []


def test_the_probe_does_see_a_heavy_import() -> None:
    """Guards the test above against passing because the probe is blind."""
    assert load_entry_point(extra="import jsonschema")["loaded"] == ["jsonschema"]


_PROBE_TEST = f"""
import json, sys

HEAVY = {HEAVY_MODULES!r}

def test_probe(pytestconfig):
    loaded = sorted(m for m in HEAVY if m in sys.modules)
    plugin = pytestconfig.pluginmanager.has_plugin({ENTRY_POINT_NAME!r})
    print({MARKER!r} + json.dumps({{"plugin": plugin, "loaded": loaded}}))
"""


#: Plugins are loaded only when asked for with ``-p``.
NO_AUTOLOAD = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
#: Each probe session's arguments and environment, by what it loads.
PROBES: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "alone": ((), NO_AUTOLOAD),
    "ours": (("-p", ENTRY_POINT_NAME), NO_AUTOLOAD),
    "blocked": (("-p", f"no:{ENTRY_POINT_NAME}"), {}),
    "installed": ((), {}),
}


def _probe(folder: Path, name: str) -> RunningSession:
    """pytest on a probe test in ``folder``, as the probe ``name`` runs it."""
    args, env = PROBES[name]
    (folder / "test_probe.py").write_text(_PROBE_TEST)
    # Without the sessions' ini key for the depth: two probes run without our plugin,
    # and pytest would warn of a key no plugin declared.
    env = {"PYTEST_ADDOPTS": UNUSED_PLUGINS, **env}
    # A fresh interpreter: a session forked from the warm starter has imported them all.
    return start_session(folder, "-s", "-q", "-p", "no:cacheprovider", *args, env=env, fresh=True)


@early
def probes(folder: Path) -> SessionsByKey[str]:
    """The probe sessions, by what they load: started early, as each is a fixed pytest
    start that mostly imports. Each is its own process, so what it imported is its
    own, whatever else runs beside it."""
    return SessionsByKey(folder, _probe, ahead=PROBES)


def probe(session: Session) -> tuple[bool, set[str]]:
    """What a probe session saw: (is our plugin registered, heavy modules loaded)."""
    result = session.run_result()
    result.assert_outcomes(passed=1)
    (line,) = [line for line in result.outlines if line.startswith(MARKER)]
    found = json.loads(line[len(MARKER) :])
    return bool(found["plugin"]), set(found["loaded"])


def test_pytest_with_only_our_plugin_imports_nothing_heavy(
    probes: SessionsByKey[str],
) -> None:
    alone_registered, alone = probe(probes.start("alone").result())
    ours_registered, ours = probe(probes.start("ours").result())
    assert alone_registered is False
    assert ours_registered is True
    added = ours - alone
    assert added == set(), f"the toolnexus plugin imported {sorted(added)} at start-up"


def test_our_plugin_adds_nothing_heavy_beside_the_other_installed_plugins(
    probes: SessionsByKey[str],
) -> None:
    blocked_registered, blocked = probe(probes.start("blocked").result())
    registered, loaded = probe(probes.start("installed").result())
    assert blocked_registered is False
    assert registered is True
    added = loaded - blocked
    assert added == set(), f"the toolnexus plugin imported {sorted(added)} at start-up"
