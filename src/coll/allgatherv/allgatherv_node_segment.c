/*
 * Allgatherv through the node's shared segment, node data written to the remote nodes by
 * all processes of a node (GASPI-SHAN, papers/000_9e3270d4a632b2e1.txt, "Allgather(V)",
 * Figures 1-3).
 *
 * Idea (the paper's steps): (b) local Allgatherv: every process copies its contribution
 * into the node segment and notifies; then every process of the node can read all node
 * data. (c) The node's data is written to the remote node, the writes spread over all
 * processes of the node. (d) A process that receives data from a remote node forwards it
 * to the next remote node as soon as it has arrived (event-driven: each forward depends on
 * its own receive only, never on a round). (e) Every process copies what the others wrote
 * into the segment to its receive buffer, each piece as soon as its notification arrives.
 *
 * Details the paper leaves open, answered here:
 * - Topology of the remote writes: a ring over the nodes (node j writes to node j + 1), so
 *   every node receives each other node's data exactly once and the messages per node
 *   scale with the number of nodes, not of processes (the paper's aim). Data of origin
 *   node o reaches node o + h at hop h and is forwarded unless o + h + 1 = o.
 * - Units: each contribution is cut into units of at most ceil(E_o / max_ppn) elements
 *   (E_o: elements on the origin node), so even one large contribution (the broadcast
 *   distribution) is spread over all processes; while streaming, also at most one slot.
 *   CONVOY_ALLGATHERV_SHM_UNIT (bytes) caps units further (pipelining over the hops).
 * - Spreading over the processes (lanes): node j takes the units in its sequence Q_j
 *   (own units, then those of hop 1, 2, ..., nn - 1) and gives each to the process with
 *   the least inter-node bytes so far (ties: the unit's owner for own units, else the
 *   lowest node rank). That process sends it (own units) or receives and forwards it.
 *   With regular data this is lane l carrying node rank l's data on every node (every
 *   process sends and receives the same bytes); with any data, node sizes and rank
 *   placement, every process's load is within one unit of the node's average.
 * - Receives: posted in Q order, each into its final place, at most 4 in flight (and
 *   4 sends); messages between two processes carry the unit's index in the receiver's Q
 *   as tag (mod 1024; the executor posts the messages of a repeated tag in Q order, so
 *   FIFO matching keeps them apart).
 * - Direct mode (the packed result, T bytes, fits into the segment): the segment holds
 *   the packed result; remote data is received straight into it, forwarded from it, and
 *   every process copies the pieces from it (the paper's shared window). Streaming mode
 *   (T larger than the segment): the segment is cut into NS slots of C bytes
 *   (CONVOY_ALLGATHERV_SHM_SLOTS, default clamp(2 max_ppn, 4, 64); C whole elements), unit
 *   k of Q_j uses slot k mod NS. Data is received into the receive buffer and forwarded
 *   from there; its receiver copies it into the slot. Every process of the node notifies
 *   "consumed k + 1" (flag 1) after its read or write of unit k, in order; the writer of
 *   unit k waits until all others consumed unit k - NS. Slot reuse thus waits only for
 *   node-local copies, never for a send, and receives never wait for slots: every
 *   dependency goes to a unit earlier in a node's Q, or to the same unit one hop earlier
 *   (a send on its receive), so (Q index, hop) decreases along every chain of waits and
 *   the schedule cannot deadlock, whatever MPI buffers. An owner with node peers, not in
 *   place, and more than half the result, or whose node's
 *   processes share cores, copies each own unit from the send buffer into its slot and
 *   then from the slot (still in its cache) into its receive buffer, instead of the whole
 *   own block into the receive buffer first and each unit out of it again (np 2, one
 *   process holding all 8 MiB: 0.65-0.75 of the time; np 4 on 2 cores as 2 x 2, regular
 *   64 MiB: 14.6-15.8 ms against 15.2-19.6; with equal blocks and a core each the one large
 *   copy was 5-15% faster, so they keep it).
 * - Notifications: flag 0 counts a process's writes into the segment (chained, values
 *   only grow); a reader waits for the writer's count to pass the unit. Every process
 *   declares both flags and the segment size, so that the node agrees on them.
 * - One node: only (b) and (e); in direct mode each process writes its own units before
 *   it reads the others' (own_first below). Nodes of one process: the same steps (the
 *   segment is its staging area in direct mode, unused while streaming). Zero counts make
 *   no units.
 *   MPI_IN_PLACE and any displacements: the own block is first copied into the receive
 *   buffer, everything else moves in its place there and packed in the segment. Derived
 *   types: the call arrives in bytes (src/coll/bytes.c: units cut at the same byte on
 *   ranks whose datatypes differ; a type that is not dense packed into scratch first).
 *
 * - Single copy (args.cma: cross-memory attach works on every node; the model below, with
 *   the reads at the rate the setup measured (convoy__machine.cma), cheaper than the
 *   segment's copies, or the result at least CONVOY_ALLGATHERV_CMA_MIN bytes when that is
 *   set; 8 segment bytes per unit): the
 *   segment holds no data, only one address word per unit. The unit's writer publishes
 *   where its bytes are (PUBLISH, then F_WRITTEN): an owner's own unit in its send buffer
 *   unless MPI_IN_PLACE, else in its receive buffer (after the
 *   own copy); a remote unit in the receive buffer it arrived in. Every other node
 *   process READs it from there straight into its receive buffer, then says F_DONE = 1
 *   after all its reads; every process waits for all others' F_DONE before it returns, so
 *   no buffer is released while a peer reads it. Each byte is copied once per reader
 *   instead of into the segment and out again. Receives and sends go to and from the
 *   receive buffer (as while streaming). Units: at most 256 KiB unless
 *   CONVOY_ALLGATHERV_SHM_UNIT says otherwise.
 *
 * Cost (n_j processes on node j, D_j its bytes, T all bytes, u units handled per
 * process): alpha (max(nn - 1, u)) + beta max_j (T - D_j) / n_j + (gamma / 2) T + 2 f, the
 * third term the local copies (a copy moves each byte once; gamma is the per-byte cost of a
 * reduction, which reads two operands). The ring over all processes moves every byte
 * through a message on every process instead. f: a flag handshake (convoy__flag_cost), two:
 * the node's writes seen by its readers and the gate to the next segment operation.
 * Single copy: the third term is c T (n - 1) / n (c: the reads' measured cost per byte,
 * gamma / 2 where unmeasured), plus a handshake per unit read and one for the readers'
 * done. On this host (a virtual machine) a read moves 8-14 GB/s, a copy 40-170 GB/s in
 * cache, so the model keeps the segment; measured at np 2 (load 6), results of 8 MiB took
 * 3.0-3.5 ms with the single copy against 0.38-0.75 ms through the segment (regular,
 * decreasing), where the old 4 MiB threshold had put them on the single copy.
 *
 * Applicable with a node segment (args.shm_bytes > 0) of any size: the builder sees the call
 * in bytes, and one byte makes a slot.
 */
