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

static PyObject *s_ir_version, *s_meta, *s_crucible_regions;
static PyObject *zero; /* the int 0 */
static PyObject *t_format;
static long long t_max_in, t_max_out, t_max_waits, t_max_rank;

/* The configuration's name tables (kinds, spaces, dtypes, ops, parameter names), as plain C: a
 * document's value strings are new objects each (JSON's decoder shares only keys), so a look-up
 * compares their text with a handful of short names, cheaper than a dict's hashing and probing. */
#define TAB_CAP 64
typedef struct {
    int n;
    PyObject *key[TAB_CAP]; /* exact ASCII strs, held */
    const char *text[TAB_CAP]; /* their characters and lengths, side by side for the scan */
    Py_ssize_t len[TAB_CAP];
    long code[TAB_CAP];
} StrTable;
static StrTable tab_kinds, tab_spaces, tab_dtypes, tab_ops, tab_params;

/* AMK's per-opcode rules (amk_ops.py), read once by configure(): tab_ops's code of an op is its
 * position here. Required parameters are a mask of tab_params positions. */
#define RULE_CAP 4
typedef struct {
    long low, high, nouts, kv_writer, tiled, gemm;
    uint64_t required;
    int nrules;
    long rule_out[RULE_CAP], rule_at[RULE_CAP], rule_need[RULE_CAP];
} OpSpec;
static OpSpec op_spec[TAB_CAP];
static int configured;
enum { T_N_OFF, T_N_TILE, T_M_OFF, T_M_TILE, NT_TILE }; /* the tile params amk_io.tile_regions reads */
static int tile_param[NT_TILE];                          /* their tab_params positions */

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

/* The position of str o in table t, or -1 (o absent, not an exact str, or not ASCII: every name
 * in the tables is). */
static int strtab_find(const StrTable *t, PyObject *o) {
    Py_ssize_t len;
    const char *text;
    int i;
    if (o == NULL || !PyUnicode_CheckExact(o) || !PyUnicode_IS_ASCII(o))
        return -1;
    len = PyUnicode_GET_LENGTH(o);
    text = (const char *)PyUnicode_DATA(o);
    for (i = 0; i < t->n; i++)
        if (t->len[i] == len && (len == 0 || (t->text[i][0] == text[0] && memcmp(t->text[i], text, len) == 0)))
            return i;
    return -1;
}

/* o's code in table t, -1 when absent. */
static long strtab_code(const StrTable *t, PyObject *o) {
    int i = strtab_find(t, o);
    return i < 0 ? -1 : t->code[i];
}

static void strtab_clear(StrTable *t) {
    int i;
    for (i = 0; i < t->n; i++)
        Py_CLEAR(t->key[i]);
    t->n = 0;
}

/* Adds name (an exact ASCII str) with code; its position, or -1 with an exception set. */
static int strtab_add(StrTable *t, PyObject *name, long code) {
    if (!PyUnicode_CheckExact(name) || !PyUnicode_IS_ASCII(name) || t->n >= TAB_CAP) {
        PyErr_SetString(PyExc_ValueError, "a table name is not an ASCII str, or a table is over its cap");
        return -1;
    }
    t->key[t->n] = Py_NewRef(name);
    t->text[t->n] = (const char *)PyUnicode_DATA(name);
    t->len[t->n] = PyUnicode_GET_LENGTH(name);
    t->code[t->n] = code;
    return t->n++;
}

