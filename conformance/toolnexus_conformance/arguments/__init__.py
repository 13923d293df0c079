"""Arguments from any schema: hypothesis strategies for valid and invalid tool arguments.

Use them in your own ``@given`` tests::

    @given(args_for(tool.input_schema))
    def test_never_raises(args): ...
"""

from __future__ import annotations

from ._api import (
    DEFAULT_MAX_DEPTH,
    args_for,
    edge_args_for,
    invalid_args_for,
    lax_args_for,
    valid_args_checker,
    values_for,
)
from ._types import InvalidArgs, UnsupportedSchema

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "InvalidArgs",
    "UnsupportedSchema",
    "args_for",
    "edge_args_for",
    "invalid_args_for",
    "lax_args_for",
    "valid_args_checker",
    "values_for",
]