#include "coll/coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Flags (the first two, and F_DONE in single copy); receives and sends a process has in
 * flight at most. */
enum { F_WRITTEN = 0, F_CONSUMED = 1, F_DONE = 2, NS_FLAGS = 3, NS_WINDOW = 4 };

typedef struct ns_unit {
    int rank;      /* owner: the origin rank */
    int64_t e0, n; /* elements [e0, e0 + n) of the owner's block */
    int64_t pack;  /* byte offset in the packed result (direct mode) */
} ns_unit;

typedef struct ns_plan {
    int nn;
    int64_t esize, total; /* receive element bytes; packed result bytes */
    int direct;
    int cma;              /* single copy: peers' units read from their buffers */
    int64_t nslots, slot; /* streaming: slots and their bytes */
    int64_t seg_bytes;    /* segment bytes the schedule uses */
    ns_unit *u;
    int64_t nu;
    int64_t *ustart; /* [nn + 1] first unit of each origin node */
} ns_plan;

/* One node's sequence Q: hop h starts at qstart[h]; handler[k] = node rank. */
typedef struct ns_node {
    int node;
    int64_t *qstart;
    int32_t *handler;
} ns_node;

static void plan_free(ns_plan *pl)
{
    free(pl->u);
    free(pl->ustart);
}

