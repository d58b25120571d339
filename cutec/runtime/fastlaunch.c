/* cutec's launch path in C (cutec/runtime/fastlaunch.py builds and loads it).
 *
 * launch(function, gx, gy, gz, bx, by, bz, smem, stream, params) -> CUresult
 *     one cuLaunchKernel with plain integers, for the Python launch function.
 * launch_ex(function, gx, gy, gz, bx, by, bz, smem, stream, params, cx, cy, cz) -> CUresult
 *     one cuLaunchKernelEx whose one attribute is the cluster's shape (cx, cy, cz).
 *
 * Launcher(...): a kernel object's call for the common case, all in C: every
 *     tensor argument a torch tensor, every scalar a Python float or int, no
 *     keyword argument. It reads each tensor's dtype, data_ptr(), get_device(),
 *     size() and stride(), looks the extents, strides, integer scalars and GPU up
 *     in a few remembered calls, packs the parameter buffer on its stack and
 *     launches on torch's current stream. Anything else -- another array type, a
 *     keyword, misaligned bases, a new shape -- goes to Python: a new shape
 *     through `resolve(*args)`, which runs every check and returns what to
 *     launch (or None, and the call goes to `fallback`, the Python launch
 *     function, which raises the error or launches itself).
 *
 *     The checks that depend on more than the shapes are made here at every call,
 *     as the Python launch function makes them, and anything they find goes to it
 *     to be reported: an output that torch will not let anyone write (an
 *     inference tensor outside inference mode), an output whose bytes meet another
 *     tensor's (each tensor's span in bytes comes with its shape from `resolve`;
 *     Python looks closer and refuses or launches), an f32 scalar that would
 *     round to inf.
 *
 *     A TMA tensor map (docs/abi.md) is 128 bytes built from a tensor's base and
 *     the shape: the base of each mapped tensor is part of the remembered key,
 *     `resolve` returns the maps' bytes with the rest, and a call copies them
 *     into the parameter buffer (a new base is a new key: `resolve` again, which
 *     finds the map in the runtime's map cache, or encodes it once). A kernel
 *     with a cluster launches through cuLaunchKernelEx with its shape; `resolve`
 *     has rounded the grid up to whole clusters.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
static launch_fn cu_launch_kernel;

/* cuLaunchKernelEx's configuration, as CUDA 12 and 13's cuda.h lay it out (this file is
   built without the CUDA headers): one attribute, the cluster dimension. */
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4
typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        struct { unsigned x, y, z; } cluster_dim;
    } value;
} LaunchAttribute;
typedef struct {
    unsigned grid[3], block[3], smem;
    void *stream;
    LaunchAttribute *attrs;
    unsigned num_attrs;
} LaunchConfig;
typedef int (*launch_ex_fn)(const LaunchConfig *, void *, void **, void **);
static launch_ex_fn cu_launch_kernel_ex;

/* One launch: cuLaunchKernel, or cuLaunchKernelEx where `cluster` is not NULL. Called
   without the GIL. */
static int launch_one(void *function, const unsigned *g, unsigned smem, void *stream,
                      void **params, const unsigned *cluster) {
    if (cluster == NULL)
        return cu_launch_kernel(function, g[0], g[1], g[2], g[3], g[4], g[5], smem, stream,
                                params, NULL);
    LaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.cluster_dim.x = cluster[0];
    attr.value.cluster_dim.y = cluster[1];
    attr.value.cluster_dim.z = cluster[2];
    LaunchConfig config = {{g[0], g[1], g[2]}, {g[3], g[4], g[5]}, smem, stream, &attr, 1};
    return cu_launch_kernel_ex(&config, function, params, NULL);
}

