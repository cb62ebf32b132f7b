/*
 * A communicator's Convoy state: made on first use, cached on the communicator with an
 * attribute, freed by the attribute's delete callback (MPI_Comm_free) or, for
 * communicators still alive then, at MPI_Finalize (through an attribute on
 * MPI_COMM_SELF, which MPI deletes first thing in MPI_Finalize). No state lives in
 * function-static variables: two communicators never share a decomposition.
 */
#include "api/internal.h"
#include "platform/platform.h"
#include "shm/shm.h"
#include "topo/topo_mpi.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t states_lock = PTHREAD_MUTEX_INITIALIZER;
static int comm_keyval = MPI_KEYVAL_INVALID, self_keyval = MPI_KEYVAL_INVALID;
static MPI_Comm self_comm = MPI_COMM_NULL;
static convoy__cstate *states; /* every live state, newest first */
static atomic_long builds;

/* The state this thread found last, for convoy__cstate_cached: valid while no state was
 * freed since (a freed communicator's handle may be reused by a new one). */
static atomic_ulong states_freed;
static CONVOY_TLS_FAST struct {
    MPI_Comm comm;
    convoy__cstate *cs;
    unsigned long freed;
} last_state;

convoy__cstate *convoy__cstate_cached(MPI_Comm comm)
{
    if (last_state.cs && last_state.comm == comm &&
        last_state.freed == atomic_load_explicit(&states_freed, memory_order_acquire))
        return last_state.cs;
    return NULL;
}

unsigned long convoy__states_freed(void)
{
    return atomic_load_explicit(&states_freed, memory_order_acquire);
}

long convoy__builds_inc(void)
{
    return atomic_fetch_add(&builds, 1) + 1;
}

long convoy__build_count(void)
{
    return atomic_load(&builds);
}

static void cache_clear(convoy__cstate *cs)
{
    convoy__fast_clear(cs);
    for (int c = 0; c < CONVOY_NCOLL; c++) {
        for (int k = 0; cs->memo[c] && k < CONVOY_MEMO_SLOTS; k++) {
            convoy__sched_release(cs, cs->memo[c][k].entry);
            free(cs->memo[c][k].vec);
        }
        free(cs->memo[c]);
        cs->memo[c] = NULL;
    }
    for (int i = 0; i < CONVOY_CACHE_SIZE; i++) {
        convoy__centry *e = cs->cache[i];
        if (!e) continue;
        convoy__sched_free(&e->sched);
        free(e->key);
        free(e);
        cs->cache[i] = NULL;
    }
}

static int state_free(convoy__cstate *cs)
{
    int rc = 0;
    atomic_fetch_add_explicit(&states_freed, 1, memory_order_acq_rel);
    pthread_mutex_lock(&states_lock);
    if (cs->prev)
        cs->prev->next = cs->next;
    else
        states = cs->next;
    if (cs->next) cs->next->prev = cs->prev;
    pthread_mutex_unlock(&states_lock);
    if (cs->shm) {
        rc = convoy__shm_free(cs->shm);
        convoy__shm_unreserve();
    }
    if (cs->setup_req != MPI_REQUEST_NULL) PMPI_Wait(&cs->setup_req, MPI_STATUS_IGNORE);
    free(cs->setup_keys);
    if (cs->node_comm != MPI_COMM_NULL) PMPI_Comm_free(&cs->node_comm);
    if (cs->priv != MPI_COMM_NULL && !cs->priv_shared) PMPI_Comm_free(&cs->priv);
    cache_clear(cs);
    convoy__topo_free(&cs->topo);
    pthread_mutex_destroy(&cs->lock);
    free(cs->trial);
    free(cs);
    return rc;
}

static int comm_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    return state_free(attr);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: free every state still alive, in
 * the order they were made (the same order on every process, so the collective frees of
 * windows and communicators match up). */
static int self_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    for (;;) {
        pthread_mutex_lock(&states_lock);
        convoy__cstate *oldest = states;
        while (oldest && oldest->next)
            oldest = oldest->next;
        pthread_mutex_unlock(&states_lock);
        if (!oldest) break;
        /* Deleting the attribute runs comm_delete, which unlinks and frees the state. */
        if (PMPI_Comm_delete_attr(oldest->user, comm_keyval) != MPI_SUCCESS) state_free(oldest);
    }
    PMPI_Comm_free_keyval(&comm_keyval);
    PMPI_Comm_free(&self_comm);
    return MPI_SUCCESS;
}

