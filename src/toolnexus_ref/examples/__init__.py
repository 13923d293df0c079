"""A small, well-behaved toolkit: the main job's target and the docs' running example.

``pytest --toolnexus-conformance --toolnexus-target toolnexus_ref.examples:toolkit``
runs every suite against it; every check passes, which is the point: it is what a
conforming toolkit looks like.
"""

from __future__ import annotations

from ._travel import build_toolkit, toolkit

__all__ = ["build_toolkit", "toolkit"]