/* The launches of the Python launch function: `nargs` is 10, or 13 with a cluster. */
static PyObject *launch_from_python(PyObject *const *args, Py_ssize_t nargs, int with_cluster) {
    if (cu_launch_kernel == NULL || (with_cluster && cu_launch_kernel_ex == NULL)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "libcuda.so.1 or its cuLaunchKernel / cuLaunchKernelEx not found");
        return NULL;
    }
    if (nargs != (with_cluster ? 13 : 10)) {
        PyErr_SetString(PyExc_TypeError, with_cluster ? "launch_ex() takes 13 integer arguments"
                                                      : "launch() takes 10 integer arguments");
        return NULL;
    }
    void *function = PyLong_AsVoidPtr(args[0]);
    unsigned dims[7], cluster[3];
    for (int i = 0; i < 7; ++i)
        dims[i] = (unsigned)PyLong_AsUnsignedLong(args[1 + i]);
    void *stream = PyLong_AsVoidPtr(args[8]);
    void **params = (void **)PyLong_AsVoidPtr(args[9]);
    for (int i = 0; with_cluster && i < 3; ++i)
        cluster[i] = (unsigned)PyLong_AsUnsignedLong(args[10 + i]);
    if (PyErr_Occurred())
        return NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = launch_one(function, dims, dims[6], stream, params, with_cluster ? cluster : NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

/* launch(function, gx, gy, gz, bx, by, bz, smem, stream, params) -> CUresult */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return launch_from_python(args, nargs, 0);
}

/* launch_ex(function, gx, gy, gz, bx, by, bz, smem, stream, params, cx, cy, cz) -> CUresult */
static PyObject *launch_ex(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    return launch_from_python(args, nargs, 1);
}

/* ------------------------------------------------------------------ Launcher */

#define MAX_ARGS 32
#define MAX_RANK 8
#define MAX_KEY (MAX_ARGS * 2 * MAX_RANK + 1 + MAX_MAPS)
#define MAX_PARAM_BYTES 4096
#define MAX_MAPS 8
#define MAP_BYTES 128 /* sizeof(CUtensorMap); its .param is 64-byte aligned */
#define N_ENTRIES 4
#define MAX_PAIRS (MAX_ARGS * MAX_ARGS)
/* The least magnitude f32 rounds to inf: 2^128 - 2^103 (launcher.FLOAT_OVERFLOW). */
#define F32_OVERFLOW 340282356779733661637539395458142568448.0

enum { ARG_TENSOR = 't', ARG_FLOAT = 'f', ARG_INT = 'i' };

/* One .param of the kernel: where it goes and where its value comes from. */
typedef struct {
    char code;    /* struct code: Q q i h b B H f d, or M a tensor map's 128 bytes */
    int offset;   /* byte offset in the parameter buffer (docs/abi.md) */
    int arg;      /* positional argument it is read from (a map: the tensor it maps) */
    int field;    /* -1 the base pointer or scalar value, i < rank extent i, else stride i-rank;
                     a map: its index among the kernel's maps */
} Slot;

/* One remembered launch: the key it was resolved for and what it launches. */
typedef struct {
    int used, keylen;
    int64_t key[MAX_KEY];
    void *function;
    unsigned dims[6], smem;
    int64_t spans[MAX_ARGS]; /* bytes from each tensor's base past its last element */
    PyObject *variant;       /* for the failure report */
    char maps[MAX_MAPS][MAP_BYTES]; /* the tensor maps, for the key's bases (copied) */
} Entry;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback, *resolve, *tensor_type, *get_stream, *on_launch, *name, *failed,
        *inference_mode;
    int nargs, nslots, npairs, param_bytes, next, nmaps, has_cluster;
    unsigned cluster[3];    /* CTAs per cluster, where has_cluster */
    int map_args[MAX_MAPS]; /* the argument each tensor map is built over */
    char kinds[MAX_ARGS];
    int ranks[MAX_ARGS];
    char written[MAX_ARGS]; /* the kernel writes this tensor */
    double limit[MAX_ARGS]; /* a float scalar's least magnitude that overflows */
    int pairs[MAX_PAIRS][2]; /* (output, other tensor) whose bytes must not meet */
    PyObject *dtypes[MAX_ARGS];
    Slot slots[MAX_ARGS * (2 * MAX_RANK + 1)];
    Entry entries[N_ENTRIES];
} Launcher;

