"""The CPU back end of the thread dialect.

`cutec.cpu.native` compiles a kernel's thread IR with llvmlite into a warp
function (32 lanes as vectors, masks from structured control flow, barriers as
resume states) and runs a grid on the host; `cutec.cpu.reference` is the
Python interpreter that is its oracle (docs/cpu-backend.md).
"""
