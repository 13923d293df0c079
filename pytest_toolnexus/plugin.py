"""The pytest11 entry point. Imports only the standard library and pytest."""

from __future__ import annotations