static PyObject *s_dtype, *s_data_ptr, *s_get_device, *s_size, *s_stride, *s_is_inference;

/* obj.name() as a C integer; -1 with an exception set on failure (or a value -1). */
static long long call_int(PyObject *obj, PyObject *name) {
    PyObject *r = PyObject_CallMethodNoArgs(obj, name);
    if (r == NULL)
        return -1;
    long long v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return v;
}

/* obj.name() as `rank` integers into out; 0 on success, -1 on anything unexpected. */
static int call_ints(PyObject *obj, PyObject *name, int rank, int64_t *out) {
    PyObject *r = PyObject_CallMethodNoArgs(obj, name);
    if (r == NULL)
        return -1;
    int ok = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == rank;
    for (int i = 0; ok && i < rank; ++i) {
        out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(r, i));
        ok = !(out[i] == -1 && PyErr_Occurred());
    }
    Py_DECREF(r);
    return ok ? 0 : -1;
}

/* Whether torch lets this call write tensor x: 1 yes, 0 no (an inference tensor outside
   inference mode), -1 on an error. */
static int writable(Launcher *self, PyObject *x) {
    PyObject *r = PyObject_CallMethodNoArgs(x, s_is_inference);
    if (r == NULL)
        return -1;
    int inference = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (inference <= 0)
        return inference == 0 ? 1 : -1;
    r = PyObject_CallNoArgs(self->inference_mode);
    if (r == NULL)
        return -1;
    int on = PyObject_IsTrue(r);
    Py_DECREF(r);
    return on;
}

static void store(char *buf, const Slot *s, int64_t iv, double fv, const Entry *e) {
    char *p = buf + s->offset;
    switch (s->code) {
    case 'M': memcpy(p, e->maps[s->field], MAP_BYTES); break;
    case 'Q': case 'q': memcpy(p, &iv, 8); break;
    case 'i': { int32_t v = (int32_t)iv; memcpy(p, &v, 4); break; }
    case 'h': case 'H': { int16_t v = (int16_t)iv; memcpy(p, &v, 2); break; }
    case 'b': case 'B': { int8_t v = (int8_t)iv; memcpy(p, &v, 1); break; }
    case 'f': { float v = (float)fv; memcpy(p, &v, 4); break; }
    case 'd': memcpy(p, &fv, 8); break;
    }
}

