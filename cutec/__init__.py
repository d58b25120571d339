"""cutec: a compiler for CuTe-style GPU kernels, written in Python.

The layout algebra is available from the top level (``cutec.Layout``,
``cutec.composition``, ``cutec.make_layout_tv`` ...); it is imported on first
use so that ``import cutec`` stays cheap and never touches a GPU driver.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The JIT API (cutec.runtime), imported on first use like the algebra.
_RUNTIME = ("jit", "Kernel", "DeviceArray", "synchronize", "CudaError", "KernelFault",
            "NoDriverError", "ArgumentError", "PerformanceWarning")  # fmt: skip


def __getattr__(name: str) -> Any:
    # Re-export the layout algebra lazily (PEP 562): start-up time, `import cutec` stays cheap.
    # import_module, not `from cutec import layout`: that asks this very function for
    # `layout` while the submodule is still being imported, and recurses.
    import importlib

    if name.startswith("__"):
        raise AttributeError(f"module 'cutec' has no attribute {name!r}")
    if name in _RUNTIME:
        return getattr(importlib.import_module("cutec.runtime"), name)
    layout = importlib.import_module("cutec.layout")
    if name in getattr(layout, "__all__", ()):
        return getattr(layout, name)
    raise AttributeError(f"module 'cutec' has no attribute {name!r}")


def __dir__() -> list[str]:
    # Imported here, not at the top: start-up time (`import cutec` stays cheap).
    import importlib

    layout = importlib.import_module("cutec.layout")

    return sorted([*globals(), *_RUNTIME, *getattr(layout, "__all__", ())])
