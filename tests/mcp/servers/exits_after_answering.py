"""A server whose ``shutdown`` tool answers, then ends the process the moment its
answer is written, as desktop-commander's ``kill_process`` does given 0
(``process.kill(0)`` signals the server's own process group): no call is in flight
when it exits, and nothing it is asked afterwards is answered."""

from __future__ import annotations

import io
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


class _Wire(io.RawIOBase):
    """The server's stdout; once armed, the process ends right after the next message."""

    armed = False

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        written = os.write(1, data)
        if self.armed and bytes(data[:written]).endswith(b"\n"):
            os._exit(4)
        return written


WIRE = _Wire()
# Not backed by fd 1 itself, so the SDK writes its messages through it.
sys.stdout = io.TextIOWrapper(io.BufferedWriter(WIRE), encoding="utf-8")

server = MCPServer("exits_after_answering")
READ_ONLY = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READ_ONLY)
def fine() -> str:
    """Answer normally."""
    return "fine"


@server.tool(annotations=READ_ONLY)
def shutdown() -> str:
    """Say the process is stopped, then stop it."""
    WIRE.armed = True
    return "Successfully terminated process 0"


if __name__ == "__main__":
    server.run()
