/* The megakernel validator's native fast path (optional; fastpath.py says how it is used).
 *
 * Two functions, each answering None wherever it is not sure, so that the pure-Python code,
 * which is the definition, decides every such case:
 *
 *   tasks_from_amk(tasks, buffers, tiled) -> list | None
 *       amk_io._tasks_from_amk without carried regions: each task dict copied, with the region
 *       its GEMV/GEMM tile params give.
 *   accept(doc) -> (tasks, counters) | None
 *       A tuple only when the document is, as the Python validator judges it, safe with every
 *       task on an SM of its own and touches no on-chip memory (safe_any_placement). Anything
 *       else (an unsafe schedule, a partial wait, pages, on-chip buffers, odd values) is None.
 *
 * The tables (known kinds, spaces, dtypes, ops) come from the Python modules through
 * configure(), so the rules have one source.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RANK_CAP 4
#define OUT_CAP 4
#define TASK_CAP 16384 /* bitsets of n*n bits; larger schedules go to the Python path */

/* kind flags */
#define K_READONLY 1
#define K_KV 2
#define K_OUTPUT 4
#define K_WEIGHT 8

static PyObject *s_id, *s_op, *s_inputs, *s_outputs, *s_out_counter, *s_waits, *s_params, *s_sm,
    *s_regions, *s_buffer, *s_box, *s_threshold, *s_counter, *s_kind, *s_shape, *s_dtype, *s_space,
    *s_init, *s_n_off, *s_N_tile, *s_m_off, *s_M_tile, *s_GEMM_TILE, *s_format, *s_target,
    *s_buffers, *s_counters, *s_tasks, *s_pages, *s_ops, *s_amk, *s_num_sms, *s_max_resident;

static PyObject *zero; /* the int 0 */
static PyObject *t_format, *t_kinds, *t_spaces, *t_dtypes, *t_ops, *t_params;
static long long t_max_in, t_max_out, t_max_waits, t_max_rank;

/* ------------------------------------------------------------------ helpers */

