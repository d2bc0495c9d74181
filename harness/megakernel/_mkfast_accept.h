/* accept(doc): part of _mkfast.c (included there). Mirrors, for the one verdict it gives, the
 * Python path loader_check.check -> structure.compile_unplaced (fast reader, every task on an SM of
 * its own) -> opcheck.op_findings -> loader_check._listed_in_order -> validator._semantic with full
 * waits only -> no on-chip memory. Each check here is at least as strict as the Python one; where
 * it is stricter (ids equal to positions, no pages, no on-chip buffer, every wait full, every
 * producer listed before its waiters), the answer is None and Python decides. */

typedef struct {
    long long lo[RANK_CAP], hi[RANK_CAP];
} Box;

typedef struct {
    int n, nb, nc, W;
    int *rank, *kflags, *intdtype;        /* per buffer */
    long long *shape;                     /* per buffer, RANK_CAP dims */
    int *out, *in_start, *in_buf;         /* per task; inputs as CSR */
    int *w_start, *w_counter;             /* waits as CSR */
    long long *w_k;
    int *o_start, *o_buf;                 /* outputs as CSR */
    Box *o_box;                           /* per output entry */
    uint64_t *anc, *cmask;                /* bitsets: W words per task / counter */
    int *total, *made, *wcount, *wstart, *wlist;
    PyObject *pkey[16]; /* parameter keys seen, with their PARAM_TYPES codes */
    long pcode[16];
    int npk;
} Sched;

/* The document's own key objects, where it has them: JSON's decoder gives every dict of one
 * document the same key objects, and a dict look-up with the very object the dict holds needs
 * no string comparison (most of this function's time otherwise). Swapped in for one call (the
 * GIL is held throughout and no Python code runs), put back after it. */
static PyObject **adoptable[] = {&s_id, &s_op, &s_inputs, &s_outputs, &s_out_counter, &s_waits, &s_params,
                                 &s_sm, &s_regions, &s_buffer, &s_box, &s_threshold, &s_counter, &s_kind,
                                 &s_shape, &s_dtype, &s_space, &s_init, &s_format, &s_target, &s_buffers,
                                 &s_counters, &s_tasks, &s_pages, &s_ops, &s_num_sms, &s_max_resident};
#define N_ADOPT (sizeof adoptable / sizeof adoptable[0])

static void adopt_keys(PyObject *dict) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    size_t j;
    if (dict == NULL || !PyDict_CheckExact(dict))
        return;
    while (PyDict_Next(dict, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key))
            continue;
        Py_hash_t h = PyObject_Hash(key); /* (cached in a str) */
        for (j = 0; j < N_ADOPT; j++)
            if (*adoptable[j] == key)
                break;
            else if (PyObject_Hash(*adoptable[j]) == h && PyUnicode_Compare(*adoptable[j], key) == 0) {
                *adoptable[j] = key;
                break;
            }
    }
}

static PyObject *first_of(PyObject *list) {
    return list != NULL && PyList_CheckExact(list) && PyList_GET_SIZE(list) ? PyList_GET_ITEM(list, 0) : NULL;
}

/* The keys of the first buffer, counter, task and that task's first wait (those looked up once
 * per item; the document's and its target's few are not worth it). */
