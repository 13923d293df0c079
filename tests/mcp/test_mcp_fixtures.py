"""The ``mcp_client`` fixture, loaded the way a user's pytest would load it."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest_plugins = ["pytester"]


def test_mcp_client_fixture_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from toolnexus_ref import BaseTool

        class Hi(BaseTool):
            name = "hi"
            description = "Say hi."
            def run(self, args, ctx):
                return "hi"

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.anyio
        async def test_round_trip(mcp_client):
            async with mcp_client([Hi()]) as client:
                result = await client.call_tool("hi", {})
            assert result.content[0].text == "hi"
        """
    )
    result = pytester.runpytest("-p", "pytest_toolnexus._mcp_fixtures", "-q")
    result.assert_outcomes(passed=1)


def test_the_fixture_module_does_not_import_the_sdk() -> None:
    code = (
        "import sys, pytest_toolnexus._mcp_fixtures\n"
        "assert 'mcp' not in sys.modules and 'toolnexus_ref.mcp' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
