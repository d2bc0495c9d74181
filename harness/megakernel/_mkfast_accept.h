/* judge(doc): part of _mkfast.c (included there, after _mkfast_read.h). Mirrors the Python path
 * loader_check.check -> structure.compile_unplaced (every task on an SM of its own) ->
 * opcheck.op_findings -> loader_check._listed_in_order / placement.topological_order ->
 * validator._semantic with full waits only -> no on-chip memory, for the two answers it gives:
 *
 *   (tasks, counters, grid)  safe_any_placement: every check passed. Each check here is at least
 *                            as strict as the Python one; where it is stricter (ids equal to
 *                            positions, no pages, no on-chip buffer, every wait full, every
 *                            producer listed before its waiters) the answer is None instead.
 *   False                    unsafe, under AMK's loader too: a structural violation or bad op
 *                            (_mkfast_read.h), a wait no placement can meet (fewer producers than
 *                            its threshold), a dependency cycle (the loader refuses the program), a
 *                            race with every task on an SM of its own while the grid has an SM for
 *                            every task (the loader then places them so), or a read that can miss a
 *                            write where the loader places the tasks (_mkfast_placed.h).
 *   None                     anything else: the Python code decides. */

typedef struct {
    long long lo;
    int task;
    const Box *box;
} Span;

/* A wait with fewer producers than its threshold can never be met, under any placement. */
static int unmeetable_wait(Sched *s) {
    int j;
    for (j = 0; j < s->w_start[s->n]; j++)
        if (s->w_k[j] > s->total[s->w_counter[j]])
            return 1;
    return 0;
}

/* Every producer of every counter a task waits on is listed before it (loader_check._listed_in_order). */
static int listed_in_order(Sched *s) {
    int t, j;
    for (t = 0; t < s->n; t++) {
        for (j = s->w_start[t]; j < s->w_start[t + 1]; j++)
            if (s->made[s->w_counter[j]] != s->total[s->w_counter[j]])
                return 0;
        s->made[s->out[t]]++;
    }
    return 1;
}