/* Slot layout while streaming; 0 if no element fits the segment. */
static int stream_layout(const convoy__args *a, int64_t *nslots, int64_t *slot)
{
    const int64_t S = a->shm_bytes, es = a->rtype.size > 0 ? a->rtype.size : 1;
    int64_t ns = a->topo->max_ppn * 2;
    ns = ns < 4 ? 4 : ns > 64 ? 64 : ns;
    ns = convoy__param_get(a, "CONVOY_ALLGATHERV_SHM_SLOTS", ns);
    if (ns < 1) ns = 1;
    int64_t c = S / ns;
    if (c < es) {
        ns = S / es;
        c = es;
    }
    if (c >= 128 && (c & ~(int64_t)63) >= es) c &= ~(int64_t)63; /* a cache line apart */
    *nslots = ns;
    *slot = c;
    return ns >= 1 && S >= es;
}

static int64_t packed_total(const convoy__args *a)
{
    int64_t n = 0;
    for (int i = 0; i < a->topo->size; i++)
        n += a->rcounts[i];
    return n * (a->rtype.size > 0 ? a->rtype.size : 0);
}

/* (Not in the element size: ranks with different datatypes must agree.) */
int convoy__allgatherv_node_segment_applicable(const convoy__args *a)
{
    return convoy__coll_base(a->coll) == CONVOY_COLL_ALLGATHERV && a->shm_bytes > 0;
}

/* cma: single copy allowed (a retry without it when the address words do not fit). */
static int plan_make_as(const convoy__args *a, ns_plan *pl, int cma)
{
    const convoy__topo *t = a->topo;
    memset(pl, 0, sizeof *pl);
    pl->nn = t->nnodes;
    pl->esize = a->rtype.size > 0 ? a->rtype.size : 0;
    pl->total = packed_total(a);
    /* Single copy: by default where the model says it pays (the reads at the rate the setup
     * measured, against the segment's copies: plan_make), or from CONVOY_ALLGATHERV_CMA_MIN
     * bytes of the packed result on. */
    const int64_t cma_min = convoy__param_get(a, "CONVOY_ALLGATHERV_CMA_MIN", -1);
    pl->cma =
        cma && a->cma && pl->esize > 0 && (cma_min < 0 ? a->machine.cma > 0 : pl->total >= cma_min);
    pl->direct = !pl->cma && pl->total <= a->shm_bytes;
    int64_t cap = INT64_MAX;
    if (pl->cma) {
        /* seg_bytes (the address words) once the units are known */
    } else if (!pl->direct) {
        if (!stream_layout(a, &pl->nslots, &pl->slot)) return CONVOY_ERR_ARG;
        cap = pl->slot / pl->esize;
        pl->seg_bytes = pl->nslots * pl->slot;
    } else {
        pl->seg_bytes = pl->total;
    }
    /* Single copy: units of at most 256 KiB by default, so that readers and the next hop
     * start on a unit while the rest of a large contribution is still on its way. */
    const int64_t ub = convoy__param_get(a, "CONVOY_ALLGATHERV_SHM_UNIT", pl->cma ? 256 << 10 : 0);
    if (ub > 0 && pl->esize > 0 && (ub / pl->esize < cap))
        cap = ub / pl->esize < 1 ? 1 : ub / pl->esize;
    pl->ustart = calloc((size_t)pl->nn + 1, sizeof *pl->ustart);
    if (!pl->ustart) return CONVOY_ERR_NO_MEM;
    if (pl->esize == 0) return CONVOY_OK; /* nothing to move */
    /* Units per origin node: count first, then fill. */
    int64_t *ue = malloc((size_t)pl->nn * sizeof *ue);
    if (!ue) return CONVOY_ERR_NO_MEM;
    for (int pass = 0; pass < 2; pass++) {
        int64_t nu = 0, pack = 0;
        for (int o = 0; o < pl->nn; o++) {
            if (pass == 0) {
                int64_t e = 0;
                for (int q = t->node_first[o]; q < t->node_first[o + 1]; q++)
                    e += a->rcounts[t->members[q]];
                int64_t x = (e + t->max_ppn - 1) / t->max_ppn;
                x = x < 1 ? 1 : x;
                ue[o] = x < cap ? x : cap;
            }
            pl->ustart[o] = nu;
            for (int q = t->node_first[o]; q < t->node_first[o + 1]; q++) {
                const int i = t->members[q];
                const int64_t b = a->rcounts[i];
                if (b <= 0) continue;
                const int64_t nb = (b + ue[o] - 1) / ue[o];
                for (int64_t p = 0; p < nb; p++, nu++) {
                    if (pass == 0) continue;
                    const int64_t e0 = b * p / nb, e1 = b * (p + 1) / nb;
                    pl->u[nu] = (ns_unit){i, e0, e1 - e0, pack};
                    pack += (e1 - e0) * pl->esize;
                }
            }
        }
        pl->ustart[pl->nn] = nu;
        pl->nu = nu;
        if (pass == 0 && pl->cma && nu * 8 > a->shm_bytes) {
            free(ue);
            plan_free(pl);
            return plan_make_as(a, pl, 0);
        }
        if (pl->cma) pl->seg_bytes = nu * 8;
        if (pass == 0 && nu > 0) {
            pl->u = malloc((size_t)nu * sizeof *pl->u);
            if (!pl->u) {
                free(ue);
                return CONVOY_ERR_NO_MEM;
            }
        }
    }
    free(ue);
    return CONVOY_OK;
}

