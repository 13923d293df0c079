"""Conformance suites for the Tool contract: checks, argument generation and the runner.

Knows nothing of pytest: checks return plain verdicts that the pytest plugin turns
into items, and that ``check_tools`` / ``assert_conforms`` give to any script.
"""

from __future__ import annotations

__all__: list[str] = []
