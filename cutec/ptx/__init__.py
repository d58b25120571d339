"""The PTX back end: thread-level IR → PTX text (`emit_ptx`), and the ptxas driver.

from cutec.ptx import emit_ptx
text = emit_ptx(module, "sm_90a")
"""

from cutec.ptx.emitter import emit_ptx

__all__ = ["emit_ptx"]
