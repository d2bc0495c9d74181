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
    int n, nb, nc, W, grid, check_ops, amk; /* amk: the document as AMK writes it (see read_top) */
    PyObject *carried;                    /* amk: regions its meta carries, by task id (borrowed) */
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
    PyObject *pkey[16]; /* parameter keys seen (the document's own objects), with their tab_params positions */
    int pidx[16];
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

#define SLOT_CAP 24
typedef struct {
    int n;
    PyObject *key[NF_TASK];
    Py_hash_t hash[NF_TASK];
    /* The key last seen at each entry position of a dict read with these names, and which name it
     * is (-1: none): the objects of one document list the same keys in the same order, so most
     * keys are placed by one comparison. */
    PyObject *slot_key[SLOT_CAP];
    signed char slot_name[SLOT_CAP];
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
    memset(names->slot_key, 0, sizeof names->slot_key);
}

/* The name a key is (-1: none), found by value; 0 at a doubt: a key that is a str subclass or not
 * a str at all (it might compare equal to a field name). A match becomes the name's object. */
static int name_of(Names *names, PyObject *key, int *out) {
    Py_hash_t h;
    int j;
    for (j = 0; j < names->n; j++)
        if (names->key[j] == key) {
            *out = j;
            return 1;
        }
    if (!PyUnicode_CheckExact(key))
        return 0;
    h = PyObject_Hash(key);
    for (j = 0; j < names->n; j++)
        if (names->hash[j] == h && PyUnicode_Compare(names->key[j], key) == 0) {
            names->key[j] = key;
            *out = j;
            return 1;
        }
    *out = -1;
    return 1;
}

/* The values of `names`'s keys in the exact dict `d` (NULL where absent); 0 at a doubt (name_of).
 * Key objects are compared by identity: the document holds them alive for the whole call, and no
 * Python code runs meanwhile. */