static PyObject *launcher_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames) {
    Launcher *self = (Launcher *)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    int64_t values[MAX_ARGS][1 + 2 * MAX_RANK]; /* per argument: base or value, extents, strides */
    double floats[MAX_ARGS];
    int64_t key[MAX_KEY];
    int k = 0;
    long long dev = -1;
    uint64_t bases = 0;
    if (kwnames != NULL || n != self->nargs || cu_launch_kernel == NULL ||
        (self->has_cluster && cu_launch_kernel_ex == NULL))
        goto slow;
    for (int a = 0; a < n; ++a) {
        PyObject *x = args[a];
        if (self->kinds[a] == ARG_TENSOR) {
            if ((PyObject *)Py_TYPE(x) != self->tensor_type)
                goto slow;
            PyObject *dtype = PyObject_GetAttr(x, s_dtype);
            if (dtype == NULL)
                goto slow;
            Py_DECREF(dtype); /* identity is all we compare; the dtype lives in torch */
            if (dtype != self->dtypes[a])
                goto slow;
            int64_t *v = values[a];
            int rank = self->ranks[a];
            v[0] = (int64_t)call_int(x, s_data_ptr);
            long long d = call_int(x, s_get_device);
            if (PyErr_Occurred() || d < 0 || (dev >= 0 && d != dev))
                goto slow;
            dev = d;
            if (call_ints(x, s_size, rank, v + 1) || call_ints(x, s_stride, rank, v + 1 + rank))
                goto slow;
            if (self->written[a] && writable(self, x) != 1)
                goto slow;
            memcpy(key + k, v + 1, sizeof(int64_t) * 2 * rank);
            k += 2 * rank;
            bases |= (uint64_t)v[0];
        } else if (self->kinds[a] == ARG_FLOAT) {
            if (!PyFloat_CheckExact(x))
                goto slow;
            floats[a] = PyFloat_AS_DOUBLE(x);
            if (fabs(floats[a]) >= self->limit[a] && isfinite(floats[a]))
                goto slow; /* would round to inf: Python says so */
        } else {
            if (!PyLong_CheckExact(x))
                goto slow;
            int overflow;
            values[a][0] = PyLong_AsLongLongAndOverflow(x, &overflow);
            if (overflow)
                goto slow;
            key[k++] = values[a][0];
        }
    }
    /* Every base 16-byte aligned: every promise up to 16 bytes and every alignment
       fact of the specialisation key hold; otherwise Python sorts it out. */
    if (dev < 0 || (bases & 15))
        goto slow;
    key[k++] = dev;
    for (int m = 0; m < self->nmaps; ++m) /* a map holds its tensor's base */
        key[k++] = values[self->map_args[m]][0];

    Entry *e = NULL;
    for (int i = 0; i < N_ENTRIES; ++i) {
        Entry *c = &self->entries[i];
        if (c->used && c->keylen == k && memcmp(c->key, key, sizeof(int64_t) * k) == 0) {
            e = c;
            break;
        }
    }
    if (e == NULL) {
        /* A new shape: Python checks it and says what to launch. */
        PyObject *r = PyObject_Vectorcall(self->resolve, args, n, NULL);
        if (r == NULL)
            return NULL;
        if (r == Py_None) {
            Py_DECREF(r);
            goto slow;
        }
        e = &self->entries[self->next];
        self->next = (self->next + 1) % N_ENTRIES;
        unsigned long long f;
        PyObject *variant = NULL, *spans = NULL, *maps = NULL;
        int ok = PyArg_ParseTuple(r, "K(III)(III)IOO!O!", &f, &e->dims[0], &e->dims[1],
                                  &e->dims[2], &e->dims[3], &e->dims[4], &e->dims[5], &e->smem,
                                  &variant, &PyTuple_Type, &spans, &PyTuple_Type, &maps);
        ok = ok && PyTuple_GET_SIZE(spans) == n && PyTuple_GET_SIZE(maps) == self->nmaps;
        for (int a = 0; ok && a < n; ++a) {
            e->spans[a] = PyLong_AsLongLong(PyTuple_GET_ITEM(spans, a));
            ok = !(e->spans[a] == -1 && PyErr_Occurred());
        }
        for (int m = 0; ok && m < self->nmaps; ++m) {
            PyObject *bytes = PyTuple_GET_ITEM(maps, m);
            ok = PyBytes_Check(bytes) && PyBytes_GET_SIZE(bytes) == MAP_BYTES;
            if (ok)
                memcpy(e->maps[m], PyBytes_AS_STRING(bytes), MAP_BYTES);
        }
        if (!ok) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError,
                                "Launcher: resolve returned no span per argument or no map "
                                "of 128 bytes per tensor map");
            Py_DECREF(r);
            e->used = 0;
            return NULL;
        }
        Py_XSETREF(e->variant, Py_NewRef(variant));
        Py_DECREF(r);
        e->function = (void *)(uintptr_t)f;
        e->keylen = k;
        memcpy(e->key, key, sizeof(int64_t) * k);
        e->used = 1;
    }

    /* An output's bytes and another tensor's meet: Python looks closer, refuses or launches. */
    for (int i = 0; i < self->npairs; ++i) {
        int o = self->pairs[i][0], t = self->pairs[i][1];
        int64_t po = values[o][0], pt = values[t][0];
        if (po < pt + e->spans[t] && pt < po + e->spans[o])
            goto slow;
    }

    /* The parameter buffer, on this call's stack: no lock, nothing shared (aligned as a
       tensor map's .param is). */
    _Alignas(64) char buf[MAX_PARAM_BYTES];
    void *params[MAX_ARGS * (2 * MAX_RANK + 1)];
    for (int i = 0; i < self->nslots; ++i) {
        const Slot *s = &self->slots[i];
        int64_t iv = self->kinds[s->arg] == ARG_TENSOR ? values[s->arg][1 + s->field]
                                                       : values[s->arg][0];
        store(buf, s, iv, self->kinds[s->arg] == ARG_FLOAT ? floats[s->arg] : 0.0, e);
        params[i] = buf + s->offset;
    }
    PyObject *ordinal = PyLong_FromLongLong(dev);
    if (ordinal == NULL)
        return NULL;
    PyObject *st = PyObject_CallOneArg(self->get_stream, ordinal);
    Py_DECREF(ordinal);
    if (st == NULL)
        return NULL;
    void *stream = PyLong_AsVoidPtr(st);
    Py_DECREF(st);
    if (PyErr_Occurred())
        return NULL;
    /* The entry may be replaced by another thread while the GIL is released: copy it. */
    void *function = e->function;
    unsigned g[6], smem = e->smem;
    memcpy(g, e->dims, sizeof g);
    PyObject *variant = Py_NewRef(e->variant);
    const unsigned *cluster = self->has_cluster ? self->cluster : NULL;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = launch_one(function, g, smem, stream, params, cluster);
    Py_END_ALLOW_THREADS
    if (err) {
        /* Python reports it (and retries where the thread had no current context). */
        PyObject *shape = cluster == NULL ? Py_NewRef(Py_None)
                                          : Py_BuildValue("(III)", cluster[0], cluster[1],
                                                          cluster[2]);
        if (shape == NULL) {
            Py_DECREF(variant);
            return NULL;
        }
        PyObject *r = PyObject_CallFunction(self->failed, "iO(III)(III)IKKN", err, variant, g[0],
                                            g[1], g[2], g[3], g[4], g[5], smem,
                                            (unsigned long long)(uintptr_t)stream,
                                            (unsigned long long)(uintptr_t)params, shape);
        Py_DECREF(variant);
        if (r == NULL)
            return NULL;
        Py_DECREF(r);
    } else {
        Py_DECREF(variant);
    }
    return PyObject_CallOneArg(self->on_launch, self->name); /* cuda.PENDING.append */

