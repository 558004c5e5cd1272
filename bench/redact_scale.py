#!/usr/bin/env python3
"""Redaction of credentials from a recorded response, on large bodies.

    PYTHONPATH=. python bench/redact_scale.py [MEGABYTES ...]

For each size (default 5 and 50), four bodies: many echoed api_key=/email= holding the secrets, as many without
them, words and spaces, and one long token with no delimiter. Printed: wall-clock seconds of `_redact`, and its
peak of memory allocated beyond the body (tracemalloc, a second call: tracing slows the first).
"""

from __future__ import annotations

import sys
import time
import tracemalloc

from sitegen.sources.http import Secrets, _redact

KEY, EMAIL = "k3yV4lue0123456789", "reviewer.one@example.org"
SECRETS = Secrets(params={"api_key": KEY, "email": EMAIL})
UNITS = {
    "echoed api_key=/email=": f'"url":"https://x/?api_key={KEY}&email={EMAIL.replace("@", "%40")}",'.encode(),
    "api_key=/email= of others": b'"url":"https://x/?api_key=abcdefghijklmnop&email=someone%40else.org",',
    "words and spaces": b"lorem ipsum dolor sit amet consectetur adipiscing elit ",
    "one long token": b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
}


def main(sizes: list[float]) -> None:
    for megabytes in sizes:
        for name, unit in UNITS.items():
            body = unit * int(megabytes * 1_000_000 // len(unit))
            started = time.perf_counter()
            redacted = _redact(body, SECRETS)
            seconds = time.perf_counter() - started
            tracemalloc.start()
            _redact(body, SECRETS)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"{name:27} {len(body) / 1e6:6.1f} MB {seconds:7.2f} s  peak +{peak / 1e6:6.1f} MB  "
                  f"{redacted.count(b'REDACTED')} redacted")


if __name__ == "__main__":
    main([float(size) for size in sys.argv[1:]] or [5.0, 50.0])
