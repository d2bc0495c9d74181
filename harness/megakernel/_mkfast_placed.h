/* judge()'s races under AMK's loader placement: part of _mkfast.c (included by
 * _mkfast_accept.h). For a schedule the fast checks there leave open (a partial wait, or
 * producers listed after their waiters), this places it as placement.placed does: the loader's
 * topological order (placement.topological_order: Kahn's algorithm, first in first out, seeded and
 * released in id order), each task in turn on the least-loaded SM of the grid (placement.loader_sms:
 * load is (bytes, flops, tasks, SM index)), every SM running its tasks in that order. It then
 * looks for a read that can miss a write there, by hb.py's definition: writer w need not precede
 * reader t iff t completes in the least fixpoint of the schedule with w removed. Found, the Python
 * passes call the schedule unsafe as well (a race where the loader places it is one with every
 * task on an SM of its own, which has fewer orderings); not found, they decide (this proves no
 * acceptance). Every wait here is meetable (unmeetable_wait ran first), so in topological order
 * one pass computes a fixpoint: a task's producers and queue predecessor all come before it. */

/* The loader's order into s->order (positions); 1 when every task is in it, 0 on a cycle, -1 when
 * out of memory or the graph is too large to be worth it. */
static int loader_order(Sched *s) {
    int n = s->n, t, j, q, head = 0, tail = 0, edges = 0;
    int *pstart = calloc((size_t)s->nc + 1, sizeof(int)), *prod = malloc(sizeof(int) * (n + 1));
    int *seen = malloc(sizeof(int) * (n + 1)), *sstart = calloc((size_t)n + 1, sizeof(int)), *succ = NULL;
    int *need = calloc((size_t)n + 1, sizeof(int)), ok = -1;
    if (!pstart || !prod || !seen || !sstart || !need)
        goto done;
    for (t = 0; t < n; t++) /* producers per counter, in task order (CSR) */
        pstart[s->out[t] + 1]++;
    for (j = 0; j < s->nc; j++)
        pstart[j + 1] += pstart[j];
    memset(s->made, 0, sizeof(int) * s->nc);
    for (t = 0; t < n; t++)
        prod[pstart[s->out[t]] + s->made[s->out[t]]++] = t;
    for (t = 0; t < n; t++)
        seen[t] = -1;
    for (t = 0; t < n; t++) /* distinct edges p -> t, counted per p (the successor lists' sizes) */
        for (j = s->w_start[t]; j < s->w_start[t + 1]; j++)
            for (q = pstart[s->w_counter[j]]; q < pstart[s->w_counter[j] + 1]; q++)
                if (seen[prod[q]] != t) {
                    seen[prod[q]] = t;
                    sstart[prod[q] + 1]++;
                    need[t]++;
                    if (++edges > 4 * 1024 * 1024)
                        goto done;
                }
    for (t = 0; t < n; t++)
        sstart[t + 1] += sstart[t];
    if ((succ = malloc(sizeof(int) * ((size_t)edges + 1))) == NULL)
        goto done;
    memset(s->made, 0, sizeof(int) * s->nc); /* (reused: a fill count per task below) */
    for (t = 0; t < n; t++)
        seen[t] = -1;
    {
        int *fill = calloc((size_t)n + 1, sizeof(int));
        if (fill == NULL)
            goto done;
        for (t = 0; t < n; t++) /* t in increasing order: every list comes out sorted by id */
            for (j = s->w_start[t]; j < s->w_start[t + 1]; j++)
                for (q = pstart[s->w_counter[j]]; q < pstart[s->w_counter[j] + 1]; q++)
                    if (seen[prod[q]] != t) {
                        seen[prod[q]] = t;
                        succ[sstart[prod[q]] + fill[prod[q]]++] = t;
                    }
        free(fill);
    }
    for (t = 0; t < n; t++)
        if (!need[t])
            s->order[tail++] = t;
    while (head < tail) {
        int i = s->order[head++];
        for (q = sstart[i]; q < sstart[i + 1]; q++)
            if (--need[succ[q]] == 0)
                s->order[tail++] = succ[q];
    }
    ok = tail == n;
done:
    free(pstart); free(prod); free(seen); free(sstart); free(succ); free(need);
    return ok;
}

/* Load entries of the loader's heap: (bytes, flops, tasks, SM), compared in that order. */
typedef struct {
    long long bytes, flops, count;
    int sm;
} Load;

static int load_less(const Load *a, const Load *b) {
    if (a->bytes != b->bytes)
        return a->bytes < b->bytes;
    if (a->flops != b->flops)
        return a->flops < b->flops;
    if (a->count != b->count)
        return a->count < b->count;
    return a->sm < b->sm;
}

static void sift_down(Load *heap, int size, int at) {
    for (;;) {
        int least = at, l = 2 * at + 1, r = l + 1;
        Load tmp;
        if (l < size && load_less(&heap[l], &heap[least]))
            least = l;
        if (r < size && load_less(&heap[r], &heap[least]))
            least = r;
        if (least == at)
            return;
        tmp = heap[at], heap[at] = heap[least], heap[least] = tmp;
        at = least;
    }
}