slow:
    PyErr_Clear(); /* the Python launch function meets the same problem and says it properly */
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* Launcher(fallback, resolve, tensor_type, get_stream, on_launch, name, failed,
 *          kinds: str, ranks: tuple, dtypes: tuple, slots: tuple of (code, offset, arg, field),
 *          written: tuple of bools, limits: tuple of floats, pairs: tuple of (output, other),
 *          map_args: tuple of ints (the argument each map is built over), cluster: a tuple
 *          (cx, cy, cz) or None, inference_mode: callable) */
static PyObject *launcher_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *fallback, *resolve, *tensor_type, *get_stream, *on_launch, *name, *failed, *ranks,
        *dtypes, *slots, *written, *limits, *pairs, *map_args, *cluster, *inference_mode;
    const char *kinds;
    if (!PyArg_ParseTuple(args, "OOOOOOOsO!O!O!O!O!O!O!OO", &fallback, &resolve, &tensor_type,
                          &get_stream, &on_launch, &name, &failed, &kinds, &PyTuple_Type, &ranks,
                          &PyTuple_Type, &dtypes, &PyTuple_Type, &slots, &PyTuple_Type, &written,
                          &PyTuple_Type, &limits, &PyTuple_Type, &pairs, &PyTuple_Type, &map_args,
                          &cluster, &inference_mode))
        return NULL;
    Py_ssize_t n = (Py_ssize_t)strlen(kinds), ns = PyTuple_GET_SIZE(slots);
    Py_ssize_t np = PyTuple_GET_SIZE(pairs), nm = PyTuple_GET_SIZE(map_args);
    if (n > MAX_ARGS || PyTuple_GET_SIZE(ranks) != n || PyTuple_GET_SIZE(dtypes) != n ||
        PyTuple_GET_SIZE(written) != n || PyTuple_GET_SIZE(limits) != n || np > MAX_PAIRS ||
        ns > MAX_ARGS * (2 * MAX_RANK + 1) || nm > MAX_MAPS) {
        PyErr_SetString(PyExc_ValueError, "Launcher: too many arguments or mismatched tables");
        return NULL;
    }
    Launcher *self = (Launcher *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = launcher_vectorcall;
    self->fallback = Py_NewRef(fallback);
    self->resolve = Py_NewRef(resolve);
    self->tensor_type = Py_NewRef(tensor_type);
    self->get_stream = Py_NewRef(get_stream);
    self->on_launch = Py_NewRef(on_launch);
    self->name = Py_NewRef(name);
    self->failed = Py_NewRef(failed);
    self->inference_mode = Py_NewRef(inference_mode);
    self->nargs = (int)n;
    self->nslots = (int)ns;
    self->npairs = (int)np;
    self->nmaps = (int)nm;
    self->has_cluster = cluster != Py_None;
    if (self->has_cluster &&
        !PyArg_ParseTuple(cluster, "III", &self->cluster[0], &self->cluster[1], &self->cluster[2])) {
        Py_DECREF(self);
        return NULL;
    }
    for (Py_ssize_t m = 0; m < nm; ++m) {
        int a = (int)PyLong_AsLong(PyTuple_GET_ITEM(map_args, m));
        if (a < 0 || a >= n || kinds[a] != ARG_TENSOR) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Launcher: a map is not over a tensor argument");
            Py_DECREF(self);
            return NULL;
        }
        self->map_args[m] = a;
    }
    for (Py_ssize_t a = 0; a < n; ++a) {
        self->kinds[a] = kinds[a];
        self->ranks[a] = (int)PyLong_AsLong(PyTuple_GET_ITEM(ranks, a));
        self->dtypes[a] = Py_NewRef(PyTuple_GET_ITEM(dtypes, a));
        self->written[a] = (char)PyObject_IsTrue(PyTuple_GET_ITEM(written, a));
        self->limit[a] = PyFloat_AsDouble(PyTuple_GET_ITEM(limits, a));
        if (self->ranks[a] < 0 || self->ranks[a] > MAX_RANK) {
            PyErr_SetString(PyExc_ValueError, "Launcher: a tensor's rank is above 8");
            Py_DECREF(self);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < np; ++i) {
        int *pair = self->pairs[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(pairs, i), "ii", &pair[0], &pair[1])) {
            Py_DECREF(self);
            return NULL;
        }
        if (pair[0] < 0 || pair[0] >= n || pair[1] < 0 || pair[1] >= n ||
            kinds[pair[0]] != ARG_TENSOR || kinds[pair[1]] != ARG_TENSOR) {
            PyErr_SetString(PyExc_ValueError, "Launcher: a pair is not two tensor arguments");
            Py_DECREF(self);
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < ns; ++i) {
        Slot *s = &self->slots[i];
        const char *code;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(slots, i), "siii", &code, &s->offset, &s->arg,
                              &s->field)) {
            Py_DECREF(self);
            return NULL;
        }
        s->code = code[0];
        int bytes = s->code == 'M' ? MAP_BYTES : 8;
        int bad_map = s->code == 'M' && (s->field < 0 || s->field >= nm || s->offset % 64);
        if (s->offset < 0 || s->offset + bytes > MAX_PARAM_BYTES || s->arg < 0 || s->arg >= n ||
            bad_map) {
            PyErr_SetString(PyExc_ValueError, "Launcher: a parameter slot is out of range");
            Py_DECREF(self);
            return NULL;
        }
    }
    if (PyErr_Occurred()) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static int launcher_traverse(Launcher *self, visitproc visit, void *arg) {
    Py_VISIT(self->fallback);
    Py_VISIT(self->resolve);
    Py_VISIT(self->tensor_type);
    Py_VISIT(self->get_stream);
    Py_VISIT(self->on_launch);
    Py_VISIT(self->name);
    Py_VISIT(self->failed);
    Py_VISIT(self->inference_mode);
    for (int i = 0; i < N_ENTRIES; ++i)
        Py_VISIT(self->entries[i].variant);
    return 0;
}

