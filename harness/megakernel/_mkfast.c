/* The megakernel validator's native fast path (optional; fastpath.py says how it is used).
 *
 * Three functions, each answering None wherever it is not sure, so that the pure-Python code,
 * which is the definition, decides every such case:
 *
 *   tasks_from_amk(tasks, buffers, tiled) -> list | None
 *       amk_io._tasks_from_amk without carried regions: each task dict copied, with the region
 *       its GEMV/GEMM tile params give.
 *   judge(doc) -> (tasks, counters, grid) | False | None
 *       A tuple only when the document is, as the Python validator judges it, safe with every
 *       task on an SM of its own and touches no on-chip memory (safe_any_placement); False only
 *       when the Python validator is certain to call it unsafe (_mkfast_accept.h lists when);
 *       None for everything else (a partial wait, pages, on-chip buffers, odd values, ...).
 *   accept(doc) -> (tasks, counters) | None
 *       judge's first answer alone.
 *
 * The tables (known kinds, spaces, dtypes, ops) come from the Python modules through
 * configure(), so the rules have one source.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
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
    *s_buffers, *s_counters, *s_tasks, *s_pages, *s_ops, *s_amk, *s_num_sms, *s_max_resident, *s_est_bytes, *s_est_flops;

static PyObject *zero; /* the int 0 */
static PyObject *t_format, *t_kinds, *t_spaces, *t_dtypes, *t_ops, *t_params;
static long long t_max_in, t_max_out, t_max_waits, t_max_rank;

/* ------------------------------------------------------------------ helpers */

/* An exact int (not a bool) that fits a long long: 1 and *out set; else 0. */
static inline int exact_int(PyObject *o, long long *out) {
    int overflow = 0;
    if (o == NULL || !PyLong_CheckExact(o))
        return 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)o)) {
        *out = PyUnstable_Long_CompactValue((PyLongObject *)o);
        return 1;
    }
#else
    if (Py_SIZE(o) >= -1 && Py_SIZE(o) <= 1) { /* (one digit at most: most ids, counts and dims) */
        *out = Py_SIZE(o) * (long long)((PyLongObject *)o)->ob_digit[0];
        return 1;
    }
#endif
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

#include "_mkfast_read.h"

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
    return pair;
}

/* The import's containers are left out of the cyclic GC. In a process with a large heap (torch
 * imported) that is most of an import's cost when tracked: they survive into the oldest
 * generation while the schedule is validated, and every full collection then walks the whole heap
 * (3,342 tasks: 3 ms untracked, 9 ms with the task copies tracked, 25 ms with everything tracked).
 * It is safe because the import builds no reference cycle: a region list holds only ints and the
 * containers made here for it, and a task's copy holds its region list and the values the AMK task
 * holds, none of which refers back to the copy; such objects are freed by reference counting
 * alone, as CPython does for the tuples and dicts of atoms it untracks itself. What is not
 * collected is a cycle that code builds later through one of these lists (a dict is tracked again
 * as soon as a container is stored in it, a list is not): code that makes one should work on
 * copy.deepcopy(doc), whose containers are all tracked. tests/megakernel/test_mk_gc.py pins both. */
static void untrack_region(PyObject *regions, PyObject *box) {
    Py_ssize_t d;
    for (d = 0; d < PyList_GET_SIZE(box); d++)
        PyObject_GC_UnTrack(PyList_GET_ITEM(box, d));
    PyObject_GC_UnTrack(box);
    PyObject_GC_UnTrack(PyList_GET_ITEM(regions, 0));
    PyObject_GC_UnTrack(regions);
}

/* The keys tasks_from_amk looks up: the document's own objects once seen (an identity match in
 * every later look-up), each held while the call runs. */
enum { K_OP, K_PARAMS, K_OUTPUTS, NK_TASK };
enum { P_N_OFF, P_N_TILE, P_M_OFF, P_M_TILE, NK_PARAM };

typedef struct {
    Names task, param;
    int task_seen, param_seen;
} Keys;

static void keys_adopt(Names *names, PyObject *dict) {
    PyObject *found[NF_TASK];
    int j;
    (void)fields(dict, names, found); /* (stops at a key that is not a str: the rest stay interned) */
    for (j = 0; j < names->n; j++)
        Py_INCREF(names->key[j]);
}