static int fields(PyObject *d, Names *names, PyObject **out) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    int j, p = 0;
    for (j = 0; j < names->n; j++)
        out[j] = NULL;
    for (; PyDict_Next(d, &pos, &key, &value); p++) {
        if (p < SLOT_CAP && names->slot_key[p] == key)
            j = names->slot_name[p];
        else {
            if (!name_of(names, key, &j))
                return 0;
            if (p < SLOT_CAP) {
                names->slot_key[p] = key;
                names->slot_name[p] = (signed char)j;
            }
        }
        if (j >= 0)
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

/* A parameter key's tab_params position, -1 for a name outside it (a key object's is kept). */
static int param_index(Sched *s, PyObject *key) {
    int j, at;
    for (j = 0; j < s->npk; j++)
        if (s->pkey[j] == key)
            return s->pidx[j];
    at = strtab_find(&tab_params, key);
    if (s->npk < 16) {
        s->pkey[s->npk] = key;
        s->pidx[s->npk++] = at;
    }
    return at;
}

/* What one pass over a task's params gives: whether every typed value has its type, which known
 * names are there (a mask of tab_params positions) and the tile parameters' values. */
typedef struct {
    int fine;
    uint64_t names;
    PyObject *tile[NT_TILE];
} Params;

/* 1 read; -1 when a key is not an exact str (a look-up of it could run code of its own: Python
 * decides). params: an exact dict or NULL. */
static int read_params(Sched *s, PyObject *params, Params *p) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    memset(p, 0, sizeof *p);
    p->fine = 1;
    while (params != NULL && PyDict_Next(params, &pos, &key, &value)) {
        long code;
        long long v;
        int at, j;
        if (!PyUnicode_CheckExact(key))
            return -1;
        if ((at = param_index(s, key)) < 0)
            continue;
        p->names |= (uint64_t)1 << at;
        code = tab_params.code[at];
        if ((code == 1 && (!exact_int(value, &v) || v < -2147483648LL || v > 2147483647LL)) ||
            (code == 2 && !PyFloat_CheckExact(value) && !PyLong_CheckExact(value)))
            p->fine = 0;
        for (j = 0; j < NT_TILE; j++)
            if (tile_param[j] == at)
                p->tile[j] = value;
    }
    return 1;
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
        kind = strtab_code(&tab_kinds, f[B_KIND]);
        dtype = strtab_code(&tab_dtypes, f[B_DTYPE]);
        onchip = f[B_SPACE] == NULL ? 0 : strtab_code(&tab_spaces, f[B_SPACE]); /* absent: HBM */
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

/* The op's entry in the rules configure() read, or NULL for an op outside them. */
static const OpSpec *op_of(PyObject *op) {
    int at = strtab_find(&tab_ops, op);
    return at < 0 ? NULL : &op_spec[at];
}

/* AMK's per-opcode rules (opcheck._problem) for one task, its params read: 1 when it keeps them
 * all, 0 when it breaks one. */
static int op_ok(Sched *s, const OpSpec *spec, const Params *p, int t) {
    int j, nin = s->in_start[t + 1] - s->in_start[t], nout = s->o_start[t + 1] - s->o_start[t];
    if (spec == NULL || !p->fine || nin < spec->low || nin > spec->high || nout != spec->nouts ||
        (p->names & spec->required) != spec->required)
        return 0;
    for (j = 0; j < spec->nrules; j++) {
        long at = spec->rule_at[j], need = spec->rule_need[j];
        int b;
        if (at >= (spec->rule_out[j] ? nout : nin))
            continue;
        b = spec->rule_out[j] ? s->o_buf[s->o_start[t] + at] : s->in_buf[s->in_start[t] + at];
        if ((need == 0 && !s->intdtype[b]) || (need == 1 && !(s->kflags[b] & K_WEIGHT)) ||
            (need == 2 && !(s->kflags[b] & K_KV)))
            return 0;
    }
    if (!spec->kv_writer)
        for (j = s->o_start[t]; j < s->o_start[t + 1]; j++)
            if (s->kflags[s->o_buf[j]] & K_KV)
                return 0;
    return 1;
}

/* A tile parameter's value as amk_io.tile_regions reads it (exact ints only): 1 and *out set; 0
 * when absent or of another type (no region from it); -1 when too large to add here (a doubt). */
static int tile_int(PyObject *v, long long *out) {
    if (v == NULL || !PyLong_CheckExact(v))
        return 0;
    if (!exact_int(v, out) || *out > (1LL << 60) || *out < -(1LL << 60))
        return -1;
    return 1;
}

/* For a document as AMK writes it: the box a GEMV/GEMM tile's params give its one output, as
 * amk_io.tile_regions derives it on import, into the task's output entry (which holds the whole
 * buffer). 1 (set, or no region: the whole buffer), 0 a doubt, -1 a tile reaching outside its
 * buffer (tile_out_of_bounds). */
static int tile_box(Sched *s, const OpSpec *spec, const Params *p, int t) {
    int first = s->o_start[t], b, d, r, a, c;
    long long lo, width, row = 0, rows = 0;
    Box box;
    if (s->o_start[t + 1] - first != 1)
        return 1;
    if ((r = tile_int(p->tile[T_N_OFF], &lo)) <= 0 || (r = tile_int(p->tile[T_N_TILE], &width)) <= 0)
        return r == 0;
    b = s->o_buf[first];
    box = s->o_box[first];
    box.lo[s->rank[b] - 1] = lo;
    box.hi[s->rank[b] - 1] = lo + width;
    if (spec->gemm && s->rank[b] >= 2) {
        a = tile_int(p->tile[T_M_OFF], &row);
        c = tile_int(p->tile[T_M_TILE], &rows);
        if (a < 0 || c < 0)
            return 0;
        if (a > 0 && c > 0) {
            box.lo[s->rank[b] - 2] = row;
            box.hi[s->rank[b] - 2] = row + rows;
        }
    }
    r = 1;
    for (d = 0; d < s->rank[b]; d++) { /* read_box's rules, on the derived box */
        if (box.hi[d] <= box.lo[d])
            return 0;
        if (box.lo[d] < 0 || box.hi[d] > s->shape[b * RANK_CAP + d])
            r = -1;
    }
    s->o_box[first] = box;
    return r;
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

/* The regions meta carries for task t, as amk_io._tasks_from_amk takes them: 1 with *out the list
 * to read, or NULL when the entry is absent or None (then a tile's params decide); 2 for an empty
 * list (no regions: the whole buffer); 0 at a doubt (an entry of another type). */
static int carried_regions(Sched *s, int t, PyObject **out) {
    PyObject *key = PyUnicode_FromFormat("%d", t), *entry;
    *out = NULL;
    if (key == NULL)
        return 0;
    entry = PyDict_GetItemWithError(s->carried, key); /* (its keys are exact strs: no code runs) */
    Py_DECREF(key);
    if (entry == NULL)
        return !PyErr_Occurred();
    if (entry == Py_None)
        return 1;
    if (!PyList_CheckExact(entry))
        return 0;
    if (PyList_GET_SIZE(entry) == 0)
        return 2;
    *out = entry;
    return 1;
}

/* Task t (its fields in f, id t, lists checked by count_operands): 1, 0 or -1 as above. */
static int read_task(Sched *s, PyObject **f, int t, Names *region_names, Names *wait_names) {
    const OpSpec *spec = NULL;
    Params params;
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
    if (f[F_OP] == NULL || !PyUnicode_CheckExact(f[F_OP]) || (f[F_PARAMS] != NULL && !PyDict_CheckExact(f[F_PARAMS])))
        return 0;
    if (s->check_ops) {
        spec = op_of(f[F_OP]);
        if (read_params(s, f[F_PARAMS], &params) < 0)
            return 0;
    }
    if (s->amk) { /* the regions the import gives: carried in meta, else a tile's from its params */
        PyObject *carried = NULL;
        int given = 1; /* 2: an empty list carried */
        if (f[F_REGIONS] != NULL || (s->carried != NULL && (given = carried_regions(s, t, &carried)) == 0))
            return 0;
        if (carried != NULL) {
            if ((r = read_regions(s, carried, first, s->o_start[t + 1] - first, region_names)) < 0)
                return -1;
            doubt |= !r;
        } else if (given != 2 && spec != NULL && spec->tiled) {
            if ((r = tile_box(s, spec, &params, t)) < 0)
                return -1;
            doubt |= !r;
        }
    } else if (f[F_REGIONS] != NULL && f[F_REGIONS] != Py_None) {
        if ((r = read_regions(s, f[F_REGIONS], first, s->o_start[t + 1] - first, region_names)) < 0)
            return -1;
        doubt |= !r;
    }
    if (!read_cost(f[F_BYTES], s->cost + 2 * t) || !read_cost(f[F_FLOPS], s->cost + 2 * t + 1))
        return 0;
    if (doubt || f[F_SM] != Py_None)
        return 0;
    if (s->check_ops && !op_ok(s, spec, &params, t))
        return -1; /* bad_op */
    return 1;
}
