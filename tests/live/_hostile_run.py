"""Run every live check on the hostile corpus and print one JSON verdict per line.

Run as a subprocess by the tests: that the process prints its verdicts and exits
on its own (no non-daemon thread left behind) is part of what is tested.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _corpus import LIVE, live_entries
from toolnexus_conformance._options import ExecuteMode, RunOptions, ToolSettings
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._loop import BackgroundLoop


def main() -> None:
    names = set(sys.argv[1:])
    options = RunOptions(
        execute=ExecuteMode.ALL,
        examples=3,
        grace=0.3,
        call_timeout=0.3,  # the hanging tools' cost: each hang takes this long
        # Making and raising 20 MB is quick alone, but took over 0.3 s on a busy machine
        # (TN803 then ended its search before the TN602 it is there to show).
        tools={"twenty_megabytes": ToolSettings(call_timeout=10.0)},
    )
    loop = BackgroundLoop()
    for entry in live_entries("bad"):
        if not entry.hostile or (names and entry.tool.name not in names):
            continue
        subjects = read_subjects([entry.tool], "hostile")
        for verdict in check_subjects(subjects, "hostile", select=LIVE, options=options, loop=loop):
            record = verdict.as_record()
            record["duration"] = verdict.duration
            print(json.dumps(record), flush=True)
    loop.close(timeout=0.5)


if __name__ == "__main__":
    main()