static double plan_cost(const convoy__args *a, const convoy__machine *m, const ns_plan *pl);

static int plan_make(const convoy__args *a, ns_plan *pl)
{
    int rc = plan_make_as(a, pl, 1);
    if (rc || !pl->cma || convoy__param_get(a, "CONVOY_ALLGATHERV_CMA_MIN", -1) >= 0) return rc;
    /* The model's choice (args.machine: the same on every rank). */
    ns_plan seg;
    if (plan_make_as(a, &seg, 0) == CONVOY_OK &&
        plan_cost(a, &a->machine, &seg) <= plan_cost(a, &a->machine, pl)) {
        plan_free(pl);
        *pl = seg;
        return CONVOY_OK;
    }
    plan_free(&seg);
    return CONVOY_OK;
}

static int origin_of(const ns_plan *pl, int j, int h)
{
    return ((j - h) % pl->nn + pl->nn) % pl->nn;
}

/* Node j's sequence and who handles each unit: the least loaded process (inter-node
 * bytes: own units are sent once, forwarded units received and sent, last-hop units only
 * received); ties go to the owner for own units, else to the lowest node rank. */
static int node_make(const convoy__args *a, const ns_plan *pl, int j, ns_node *nd)
{
    const convoy__topo *t = a->topo;
    const int n = t->node_size[j], nn = pl->nn;
    nd->node = j;
    nd->qstart = malloc(((size_t)nn + 1) * sizeof *nd->qstart);
    nd->handler = malloc(((size_t)pl->nu + 1) * sizeof *nd->handler);
    int64_t *load = calloc((size_t)n, sizeof *load);
    if (!nd->qstart || !nd->handler || !load) {
        free(load);
        return CONVOY_ERR_NO_MEM;
    }
    int64_t k = 0;
    for (int h = 0; h < nn; h++) {
        const int o = origin_of(pl, j, h);
        nd->qstart[h] = k;
        const int64_t w = h == 0 ? (nn > 1) : h < nn - 1 ? 2 : 1;
        for (int64_t x = pl->ustart[o]; x < pl->ustart[o + 1]; x++, k++) {
            int best = h == 0 ? t->node_rank_of[pl->u[x].rank] : 0;
            for (int q = 0; q < n; q++)
                if (load[q] < load[best]) best = q;
            nd->handler[k] = best;
            load[best] += w * pl->u[x].n * pl->esize;
        }
    }
    nd->qstart[nn] = k;
    free(load);
    return CONVOY_OK;
}

static void node_free(ns_node *nd)
{
    free(nd->qstart);
    free(nd->handler);
}

/* A dependency list that ignores absent steps (-1). */
typedef struct deplist {
    int *v;
    int n;
} deplist;

static void dep(deplist *d, int step)
{
    if (step >= 0) d->v[d->n++] = step;
}