static void make_keyvals(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &comm_keyval, NULL);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
    PMPI_Comm_dup(MPI_COMM_SELF, &self_comm);
    PMPI_Comm_set_errhandler(self_comm, MPI_ERRORS_RETURN);
}

MPI_Comm convoy__self_comm(void)
{
    pthread_once(&once, make_keyvals);
    return self_comm;
}

static int64_t env_bytes(const char *name, int64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long long b = strtoll(v, &end, 10);
    if (*end == 'K' || *end == 'k')
        b <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        b <<= 20, end++;
    return *end == '\0' && b >= 0 ? b : def;
}

/* The node segment, if every process of comm can have one (agreed collectively, so that
 * all take the same path: past the cap, the algorithms that need a segment are not
 * chosen). Blocking, collective. */
/* The wait policy from this host's processes of comm (a real node, whatever CONVOY_PPN
 * says) and the CPUs they may run on together (the union of their affinity masks).
 * Blocking, collective. */
static int set_wait_policy(convoy__cstate *cs)
{
    MPI_Comm host;
    int rc = PMPI_Comm_split_type(cs->priv, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host), n = 1;
    if (rc) return rc;
    unsigned long mine[CONVOY_CPU_WORDS], all[CONVOY_CPU_WORDS];
    convoy__host_cpu_mask(mine);
    rc = PMPI_Comm_size(host, &n);
    if (!rc) rc = PMPI_Allreduce(mine, all, CONVOY_CPU_WORDS, MPI_UNSIGNED_LONG, MPI_BOR, host);
    PMPI_Comm_free(&host);
    if (rc) return rc;
    int cpus = 0;
    for (int i = 0; i < CONVOY_CPU_WORDS; i++)
        cpus += __builtin_popcountl(all[i]);
    convoy__wait_policy(n, cpus);
    return 0;
}

/* Whether node phases may read node peers' buffers by cross-memory attach: a real read on
 * every node (convoy__shm_cma_probe), agreed by MIN over the communicator so that every
 * rank builds the same kind of schedule. CONVOY_CMA=0 forbids it; a SimGrid build never
 * uses it (its ranks share one process, and the reads would not be charged). Codes: 1 used,
 * 0 forbidden by CONVOY_CMA=0, 2 simulation, -errno the probe failed on some node. */
static int probe_cma(convoy__cstate *cs)
{
    const char *v = getenv("CONVOY_CMA");
    int code = v && !strcmp(v, "0") ? 0 : 1, all, rc;
#ifdef CONVOY_SIMGRID
    code = 2;
#endif
    if (code == 1) code = convoy__shm_cma_probe(cs->shm, cs->node_comm);
    if ((rc = PMPI_Allreduce(&code, &all, 1, MPI_INT, MPI_MIN, cs->priv))) return rc;
    cs->cma = all == 1;
    convoy__config c;
    convoy__config_current(&c);
    if (c.verbose && cs->topo.rank == 0)
        fprintf(stderr, "convoy: cross-memory attach (process_vm_readv): %s%s\n",
                all == 1   ? "used for large node transfers"
                : all == 0 ? "not used: CONVOY_CMA=0"
                : all == 2
                    ? "not used under simulation"
                    : "not used: the probe read between node processes failed on some node: ",
                all < 0 ? strerror(-all) : "");
    return 0;
}

static int make_segment(convoy__cstate *cs)
{
    int rc, node_size;
    cs->segment_tried = 1;
    if ((rc = set_wait_policy(cs))) return rc;
    if ((rc = convoy__node_comm_mpi(cs->priv, &cs->topo, &cs->node_comm))) return rc;
    if ((rc = PMPI_Comm_size(cs->node_comm, &node_size))) return rc;
    int64_t bytes = env_bytes("CONVOY_SEGMENT_BYTES", 1 << 20);
    int want = cs->topo.max_ppn > 1 && bytes > 0 && node_size == cs->topo.ppn;
    int can = want && convoy__shm_reserve(), all;
    if ((rc = PMPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, cs->priv))) goto undo;
    if (!all) goto undo;
    /* A failed allocation on one node must not leave the others with a segment. */
    PMPI_Comm_set_errhandler(cs->node_comm, MPI_ERRORS_RETURN);
    int ok = convoy__shm_create(cs->node_comm, bytes, 64, &cs->shm) == MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, cs->priv))) return rc;
    if (all) return probe_cma(cs);
    if (cs->shm) convoy__shm_free(cs->shm);
    cs->shm = NULL;