static void adopt_document_keys(PyObject *doc) {
    PyObject *task;
    adopt_keys(first_of(PyDict_GetItem(doc, s_buffers)));
    adopt_keys(first_of(PyDict_GetItem(doc, s_counters)));
    task = first_of(PyDict_GetItem(doc, s_tasks));
    adopt_keys(task);
    if (task != NULL && PyDict_CheckExact(task))
        adopt_keys(first_of(PyDict_GetItem(task, s_waits)));
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

typedef struct {
    long long lo;
    int task;
    const Box *box;
} Span;

static void sched_free(Sched *s) {
    free(s->rank); free(s->kflags); free(s->intdtype); free(s->shape); free(s->out);
    free(s->in_start); free(s->in_buf); free(s->w_start); free(s->w_counter); free(s->w_k);
    free(s->o_start); free(s->o_buf); free(s->o_box); free(s->anc); free(s->cmask);
    free(s->total); free(s->made); free(s->wcount); free(s->wstart); free(s->wlist);
}

static int read_buffers(Sched *s, PyObject *buffers) {
    Py_ssize_t i, d;
    for (i = 0; i < s->nb; i++) {
        PyObject *b = PyList_GET_ITEM(buffers, i), *shape, *space;
        long long id, dim;
        long kind, dtype, onchip;
        if (!PyDict_CheckExact(b) || !exact_int(PyDict_GetItemWithError(b, s_id), &id) || id != i)
            return 0;
        kind = table_code(t_kinds, PyDict_GetItemWithError(b, s_kind));
        dtype = table_code(t_dtypes, PyDict_GetItemWithError(b, s_dtype));
        space = PyDict_GetItemWithError(b, s_space);
        onchip = space == NULL ? 0 : table_code(t_spaces, space); /* absent: HBM */
        shape = PyDict_GetItemWithError(b, s_shape);
        if (PyErr_Occurred() || kind < 0 || dtype < 0 || onchip != 0 || shape == NULL ||
            !PyList_CheckExact(shape) || PyList_GET_SIZE(shape) < 1 || PyList_GET_SIZE(shape) > t_max_rank)
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

static int read_counters(Sched *s, PyObject *counters) {
    Py_ssize_t i;
    for (i = 0; i < s->nc; i++) {
        PyObject *c = PyList_GET_ITEM(counters, i), *init;
        long long id, v;
        if (!PyDict_CheckExact(c) || !exact_int(PyDict_GetItemWithError(c, s_id), &id) || id != i)
            return 0;
        init = PyDict_GetItemWithError(c, s_init);
        if (PyErr_Occurred() || (init != NULL && (!exact_int(init, &v) || v != 0)))
            return 0;
    }
    return 1;
}

/* A task's regions into its output entries' boxes (the last region of a buffer wins). */
static int read_regions(Sched *s, PyObject *regions, int first, int count) {
    Py_ssize_t r, d;
    if (!PyList_CheckExact(regions))
        return 0;
    for (r = 0; r < PyList_GET_SIZE(regions); r++) {
        PyObject *region = PyList_GET_ITEM(regions, r), *box;
        long long b, lo, hi;
        Box parsed;
        int j, hit = 0;
        if (!PyDict_CheckExact(region) || !exact_int(PyDict_GetItemWithError(region, s_buffer), &b))
            return 0;
        box = PyDict_GetItemWithError(region, s_box);
        for (j = first; j < first + count; j++)
            hit |= s->o_buf[j] == b;
        if (!hit || box == NULL || !PyList_CheckExact(box) || PyList_GET_SIZE(box) != s->rank[b])
            return 0;
        for (d = 0; d < s->rank[b]; d++) {
            PyObject *pair = PyList_GET_ITEM(box, d);
            if (!PyList_CheckExact(pair) || PyList_GET_SIZE(pair) != 2 ||
                !exact_int(PyList_GET_ITEM(pair, 0), &lo) || !exact_int(PyList_GET_ITEM(pair, 1), &hi) ||
                lo < 0 || hi <= lo || hi > s->shape[b * RANK_CAP + d])
                return 0;
            parsed.lo[d] = lo;
            parsed.hi[d] = hi;
        }
        for (j = first; j < first + count; j++)
            if (s->o_buf[j] == b)
                s->o_box[j] = parsed;
    }
    return 1;
}

/* AMK's per-opcode rules (opcheck._all_fine) for one task; 1 when it keeps them all. */
static int op_ok(Sched *s, PyObject *op, PyObject *params, int t) {
    PyObject *spec = PyDict_GetItemWithError(t_ops, op), *required, *rules, *key, *value;
    long low, high, nouts, kv_writer;
    Py_ssize_t j, pos = 0;
    int nin = s->in_start[t + 1] - s->in_start[t], nout = s->o_start[t + 1] - s->o_start[t];
    if (spec == NULL || !PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != 6)
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
    while (params != NULL && PyDict_Next(params, &pos, &key, &value)) {
        long code = param_code(s, key);
        long long v;
        if (code == 1 && (!exact_int(value, &v) || v < -2147483648LL || v > 2147483647LL))
            return 0;
        if (code == 2 && !PyFloat_CheckExact(value) && !PyLong_CheckExact(value))
            return 0;
    }
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

static int read_ints(PyObject *list, int *dst, int limit) {
    Py_ssize_t j;
    long long v;
    for (j = 0; j < PyList_GET_SIZE(list); j++) {
        if (!exact_int(PyList_GET_ITEM(list, j), &v) || v < 0 || v >= limit)
            return 0;
        dst[j] = (int)v;
    }
    return 1;
}

static int read_task(Sched *s, PyObject *task, int t, int check_ops) {
    PyObject *ins, *outs, *waits, *op, *params, *regions, *sm;
    long long id, oc, k, counter;
    Py_ssize_t j;
    int d, first;
    if (!PyDict_CheckExact(task) || !exact_int(PyDict_GetItemWithError(task, s_id), &id) || id != t)
        return 0;
    sm = PyDict_GetItemWithError(task, s_sm);
    ins = PyDict_GetItemWithError(task, s_inputs);
    outs = PyDict_GetItemWithError(task, s_outputs);
    waits = PyDict_GetItemWithError(task, s_waits);
    op = PyDict_GetItemWithError(task, s_op);
    params = PyDict_GetItemWithError(task, s_params);
    regions = PyDict_GetItemWithError(task, s_regions);
    if (PyErr_Occurred() || sm != Py_None || !exact_int(PyDict_GetItemWithError(task, s_out_counter), &oc) ||
        oc < 0 || oc >= s->nc || ins == NULL || !PyList_CheckExact(ins) || PyList_GET_SIZE(ins) > t_max_in ||
        outs == NULL || !PyList_CheckExact(outs) || PyList_GET_SIZE(outs) > t_max_out ||
        (waits != NULL && (!PyList_CheckExact(waits) || PyList_GET_SIZE(waits) > t_max_waits)) ||
        op == NULL || !PyUnicode_CheckExact(op) || (params != NULL && !PyDict_CheckExact(params)))
        return 0;
    s->out[t] = (int)oc;
    first = s->in_start[t];
    s->in_start[t + 1] = first + (int)PyList_GET_SIZE(ins);
    if (!read_ints(ins, s->in_buf + first, s->nb))
        return 0;
    first = s->o_start[t];
    s->o_start[t + 1] = first + (int)PyList_GET_SIZE(outs);
    if (!read_ints(outs, s->o_buf + first, s->nb))
        return 0;
    for (j = first; j < s->o_start[t + 1]; j++) { /* whole buffer unless a region says otherwise */
        int b = s->o_buf[j];
        if (s->kflags[b] & K_READONLY)
            return 0;
        for (d = 0; d < s->rank[b]; d++) {
            s->o_box[j].lo[d] = 0;
            s->o_box[j].hi[d] = s->shape[b * RANK_CAP + d];
        }
    }
    if (regions != NULL && regions != Py_None &&
        !read_regions(s, regions, first, s->o_start[t + 1] - first))
        return 0;
    first = s->w_start[t];
    s->w_start[t + 1] = first + (waits == NULL ? 0 : (int)PyList_GET_SIZE(waits));
    for (j = 0; waits != NULL && j < PyList_GET_SIZE(waits); j++) {
        PyObject *w = PyList_GET_ITEM(waits, j);
        if (!PyDict_CheckExact(w) || !exact_int(PyDict_GetItemWithError(w, s_threshold), &k) || k < 1 ||
            !exact_int(PyDict_GetItemWithError(w, s_counter), &counter) || counter < 0 || counter >= s->nc)
            return 0;
        s->w_counter[first + j] = (int)counter;
        s->w_k[first + j] = k;
    }
    return !check_ops || op_ok(s, op, params, t);
}

/* Ancestors over full waits, every producer listed before its waiters (else 0). */
static int ancestors(Sched *s) {
    int t, j, x, W = s->W;
    for (t = 0; t < s->n; t++)
        s->total[s->out[t]]++;
    for (t = 0; t < s->n; t++) {
        uint64_t *a = s->anc + (size_t)t * W, *m;
        for (j = s->w_start[t]; j < s->w_start[t + 1]; j++) {
            int c = s->w_counter[j];
            if (s->made[c] != s->total[c] || s->w_k[j] != s->total[c])
                return 0;
            m = s->cmask + (size_t)c * W;
            for (x = 0; x < W; x++)
                a[x] |= m[x];
        }
        m = s->cmask + (size_t)s->out[t] * W;
        for (x = 0; x < W; x++)
            m[x] |= a[x];
        m[t >> 6] |= (uint64_t)1 << (t & 63);
        s->made[s->out[t]]++;
    }
    return 1;
}

#define BEFORE(s, w, t) ((s)->anc[(size_t)(t) * (s)->W + ((w) >> 6)] >> ((w) & 63) & 1)

static void writer_lists(Sched *s) {
    int t, j, q, b;
    for (t = 0; t < s->n; t++)
        for (j = s->o_start[t]; j < s->o_start[t + 1]; j++) {
            for (q = s->o_start[t]; q < j && s->o_buf[q] != s->o_buf[j]; q++)
                ;
            if (q == j)
                s->wcount[s->o_buf[j]]++;
        }
    for (b = 0; b < s->nb; b++)
        s->wstart[b + 1] = s->wstart[b] + s->wcount[b];
    memset(s->wcount, 0, sizeof(int) * s->nb);
    for (t = 0; t < s->n; t++)
        for (j = s->o_start[t]; j < s->o_start[t + 1]; j++) {
            b = s->o_buf[j];
            if (s->wcount[b] && s->wlist[s->wstart[b] + s->wcount[b] - 1] == t)
                continue; /* (a task's entries are consecutive in its buffer's list) */
            s->wlist[s->wstart[b] + s->wcount[b]++] = t;
        }
}

/* Rule 2: every other writer of a read buffer precedes the reader. */
static int reads_ok(Sched *s) {
    int t, j, q;
    for (t = 0; t < s->n; t++)
        for (j = s->in_start[t]; j < s->in_start[t + 1]; j++) {
            int b = s->in_buf[j], nw = s->wcount[b], self = 0, kv = s->kflags[b] & K_KV;
            if (s->kflags[b] & K_READONLY || (!nw && kv))
                continue;
            for (q = s->wstart[b]; q < s->wstart[b] + nw; q++) {
                int w = s->wlist[q];
                if (w == t)
                    self = 1;
                else if (!BEFORE(s, w, t))
                    return 0;
            }
            if (!kv && (!nw || (nw == 1 && self)))
                return 0; /* read_unwritten */
        }
    return 1;
}

static int span_order(const void *a, const void *b) {
    const Span *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->task - y->task;
}

static const Box *box_of(Sched *s, int t, int b) {
    int j;
    for (j = s->o_start[t]; s->o_buf[j] != b; j++)
        ;
    return &s->o_box[j];
}

/* Rule 3 (no two unordered writers with overlapping boxes) and rule 5 (outputs written):
 * writers swept by the low end of their last dimension. */
static int writes_ok(Sched *s, Span *spans, Span *active) {
    int b, q, d, a;
    for (b = 0; b < s->nb; b++) {
        int nw = s->wcount[b], r = s->rank[b], live = 0;
        if (!nw && s->kflags[b] & K_OUTPUT)
            return 0;
        if (nw < 2)
            continue;
        for (q = 0; q < nw; q++) {
            spans[q].task = s->wlist[s->wstart[b] + q];
            spans[q].box = box_of(s, spans[q].task, b);
            spans[q].lo = spans[q].box->lo[r - 1];
        }
        qsort(spans, nw, sizeof(Span), span_order);
        for (q = 0; q < nw; q++) {
            int kept = 0;
            for (a = 0; a < live; a++)
                if (active[a].box->hi[r - 1] > spans[q].lo)
                    active[kept++] = active[a];
            live = kept;
            for (a = 0; a < live; a++) {
                const Box *x = spans[q].box, *y = active[a].box;
                int i = spans[q].task, k = active[a].task, overlap = 1;
                for (d = 0; d < r && overlap; d++)
                    overlap = x->hi[d] > y->lo[d] && y->hi[d] > x->lo[d];
                if (overlap && !BEFORE(s, i, k) && !BEFORE(s, k, i))
                    return 0;
            }
            active[live++] = spans[q];
        }
    }
    return 1;
}

static int sched_alloc(Sched *s, int ins, int outs, int waits) {
    size_t n = s->n, nb = s->nb, nc = s->nc, W = s->W;
    s->rank = calloc(nb + 1, sizeof(int)); s->kflags = calloc(nb + 1, sizeof(int));
    s->intdtype = calloc(nb + 1, sizeof(int)); s->shape = calloc((nb + 1) * RANK_CAP, sizeof(long long));
    s->out = calloc(n, sizeof(int)); s->in_start = calloc(n + 1, sizeof(int));
    s->in_buf = calloc(ins + 1, sizeof(int)); s->w_start = calloc(n + 1, sizeof(int));
    s->w_counter = calloc(waits + 1, sizeof(int)); s->w_k = calloc(waits + 1, sizeof(long long));
    s->o_start = calloc(n + 1, sizeof(int)); s->o_buf = calloc(outs + 1, sizeof(int));
    s->o_box = calloc(outs + 1, sizeof(Box)); s->anc = calloc(n * W, sizeof(uint64_t));
    s->cmask = calloc((nc + 1) * W, sizeof(uint64_t)); s->total = calloc(nc + 1, sizeof(int));
    s->made = calloc(nc + 1, sizeof(int)); s->wcount = calloc(nb + 1, sizeof(int));
    s->wstart = calloc(nb + 1, sizeof(int)); s->wlist = calloc(outs + 1, sizeof(int));
    return s->rank && s->kflags && s->intdtype && s->shape && s->out && s->in_start && s->in_buf &&
           s->w_start && s->w_counter && s->w_k && s->o_start && s->o_buf && s->o_box && s->anc &&
           s->cmask && s->total && s->made && s->wcount && s->wstart && s->wlist;
}

/* The document's top level; the task list's operand totals for sizing. 0 on a doubt. */
static int read_top(PyObject *doc, PyObject **buffers, PyObject **counters, PyObject **tasks, int *check_ops) {
    PyObject *fmt, *target, *pages, *ops;
    long long sms, resident;
    if (t_format == NULL || !PyDict_CheckExact(doc))
        return 0;
    fmt = PyDict_GetItemWithError(doc, s_format);
    target = PyDict_GetItemWithError(doc, s_target);
    *buffers = PyDict_GetItemWithError(doc, s_buffers);
    *counters = PyDict_GetItemWithError(doc, s_counters);
    *tasks = PyDict_GetItemWithError(doc, s_tasks);
    pages = PyDict_GetItemWithError(doc, s_pages);
    ops = PyDict_GetItemWithError(doc, s_ops);
    if (PyErr_Occurred() || fmt == NULL || !PyUnicode_CheckExact(fmt) || PyUnicode_Compare(fmt, t_format) != 0 ||
        target == NULL || !PyDict_CheckExact(target) || *buffers == NULL || !PyList_CheckExact(*buffers) ||
        *counters == NULL || !PyList_CheckExact(*counters) || *tasks == NULL || !PyList_CheckExact(*tasks) ||
        (pages != NULL && pages != Py_None) ||
        (ops != NULL && ops != Py_None && !(PyUnicode_CheckExact(ops) && PyUnicode_Compare(ops, s_amk) == 0)))
        return 0;
    *check_ops = ops != NULL && ops != Py_None;
    if (!exact_int(PyDict_GetItemWithError(target, s_num_sms), &sms) || sms < 1)
        return 0;
    if (PyDict_GetItemWithError(target, s_max_resident) != NULL &&
        (!exact_int(PyDict_GetItemWithError(target, s_max_resident), &resident) || resident < 1))
        return 0;
    return !PyErr_Occurred() && PyList_GET_SIZE(*tasks) >= 1 && PyList_GET_SIZE(*tasks) <= TASK_CAP;
}

static int operand_totals(PyObject *tasks, int *ins, int *outs, int *waits) {
    Py_ssize_t t;
    for (t = 0; t < PyList_GET_SIZE(tasks); t++) {
        PyObject *task = PyList_GET_ITEM(tasks, t), *v;
        if (!PyDict_CheckExact(task))
            return 0;
        v = PyDict_GetItemWithError(task, s_inputs);
        if (v == NULL || !PyList_CheckExact(v) || PyList_GET_SIZE(v) > t_max_in)
            return 0;
        *ins += (int)PyList_GET_SIZE(v);
        v = PyDict_GetItemWithError(task, s_outputs);
        if (v == NULL || !PyList_CheckExact(v) || PyList_GET_SIZE(v) > t_max_out)
            return 0;
        *outs += (int)PyList_GET_SIZE(v);
        v = PyDict_GetItemWithError(task, s_waits);
        if (v != NULL && (!PyList_CheckExact(v) || PyList_GET_SIZE(v) > t_max_waits))
            return 0;
        *waits += v == NULL ? 0 : (int)PyList_GET_SIZE(v);
    }
    return !PyErr_Occurred();
}

static int busy; /* set during a call: a re-entrant one (only through a key's own __eq__) says None */

static PyObject *accept(PyObject *self, PyObject *doc) {
    PyObject *buffers, *counters, *tasks, *saved[N_ADOPT];
    Sched s;
    Span *spans = NULL, *active = NULL;
    int check_ops = 0, ins = 0, outs = 0, waits = 0, t, ok = 0;
    size_t j;
    if (busy)
        Py_RETURN_NONE;
    busy = 1;
    memset(&s, 0, sizeof s);
    for (j = 0; j < N_ADOPT; j++)
        saved[j] = *adoptable[j];
    if (PyDict_CheckExact(doc))
        adopt_document_keys(doc);
    if (!read_top(doc, &buffers, &counters, &tasks, &check_ops) || !operand_totals(tasks, &ins, &outs, &waits))
        goto done;
    s.n = (int)PyList_GET_SIZE(tasks);
    s.nb = (int)PyList_GET_SIZE(buffers);
    s.nc = (int)PyList_GET_SIZE(counters);
    s.W = (s.n + 63) / 64;
    if (!sched_alloc(&s, ins, outs, waits) || !read_buffers(&s, buffers) || !read_counters(&s, counters))
        goto done;
    for (t = 0; t < s.n; t++)
        if (!read_task(&s, PyList_GET_ITEM(tasks, t), t, check_ops))
            goto done;
    if (!ancestors(&s))
        goto done;
    writer_lists(&s);
    spans = calloc(outs + 1, sizeof(Span));
    active = calloc(outs + 1, sizeof(Span));
    ok = spans && active && reads_ok(&s) && writes_ok(&s, spans, active);
done:
    PyErr_Clear();
    for (j = 0; j < N_ADOPT; j++)
        *adoptable[j] = saved[j];
    busy = 0;
    free(spans);
    free(active);
    sched_free(&s);
    if (!ok)
        Py_RETURN_NONE;
    return Py_BuildValue("(ii)", s.n, s.nc);
}
