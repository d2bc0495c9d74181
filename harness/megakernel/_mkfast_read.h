/* Reading a document for judge() (_mkfast_accept.h); part of _mkfast.c (included there).
 *
 * Every reader here answers 1 (read, and as strict as the Python fast reader), 0 (a doubt: the
 * Python code decides) or -1 (a structural violation the Python careful reader is certain to
 * report as well: a reference to a buffer or counter that does not exist, a write to a
 * read-only buffer, a threshold below 1, a tile outside its buffer, or a task breaking AMK's
 * per-opcode rules). A -1 is only given on values Python reads the same way (exact ints, exact
 * dicts and lists), so the document is rejected whatever else it holds. */

typedef struct {
    long long lo[RANK_CAP], hi[RANK_CAP];
} Box;

typedef struct {
    int n, nb, nc, W, grid, check_ops;
    int *rank, *kflags, *intdtype;        /* per buffer */
    long long *shape;                     /* per buffer, RANK_CAP dims */
    int *out, *in_start, *in_buf;         /* per task; inputs as CSR */
    int *w_start, *w_counter;             /* waits as CSR */
    long long *w_k;
    int *o_start, *o_buf;                 /* outputs as CSR */
    Box *o_box;                           /* per output entry */
    uint64_t *anc, *cmask;                /* bitsets: W words per task / counter */
    int *total, *made, *wcount, *wstart, *wlist;
    int *order, *sm, *qpred;              /* per task, where the loader places it (_mkfast_placed.h) */
    long long *cost;                      /* per task: est_bytes, est_flops as the loader counts them */
    PyObject **tf;                        /* per task: its NF_TASK field values (borrowed) */
    void *arena;                          /* one allocation behind every array above */
    PyObject *pkey[16]; /* parameter keys seen, with their PARAM_TYPES codes */
    long pcode[16];
    int npk;
} Sched;

/* The fields read from each kind of object, in one pass over its entries (cheaper than a look-up
 * per field). A key is matched by identity first: JSON's decoder gives every object of one
 * document the same key objects, and once one is matched by value it is matched by identity from
 * then on (the document holds it alive for the whole call, and no Python code runs meanwhile). */
enum { F_ID, F_OP, F_INPUTS, F_OUTPUTS, F_OUT_COUNTER, F_WAITS, F_PARAMS, F_SM, F_REGIONS, F_BYTES, F_FLOPS, NF_TASK };
enum { B_ID, B_KIND, B_DTYPE, B_SPACE, B_SHAPE, NF_BUFFER };
enum { W_COUNTER, W_THRESHOLD, NF_WAIT };
enum { C_ID, C_INIT, NF_COUNTER };
enum { R_BUFFER, R_BOX, NF_REGION };

typedef struct {
    int n;
    PyObject *key[NF_TASK];
    Py_hash_t hash[NF_TASK];
} Names;

static void names_init(Names *names, int n, ...) {
    va_list args;
    int j;
    va_start(args, n);
    names->n = n;
    for (j = 0; j < n; j++) {
        names->key[j] = va_arg(args, PyObject *);
        names->hash[j] = PyObject_Hash(names->key[j]); /* (interned: cached) */
    }
    va_end(args);
}

/* The values of `names`'s keys in the exact dict `d` (NULL where absent); 0 at a doubt: a key
 * that is a str subclass or not a str at all (it might compare equal to a field name). */
static int fields(PyObject *d, Names *names, PyObject **out) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int j, n = names->n;
    for (j = 0; j < n; j++)
        out[j] = NULL;
    while (PyDict_Next(d, &pos, &key, &value)) {
        for (j = 0; j < n && names->key[j] != key; j++)
            ;
        if (j == n) {
            Py_hash_t h;
            if (!PyUnicode_CheckExact(key))
                return 0;
            h = PyObject_Hash(key);
            for (j = 0; j < n; j++)
                if (names->hash[j] == h && PyUnicode_Compare(names->key[j], key) == 0) {
                    names->key[j] = key;
                    break;
                }
            if (j == n)
                continue;
        }
        out[j] = value;
    }
    return 1;
}

