"""The CPU back end of the thread dialect.

So far its oracle: `cutec.cpu.reference`, a Python interpreter of one kernel's
thread IR over a small grid (docs/cpu-backend.md). The llvmlite backend comes
later and is checked against it.
"""