/* Ancestors over full waits (every producer listed before its waiters); 0 at a partial wait. */
static int ancestors(Sched *s) {
    int t, j, x, W = s->W;
    for (t = 0; t < s->n; t++) {
        uint64_t *a = s->anc + (size_t)t * W, *m;
        for (j = s->w_start[t]; j < s->w_start[t + 1]; j++) {
            int c = s->w_counter[j];
            if (s->w_k[j] != s->total[c])
                return 0;
            m = s->cmask + (size_t)c * W;
            for (x = 0; x < W; x++)
                a[x] |= m[x];
        }
        m = s->cmask + (size_t)s->out[t] * W;
        for (x = 0; x < W; x++)
            m[x] |= a[x];
        m[t >> 6] |= (uint64_t)1 << (t & 63);
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

#include "_mkfast_placed.h"

/* Every array of the schedule in one zeroed allocation (8-byte items first, for alignment). */
static int sched_alloc(Sched *s, int ins, int outs, int waits) {
    size_t n = s->n, nb = s->nb, nc = s->nc, W = s->W;
    size_t n8 = (nb + 1) * RANK_CAP + (waits + 1) + n * W + (nc + 1) * W + (outs + 1) * (sizeof(Box) / 8) +
                2 * n;
    size_t n4 = 3 * (nb + 1) + n + 3 * (n + 1) + (ins + 1) + (waits + 1) + (outs + 1) + 2 * (nc + 1) +
                2 * (nb + 1) + (outs + 1) + 3 * n;
    char *p = calloc(n8 * 8 + n4 * 4 + 8, 1);
    if ((s->arena = p) == NULL)
        return 0;
#define CARVE(field, count)                                                                        \
    s->field = (void *)p;                                                                          \
    p += (count) * sizeof *s->field;
    CARVE(shape, (nb + 1) * RANK_CAP) CARVE(w_k, waits + 1) CARVE(cost, 2 * n) CARVE(anc, n * W) CARVE(cmask, (nc + 1) * W)
    CARVE(o_box, outs + 1) CARVE(rank, nb + 1) CARVE(kflags, nb + 1) CARVE(intdtype, nb + 1) CARVE(out, n)
    CARVE(in_start, n + 1) CARVE(w_start, n + 1) CARVE(o_start, n + 1) CARVE(in_buf, ins + 1)
    CARVE(w_counter, waits + 1) CARVE(o_buf, outs + 1) CARVE(total, nc + 1) CARVE(made, nc + 1)
    CARVE(wcount, nb + 1) CARVE(wstart, nb + 1) CARVE(wlist, outs + 1) CARVE(order, n) CARVE(sm, n)
    CARVE(qpred, n)
#undef CARVE
    return 1;
}

/* An AMK IR document of major version 0 (its ir_version an exact str "0" or "0.<...>"), which
 * amk_io.from_amk would import: 1, with s->carried set to the regions meta carries (an exact
 * dict of str keys, or NULL for none); 0 when it is not one, or a doubt. */
static int amk_document(Sched *s, PyObject *doc) {
    PyObject *version = PyDict_GetItemWithError(doc, s_ir_version), *meta, *carried;
    if (version == NULL || !PyUnicode_CheckExact(version) || PyUnicode_GET_LENGTH(version) < 1 ||
        PyUnicode_READ_CHAR(version, 0) != '0' ||
        (PyUnicode_GET_LENGTH(version) > 1 && PyUnicode_READ_CHAR(version, 1) != '.'))
        return 0;
    meta = PyDict_GetItemWithError(doc, s_meta);
    if (meta == NULL || meta == Py_None)
        return !PyErr_Occurred();
    if (!PyDict_CheckExact(meta) || !str_keys(meta)) /* (another value: what dict() of it gives decides) */
        return 0;
    carried = PyDict_GetItemWithError(meta, s_crucible_regions);
    if (carried == NULL || carried == Py_None)
        return !PyErr_Occurred();
    if (!PyDict_CheckExact(carried) || !str_keys(carried))
        return 0;
    s->carried = PyDict_GET_SIZE(carried) ? carried : NULL; /* (an empty one carries none) */
    return 1;
}

/* The document's top level: a Crucible document, or an AMK IR 0.x one read as amk_io.from_amk
 * imports it (ops "amk", queues "amk_loader", max_resident defaulting to num_sms, tile regions
 * from params; the import itself is then not needed for a verdict). 0 on a doubt. */
static int read_top(Sched *s, PyObject *doc, PyObject **buffers, PyObject **counters, PyObject **tasks) {
    PyObject *fmt, *target, *pages, *ops, *resident;
    long long sms, limit;
    if (!configured || !PyDict_CheckExact(doc) || !str_keys(doc))
        return 0;
    fmt = PyDict_GetItemWithError(doc, s_format);
    if (fmt == NULL && !PyErr_Occurred()) {
        if (!amk_document(s, doc))
            return 0;
        s->amk = 1;
    } else if (fmt == NULL || !PyUnicode_CheckExact(fmt) || PyUnicode_Compare(fmt, t_format) != 0)
        return 0;
    target = PyDict_GetItemWithError(doc, s_target);
    *buffers = PyDict_GetItemWithError(doc, s_buffers);
    *counters = PyDict_GetItemWithError(doc, s_counters);
    *tasks = PyDict_GetItemWithError(doc, s_tasks);
    pages = PyDict_GetItemWithError(doc, s_pages);
    ops = s->amk ? s_amk : PyDict_GetItemWithError(doc, s_ops);
    if (PyErr_Occurred() || target == NULL || !PyDict_CheckExact(target) || *buffers == NULL ||
        !PyList_CheckExact(*buffers) || *counters == NULL || !PyList_CheckExact(*counters) || *tasks == NULL ||
        !PyList_CheckExact(*tasks) || (pages != NULL && pages != Py_None) ||
        (ops != NULL && ops != Py_None && !(PyUnicode_CheckExact(ops) && PyUnicode_Compare(ops, s_amk) == 0)))
        return 0;
    s->check_ops = ops != NULL && ops != Py_None;
    if (!str_keys(target) || !exact_int(PyDict_GetItemWithError(target, s_num_sms), &sms) || sms < 1)
        return 0;
    resident = PyDict_GetItemWithError(target, s_max_resident);
    if (resident == NULL)
        limit = sms;
    else if (!exact_int(resident, &limit) || limit < 1)
        return 0;
    s->grid = (int)(limit < sms ? (limit < INT32_MAX ? limit : INT32_MAX) : (sms < INT32_MAX ? sms : INT32_MAX));
    return !PyErr_Occurred() && PyList_GET_SIZE(*tasks) >= 1 && PyList_GET_SIZE(*tasks) <= TASK_CAP;
}

/* Each task's fields (into s->tf), its id checked against its position and its lists against the
 * caps; the operand totals for sizing. 0 on a doubt. */
static int read_fields(Sched *s, PyObject *tasks, Names *names, int *ins, int *outs, int *waits) {
    int t;
    for (t = 0; t < s->n; t++) {
        PyObject *task = PyList_GET_ITEM(tasks, t), **f = s->tf + (size_t)t * NF_TASK;
        long long id;
        if (!PyDict_CheckExact(task) || !fields(task, names, f) || !exact_int(f[F_ID], &id) || id != t ||
            f[F_INPUTS] == NULL || !PyList_CheckExact(f[F_INPUTS]) || PyList_GET_SIZE(f[F_INPUTS]) > t_max_in ||
            f[F_OUTPUTS] == NULL || !PyList_CheckExact(f[F_OUTPUTS]) ||
            PyList_GET_SIZE(f[F_OUTPUTS]) > t_max_out ||
            (f[F_WAITS] != NULL && (!PyList_CheckExact(f[F_WAITS]) || PyList_GET_SIZE(f[F_WAITS]) > t_max_waits)))
            return 0;
        *ins += (int)PyList_GET_SIZE(f[F_INPUTS]);
        *outs += (int)PyList_GET_SIZE(f[F_OUTPUTS]);
        *waits += f[F_WAITS] == NULL ? 0 : (int)PyList_GET_SIZE(f[F_WAITS]);
    }
    return 1;
}

static void starts(Sched *s) {
    int t;
    for (t = 0; t < s->n; t++) {
        PyObject **f = s->tf + (size_t)t * NF_TASK;
        s->in_start[t + 1] = s->in_start[t] + (int)PyList_GET_SIZE(f[F_INPUTS]);
        s->o_start[t + 1] = s->o_start[t] + (int)PyList_GET_SIZE(f[F_OUTPUTS]);
        s->w_start[t + 1] = s->w_start[t] + (f[F_WAITS] == NULL ? 0 : (int)PyList_GET_SIZE(f[F_WAITS]));
    }
}

/* Every task read: -1 at a certain violation anywhere, else 0 at a doubt anywhere, else 1. */
static int read_tasks(Sched *s) {
    Names regions, waits;
    int t, r, doubt = 0;
    names_init(&regions, NF_REGION, s_buffer, s_box);
    names_init(&waits, NF_WAIT, s_counter, s_threshold);
    for (t = 0; t < s->n; t++) {
        if ((r = read_task(s, s->tf + (size_t)t * NF_TASK, t, &regions, &waits)) < 0)
            return -1;
        doubt |= !r;
    }
    return !doubt;
}

/* The graph and race checks on a schedule read whole: 1 safe, -1 unsafe, 0 a doubt. */
static int semantics(Sched *s, int outs) {
    Span *spans, *active;
    int t, ok;
    for (t = 0; t < s->n; t++)
        s->total[s->out[t]]++;
    if (unmeetable_wait(s))
        return -1;
    writer_lists(s);
    if (listed_in_order(s) && ancestors(s)) { /* (else producers listed late, or a partial wait) */
        spans = calloc((size_t)outs * 2 + 2, sizeof(Span));
        if (spans == NULL)
            return 0;
        active = spans + outs + 1;
        ok = reads_ok(s) && writes_ok(s, spans, active);
        free(spans);
        if (ok)
            return 1;
        /* unsafe with every task on an SM of its own, which is where the loader puts them when the
         * grid has an SM for each; with fewer, where the loader places them decides */
        if (s->n <= s->grid)
            return -1;
    }
    return placed_races(s);
}

static int busy; /* set during a call: a re-entrant one (only through a key's own __eq__) says None */

/* 1 safe_any_placement, -1 unsafe, 0 a doubt. */
static int judge_doc(PyObject *doc, Sched *s) {
    PyObject *buffers, *counters, *tasks;
    Names task_names, buffer_names, counter_names;
    int ins = 0, outs = 0, waits = 0, r;
    if (!read_top(s, doc, &buffers, &counters, &tasks))
        return 0;
    s->n = (int)PyList_GET_SIZE(tasks);
    s->nb = (int)PyList_GET_SIZE(buffers);
    s->nc = (int)PyList_GET_SIZE(counters);
    s->W = (s->n + 63) / 64;
    names_init(&task_names, NF_TASK, s_id, s_op, s_inputs, s_outputs, s_out_counter, s_waits, s_params, s_sm,
               s_regions, s_est_bytes, s_est_flops);
    names_init(&buffer_names, NF_BUFFER, s_id, s_kind, s_dtype, s_space, s_shape);
    names_init(&counter_names, NF_COUNTER, s_id, s_init);
    if ((s->tf = malloc(sizeof(PyObject *) * NF_TASK * (size_t)s->n)) == NULL ||
        !read_fields(s, tasks, &task_names, &ins, &outs, &waits) || !sched_alloc(s, ins, outs, waits) ||
        !read_buffers(s, buffers, &buffer_names) || !read_counters(s, counters, &counter_names))
        return 0;
    starts(s);
    if ((r = read_tasks(s)) != 1)
        return r;
    return semantics(s, outs);
}

static PyObject *judge(PyObject *self, PyObject *doc) {
    Sched s;
    int r;
    if (busy)
        Py_RETURN_NONE;
    busy = 1;
    memset(&s, 0, sizeof s);
    r = judge_doc(doc, &s);
    PyErr_Clear();
    busy = 0;
    free(s.tf);
    free(s.arena);
    if (r < 0)
        Py_RETURN_FALSE;
    if (r == 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(iii)", s.n, s.nc, s.grid);
}

/* judge's acceptance alone: (tasks, counters) or None. */
static PyObject *accept(PyObject *self, PyObject *doc) {
    PyObject *verdict = judge(self, doc), *out;
    if (verdict == NULL || !PyTuple_Check(verdict))
        return verdict == Py_False ? (Py_DECREF(verdict), Py_NewRef(Py_None)) : verdict;
    out = PyTuple_GetSlice(verdict, 0, 2);
    Py_DECREF(verdict);
    return out;
}