/* Every key of the exact dict d is an exact str, so that looking a str up in it compares strs
 * only and runs no Python code (a key of another type may have an __eq__ of its own, which could
 * change the document while this code holds pointers into it). */
static int str_keys(PyObject *d) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &pos, &key, &value))
        if (!PyUnicode_CheckExact(key))
            return 0;
    return 1;
}

/* PARAM_TYPES's code of a parameter key: 1 int32, 2 real, -1 none (a key object's code is kept). */
static long param_code(Sched *s, PyObject *key) {
    int j;
    long code;
    for (j = 0; j < s->npk; j++)
        if (s->pkey[j] == key)
            return s->pcode[j];
    code = table_code(t_params, key);
    if (s->npk < 16) {
        s->pkey[s->npk] = key;
        s->pcode[s->npk++] = code;
    }
    return code;
}

static int read_buffers(Sched *s, PyObject *buffers, Names *names) {
    Py_ssize_t i, d;
    PyObject *f[NF_BUFFER];
    for (i = 0; i < s->nb; i++) {
        PyObject *b = PyList_GET_ITEM(buffers, i), *shape;
        long long id, dim;
        long kind, dtype, onchip;
        if (!PyDict_CheckExact(b) || !fields(b, names, f) || !exact_int(f[B_ID], &id) || id != i)
            return 0;
        kind = table_code(t_kinds, f[B_KIND]);
        dtype = table_code(t_dtypes, f[B_DTYPE]);
        onchip = f[B_SPACE] == NULL ? 0 : table_code(t_spaces, f[B_SPACE]); /* absent: HBM */
        shape = f[B_SHAPE];
        if (kind < 0 || dtype < 0 || onchip != 0 || shape == NULL || !PyList_CheckExact(shape) ||
            PyList_GET_SIZE(shape) < 1 || PyList_GET_SIZE(shape) > t_max_rank)
            return 0;
        s->rank[i] = (int)PyList_GET_SIZE(shape);
        for (d = 0; d < s->rank[i]; d++) {
            if (!exact_int(PyList_GET_ITEM(shape, d), &dim) || dim < 1)
                return 0;
            s->shape[i * RANK_CAP + d] = dim;
        }
        s->kflags[i] = (int)kind;
        s->intdtype[i] = (int)dtype;
    }
    return 1;
}

static int read_counters(Sched *s, PyObject *counters, Names *names) {
    Py_ssize_t i;
    PyObject *f[NF_COUNTER];
    for (i = 0; i < s->nc; i++) {
        PyObject *c = PyList_GET_ITEM(counters, i);
        long long id, v;
        if (!PyDict_CheckExact(c) || !fields(c, names, f) || !exact_int(f[C_ID], &id) || id != i ||
            (f[C_INIT] != NULL && (!exact_int(f[C_INIT], &v) || v != 0)))
            return 0;
    }
    return 1;
}

/* One region's box: 1 inside buffer b, -1 well-formed but reaching outside, 0 anything else. */
static int read_box(Sched *s, PyObject *box, int b, Box *parsed) {
    Py_ssize_t d;
    long long lo, hi;
    int outside = 0;
    if (box == NULL || !PyList_CheckExact(box) || PyList_GET_SIZE(box) != s->rank[b])
        return 0;
    for (d = 0; d < s->rank[b]; d++) {
        PyObject *pair = PyList_GET_ITEM(box, d);
        if (!PyList_CheckExact(pair) || PyList_GET_SIZE(pair) != 2 || !exact_int(PyList_GET_ITEM(pair, 0), &lo) ||
            !exact_int(PyList_GET_ITEM(pair, 1), &hi) || hi <= lo)
            return 0;
        outside |= lo < 0 || hi > s->shape[b * RANK_CAP + d];
        parsed->lo[d] = lo;
        parsed->hi[d] = hi;
    }
    return outside ? -1 : 1;
}

