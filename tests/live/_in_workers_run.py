"""Judge the corpus tools that end, freeze or leave their process; print one JSON verdict per line.

Each corpus module's such tools are one target (``_process_targets``), judged in one
worker; every tool still runs in a process of its own, and one that kills its worker
is replayed alone, so each verdict is the tool's own. Run as a subprocess by
``test_corpus_live`` as its module begins: it mostly waits out frozen tools, and in a
process of its own its explorations' working directory (each is the process's own,
for the time it runs) is not the one the module's other explorations change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _corpus import live_entries
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance.process._target import check_target

HERE = Path(__file__).parent

#: Each tool here is found at its first calls, which return at once or never; a frozen
#: process or clock is found the call timeout (stretched by the load) and a fixed slack
#: after the call began.
OPTIONS = RunOptions(execute=ExecuteMode.ALL, examples=10, grace=0.5, call_timeout=0.5)


def main() -> None:
    modules: dict[str, set[str]] = {}
    for entry in live_entries("bad"):
        if entry.spec is not None and not entry.hostile:
            modules.setdefault(entry.spec.split(":")[0], set()).update(entry.trips)
    for module, trips in modules.items():
        verdicts = check_target(
            f"_process_targets:{module}_tools", base_dir=HERE, select=sorted(trips), options=OPTIONS
        )
        for verdict in verdicts:
            record = {
                "tool": verdict.tool,
                "check": verdict.check.code,
                "outcome": verdict.outcome.value,
                "message": verdict.message,
            }
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
