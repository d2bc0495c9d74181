"""Seeds: public seeds (like upstream's 42 + i) mixed with a per-run secret the candidate never sees."""

from __future__ import annotations

import hashlib
import secrets


def new_secret() -> int:
    return secrets.randbits(63)


def mixed(public: int, secret: int, purpose: str = "") -> int:
    """A 63-bit seed from a public seed, the run's secret and a purpose label (trial, timing, init)."""
    digest = hashlib.sha256(f"{purpose}:{public}:{secret}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1