/* A task's regions into its output entries' boxes (the last region of a buffer wins). */
static int read_regions(Sched *s, PyObject *regions, int first, int count, Names *names) {
    Py_ssize_t r;
    PyObject *f[NF_REGION];
    if (!PyList_CheckExact(regions))
        return 0;
    for (r = 0; r < PyList_GET_SIZE(regions); r++) {
        PyObject *region = PyList_GET_ITEM(regions, r);
        long long b;
        Box parsed;
        int j, hit = 0, fit;
        if (!PyDict_CheckExact(region) || !fields(region, names, f) || !exact_int(f[R_BUFFER], &b))
            return 0;
        for (j = first; j < first + count; j++)
            hit |= s->o_buf[j] == b;
        if (!hit)
            return 0;
        if ((fit = read_box(s, f[R_BOX], (int)b, &parsed)) != 1)
            return fit; /* -1: tile_out_of_bounds */
        for (j = first; j < first + count; j++)
            if (s->o_buf[j] == b)
                s->o_box[j] = parsed;
    }
    return 1;
}

/* Parameter values as PARAM_TYPES wants them: 1 all fine, 0 one is not, -1 a key that is not an
 * exact str (opcheck's look-ups of such a key could run code of its own: Python decides). */
static int params_ok(Sched *s, PyObject *params) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int fine = 1;
    while (params != NULL && PyDict_Next(params, &pos, &key, &value)) {
        long code;
        long long v;
        if (!PyUnicode_CheckExact(key))
            return -1;
        code = param_code(s, key);
        if ((code == 1 && (!exact_int(value, &v) || v < -2147483648LL || v > 2147483647LL)) ||
            (code == 2 && !PyFloat_CheckExact(value) && !PyLong_CheckExact(value)))
            fine = 0;
    }
    return fine;
}

/* AMK's per-opcode rules (opcheck._problem) for one task; 1 when it keeps them all, 0 when it
 * breaks one, -1 when Python must decide. */
static int op_ok(Sched *s, PyObject *op, PyObject *params, int t) {
    PyObject *spec = PyDict_GetItemWithError(t_ops, op), *required, *rules;
    long low, high, nouts, kv_writer;
    Py_ssize_t j;
    int nin = s->in_start[t + 1] - s->in_start[t], nout = s->o_start[t + 1] - s->o_start[t];
    int values = params_ok(s, params);
    if (values < 0)
        return -1;
    if (spec == NULL || !PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 6 || !values)
        return 0;
    low = PyLong_AsLong(PyTuple_GET_ITEM(spec, 0));
    high = PyLong_AsLong(PyTuple_GET_ITEM(spec, 1));
    nouts = PyLong_AsLong(PyTuple_GET_ITEM(spec, 2));
    required = PyTuple_GET_ITEM(spec, 3);
    rules = PyTuple_GET_ITEM(spec, 4);
    kv_writer = PyLong_AsLong(PyTuple_GET_ITEM(spec, 5));
    if (PyErr_Occurred() || nin < low || nin > high || nout != nouts)
        return 0;
    for (j = 0; j < PyTuple_GET_SIZE(required); j++)
        if (params == NULL || PyDict_Contains(params, PyTuple_GET_ITEM(required, j)) != 1)
            return 0;
    for (j = 0; j < PyTuple_GET_SIZE(rules); j++) { /* (is_out, position, need: 0 int, 1 weight, 2 kv) */
        PyObject *rule = PyTuple_GET_ITEM(rules, j);
        long is_out = PyLong_AsLong(PyTuple_GET_ITEM(rule, 0)), at = PyLong_AsLong(PyTuple_GET_ITEM(rule, 1));
        long need = PyLong_AsLong(PyTuple_GET_ITEM(rule, 2));
        int b;
        if (at >= (is_out ? nout : nin))
            continue;
        b = is_out ? s->o_buf[s->o_start[t] + at] : s->in_buf[s->in_start[t] + at];
        if ((need == 0 && !s->intdtype[b]) || (need == 1 && !(s->kflags[b] & K_WEIGHT)) ||
            (need == 2 && !(s->kflags[b] & K_KV)))
            return 0;
    }
    if (!kv_writer)
        for (j = s->o_start[t]; j < s->o_start[t + 1]; j++)
            if (s->kflags[s->o_buf[j]] & K_KV)
                return 0;
    return !PyErr_Occurred();
}

