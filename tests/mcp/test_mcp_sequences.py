"""The calls a server was sent, replayed in order when no call alone ends a fresh one:
an exit that needs earlier calls (what they left in the server) is named with the
fewest of them found, and never blamed on a tool when the replays do not show it is
that tool's call (a server that exits at random, or after so many calls of any kind).

Scripted fresh servers, no processes: the search's logic alone. The same search on a
real server: ``test_mcp_self_ending.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from _scripted import ScriptedServer
from toolnexus_conformance.live._crashes import MAX_SEQUENCE_REPLAYS, Sent, find_culprit

TOOLS = ("fine", "arm", "fire")


def _search(
    ends: Callable[[list[str]], bool],
    history: list[Sent],
    suspects: list[tuple[str, Any]],
    started: list[ScriptedServer],
) -> Any:
    def fresh() -> ScriptedServer:
        return ScriptedServer(started, TOOLS, ends, last_words="boom")

    connection = SimpleNamespace(fresh=fresh, config=SimpleNamespace(name="scripted"))
    # The first server lived long: no control is needed, only the replays count.
    return asyncio.run(find_culprit(connection, suspects, 10.0, lived=30.0, history=history))


def _armed_fire(sent: list[str]) -> bool:
    return sent[-1] == "fire" and "arm" in sent[:-1]


def test_an_exit_that_needs_an_earlier_call_is_named_with_it_alone() -> None:
    """``fire`` ends the server once ``arm`` was called: replayed alone it does not, the
    history in order does, and the shortening keeps only ``arm`` before it, every
    call bare; another tool's call in its place leaves the server running."""
    started: list[ScriptedServer] = []
    history: list[Sent] = [
        *(("fine", {"n": n}, None) for n in range(30)),
        ("fire", {"y": 1}, None),
        ("arm", {"x": 1}, None),
        *(("fine", {"n": n}, None) for n in range(30, 40)),
        ("fire", {"y": 2}, None),
        ("fine", {"n": 99}, None),
    ]
    blame = _search(_armed_fire, history, [("fire", {"y": 2})], started)
    crash = blame.crash
    assert crash is not None, blame
    assert (crash.tool, crash.args, crash.before) == ("fire", {}, (("arm", {}, None),))
    assert crash.instead == "fine"
    assert crash.short() == "calling it with {} after 'arm' with {} ends its server (exit status 7)"
    assert crash.describe() == (
        "calling 'fire' with {}, after 'arm' with {}, ended the server 'scripted' (exit"
        " status 7); replayed in that order on a fresh server, these calls end it again,"
        " and with a call of 'fine' in place of the last they do not; its stderr:\nboom"
    )
    # The call alone, then at most the budget, then the two checks.
    assert 3 <= len(started) <= 1 + MAX_SEQUENCE_REPLAYS + 2


def test_a_counter_is_named_with_its_repeats_said_once() -> None:
    """The tenth ``fire`` ends the server: the replay stops there, so the nine before it
    are the fewest (a prefix that ran without an exit); they are said as one run."""
    started: list[ScriptedServer] = []
    history: list[Sent] = [(("fire" if n % 2 else "fine"), {"n": n}, None) for n in range(40)]
    blame = _search(lambda sent: sent.count("fire") == 10, history, [], started)
    crash = blame.crash
    assert crash is not None, blame
    assert crash.short() == (
        "calling it with {} after 'fire' with {} 9 times ends its server (exit status 7)"
    )


def test_a_server_that_exits_once_at_random_blames_no_tool() -> None:
    """Only the whole history's replay exits, at its fifth call: no shortening ends a
    fresh server, and neither does the same sequence replayed again. Nothing is blamed,
    and nothing is said to explain the exit."""
    started: list[ScriptedServer] = []
    history: list[Sent] = [(TOOLS[n % 3], {"n": n}, None) for n in range(12)]
    blame = _search(lambda sent: len(started) == 1 and len(sent) == 5, history, [], started)
    assert blame.crash is None
    assert blame.unblamed == ""
    assert len(started) <= MAX_SEQUENCE_REPLAYS + 2


def test_a_server_that_exits_after_so_many_calls_of_any_kind_blames_no_tool() -> None:
    """The sixth call ends the server whatever it is: the shortest sequence is the same
    six calls, and another tool's call in place of the last ends it too."""
    started: list[ScriptedServer] = []
    history: list[Sent] = [(TOOLS[n % 2], {"n": n}, None) for n in range(12)]
    blame = _search(lambda sent: len(sent) == 6, history, [], started)
    assert blame.crash is None
    assert blame.unblamed.startswith(
        "replayed in order on a fresh server, 6 calls ended it whether the last was 'arm' or 'fine'"
    ), blame.unblamed


def test_calls_before_are_said_in_runs_and_the_oldest_counted() -> None:
    """Long histories are said by their last runs, after how many calls came before."""
    from toolnexus_conformance.live._crashes import ServerCrash

    before: tuple[Sent, ...] = (
        ("arm", {}, None),
        ("arm", {}, None),
        ("fine", {"n": 1}, None),
        ("fire", {}, 0.5),
        ("fine", {}, None),
        ("fine", {}, None),
        ("fine", {}, None),
        ("arm", {"x": 1}, None),
    )
    crash = ServerCrash("s", "fire", {}, 7, "", 1.0, None, before=before)
    assert crash.short() == (
        "calling it with {} after 2 other calls, then 'fine' with {'n': 1}, then 'fire'"
        " with {} cancelled 0.5s in, then 'fine' with {} 3 times, then 'arm' with"
        " {'x': 1} ends its server (exit status 7)"
    )
