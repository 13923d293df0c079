"""The live corpus, loaded once for the tests and for the hostile-run subprocess."""

from __future__ import annotations

from pathlib import Path

from toolnexus_conformance.corpus import Entry, load_corpus

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus"
#: Every live code prefix: result, errors, cancellation, timeout, concurrency.
LIVE = ("TN5", "TN6", "TN7", "TN8", "TN9")


def live_entries(kind: str) -> list[Entry]:
    return [entry for _, entry in load_corpus(CORPUS / kind, "live_*.py")]