/* An exact int (not a bool) that fits a long long: 1 and *out set; else 0. */
static int exact_int(PyObject *o, long long *out) {
    int overflow = 0;
    if (o == NULL || !PyLong_CheckExact(o))
        return 0;
    *out = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* d[key] as a small int from a configuration table (exact str keys only); -1 when absent. */
static long table_code(PyObject *table, PyObject *key) {
    PyObject *v;
    if (key == NULL || !PyUnicode_CheckExact(key))
        return -1;
    v = PyDict_GetItemWithError(table, key);
    if (v == NULL) {
        PyErr_Clear();
        return -1;
    }
    return PyLong_AsLong(v);
}

/* ------------------------------------------------------------------ configure */

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *fmt, *kinds, *spaces, *dtypes, *ops, *params;
    if (!PyArg_ParseTuple(args, "UO!O!O!O!O!LLLL", &fmt, &PyDict_Type, &kinds, &PyDict_Type, &spaces,
                          &PyDict_Type, &dtypes, &PyDict_Type, &ops, &PyDict_Type, &params, &t_max_in,
                          &t_max_out, &t_max_waits, &t_max_rank))
        return NULL;
    if (t_max_rank > RANK_CAP || t_max_out > OUT_CAP) {
        PyErr_SetString(PyExc_ValueError, "caps above the native fast path's");
        return NULL;
    }
    Py_XSETREF(t_format, Py_NewRef(fmt));
    Py_XSETREF(t_kinds, Py_NewRef(kinds));
    Py_XSETREF(t_spaces, Py_NewRef(spaces));
    Py_XSETREF(t_dtypes, Py_NewRef(dtypes));
    Py_XSETREF(t_ops, Py_NewRef(ops));
    Py_XSETREF(t_params, Py_NewRef(params));
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ tasks_from_amk */

/* [a, b], or [a, a + width] when width is given (a new reference; NULL on an error). */
static PyObject *new_pair(PyObject *a, PyObject *b, PyObject *width) {
    PyObject *pair = PyList_New(2);
    if (pair == NULL)
        return NULL;
    if (width != NULL) {
        b = PyNumber_Add(a, width);
        if (b == NULL) {
            Py_DECREF(pair);
            return NULL;
        }
    } else
        Py_INCREF(b);
    PyList_SET_ITEM(pair, 0, Py_NewRef(a));
    PyList_SET_ITEM(pair, 1, b);
    PyObject_GC_UnTrack(pair); /* (see untracked_region) */
    return pair;
}

/* A region list holds only ints and containers of ints it made itself, so it can be part of no
 * reference cycle: the cyclic GC need not track it (CPython does the same for tuples and dicts of
 * atoms). Tracked, the five containers of each tile's region are what a process with a large heap
 * (torch imported) spends most of an import on: they survive into the oldest generation while the
 * schedule is validated, and each full collection then walks the whole heap. */
static void untracked_region(PyObject *regions) {
    PyObject *region = PyList_GET_ITEM(regions, 0);
    PyObject *box = PyDict_GetItem(region, s_box);
    if (box != NULL)
        PyObject_GC_UnTrack(box);
    PyObject_GC_UnTrack(region);
    PyObject_GC_UnTrack(regions);
}

/* The region list a tile's params give (a new reference), Py_None for none, NULL on a doubt. */
static PyObject *tile_region(PyObject *task, PyObject *shapes) {
    PyObject *params = PyDict_GetItemWithError(task, s_params);
    PyObject *outputs = PyDict_GetItemWithError(task, s_outputs);
    PyObject *lo, *width, *shape, *box, *pair, *region, *out, *row, *rows;
    Py_ssize_t rank, d;
    if (PyErr_Occurred())
        return NULL;
    /* params or {} / outputs or []: a value that is not a dict / list (falsy or not) gives none */
    if (params == NULL || !PyDict_CheckExact(params) || outputs == NULL || !PyList_CheckExact(outputs) ||
        PyList_GET_SIZE(outputs) != 1)
        Py_RETURN_NONE;
    lo = PyDict_GetItemWithError(params, s_n_off);
    width = PyDict_GetItemWithError(params, s_N_tile);
    if (PyErr_Occurred())
        return NULL;
    if (lo == NULL || width == NULL || !PyLong_CheckExact(lo) || !PyLong_CheckExact(width))
        Py_RETURN_NONE;
    shape = PyDict_GetItemWithError(shapes, PyList_GET_ITEM(outputs, 0));
    if (shape == NULL) {
        if (PyErr_Occurred())
            return NULL; /* unhashable output: Python raises; let it */
        Py_RETURN_NONE;
    }
    if (!PyList_Check(shape) || PyList_GET_SIZE(shape) == 0)
        Py_RETURN_NONE;
    if (!PyList_CheckExact(shape))
        return NULL;
    rank = PyList_GET_SIZE(shape);
    box = PyList_New(rank);
    if (box == NULL)
        return NULL;
    for (d = 0; d < rank - 1; d++) {
        if ((pair = new_pair(zero, PyList_GET_ITEM(shape, d), NULL)) == NULL)
            goto fail;
        PyList_SET_ITEM(box, d, pair);
    }
    if ((pair = new_pair(lo, NULL, width)) == NULL)
        goto fail;
    PyList_SET_ITEM(box, rank - 1, pair);
    if (rank >= 2) {
        PyObject *op = PyDict_GetItemWithError(task, s_op);
        if (op != NULL && PyUnicode_CheckExact(op) && PyUnicode_Compare(op, s_GEMM_TILE) == 0) {
            row = PyDict_GetItemWithError(params, s_m_off);
            rows = PyDict_GetItemWithError(params, s_M_tile);
            if (row != NULL && rows != NULL && PyLong_CheckExact(row) && PyLong_CheckExact(rows)) {
                if ((pair = new_pair(row, NULL, rows)) == NULL)
                    goto fail;
                PyList_SetItem(box, rank - 2, pair);
            }
        }
        if (PyErr_Occurred())
            goto fail;
    }
    region = PyDict_New();
    if (region == NULL)
        goto fail;
    if (PyDict_SetItem(region, s_buffer, PyList_GET_ITEM(outputs, 0)) < 0 ||
        PyDict_SetItem(region, s_box, box) < 0) {
        Py_DECREF(region);
        goto fail;
    }
    Py_DECREF(box);
    out = PyList_New(1);
    if (out == NULL) {
        Py_DECREF(region);
        return NULL;
    }
    PyList_SET_ITEM(out, 0, region);
    untracked_region(out);
    return out;
fail:
    Py_DECREF(box);
    return NULL;
}

/* Untracked, a task's copy costs the cyclic GC nothing either. Safe for a dict: CPython tracks
 * it again as soon as a container is stored in it, and what it holds now (the task's own values)
 * the task keeps alive. A cycle made later through a list it holds would not be collected. */
static void untracked_copy(PyObject *copy) {
    PyObject_GC_UnTrack(copy);
}

static PyObject *build_shapes(PyObject *buffers) {
    PyObject *shapes = PyDict_New();
    Py_ssize_t i;
    if (shapes == NULL)
        return NULL;
    for (i = 0; i < PyList_GET_SIZE(buffers); i++) {
        PyObject *b = PyList_GET_ITEM(buffers, i), *id, *shape;
        if (!PyDict_Check(b))
            continue;
        if (!PyDict_CheckExact(b))
            goto fail;
        id = PyDict_GetItemWithError(b, s_id);
        shape = PyDict_GetItemWithError(b, s_shape);
        if (PyErr_Occurred() || PyDict_SetItem(shapes, id ? id : Py_None, shape ? shape : Py_None) < 0)
            goto fail;
    }
    return shapes;
fail:
    Py_DECREF(shapes);
    return NULL;
}

static PyObject *tasks_from_amk(PyObject *self, PyObject *args) {
    PyObject *tasks, *buffers, *tiled, *out, *shapes = NULL;
    Py_ssize_t i, n;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyList_Type, &tasks, &PyList_Type, &buffers, &tiled))
        return NULL;
    if (!PyAnySet_Check(tiled)) {
        PyErr_SetString(PyExc_TypeError, "tiled must be a set");
        return NULL;
    }
    n = PyList_GET_SIZE(tasks);
    out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        PyObject *task = PyList_GET_ITEM(tasks, i), *copy, *op, *regions;
        int is_tiled = 0;
        if (!PyDict_CheckExact(task)) {
            PyList_SET_ITEM(out, i, Py_NewRef(task));
            continue;
        }
        copy = PyDict_Copy(task);
        if (copy == NULL)
            goto doubt;
        PyList_SET_ITEM(out, i, copy);
        op = PyDict_GetItemWithError(task, s_op);
        if (op != NULL) {
            is_tiled = PySet_Contains(tiled, op);
            if (is_tiled < 0)
                goto doubt;
        } else if (PyErr_Occurred())
            goto doubt;
        if (!is_tiled) {
            untracked_copy(copy);
            continue;
        }
        if (shapes == NULL && (shapes = build_shapes(buffers)) == NULL)
            goto doubt;
        regions = tile_region(task, shapes);
        if (regions == NULL)
            goto doubt;
        if (regions != Py_None && PyDict_SetItem(copy, s_regions, regions) < 0) {
            Py_DECREF(regions);
            goto doubt;
        }
        Py_DECREF(regions);
        untracked_copy(copy);
    }
    Py_XDECREF(shapes);
    return out;
