"""A server that starts a long-lived grandchild and writes its pid to ``argv[1]``.

It exits politely when stdin closes, leaving the grandchild behind: only a
client that ends the whole process group cleans up after it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
server = MCPServer("spawner")


@server.tool()
def pid() -> int:
    """The grandchild's pid."""
    return child.pid


if __name__ == "__main__":
    server.run()
