"""A2A tools as the A2A source builds them from a well-formed card (read, never called here).

Entries appear only where the a2a SDK is installed (a test dependency).
"""

from toolnexus_conformance.corpus import Entry

CORPUS = []

try:
    from toolnexus_ref.a2a import A2ATool, reading_of
except ImportError:
    pass
else:
    _CARD = {
        "name": "Travel Agent",
        "description": "Plans trips: finds flights and books hotels.",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [
            {
                "id": "find-flights",
                "name": "Find flights",
                "description": "Find flights between two cities on a date; lists prices.",
                "tags": ["travel", "read-only"],
            },
            {
                "id": "book-hotel",
                "name": "Book a hotel",
                "description": "Book a hotel room in a city for the given nights.",
                "tags": ["travel"],
            },
        ],
    }
    _READING = reading_of(_CARD, "http://127.0.0.1:9/.well-known/agent-card.json")
    CORPUS += [
        Entry(A2ATool(_READING, skill), note=f"A2A skill {skill.id}")
        for skill in _READING.card.skills
    ]
