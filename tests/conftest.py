"""Test-suite settings shared by every test directory.

Hypothesis explores new random examples on every developer run, but CI (which
sets CI=true) runs a fixed, derandomized set: a red CI then always means a
change broke something, never that a fuzzer drew a new input that day. Bugs
the random runs find become fixed cases here.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