/* A wait for node process q's flag to reach v, after my previous wait on that flag (values
 * only grow, so the chain delays nothing, and at most one wait per flag and process is in
 * flight). last: [NS_FLAGS * ppn] step indices. */
static int wait_on(convoy__schedule *s, int *last, int q, int flag, int64_t v)
{
    int *l = &last[flag + NS_FLAGS * q];
    *l = convoy__add_wait(s, q, flag, (uint32_t)v, CONVOY_DEP(*l));
    return *l;
}

/* The builder on the call in bytes (convoy__build_in_bytes). */
static int node_segment(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    ns_plan pl;
    ns_node cur = {0}, prv = {0}, nxt = {0};
    int32_t *writer = NULL;
    int64_t *widx = NULL, *wcnt = NULL;
    int *rstep = NULL, *dv = NULL, *lastwait = NULL, *reads = NULL;
    int rc = plan_make(a, &pl);
    /* Streaming with node peers from a contiguous send buffer: an own unit goes from the
     * send buffer into its slot and from there into the receive buffer (the slot still in
     * this core's cache), instead of one copy of the whole own block into the receive
     * buffer first and each unit out of it again (one pass over the own block less). A
     * local choice: the slots and flags stay the same. Taken by a process holding more of
     * the result than it receives (the node waits for its writes), and by every process
     * where processes share cores (m.share > 1: the pass saved is the shared core's time);
     * with blocks as large as the rest and a core each, the one large copy was faster.
     * CONVOY_ALLGATHERV_SHM_FUSE=0/1 forces it off/on. */
    const int64_t fuse_set = convoy__param_get(a, "CONVOY_ALLGATHERV_SHM_FUSE", -1);
    const int fuse =
        !rc && t->size > 1 && !pl.direct && !pl.cma && t->ppn > 1 && !a->inplace &&
        (fuse_set >= 0 ? fuse_set > 0
                       : 2 * a->rcounts[t->rank] * pl.esize > pl.total || a->machine.share > 1);
    const int own = fuse ? -1 : convoy__agv_copy_own(a, s);
    if (rc || t->size == 1 || pl.nu == 0) goto done;
    const int nflags = pl.cma ? NS_FLAGS : F_DONE;
    s->nflags = nflags;
    s->shm_bytes = pl.seg_bytes;

    const int nn = pl.nn, j = t->node, me = t->node_rank, ppn = t->ppn;
    const int jp = (j + nn - 1) % nn, jn = (j + 1) % nn;
    const int64_t nu = pl.nu, ext = a->rtype.extent, es = pl.esize;
    if ((rc = node_make(a, &pl, j, &cur))) goto done;
    if (nn > 1 && ((rc = node_make(a, &pl, jp, &prv)) || (rc = node_make(a, &pl, jn, &nxt))))
        goto done;
    writer = malloc((size_t)nu * sizeof *writer);
    widx = malloc((size_t)nu * sizeof *widx);
    wcnt = calloc((size_t)ppn, sizeof *wcnt);
    rstep = malloc((size_t)nu * sizeof *rstep);
    dv = malloc(((size_t)ppn + 4) * sizeof *dv);
    lastwait = malloc((size_t)ppn * NS_FLAGS * sizeof *lastwait);
    reads = malloc((size_t)nu * sizeof *reads);
    if (!writer || !widx || !wcnt || !rstep || !dv || !lastwait || !reads) {
        rc = CONVOY_ERR_NO_MEM;
        goto done;
    }
    /* Who writes unit k into the segment (the owner, or the remote data's receiver), and
     * its number among that process's writes (the value its flag 0 reaches with it). */
    for (int h = 0; h < nn; h++)
        for (int64_t k = cur.qstart[h]; k < cur.qstart[h + 1]; k++) {
            const ns_unit *u = &pl.u[pl.ustart[origin_of(&pl, j, h)] + k - cur.qstart[h]];
            writer[k] = h == 0 ? t->node_rank_of[u->rank] : cur.handler[k];
            widx[k] = wcnt[writer[k]]++;
        }

    /* Every receive first, in Q order: posted at once, each into its final place. */
    for (int64_t k = 0; k < nu; k++)
        rstep[k] = -1;
    for (int x = 0; x < ppn * NS_FLAGS; x++)
        lastwait[x] = -1;
    int rwin[NS_WINDOW], swin[NS_WINDOW], nr = 0, nsent = 0;
    for (int x = 0; x < NS_WINDOW; x++)
        rwin[x] = swin[x] = -1;
    for (int h = 1; h < nn; h++)
        for (int64_t k = cur.qstart[h]; k < cur.qstart[h + 1]; k++) {
            if (cur.handler[k] != me) continue;
            const int64_t i = k - cur.qstart[h];
            const ns_unit *u = &pl.u[pl.ustart[origin_of(&pl, j, h)] + i];
            const int from = convoy__topo_rank_at(t, jp, prv.handler[prv.qstart[h - 1] + i]);
            const convoy__region dst =
                pl.direct ? convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, u->pack, u->n * es)
                          : convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                        (a->displs[u->rank] + u->e0) * ext, u->n);
            rstep[k] = convoy__add_recv(s, CONVOY_COMM_ALL, from, (int)(k % CONVOY_STEP_TAGS), dst,
                                        CONVOY_DEP(rwin[nr % NS_WINDOW]));
            rwin[nr++ % NS_WINDOW] = rstep[k];
        }

    const int share = ppn > 1;
    int prev_w = -1, prev_c = -1, nreads = 0;
    /* Single copy: a unit is read straight into the receive buffer (the call arrives in
     * bytes: every buffer is contiguous); an owner's own units are read from its send
     * buffer (readers need not wait for its copy) unless in place. */
    const int from_send = !a->inplace;
    /* One node in direct mode: this process's own units first, then its reads of the
     * others' (no slot is reused, so any order is free of waits in a circle). A one-node
     * schedule runs in step order, and in Q order a process waited for every lower node
     * rank's unit before it wrote its own: np 2, 1 int each, process 1 stored its unit
     * and flag only after it had seen process 0's, two cache-line transfers in a row. */
    const int own_first = nn == 1 && pl.direct && !pl.cma;
    for (int h = 0; h < nn; h++) {
        const int o = origin_of(&pl, j, h);
        const int64_t n_h = cur.qstart[h + 1] - cur.qstart[h];
        for (int64_t x = 0; x < (own_first ? 2 : 1) * n_h; x++) {
            const int64_t k = cur.qstart[h] + x % n_h;
            if (own_first && (writer[k] == me) != (x < n_h)) continue; /* own, then others' */
            const int64_t i = k - cur.qstart[h];
            const ns_unit *u = &pl.u[pl.ustart[o] + i];
            const int w = writer[k], hd = cur.handler[k];
            const convoy__region rb = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                                  (a->displs[u->rank] + u->e0) * ext, u->n);
            const convoy__region sg =
                convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE,
                            pl.nslots ? (k % pl.nslots) * pl.slot : u->pack, u->n * es);
            int have = -1; /* after this step the unit is where my send takes it from */
            int mine = -1; /* my read or write of the unit's segment bytes */
            deplist d = {dv, 0};
            if (pl.cma && share) {
                const int64_t bytes = u->n * es;
                const convoy__region word = convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, k * 8, 8);
                const convoy__region place = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE,
                                                         (a->displs[u->rank] + u->e0) * ext, bytes);
                if (w == me) {
                    have = h == 0 ? own : rstep[k];
                    int pre = have;
                    convoy__region src = place;
                    if (h == 0 && from_send) {
                        src = convoy__reg(CONVOY_BUF_SEND, CONVOY_T_BYTE, u->e0 * es, bytes);
                        pre = -1;
                    }
                    dep(&d, convoy__add_publish(s, src, word, CONVOY_DEP(pre)));
                    dep(&d, prev_w);
                    prev_w = convoy__add_notify(s, F_WRITTEN, (uint32_t)(widx[k] + 1), d.n, d.v);
                } else {
                    const int wt = wait_on(s, lastwait, w, F_WRITTEN, widx[k] + 1);
                    have = convoy__add_read(s, w, word, place, CONVOY_DEP(wt));
                    reads[nreads++] = have;
                }
            } else if (pl.cma) {
                have = h == 0 ? own : rstep[k]; /* a node of one process */
            } else if (pl.direct) {
                if (w == me) {
                    if (h == 0) {
                        dep(&d, own);
                        mine = convoy__add_copy(s, rb, sg, d.n, d.v);
                    } else {
                        mine = rstep[k];
                        convoy__add_copy(s, sg, rb, CONVOY_DEP(mine));
                    }
                    d.n = 0;
                    dep(&d, mine);
                    dep(&d, prev_w);
                    prev_w = convoy__add_notify(s, F_WRITTEN, (uint32_t)(widx[k] + 1), d.n, d.v);
                    have = mine;
                } else {
                    have = wait_on(s, lastwait, w, F_WRITTEN, widx[k] + 1);
                    mine = convoy__add_copy(s, sg, rb, CONVOY_DEP(have));
                }
            } else {
                if (w == me) {
                    have = h == 0 ? own : rstep[k];
                    if (share) {
                        /* The slot's previous unit must be consumed by all others (my own
                         * read of it precedes my consumed chain). */
                        if (k >= pl.nslots)
                            for (int q = 0; q < ppn; q++)
                                if (q != me)
                                    dep(&d, wait_on(s, lastwait, q, F_CONSUMED, k - pl.nslots + 1));
                        dep(&d, prev_c);
                        dep(&d, have);
                        const int fused = fuse && h == 0;
                        mine = convoy__add_copy(s,
                                                fused ? convoy__reg(CONVOY_BUF_SEND, CONVOY_T_BYTE,
                                                                    u->e0 * es, u->n * es)
                                                      : rb,
                                                sg, d.n, d.v);
                        d.n = 0;
                        dep(&d, mine);
                        dep(&d, prev_w);
                        prev_w =
                            convoy__add_notify(s, F_WRITTEN, (uint32_t)(widx[k] + 1), d.n, d.v);
                        /* Fused: my own unit from the slot into place (before I say the
                         * slot is consumed). */
                        if (fused) mine = have = convoy__add_copy(s, sg, rb, CONVOY_DEP(prev_w));
                    }
                } else {
                    int wt = wait_on(s, lastwait, w, F_WRITTEN, widx[k] + 1);
                    mine = have = convoy__add_copy(s, sg, rb, CONVOY_DEP(wt));
                }
                if (share) {
                    d.n = 0;
                    dep(&d, mine);
                    dep(&d, prev_c);
                    prev_c = convoy__add_notify(s, F_CONSUMED, (uint32_t)(k + 1), d.n, d.v);
                }
            }
            /* The handler sends own units and forwards remote ones that have hops left. */
            if (hd != me || nn == 1 || h == nn - 1) continue;
            const int64_t kn = nxt.qstart[h + 1] + i;
            const int to = nxt.handler[kn], tag = (int)(kn % CONVOY_STEP_TAGS);
            d.n = 0;
            dep(&d, have);
            dep(&d, swin[nsent % NS_WINDOW]);
            swin[nsent++ % NS_WINDOW] =
                convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, jn, to), tag,
                                 pl.direct ? sg : rb, d.n, d.v);
        }
    }
    /* Single copy: a process says it has read everything (F_DONE), and returns its buffers
     * only when every node peer has said so. */
    if (pl.cma && share) {
        convoy__add_notify(s, F_DONE, 1, nreads, reads);
        for (int q = 0; q < ppn; q++)
            if (q != me) wait_on(s, lastwait, q, F_DONE, 1);
    }
    /* Every process declares the flags and the segment, so that the node agrees. */
    s->nflags = nflags;
    if (s->shm_bytes < pl.seg_bytes) s->shm_bytes = pl.seg_bytes;
    /* Alternating halves where the node's footprint (the same on every process: it follows
     * from the counts alone) fits half the segment: small calls then start without waiting
     * for the node to release the last one (exec.c). */
    s->shm_alt = s->shm_bytes <= a->shm_bytes / 2 / 64 * 64;
