"""The messages of a bad launch: each names the kernel, the parameter, what was
declared and what was passed (a TypeError for the wrong kind of value, a
ValueError for the right kind with the wrong value); and the disk cache's warning
and error (cutec.runtime.cache)."""

from __future__ import annotations

from typing import Any

from cutec.runtime import arrays


class ArgumentError(Exception):
    """A launch argument the kernel cannot take: the user's mistake, never cutec's.

    Raised as `ArgumentTypeError` (a TypeError: the wrong kind of value) or
    `ArgumentValueError` (a ValueError: the right kind, a wrong value), so callers
    may catch either the built-in class or this one (the CLI does: exit code 1)."""


class ArgumentTypeError(ArgumentError, TypeError):
    pass


class ArgumentValueError(ArgumentError, ValueError):
    pass


class CacheWarning(UserWarning):
    """A cache directory, entry or compiled launcher that cutec will not use (another
    user's, writable by group or others, or a directory that is not a cutec cache):
    cutec runs without it. Said once per directory and process."""


class NotACacheError(ValueError):
    """`cutec cache clear` of a directory that is not a cutec cache (no CACHEDIR.TAG)."""


class ArgumentErrors:
    """The messages of a bad launch, each naming the parameter."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def _where(self, param: str) -> str:
        return f"{self.kernel}: parameter '{param}'"

    def count(self, declared: list[str], got: int) -> ArgumentTypeError:
        return ArgumentTypeError(
            f"{self.kernel}() takes {len(declared)} arguments ({', '.join(declared)}), got {got}"
        )

    def not_array(self, param: str, value: Any) -> ArgumentTypeError:
        return ArgumentTypeError(
            f"{self._where(param)} is a tensor; got {type(value).__name__} (pass a torch tensor, "
            "a CuPy array, a cutec.DeviceArray, or anything with DLPack or "
            "__cuda_array_interface__)"
        )

    def dtype(self, param: str, declared: str, got: str) -> ArgumentTypeError:
        got = arrays.TORCH_DTYPES.get(got, got)  # torch's float16 is cutec's f16
        return ArgumentTypeError(
            f"{self._where(param)} is declared {declared}; got an array of {got}"
        )

    def rank(self, param: str, declared: Any, got: tuple[int, ...]) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} has {len(_leaves(declared))} modes, shape {declared}; "
            f"got an array of shape {got}"
        )

    def extent(self, param: str, mode: int, declared: Any, got: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: the extent of mode {mode} is declared {declared}; got {got}"
        )

    def stride(self, param: str, mode: int, declared: Any, got: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: the stride of mode {mode} is declared {declared}; "
            f"got {got} (in elements)"
        )

    def negative_stride(self, param: str, mode: int, stride: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: stride {mode} is {stride}; negative strides are not supported"
        )

    def mismatch(
        self, param: str, name: str, got: int, first: str, bound: int
    ) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: {name} is {got} here but {bound} in '{first}' "
            f"(the declarations use the same name, so the values must be equal)"
        )

    def fact(self, param: str, name: str, value: int, divisor: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: {name} = {value} is not divisible by {divisor}, which the "
            f"kernel assumes ('assume {name} % {divisor} == 0')"
        )

    def align(self, param: str, ptr: int, align: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: the base address {ptr:#x} is not {align}-byte aligned, "
            f"which the kernel was compiled for ('align {align}')"
        )

    def on_gpu(self, param: str, kind: str) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} is in GPU memory ({kind}); device='cpu' runs on host arrays "
            "(numpy, CPU torch tensors)"
        )

    def not_contiguous(self, param: str, strides: tuple[int, ...]) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: device='cpu' runs on arrays whose strides are whole, "
            f"non-negative numbers of elements; got strides {strides}"
        )

    def host(self, param: str, kind: str) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} is in host memory ({kind}); a GPU launch needs device memory "
            "(torch.Tensor.cuda(), cutec.DeviceArray.from_numpy(a)), or use device='cpu'"
        )

    def device(
        self, param: str, got: int | None, first: str, expected: int | None
    ) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} is on GPU {got} but '{first}' is on GPU {expected}; "
            "all arrays of a launch must be on one GPU"
        )

    def too_large(self, param: str, largest: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: its largest element offset {largest} does not fit the "
            "kernel's 32-bit offsets (< 2^31); compile with 64-bit offsets "
            "(lower-to-thread{offset-bits=64})"
        )

    def scalar(self, param: str, declared: str, value: Any) -> ArgumentTypeError:
        return ArgumentTypeError(
            f"{self._where(param)} is a scalar of type {declared}; got {value!r}"
        )

    def scalar_range(self, param: str, declared: str, value: int) -> ArgumentValueError:
        return ArgumentValueError(f"{self._where(param)}: {value} does not fit {declared}")

    def scalar_overflow(self, param: str, declared: str, value: float) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: {value!r} is beyond the range of {declared} (it would "
            "be passed as inf)"
        )

    def readonly(self, param: str, kind: str) -> ArgumentValueError:
        what = (
            "an inference tensor outside torch.inference_mode(), which torch does not let "
            "anyone write"
            if kind == "torch"
            else f"a read-only {kind} array"
        )
        return ArgumentValueError(f"{self._where(param)} is written by the kernel; got {what}")

    def overlap(self, param: str, other: str) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} is written by the kernel and shares memory with "
            f"'{other}'; pass separate arrays, or allow_alias=({param!r},) where the kernel "
            "is correct in place"
        )

    def not_injective(
        self, param: str, shape: tuple[int, ...], strides: tuple[int, ...]
    ) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)} is written by the kernel, but its layout {shape}:{strides} "
            "gives several coordinates one element (a stride 0 or overlapping strides): "
            "pass an array with an element per coordinate"
        )

    def beyond_buffer(self, param: str, claimed: int, held: int) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self._where(param)}: the array's shape and strides reach {claimed} bytes "
            f"past its base, but its memory holds {held} from there (a view made with "
            "as_strided?)"
        )

    def allow_alias(self, value: Any, outputs: list[str]) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self.kernel}: allow_alias={value!r} must name parameters the kernel writes "
            f"({', '.join(outputs) or 'none'}), or be True for all of them"
        )

    def no_launch_shape(self, what: str) -> ArgumentTypeError:
        return ArgumentTypeError(f"{self.kernel}: the kernel declares no {what}: pass {what}=")

    def grid(self, grid: tuple[int, ...]) -> ArgumentValueError:
        return ArgumentValueError(
            f"{self.kernel}: the grid {grid} must be 1 to 3 non-negative sizes"
        )

    def cluster_grid(self, grid: tuple[int, int, int], cluster: tuple[int, int, int]
                     ) -> ArgumentValueError:  # fmt: skip
        return ArgumentValueError(
            f"{self.kernel}: grid={grid} is not a whole number of clusters of {cluster} CTAs "
            "(the kernel's 'cluster' clause): give each axis a multiple, or leave grid= out "
            "(the kernel's grid is rounded up to whole clusters)"
        )

    def launch_shape_type(self, what: str, value: Any) -> ArgumentTypeError:
        return ArgumentTypeError(f"{self.kernel}: {what}= takes 1 to 3 integers; got {value!r}")

    def launch_shape(self, what: str, value: Any, why: str) -> ArgumentValueError:
        return ArgumentValueError(f"{self.kernel}: {what}={value!r}: {why}")

    def block(self, got: tuple[int, int, int], declared: tuple[int, int, int]
              ) -> ArgumentValueError:  # fmt: skip
        return ArgumentValueError(
            f"{self.kernel}: block={got}, but the kernel is compiled for blocks of {declared} "
            "threads (its 'threads' clause); leave block= out"
        )


def _leaves(t: Any) -> list[Any]:
    if isinstance(t, tuple):
        return [x for e in t for x in _leaves(e)]
    return [t]