/* A {str: int} dict into table t (emptied first); 0 with an exception set on an error. */
static int strtab_fill(StrTable *t, PyObject *dict) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    strtab_clear(t);
    while (PyDict_Next(dict, &pos, &key, &value)) {
        long code = PyLong_AsLong(value);
        if ((code == -1 && PyErr_Occurred()) || strtab_add(t, key, code) < 0)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ configure */

/* One entry of configure()'s ops table: (low, high, outs, required, rules, kv_writer, tiled). */
static int read_op_spec(PyObject *op, PyObject *entry, OpSpec *spec) {
    PyObject *required, *rules;
    Py_ssize_t j;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 7)
        return 0;
    required = PyTuple_GET_ITEM(entry, 3);
    rules = PyTuple_GET_ITEM(entry, 4);
    if (!PyTuple_Check(required) || !PyTuple_Check(rules) || PyTuple_GET_SIZE(rules) > RULE_CAP)
        return 0;
    spec->low = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    spec->high = PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
    spec->nouts = PyLong_AsLong(PyTuple_GET_ITEM(entry, 2));
    spec->kv_writer = PyLong_AsLong(PyTuple_GET_ITEM(entry, 5));
    spec->tiled = PyLong_AsLong(PyTuple_GET_ITEM(entry, 6));
    spec->gemm = PyUnicode_CompareWithASCIIString(op, "GEMM_TILE") == 0;
    for (j = 0; j < PyTuple_GET_SIZE(required); j++) {
        int at = strtab_find(&tab_params, PyTuple_GET_ITEM(required, j));
        if (at < 0)
            return 0; /* (configure's params name every required one) */
        spec->required |= (uint64_t)1 << at;
    }
    spec->nrules = (int)PyTuple_GET_SIZE(rules);
    for (j = 0; j < spec->nrules; j++) { /* (is_out, position, need: 0 int, 1 weight, 2 kv) */
        PyObject *rule = PyTuple_GET_ITEM(rules, j);
        if (!PyTuple_Check(rule) || PyTuple_GET_SIZE(rule) != 3)
            return 0;
        spec->rule_out[j] = PyLong_AsLong(PyTuple_GET_ITEM(rule, 0));
        spec->rule_at[j] = PyLong_AsLong(PyTuple_GET_ITEM(rule, 1));
        spec->rule_need[j] = PyLong_AsLong(PyTuple_GET_ITEM(rule, 2));
    }
    return !PyErr_Occurred();
}

/* configure(format, kinds, spaces, dtypes, ops, params, max_in, max_out, max_waits, max_rank):
 * kinds/spaces/dtypes {name: flags}, ops {op: read_op_spec's tuple}, params {name: 0 untyped, 1
 * int32, 2 real} naming every required parameter and the tile ones. */
static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *tiles[NT_TILE] = {s_n_off, s_N_tile, s_m_off, s_M_tile};
    PyObject *fmt, *kinds, *spaces, *dtypes, *ops, *params, *op, *entry;
    Py_ssize_t pos = 0;
    int j;
    if (!PyArg_ParseTuple(args, "UO!O!O!O!O!LLLL", &fmt, &PyDict_Type, &kinds, &PyDict_Type, &spaces,
                          &PyDict_Type, &dtypes, &PyDict_Type, &ops, &PyDict_Type, &params, &t_max_in,
                          &t_max_out, &t_max_waits, &t_max_rank))
        return NULL;
    configured = 0; /* (until every table is whole, judge() answers None) */
    if (t_max_rank > RANK_CAP || t_max_out > OUT_CAP) {
        PyErr_SetString(PyExc_ValueError, "caps above the native fast path's");
        return NULL;
    }
    if (!strtab_fill(&tab_kinds, kinds) || !strtab_fill(&tab_spaces, spaces) || !strtab_fill(&tab_dtypes, dtypes) ||
        !strtab_fill(&tab_params, params))
        return NULL;
    for (j = 0; j < NT_TILE; j++)
        if ((tile_param[j] = strtab_find(&tab_params, tiles[j])) < 0) {
            PyErr_SetString(PyExc_ValueError, "params must name the tile parameters");
            return NULL;
        }
    strtab_clear(&tab_ops);
    while (PyDict_Next(ops, &pos, &op, &entry)) {
        int at = strtab_add(&tab_ops, op, tab_ops.n);
        if (at < 0)
            return NULL;
        memset(&op_spec[at], 0, sizeof op_spec[at]);
        if (!read_op_spec(op, entry, &op_spec[at])) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "an ops entry is not (low, high, outs, required, rules, kv_writer, "
                                                  "tiled), or names a parameter params does not");
            return NULL;
        }
    }
    Py_XSETREF(t_format, Py_NewRef(fmt));
    configured = 1;
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
    INTERN(s_est_flops, "est_flops") INTERN(s_ir_version, "ir_version") INTERN(s_meta, "meta")
    INTERN(s_crucible_regions, "crucible_regions")
    if ((zero = PyLong_FromLong(0)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