done:
    node_free(&cur);
    node_free(&prv);
    node_free(&nxt);
    free(writer);
    free(widx);
    free(wcnt);
    free(rstep);
    free(dv);
    free(lastwait);
    free(reads);
    plan_free(&pl);
    return rc ? rc : s->err;
}

static double node_segment_cost(const convoy__args *a, const convoy__machine *m)
{
    ns_plan pl;
    double c = 0;
    if (plan_make(a, &pl) == CONVOY_OK) c = plan_cost(a, m, &pl);
    plan_free(&pl);
    return c;
}

static double plan_cost(const convoy__args *a, const convoy__machine *m, const ns_plan *p)
{
    const convoy__topo *t = a->topo;
    const ns_plan pl = *p;
    double c = 0;
    if (pl.nu > 0 && t->size > 1) {
        double msgs = pl.nn - 1, bytes = 0;
        for (int o = 0; pl.nn > 1 && o < pl.nn; o++) {
            int64_t d = 0;
            for (int64_t x = pl.ustart[o]; x < pl.ustart[o + 1]; x++)
                d += pl.u[x].n * pl.esize;
            const int n = t->node_size[o];
            const int64_t u = (pl.nu - (pl.ustart[o + 1] - pl.ustart[o]) + n - 1) / n;
            if ((double)u > msgs) msgs = (double)u;
            if ((double)(pl.total - d) / n > bytes) bytes = (double)(pl.total - d) / n;
        }
        /* Plus flag handshakes. One node: the node's writes seen by its readers (all
         * at once: each process writes first), and, unless the schedule alternates
         * halves of the segment (then the next operation starts without it, as
         * node_dissem's), the gate that releases the segment to the next operation
         * (exec.c). Several nodes: two, the own units' and the remote units' writes seen
         * by their readers (with one, np 4 as 2 x 2 chose node_segment over direct at
         * 256 ints, 0.95-1.43 of native against direct's 0.62-0.66). Single copy: a
         * process copies only what others hold (no copy into the segment), one system
         * call (about a flag handshake) per unit, and a third handshake (the readers'
         * done). */
        const double ppn = t->max_ppn,
                     copied = pl.cma ? (double)pl.total * (ppn - 1) / ppn : (double)pl.total;
        const int alt = pl.nn == 1 && pl.seg_bytes <= a->shm_bytes / 2 / 64 * 64;
        /* Copies at gamma / 2, reads at the measured rate of cross-memory attach. */
        const double per = pl.cma && m->cma > 0 ? m->cma : m->gamma / 2;
        c = m->alpha * msgs + m->beta * bytes + per * copied +
            (pl.cma ? 3 + (double)pl.nu * (ppn - 1) / ppn : 2 - alt) * convoy__flag_cost(m);
    }
    return c;
}