static void keys_release(Keys *keys) {
    int j;
    for (j = 0; keys->task_seen && j < keys->task.n; j++)
        Py_DECREF(keys->task.key[j]);
    for (j = 0; keys->param_seen && j < keys->param.n; j++)
        Py_DECREF(keys->param.key[j]);
}

/* The region list a tile's params give (a new reference), Py_None for none, NULL on a doubt. */
static PyObject *tile_region(PyObject *task, PyObject *op, PyObject *shapes, Keys *keys) {
    PyObject *params = PyDict_GetItemWithError(task, keys->task.key[K_PARAMS]);
    PyObject *outputs = PyDict_GetItemWithError(task, keys->task.key[K_OUTPUTS]);
    PyObject *lo, *width, *shape, *box, *pair, *region, *out, *row, *rows, **pk;
    Py_ssize_t rank, d;
    if (PyErr_Occurred())
        return NULL;
    /* params or {} / outputs or []: a value that is not a dict / list (falsy or not) gives none */
    if (params == NULL || !PyDict_CheckExact(params) || outputs == NULL || !PyList_CheckExact(outputs) ||
        PyList_GET_SIZE(outputs) != 1)
        Py_RETURN_NONE;
    if (!PyLong_CheckExact(PyList_GET_ITEM(outputs, 0)) || !str_keys(params))
        return NULL; /* (an id of another type, or a key that is not a str: Python's semantics decide) */
    if (!keys->param_seen) {
        keys_adopt(&keys->param, params);
        keys->param_seen = 1;
    }
    pk = keys->param.key;
    lo = PyDict_GetItemWithError(params, pk[P_N_OFF]);
    width = PyDict_GetItemWithError(params, pk[P_N_TILE]);
    if (PyErr_Occurred())
        return NULL;
    if (lo == NULL || width == NULL || !PyLong_CheckExact(lo) || !PyLong_CheckExact(width))
        Py_RETURN_NONE;
    shape = PyDict_GetItemWithError(shapes, PyList_GET_ITEM(outputs, 0));
    if (shape == NULL) {
        if (PyErr_Occurred())
            return NULL;
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
    if (rank >= 2 && PyUnicode_Compare(op, s_GEMM_TILE) == 0) {
        row = PyDict_GetItemWithError(params, pk[P_M_OFF]);
        rows = PyDict_GetItemWithError(params, pk[P_M_TILE]);
        if (row != NULL && rows != NULL && PyLong_CheckExact(row) && PyLong_CheckExact(rows)) {
            if ((pair = new_pair(row, NULL, rows)) == NULL)
                goto fail;
            PyList_SetItem(box, rank - 2, pair);
        }
    }
    if (PyErr_Occurred() || (region = PyDict_New()) == NULL)
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
    untrack_region(out, box);
    return out;
fail:
    Py_DECREF(box);
    return NULL;
}

/* {buffer id: shape}; NULL (a doubt) when an id is not an exact int or None (inserting another
 * type of key could run code of its own). */
static PyObject *build_shapes(PyObject *buffers) {
    PyObject *shapes = PyDict_New();
    Py_ssize_t i;
    if (shapes == NULL)
        return NULL;
    for (i = 0; i < PyList_GET_SIZE(buffers); i++) {
        PyObject *b = PyList_GET_ITEM(buffers, i), *id, *shape;
        int ok;
        if (!PyDict_Check(b))
            continue;
        if (!PyDict_CheckExact(b))
            goto fail;
        Py_INCREF(b); /* (held, and its id: a key's own __eq__ might drop either) */
        id = PyDict_GetItemWithError(b, s_id);
        Py_XINCREF(id);
        shape = PyDict_GetItemWithError(b, s_shape);
        ok = !PyErr_Occurred() && (id == NULL || id == Py_None || PyLong_CheckExact(id)) &&
             PyDict_SetItem(shapes, id ? id : Py_None, shape ? shape : Py_None) == 0;
        Py_XDECREF(id);
        Py_DECREF(b);
        if (!ok)
            goto fail;
    }
    return shapes;
fail:
    Py_DECREF(shapes);
    return NULL;
}

/* Task i's copy, with its region when it is a tile; 0 on a doubt. */
static int import_task(PyObject *task, PyObject *tiled, PyObject *buffers, PyObject **shapes, Keys *keys,
                       PyObject **copy) {
    PyObject *op, *regions;
    int is_tiled;
    if ((*copy = PyDict_Copy(task)) == NULL)
        return 0;
    if (!keys->task_seen) {
        keys_adopt(&keys->task, task);
        keys->task_seen = 1;
    }
    op = PyDict_GetItemWithError(*copy, keys->task.key[K_OP]);
    if (op == NULL)
        return !PyErr_Occurred();
    if (!PyUnicode_CheckExact(op))
        return 0; /* (a set look-up on it might run Python code) */
    if ((is_tiled = PySet_Contains(tiled, op)) <= 0)
        return is_tiled == 0;
    if (*shapes == NULL && (*shapes = build_shapes(buffers)) == NULL)
        return 0;
    if ((regions = tile_region(*copy, op, *shapes, keys)) == NULL)
        return 0;
    if (regions != Py_None && PyDict_SetItem(*copy, s_regions, regions) < 0) {
        Py_DECREF(regions);
        return 0;
    }
    Py_DECREF(regions);
    return 1;
}

static PyObject *tasks_from_amk(PyObject *self, PyObject *args) {
    PyObject *tasks, *buffers, *tiled, *out, *shapes = NULL;
    Py_ssize_t i, n;
    Keys keys;
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
    memset(&keys, 0, sizeof keys);
    names_init(&keys.task, NK_TASK, s_op, s_params, s_outputs);
    names_init(&keys.param, NK_PARAM, s_n_off, s_N_tile, s_m_off, s_M_tile);
    for (i = 0; i < n; i++) {
        PyObject *task = PyList_GET_ITEM(tasks, i), *copy = NULL;
        int ok;
        if (!PyDict_CheckExact(task)) {
            PyList_SET_ITEM(out, i, Py_NewRef(task));
            continue;
        }
        ok = import_task(task, tiled, buffers, &shapes, &keys, &copy);
        if (copy != NULL) {
            PyObject_GC_UnTrack(copy); /* (see untrack_region) */
            PyList_SET_ITEM(out, i, copy);
        }
        if (!ok)
            goto doubt;
    }
    keys_release(&keys);
    Py_XDECREF(shapes);
    return out;
doubt: /* the Python code decides (and raises what it raises) */
    PyErr_Clear();
    keys_release(&keys);
    Py_XDECREF(shapes);
    Py_DECREF(out);
    Py_RETURN_NONE;
}

#include "_mkfast_accept.h"

/* touch(value) -> count: every dict value and list item under value visited once, nothing checked.
 * Not used by the validator: the benchmark times it as the least any native reader of a document's
 * objects must spend (bench/megakernel_amk_throughput.py, "read floor"). */
static long long touch_all(PyObject *o, int depth) {
    long long n = 1;
    Py_ssize_t i = 0;
    PyObject *key, *value;
    if (depth > 64)
        return n;
    if (PyDict_CheckExact(o))
        while (PyDict_Next(o, &i, &key, &value))
            n += touch_all(value, depth + 1);
    else if (PyList_CheckExact(o))
        for (i = 0; i < PyList_GET_SIZE(o); i++)
            n += touch_all(PyList_GET_ITEM(o, i), depth + 1);
    return n;
}

static PyObject *touch(PyObject *self, PyObject *value) {
    return PyLong_FromLongLong(touch_all(value, 0));
}

static PyMethodDef methods[] = {
    {"touch", touch, METH_O, "Objects under a value, each visited once (a benchmark's read floor)."},
    {"configure", configure, METH_VARARGS, "Set the tables the checks use (see fastpath.py)."},
    {"tasks_from_amk", tasks_from_amk, METH_VARARGS, "amk_io._tasks_from_amk without carried regions, or None."},
    {"judge", judge, METH_O, "(tasks, counters, grid): safe_any_placement; False: unsafe; None: not sure."},
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
    INTERN(s_num_sms, "num_sms") INTERN(s_max_resident, "max_resident") INTERN(s_est_bytes, "est_bytes")
    INTERN(s_est_flops, "est_flops")
    if ((zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
