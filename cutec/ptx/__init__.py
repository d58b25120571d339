"""The PTX back end: thread-level IR → PTX text (`emit_ptx`), and the ptxas driver.

The IR is legalised first (the ``legalize-ptx`` pass, which the driver runs):

from cutec.ptx import emit_ptx, legalize
legalize(module)
text = emit_ptx(module, "sm_90a")
"""

from cutec.ptx.emitter import emit_ptx
from cutec.ptx.legalize import legalize

__all__ = ["emit_ptx", "legalize"]