static void node_segment_explain(const convoy__args *a, char *buf, size_t len)
{
    ns_plan pl;
    if (plan_make(a, &pl) != CONVOY_OK) {
        snprintf(buf, len, "not applicable (segment of %lld bytes)", (long long)a->shm_bytes);
    } else if (pl.cma) {
        snprintf(buf, len,
                 "single copy: %lld bytes, %lld units read from node peers' buffers by "
                 "cross-memory attach",
                 (long long)pl.total, (long long)pl.nu);
    } else if (pl.direct) {
        snprintf(buf, len,
                 "direct: the packed result (%lld bytes) fits the segment (%lld); %lld units",
                 (long long)pl.total, (long long)a->shm_bytes, (long long)pl.nu);
    } else {
        snprintf(buf, len,
                 "streaming %lld bytes through %lld slots of %lld bytes (segment %lld); %lld units",
                 (long long)pl.total, (long long)pl.nslots, (long long)pl.slot,
                 (long long)a->shm_bytes, (long long)pl.nu);
    }
    plan_free(&pl);
}

int convoy__allgatherv_node_segment(const convoy__args *a, convoy__schedule *s)
{
    return convoy__build_in_bytes(a, s, node_segment);
}

double convoy__allgatherv_node_segment_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__cost_in_bytes(a, m, node_segment_cost);
}

void convoy__allgatherv_node_segment_explain(const convoy__args *a, char *buf, size_t len)
{
    convoy__explain_in_bytes(a, buf, len, node_segment_explain);
}
