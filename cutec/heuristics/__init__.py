"""The compiler's choices, each made once by one pure function: which atoms an
``auto`` names (`select`), how a whole-tensor gemm is tiled and which library body
runs it on a target (`tile_plan`, `gemm`). The frontend and the passes call them
and record the answer with its reasons in the IR; nothing chooses twice."""
