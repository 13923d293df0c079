"""Embeddings a test can rely on: the same text gives the same vector, in any process.

A vector is a unit vector seeded by the text's SHA-256, so equal texts are identical
(cosine 1) and different texts are nearly orthogonal; a test that needs exact vectors
scripts them with ``fake.embedding(text, vector)``.
"""

from __future__ import annotations

import base64
import hashlib
import math
import random
import struct
from collections.abc import Sequence

__all__ = ["DEFAULT_DIMENSIONS", "as_base64", "hashed_vector"]

DEFAULT_DIMENSIONS = 16


def hashed_vector(text: str, dimensions: int) -> list[float]:
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    values = [rng.gauss(0.0, 1.0) for _ in range(max(1, dimensions))]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def as_base64(vector: Sequence[float]) -> str:
    """OpenAI's ``encoding_format="base64"``: little-endian float32, base64 (the openai
    SDK asks for it by default and decodes it)."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