static int launcher_clear(Launcher *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->resolve);
    Py_CLEAR(self->tensor_type);
    Py_CLEAR(self->get_stream);
    Py_CLEAR(self->on_launch);
    Py_CLEAR(self->name);
    Py_CLEAR(self->failed);
    Py_CLEAR(self->inference_mode);
    for (int a = 0; a < self->nargs; ++a)
        Py_CLEAR(self->dtypes[a]);
    for (int i = 0; i < N_ENTRIES; ++i) {
        Py_CLEAR(self->entries[i].variant);
        self->entries[i].used = 0;
    }
    return 0;
}

static void launcher_dealloc(Launcher *self) {
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Forget every remembered launch (the Python side's caches were cleared). */
static PyObject *launcher_forget(Launcher *self, PyObject *unused) {
    for (int i = 0; i < N_ENTRIES; ++i) {
        Py_CLEAR(self->entries[i].variant);
        self->entries[i].used = 0;
    }
    Py_RETURN_NONE;
}

static PyMethodDef launcher_methods[] = {
    {"forget", (PyCFunction)launcher_forget, METH_NOARGS, "forget every remembered launch"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cutec_fastlaunch.Launcher",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = launcher_new,
    .tp_traverse = (traverseproc)launcher_traverse,
    .tp_clear = (inquiry)launcher_clear,
    .tp_dealloc = (destructor)launcher_dealloc,
    .tp_methods = launcher_methods,
    .tp_doc = "a kernel's launch for torch tensors and Python scalars, in C",
};

/* set_launch(address): the cuLaunchKernel to call (tests substitute a recorder). */
static PyObject *set_launch(PyObject *self, PyObject *address) {
    void *p = PyLong_AsVoidPtr(address);
    if (p == NULL && PyErr_Occurred())
        return NULL;
    cu_launch_kernel = (launch_fn)p;
    Py_RETURN_NONE;
}

/* set_launch_ex(address): the cuLaunchKernelEx to call (tests substitute a recorder). */
static PyObject *set_launch_ex(PyObject *self, PyObject *address) {
    void *p = PyLong_AsVoidPtr(address);
    if (p == NULL && PyErr_Occurred())
        return NULL;
    cu_launch_kernel_ex = (launch_ex_fn)p;
    Py_RETURN_NONE;
}

static PyObject *have_driver(PyObject *self, PyObject *unused) {
    return PyBool_FromLong(cu_launch_kernel != NULL);
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL, "cuLaunchKernel"},
    {"launch_ex", (PyCFunction)(void (*)(void))launch_ex, METH_FASTCALL,
     "cuLaunchKernelEx with a cluster shape"},
    {"set_launch", set_launch, METH_O, "the cuLaunchKernel to call, by address"},
    {"set_launch_ex", set_launch_ex, METH_O, "the cuLaunchKernelEx to call, by address"},
    {"have_driver", have_driver, METH_NOARGS, "whether libcuda's cuLaunchKernel was found"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cutec_fastlaunch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cutec_fastlaunch(void) {
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (libcuda) {
        cu_launch_kernel = (launch_fn)dlsym(libcuda, "cuLaunchKernel");
        cu_launch_kernel_ex = (launch_ex_fn)dlsym(libcuda, "cuLaunchKernelEx");
    }
    s_dtype = PyUnicode_InternFromString("dtype");
    s_data_ptr = PyUnicode_InternFromString("data_ptr");
    s_get_device = PyUnicode_InternFromString("get_device");
    s_size = PyUnicode_InternFromString("size");
    s_stride = PyUnicode_InternFromString("stride");
    s_is_inference = PyUnicode_InternFromString("is_inference");
    if (PyType_Ready(&LauncherType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