undo:
    if (can) convoy__shm_unreserve();
    return rc;
}

static void link_state(convoy__cstate *cs)
{
    pthread_mutex_lock(&states_lock);
    cs->next = states;
    if (states) states->prev = cs;
    states = cs;
    pthread_mutex_unlock(&states_lock);
}

static int set_tag_ub(convoy__cstate *cs)
{
    void *ub;
    int flag;
    /* MPI attaches MPI_TAG_UB to MPI_COMM_WORLD; some libraries (Open MPI) do not copy it
     * to communicators made from others, yet the bound holds for every communicator. */
    int rc = PMPI_Comm_get_attr(cs->priv, MPI_TAG_UB, &ub, &flag);
    if (!rc && !flag) rc = PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    cs->tag_ub = !rc && flag ? *(int *)ub : 32767;
    /* Errors inside Convoy come back as codes and reach the user on the user's comm (not
     * when priv is the user's comm itself: its handler stays the user's). */
    if (!rc && !cs->priv_shared) rc = PMPI_Comm_set_errhandler(cs->priv, MPI_ERRORS_RETURN);
    return rc;
}

/* Advances a nonblocking setup (MPI_Comm_idup, then an allgather of node keys) without
 * blocking. There is one per communicator and no other collective on the private
 * communicator before it completes, so ranks cannot post them in different orders. */
int convoy__cstate_progress(convoy__cstate *cs)
{
    int rc = 0, done;
    while (!cs->ready && !rc) {
        if ((rc = PMPI_Test(&cs->setup_req, &done, MPI_STATUS_IGNORE)) || !done) break;
        if (cs->setup_phase == 0) {
            int64_t key[2];
            cs->setup_phase = 1;
            if ((rc = set_tag_ub(cs)) || (rc = convoy__topo_key(convoy__host_key(), key))) break;
            int size;
            PMPI_Comm_size(cs->priv, &size);
            enum { NK = 2 + CONVOY_MACHINE_KEYS };
            cs->setup_keys = malloc((size_t)size * NK * sizeof *cs->setup_keys);
            if (!cs->setup_keys) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            cs->setup_key[0] = key[0];
            cs->setup_key[1] = key[1];
            double mach[CONVOY_MACHINE_KEYS];
            convoy__machine_to_keys(mach);
            memcpy(cs->setup_key + 2, mach, sizeof mach);
            rc = PMPI_Iallgather(cs->setup_key, NK, MPI_INT64_T, cs->setup_keys, NK, MPI_INT64_T,
                                 cs->priv, &cs->setup_req);
        } else {
            int size, rank;
            PMPI_Comm_size(cs->priv, &size);
            PMPI_Comm_rank(cs->priv, &rank);
            double mach[CONVOY_MACHINE_KEYS];
            memcpy(mach, cs->setup_keys + 2, sizeof mach); /* rank 0's */
            convoy__machine_from_keys(cs, mach);
            for (int i = 1; i < size; i++) /* node keys, packed */
                memmove(cs->setup_keys + 2 * i, cs->setup_keys + (2 + CONVOY_MACHINE_KEYS) * i,
                        2 * sizeof *cs->setup_keys);
            rc = convoy__topo_from_keys(&cs->topo, size, rank, cs->setup_keys);
            free(cs->setup_keys);
            cs->setup_keys = NULL;
            cs->ready = rc == 0;
        }
    }
    if (rc) cs->setup_err = rc;
    return cs->setup_err;
}

static int state_new(MPI_Comm comm, int blocking, convoy__cstate **out)
{
    convoy__cstate *cs = calloc(1, sizeof *cs);
    if (!cs) return MPI_ERR_NO_MEM;
    cs->priv = cs->node_comm = MPI_COMM_NULL;
    cs->setup_req = MPI_REQUEST_NULL;
    pthread_mutex_init(&cs->lock, NULL);
    int rc;
    if (blocking) {
        if ((rc = convoy__plat_private_comm(comm, &cs->priv, &cs->priv_shared)) ||
            (rc = set_tag_ub(cs)) || (rc = convoy__topo_mpi(cs->priv, &cs->topo)) ||
            (rc = make_segment(cs)) || (rc = convoy__machine_agree(cs)))
            goto fail;
        cs->ready = 1;
    } else if ((rc = PMPI_Comm_idup(comm, &cs->priv, &cs->setup_req))) {
        goto fail;
    }
    link_state(cs);
    *out = cs;
    return 0;
fail:
    if (cs->shm) {
        convoy__shm_free(cs->shm);
        convoy__shm_unreserve();
    }
    if (cs->node_comm != MPI_COMM_NULL) PMPI_Comm_free(&cs->node_comm);
    if (cs->priv != MPI_COMM_NULL && !cs->priv_shared) PMPI_Comm_free(&cs->priv);
    convoy__topo_free(&cs->topo);
    pthread_mutex_destroy(&cs->lock);
    free(cs);
    return rc;
}

