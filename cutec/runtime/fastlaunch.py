"""A launch that calls the driver's ``cuLaunchKernel`` from C, as Triton's launcher does.

Through cuda.bindings, a ``cuLaunchKernel`` call spends about as long converting
its Python arguments as the driver spends launching. The launch function
(`cutec.runtime.launcher`) has already checked and packed everything, so all it
needs is one C call: `launch(function, gx, gy, gz, bx, by, bz, smem, stream,
params)` with plain integers, returning the CUresult as an int.

The extension is about 40 lines of C, compiled on first use with the system C
compiler against this Python's headers and cached beside the kernels (in the
disk cache's directory, named by a hash of its source and the Python version;
written atomically). Without a C compiler, Python headers or libcuda, `load()`
returns None and the launch goes through cuda.bindings as before: slower, never
wrong.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

from cutec.runtime import cache as disk_cache

_SOURCE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
static launch_fn cu_launch_kernel;

/* launch(function, gx, gy, gz, bx, by, bz, smem, stream, params) -> CUresult */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "launch() takes 10 integer arguments");
        return NULL;
    }
    void *function = PyLong_AsVoidPtr(args[0]);
    unsigned dims[7];
    for (int i = 0; i < 7; ++i)
        dims[i] = (unsigned)PyLong_AsUnsignedLong(args[1 + i]);
    void *stream = PyLong_AsVoidPtr(args[8]);
    void **params = (void **)PyLong_AsVoidPtr(args[9]);
    if (PyErr_Occurred())
        return NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = cu_launch_kernel(function, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5],
                           dims[6], stream, params, NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "cuLaunchKernel"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cutec_fastlaunch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cutec_fastlaunch(void) {
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (libcuda)
        cu_launch_kernel = (launch_fn)dlsym(libcuda, "cuLaunchKernel");
    if (!cu_launch_kernel) {
        PyErr_SetString(PyExc_ImportError, "libcuda.so.1 or its cuLaunchKernel not found");
        return NULL;
    }
    return PyModule_Create(&module);
}
"""


def _library_path() -> Path:
    tag = hashlib.sha256((_SOURCE + sys.version).encode()).hexdigest()[:16]
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    # With the disk cache off (CUTEC_CACHE=0), the library lives for this process only.
    root = disk_cache.directory() if disk_cache.enabled() else Path(tempfile.mkdtemp())
    return root / "fastlaunch" / f"cutec_fastlaunch_{tag}{suffix}"


def _build(target: Path) -> bool:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    include = sysconfig.get_paths().get("include")
    if compiler is None or include is None or not Path(include, "Python.h").is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp:
        src = Path(tmp) / "fastlaunch.c"
        out = Path(tmp) / target.name
        src.write_text(_SOURCE)
        proc = subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", f"-I{include}", str(src), "-o", str(out),
             "-ldl"],
            capture_output=True, text=True,
        )  # fmt: skip
        if proc.returncode != 0:
            return False
        os.replace(out, target)  # atomic: a concurrent process sees all of it or none
    return True


@cache
def load() -> ModuleType | None:
    """The compiled extension, built on first use; None where it cannot be had."""
    if os.environ.get("CUTEC_FAST_LAUNCH", "1") in ("0", "off", "false"):
        return None
    path = _library_path()
    try:
        if not path.is_file() and not _build(path):
            return None
        spec = importlib.util.spec_from_file_location("cutec_fastlaunch", path)
        if spec is None or spec.loader is None:
            return None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except (OSError, ImportError):
        return None
