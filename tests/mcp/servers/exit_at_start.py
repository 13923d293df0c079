"""A server that dies at every start, before it answers the handshake."""

from __future__ import annotations

import sys

sys.stderr.write("exit_at_start: cannot open the database (simulated)\n")
sys.stderr.flush()
sys.exit(1)