int convoy__cstate_get(MPI_Comm comm, int blocking, convoy__cstate **out, int *fresh)
{
    *out = NULL;
    if (fresh) *fresh = 0;
    pthread_once(&once, make_keyvals);
    if (comm_keyval == MPI_KEYVAL_INVALID) return 0; /* after MPI_Finalize began */
    int inter, rc;
    if ((rc = PMPI_Comm_test_inter(comm, &inter))) return rc;
    if (inter) return 0;
    void *attr;
    int found;
    if ((rc = PMPI_Comm_get_attr(comm, comm_keyval, &attr, &found))) return rc;
    convoy__cstate *cs = found ? attr : NULL;
    if (!cs && !blocking) {
        /* No MPI_Comm_idup (SMPI) or not a safe one (THREAD_MULTIPLE): see platform.c. */
        if (!convoy__plat_nonblocking_setup()) return 0;
    }
    if (!cs) {
        if ((rc = state_new(comm, blocking, &cs))) return rc;
        cs->user = comm;
        if ((rc = PMPI_Comm_set_attr(comm, comm_keyval, cs))) {
            state_free(cs);
            return rc;
        }
        if (fresh) *fresh = !blocking;
    }
    if (blocking) {
        /* A blocking call may finish a nonblocking setup and add the node segment; every
         * rank does so at the same call, as calls on a communicator are ordered. */
        unsigned iter = 0;
        while (!cs->ready && !(rc = convoy__cstate_progress(cs)))
            convoy__backoff(&iter);
        if (rc) return rc;
        if (!cs->segment_tried && ((rc = make_segment(cs)) || (rc = convoy__machine_agree(cs))))
            return rc;
        last_state.comm = comm;
        last_state.cs = cs;
        last_state.freed = atomic_load_explicit(&states_freed, memory_order_acquire);
    }
    *out = cs;
    return 0;
}

int convoy__comm_topo(MPI_Comm comm, const convoy__topo **topo)
{
    convoy__cstate *cs;
    int rc = convoy__cstate_get(comm, 1, &cs, NULL);
    if (!rc && !cs) rc = MPI_ERR_COMM;
    *topo = rc ? NULL : &cs->topo;
    return rc;
}

int convoy__comm_shm_bytes(MPI_Comm comm, int64_t *bytes)
{
    convoy__cstate *cs;
    int rc = convoy__cstate_get(comm, 1, &cs, NULL);
    if (!rc && !cs) rc = MPI_ERR_COMM;
    *bytes = !rc && cs->shm ? cs->shm->bytes : 0;
    return rc;
}

/* --- the schedule cache ------------------------------------------------------------- */

typedef struct {
    unsigned char *p;
    size_t len, cap;
    int err;
} keybuf;

static void put(keybuf *k, const void *v, size_t n)
{
    if (k->err) return;
    if (k->len + n > k->cap) {
        size_t c = k->cap ? k->cap * 2 : 256;
        while (c < k->len + n)
            c *= 2;
        unsigned char *q = realloc(k->p, c);
        if (!q) {
            k->err = 1;
            return;
        }
        k->p = q;
        k->cap = c;
    }
    memcpy(k->p + k->len, v, n);
    k->len += n;
}