/* Each task's SM (s->sm) and queue predecessor (s->qpred) as the loader places them; 0 at a doubt. */
static int loader_sms(Sched *s) {
    int size = s->grid < s->n ? s->grid : s->n, k, i; /* (never more SMs than tasks get used) */
    int *last = malloc(sizeof(int) * ((size_t)size + 1));
    Load *heap = malloc(sizeof(Load) * ((size_t)size + 1));
    if (heap == NULL || last == NULL) {
        free(heap);
        free(last);
        return 0;
    }
    for (k = 0; k < size; k++) { /* the SMs past the n-th are never the least loaded before it */
        heap[k].bytes = heap[k].flops = heap[k].count = 0;
        heap[k].sm = k;
        last[k] = -1;
    }
    for (k = 0; k < s->n; k++) {
        int t = s->order[k];
        i = heap[0].sm;
        s->sm[t] = i;
        s->qpred[t] = last[i];
        last[i] = t;
        if (__builtin_add_overflow(heap[0].bytes, s->cost[2 * t], &heap[0].bytes) ||
            __builtin_add_overflow(heap[0].flops, s->cost[2 * t + 1], &heap[0].flops)) {
            free(heap);
            free(last);
            return 0;
        }
        heap[0].count++;
        sift_down(heap, size, 0);
    }
    free(heap);
    free(last);
    return 1;
}

/* Ancestors that must precede each task where the loader places them: its queue predecessor and
 * every producer of a counter it waits on in full, transitively (a partial wait guarantees none). */
static void placed_ancestors(Sched *s) {
    int k, j, x, W = s->W;
    memset(s->cmask, 0, sizeof(uint64_t) * (size_t)s->nc * W);
    for (k = 0; k < s->n; k++) {
        int t = s->order[k], p = s->qpred[t];
        uint64_t *a = s->anc + (size_t)t * W, *m;
        memset(a, 0, sizeof(uint64_t) * W);
        if (p >= 0) {
            m = s->anc + (size_t)p * W;
            for (x = 0; x < W; x++)
                a[x] |= m[x];
            a[p >> 6] |= (uint64_t)1 << (p & 63);
        }
        for (j = s->w_start[t]; j < s->w_start[t + 1]; j++)
            if (s->w_k[j] == s->total[s->w_counter[j]]) {
                m = s->cmask + (size_t)s->w_counter[j] * W;
                for (x = 0; x < W; x++)
                    a[x] |= m[x];
            }
        m = s->cmask + (size_t)s->out[t] * W;
        for (x = 0; x < W; x++)
            m[x] |= a[x];
        m[t >> 6] |= (uint64_t)1 << (t & 63);
    }
}

/* Whether t completes in the least fixpoint with w removed (one pass in the loader's order). */
static int completes_without(Sched *s, int w, int t, char *done, int *count) {
    int k, j;
    memset(done, 0, s->n);
    memset(count, 0, sizeof(int) * s->nc);
    for (k = 0; k < s->n; k++) {
        int x = s->order[k], ok = x != w && (s->qpred[x] < 0 || done[s->qpred[x]]);
        for (j = s->w_start[x]; ok && j < s->w_start[x + 1]; j++)
            ok = count[s->w_counter[j]] >= s->w_k[j];
        if (ok) {
            done[x] = 1;
            count[s->out[x]]++;
        }
        if (x == t)
            return ok;
    }
    return 0;
}

/* Task-steps of fixpoints one call may spend looking for a race (tens of milliseconds at most);
 * past it the Python passes decide, memoising per writer. */
#define RACE_WORK_CAP (20LL * 1000 * 1000)

/* -1: a cycle, or a read that can miss a write where the loader places the tasks; 0: not shown. */
static int placed_races(Sched *s) {
    int r = loader_order(s), t, j, q, found = 0;
    long long work = 0;
    char *done;
    int *count;
    if (r <= 0)
        return r == 0 ? -1 : 0;
    if (!loader_sms(s))
        return 0;
    placed_ancestors(s); /* (writer_lists ran already) */
    done = malloc((size_t)s->n + 1);
    count = malloc(sizeof(int) * ((size_t)s->nc + 1));
    for (t = 0; done && count && !found && t < s->n; t++)
        for (j = s->in_start[t]; !found && j < s->in_start[t + 1]; j++) {
            int b = s->in_buf[j];
            if (s->kflags[b] & K_READONLY)
                continue;
            for (q = s->wstart[b]; !found && q < s->wstart[b] + s->wcount[b]; q++) {
                int w = s->wlist[q];
                if (w == t || BEFORE(s, w, t))
                    continue;
                if ((work += s->n) > RACE_WORK_CAP)
                    goto out;
                found = completes_without(s, w, t, done, count);
            }
        }
out:
    free(done);
    free(count);
    return found ? -1 : 0;
}
