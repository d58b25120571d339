"""Rewrites shared by passes: each a function over the IR that a pass, or a step of
one, applies (the licm and reassociate passes apply them to every loop, simplify
loop by loop), so that no pass imports another pass."""