static void make_key(keybuf *k, const convoy__algo *al, const convoy__args *a)
{
    put(k, &al, sizeof al);
    put(k, &a->coll, sizeof a->coll);
    put(k, &a->count, sizeof a->count);
    put(k, &a->root, sizeof a->root);
    put(k, &a->counts_local, sizeof a->counts_local);
    put(k, &a->stype, sizeof a->stype);
    put(k, &a->rtype, sizeof a->rtype);
    put(k, &a->inplace, sizeof a->inplace);
    put(k, &a->commutative, sizeof a->commutative);
    put(k, &a->idempotent, sizeof a->idempotent);
    put(k, &a->machine, sizeof a->machine);
    put(k, &a->shm_bytes, sizeof a->shm_bytes);
    put(k, &a->cma, sizeof a->cma);
    put(k, &a->nparams, sizeof a->nparams);
    for (int i = 0; i < a->nparams; i++) {
        put(k, a->params[i].name, strlen(a->params[i].name) + 1);
        put(k, &a->params[i].value, sizeof a->params[i].value);
    }
    if (a->rcounts) put(k, a->rcounts, (size_t)a->topo->size * sizeof *a->rcounts);
    if (a->displs) put(k, a->displs, (size_t)a->topo->size * sizeof *a->displs);
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

int convoy__sched_get(convoy__cstate *cs, const convoy__algo *al, const convoy__args *a,
                      convoy__centry **out)
{
    keybuf k = {0};
    make_key(&k, al, a);
    if (k.err) {
        free(k.p);
        return MPI_ERR_NO_MEM;
    }
    uint64_t h = fnv1a(k.p, k.len);
    pthread_mutex_lock(&cs->lock);
    cs->tick++;
    for (int i = 0; i < CONVOY_CACHE_SIZE; i++) {
        convoy__centry *e = cs->cache[i];
        if (e && e->hash == h && e->keylen == k.len && memcmp(e->key, k.p, k.len) == 0) {
            e->refs++;
            e->used = cs->tick;
            pthread_mutex_unlock(&cs->lock);
            free(k.p);
            *out = e;
            return 0;
        }
    }
    pthread_mutex_unlock(&cs->lock);

    convoy__centry *e = calloc(1, sizeof *e);
    if (!e) {
        free(k.p);
        return MPI_ERR_NO_MEM;
    }
    e->hash = h;
    e->key = k.p;
    e->keylen = k.len;
    e->refs = 1;
    convoy__sched_init(&e->sched);
    convoy__builds_inc();
    int rc = al->build(a, &e->sched);
    if (!rc) rc = e->sched.err;
    if (!rc) convoy__sched_seal(&e->sched);
    if (rc) {
        convoy__sched_free(&e->sched);
        free(e->key);
        free(e);
        return rc;
    }
    /* Cache it in a free slot or over the least recently used idle entry. */
    pthread_mutex_lock(&cs->lock);
    int slot = -1;
    for (int i = 0; i < CONVOY_CACHE_SIZE; i++) {
        convoy__centry *c = cs->cache[i];
        if (!c) {
            slot = i;
            break;
        }
        if (c->refs == 0 && (slot < 0 || c->used < cs->cache[slot]->used)) slot = i;
    }
    if (slot >= 0) {
        convoy__centry *old = cs->cache[slot];
        if (old) {
            convoy__sched_free(&old->sched);
            free(old->key);
            free(old);
        }
        e->cached = 1;
        e->used = cs->tick;
        cs->cache[slot] = e;
    }
    pthread_mutex_unlock(&cs->lock);
    *out = e;
    return 0;
}

void convoy__sched_release(convoy__cstate *cs, convoy__centry *e)
{
    (void)cs; /* (the cache's lock is not needed, see below) */
    if (!e) return;
    /* cached is set once, before the entry is handed out; eviction takes only entries
     * whose count is 0 (under the lock), so a count going down needs no lock. */
    if (atomic_fetch_sub(&e->refs, 1) == 1 && !e->cached) {
        convoy__sched_free(&e->sched);
        free(e->key);
        free(e);
    }
}

const char *convoy__comm_last_algo(MPI_Comm comm)
{
    void *attr;
    int found = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, comm_keyval, &attr, &found) || !found)
        return NULL;
    return atomic_load_explicit(&((convoy__cstate *)attr)->last_algo, memory_order_relaxed);
}

int convoy__comm_trials_open(MPI_Comm comm)
{
    void *attr;
    int found = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, comm_keyval, &attr, &found) || !found)
        return 0;
    return ((convoy__cstate *)attr)->trials_open;
}

int convoy__comm_machine(MPI_Comm comm, convoy__machine *m, const char **how)
{
    convoy__cstate *cs;
    int rc = convoy__cstate_get(comm, 1, &cs, NULL);
    if (!rc && !cs) rc = MPI_ERR_COMM;
    if (rc) return rc;
    *m = cs->machine;
    *how = cs->machine_how ? cs->machine_how : "built-in";
    return MPI_SUCCESS;
}