doubt: /* the Python code decides (and raises what it raises) */
    PyErr_Clear();
    Py_XDECREF(shapes);
    Py_DECREF(out);
    Py_RETURN_NONE;
}

#include "_mkfast_accept.h"

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "Set the tables the checks use (see fastpath.py)."},
    {"tasks_from_amk", tasks_from_amk, METH_VARARGS, "amk_io._tasks_from_amk without carried regions, or None."},
    {"accept", accept, METH_O, "(tasks, counters) when the document is safe_any_placement, else None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mkfast", NULL, -1, methods};

#define INTERN(var, text)                                                                          \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                          \
        return NULL;

PyMODINIT_FUNC PyInit__mkfast(void) {
    INTERN(s_id, "id") INTERN(s_op, "op") INTERN(s_inputs, "inputs") INTERN(s_outputs, "outputs")
    INTERN(s_out_counter, "out_counter") INTERN(s_waits, "waits") INTERN(s_params, "params")
    INTERN(s_sm, "sm") INTERN(s_regions, "regions") INTERN(s_buffer, "buffer") INTERN(s_box, "box")
    INTERN(s_threshold, "threshold") INTERN(s_counter, "counter") INTERN(s_kind, "kind")
    INTERN(s_shape, "shape") INTERN(s_dtype, "dtype") INTERN(s_space, "space") INTERN(s_init, "init")
    INTERN(s_n_off, "n_off") INTERN(s_N_tile, "N_tile") INTERN(s_m_off, "m_off")
    INTERN(s_M_tile, "M_tile") INTERN(s_GEMM_TILE, "GEMM_TILE") INTERN(s_format, "format")
    INTERN(s_target, "target") INTERN(s_buffers, "buffers") INTERN(s_counters, "counters")
    INTERN(s_tasks, "tasks") INTERN(s_pages, "pages") INTERN(s_ops, "ops") INTERN(s_amk, "amk")
    INTERN(s_num_sms, "num_sms") INTERN(s_max_resident, "max_resident")
    if ((zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
