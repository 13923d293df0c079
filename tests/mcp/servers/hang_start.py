"""A server that starts, writes to stderr, and never answers anything."""

from __future__ import annotations

import sys
import time

sys.stderr.write("hang_start: loading a very large model...\n")
sys.stderr.flush()
time.sleep(600)
