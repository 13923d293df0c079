"""What collection made, kept out of the garbage collector's full passes until the session ends.

The items, their tools' declarations and schemas live as long as the session: a
run of ten thousand tools collects about a million objects. Python's full
collections, triggered as the run's reports pile up, walked all of them again
each time (nine seconds of a forty-five-second run, four times what plain pytest
spends in the collector). Frozen (``gc.freeze``) once collection is over, they
are left out of those passes; they are still freed by reference counting, and
any cycle among them is collected once ``HeapFreeze.thaw`` gives them back at the
very end. pytest runs a full collection twice as a session ends (unraisableexception:
in its unconfigure hook and in the cleanup its configure hook registered); the thaw
comes after both, or the cleanup's walks the whole heap again, so it is registered
as a cleanup before pytest's: cleanups run last first.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["HeapFreeze", "paused"]


@contextmanager
def paused() -> Iterator[None]:
    """No collection while the items are made: every object made then survives them.

    Building the nodes of ten thousand tools makes a million objects that all live
    on, and the full collections their growth triggers find nothing to free.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class HeapFreeze:
    """One session's freeze: made once collection is over, given back at the very end.

    Made, and its ``thaw`` registered with ``config.add_cleanup``, in the plugin's
    configure hook, which runs before pytest's own (unraisableexception's): its
    cleanup, registered later, runs first, and its collection finds the heap frozen.
    """

    def __init__(self) -> None:
        self._frozen = False

    def freeze(self) -> bool:
        """Freeze every object alive now; ``False`` (nothing done) when the collector is
        off or something else has frozen objects already, whose freeze is not ours to
        undo."""
        if not self._frozen and gc.isenabled() and not gc.get_freeze_count():
            gc.freeze()
            self._frozen = True
        return self._frozen

    def thaw(self) -> None:
        """Give back what ``freeze`` froze, if it did; nothing otherwise."""
        if self._frozen:
            self._frozen = False
            gc.unfreeze()
