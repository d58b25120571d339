"""The compiler's choices, each made once by one pure function: which atoms an
``auto`` names (`select`), a whole-tensor gemm's structure and library body per
target (`planner`) and its CTA tile's plan (`tile_plan`). The frontend and the
passes call them and record each answer with its reasons in declared op fields;
the passes that report a choice read the record and never choose again."""