/* Buffer references: 1 all exist, -1 an int naming none (dangling_ref), 0 a doubt. */
static int read_refs(PyObject *list, int *dst, int limit) {
    Py_ssize_t j;
    long long v;
    int doubt = 0;
    for (j = 0; j < PyList_GET_SIZE(list); j++) {
        if (!exact_int(PyList_GET_ITEM(list, j), &v))
            doubt = 1;
        else if (v < 0 || v >= limit)
            return -1;
        else
            dst[j] = (int)v;
    }
    return !doubt;
}

static int read_waits(Sched *s, PyObject *waits, int first, Names *names) {
    Py_ssize_t j;
    long long k, counter;
    PyObject *f[NF_WAIT];
    int doubt = 0;
    for (j = 0; waits != NULL && j < PyList_GET_SIZE(waits); j++) {
        PyObject *w = PyList_GET_ITEM(waits, j);
        if (!PyDict_CheckExact(w) || !fields(w, names, f) || !exact_int(f[W_THRESHOLD], &k)) {
            doubt = 1;
            continue;
        }
        if (k < 1)
            return -1; /* bad_threshold */
        if (!exact_int(f[W_COUNTER], &counter)) {
            doubt = 1;
            continue;
        }
        if (counter < 0 || counter >= s->nc)
            return -1; /* dangling_ref */
        s->w_counter[first + j] = (int)counter;
        s->w_k[first + j] = k;
    }
    return !doubt;
}

/* A cost as the loader counts it (placement._cost: an int, else 0); 0 for an int too large here. */
static int read_cost(PyObject *value, long long *out) {
    if (value == NULL || !PyLong_CheckExact(value)) {
        *out = 0;
        return 1;
    }
    return exact_int(value, out);
}

/* Task t (its fields in f, id t, lists checked by count_operands): 1, 0 or -1 as above. */
static int read_task(Sched *s, PyObject **f, int t, Names *region_names, Names *wait_names) {
    long long oc;
    int j, d, r, doubt = 0, first = s->o_start[t];
    if (!exact_int(f[F_OUT_COUNTER], &oc))
        doubt = 1;
    else if (oc < 0 || oc >= s->nc)
        return -1;
    else
        s->out[t] = (int)oc;
    if ((r = read_refs(f[F_INPUTS], s->in_buf + s->in_start[t], s->nb)) < 0)
        return -1;
    doubt |= !r;
    if ((r = read_refs(f[F_OUTPUTS], s->o_buf + first, s->nb)) < 0)
        return -1;
    if (!r)
        return 0; /* (the boxes below need the outputs) */
    for (j = first; j < s->o_start[t + 1]; j++) { /* whole buffer unless a region says otherwise */
        int b = s->o_buf[j];
        if (s->kflags[b] & K_READONLY)
            return -1; /* write_readonly */
        for (d = 0; d < s->rank[b]; d++) {
            s->o_box[j].lo[d] = 0;
            s->o_box[j].hi[d] = s->shape[b * RANK_CAP + d];
        }
    }
    if ((r = read_waits(s, f[F_WAITS], s->w_start[t], wait_names)) < 0)
        return -1;
    doubt |= !r;
    if (f[F_REGIONS] != NULL && f[F_REGIONS] != Py_None) {
        if ((r = read_regions(s, f[F_REGIONS], first, s->o_start[t + 1] - first, region_names)) < 0)
            return -1;
        doubt |= !r;
    }
    if (!read_cost(f[F_BYTES], s->cost + 2 * t) || !read_cost(f[F_FLOPS], s->cost + 2 * t + 1))
        return 0;
    if (doubt || f[F_SM] != Py_None || f[F_OP] == NULL || !PyUnicode_CheckExact(f[F_OP]) ||
        (f[F_PARAMS] != NULL && !PyDict_CheckExact(f[F_PARAMS])))
        return 0;
    if (s->check_ops && (r = op_ok(s, f[F_OP], f[F_PARAMS], t)) != 1)
        return r < 0 || PyErr_Occurred() ? 0 : -1; /* bad_op */
    return 1;
}
