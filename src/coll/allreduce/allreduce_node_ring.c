/*
 * Allreduce by pipelined rings over nodes, with the node's reduction and broadcast
 * through the node segment (GASPI-SHAN, papers/001_97ab1fb5063236b5.txt, "Allreduce
 * implementation - Pipelined Rings", Figures 1-2).
 *
 * Idea (the paper): the N nodes form a ring. Reduce stage: the vector is cut into N parts;
 * part p travels the ring from node p+1 to node p, each node adding its contribution, so
 * after N-1 steps node p holds the complete result of part p (Figure 1). Broadcast stage:
 * part p travels the ring once more, from node p to node p-1, so every node ends with the
 * whole result (Figure 2). Each part is cut again into K >= M pieces (M = processes per
 * node) and piece q of every part belongs, on node i, to node process q mod m_i: it
 * receives the piece from the previous node, reduces it and forwards it, so every process
 * of every node receives, reduces and forwards, and N x M messages are in the rings at
 * once (the paper: "at least NxM messages in the ring at any point in time").
 *
 * Node side (what the paper leaves to the shared notifications, made precise here). The
 * node's own contribution to a piece is the reduction of its m_i processes' data; the
 * piece's handler h computes it in its receive buffer, at the piece's place X:
 *   X = own data (a copy; in place it is already there), then X = slot_w op X for every
 *   other node process w in node rank order, slot_w being w's copy of the piece in the
 *   segment;
 * only then, when the partial result of the previous nodes arrives (into a scratch slot),
 * X = partial op X, and X is sent on. The node's sums do not wait for the network, so
 * they run ahead of the ring while messages are in flight: the reduction overlaps the
 * communication, and each ring step costs the handler one reduction of a piece, done while
 * its next pieces are on the wire. In the broadcast stage the handler receives the finished
 * piece into X, sends it on and copies it into a segment slot, from which the other node
 * processes copy it into their receive buffers.
 *
 * Streaming: the segment holds rings of slots, not the data. Each node process w has S
 * reduce slots (its contributions, in the order handlers need them) and S broadcast slots
 * (its finished pieces), S = CONVOY_ALLREDUCE_NODE_RING_SLOTS (default M, the largest
 * node's size, at least 2; halved down to 1 while the segment cannot hold one element per
 * slot), each slot one piece: 2 S m_i pieces per node, which bounds the piece size (whole
 * elements, slots 64 bytes apart, 16 in a small segment). Why M: a writer's slots are one
 * ring over all handlers in time order, and it may reuse a slot only after that slot's
 * handler has consumed it, which a handler does after reducing all M-1 contributions. So a
 * writer is at most S units ahead, the units of a ring step have M different handlers, and
 * only S of them can reduce at a time: with S = 2 the node sums ran at 2/M of the node's
 * speed (simulated Hydra 4 x 8, 64 Ki ints: each process busy 104 us of 243, handlers idle
 * waiting for slots their writers could not yet fill; S = 4, 8, 16: 167, 145, 142 us; at
 * 4 x 4 S = 4 was best, 8 x 8 and 4 x 16 alike). S = M costs smaller pieces where the
 * segment bounds them (more messages), which the sweeps above included. Earlier measured
 * (np 4 as 2 nodes of 2 on 2 cores, 1M ints, 1 MiB segment): 4 slots, i.e. pieces half as
 * large, were 10-15% slower than 2 (= M there); each piece costs node handshakes besides its
 * message. Data of any size streams through the rings.
 * Flow control by 4 counters per process (so any number of processes per node fits the
 * segment's flags), each a count of units in a fixed order that every node process
 * computes alike ("time order": reduce stage before broadcast stage, ring step by ring
 * step, piece by piece):
 *   WR  w wrote its contributions for n units          (reader: the handler)
 *   CON h consumed n units of contributions            (reader: the writer, to reuse slots)
 *   BW  h published n finished pieces                  (reader: every other node process)
 *   BR  r copied n finished pieces out of the segment  (reader: the publisher, to reuse)
 * Position arithmetic: each reduce unit is written by every node process but its handler,
 * so w's position of a unit is (units before it) - (units before it handled by w); the
 * same for readers of published pieces. Every wait points to an earlier unit in time
 * order, every message's dependencies to earlier messages (the receiver's unit (d, q) is
 * the sender's unit (d-1, q)), hence no deadlock, whatever the completion order.
 *
 * Single copy (args.cma: cross-memory attach works on every node; contiguous types): the
 * segment holds no data, only address words (one per piece and node process, N K (m+1) in
 * all; where they do not fit, the slots). Every process publishes, at the start, where its
 * contributions to the pieces others handle lie (send buffer, in place the receive buffer)
 * and says so once (WR = 1). The handler of a piece reads each other process's
 * contribution with process_vm_readv in node rank order: the first one straight into X,
 * onto which it reduces its own data (own op s_w: where the operation's operands commute
 * bitwise, as for the predefined ones, the slots' s_w op own, so both variants give
 * identical results; every rank gets the same bits either way), the others into a
 * scratch piece T and then X = T op X. In the broadcast stage the handler publishes the
 * finished piece where it is (X) and notifies BW; every other process reads it straight
 * into its own X. No slots, hence no CON/BR flow control; pieces are not capped by a slot.
 * Ownership: in place, a contributor overwrites its piece only with the finished value,
 * which it reads after the handler's BW notification, issued after the handler's read of
 * it; every process notifies DONE after all its reads and returns only when all node peers
 * have (the owner's buffers must outlive every read).
 *   Copies per byte of the vector and process (not in place; in place the slots save the
 *   own copy): slots 2 copies ((M-1)/M into reduce slots, 1/M own data into X, 1/M into a
 *   broadcast slot, (M-1)/M out of them) and (M-1)/M reductions; single copy 2 (M-1)/M
 *   reads ((M-1)/M contributions, (M-1)/M finished pieces) and (M-1)/M reductions. M = 2:
 *   2 copies become 1 read. But a read pins and maps the peer's pages one at a time: on
 *   this host (a virtual machine) process_vm_readv moves 8-14 GB/s, memcpy 40-170 GB/s in
 *   cache, so one read costs more than the two copies it replaces. Measured (np 2 on one
 *   node and np 4 as 2 x 2, int sum, load 3-7, 3 interleaved runs each): the single copy
 *   took 1.3-2.4 times the slots' time at 64 KiB - 16 MiB at np 2 (64 MiB: 1.25 in the one
 *   pair of runs the load left alone), 1.2-8 times at 1-16 MiB and 0.6-1.2 at 64 MiB at
 *   np 4: no consistent win anywhere. So the choice is the model's: the setup measures
 *   the reads' rate (convoy__machine.cma) and the single copy runs where its cost below is
 *   lower (never on this host); CONVOY_ALLREDUCE_CMA_MIN=bytes forces it from that size on
 *   (0: always, as the tests do).
 *
 * Pieces: the paper says only "at least M". K = M c, c = pieces per process and part:
 * the piece size b balances the per-message cost against the reduction left exposed per
 * ring step. With B = n s / (N M) bytes per process and part, the reduce stage costs about
 * 2 (N-1) c (alpha + beta b) + (N-1) gamma B / c (one piece's reduction per step is not
 * hidden), minimal at c = sqrt(gamma B / (2 alpha)), i.e. b = sqrt(2 alpha B / gamma);
 * then b is capped by the segment slot size and CONVOY_ALLREDUCE_NODE_RING_PIECE (bytes)
 * overrides it. Non-uniform nodes: M = the largest node, so every process of every node
 * has at least one piece per part (when count >= N M); smaller nodes give a process
 * ceil(K / m_i) pieces. count < N M leaves pieces empty (nothing is sent, received or
 * reduced for them; every rank knows the sizes): only the processes with data work.
 *
 * Cost (args.machine; m_min the smallest node, k = ceil(K / m_min) pieces per process and
 * part, b the piece size in bytes, n s the vector's bytes):
 *   network  T_net = 2 (N-1) k (alpha + beta b)
 *   node     T_loc = gamma n s ((M-1) M / min(S, M) + 2 (M-1) + 1) / M  (node sums, of which
 *            only min(S, M) of the M handlers run at a time, see Streaming; copies into and
 *            out of the segment, at about the cost of a reduction per byte)
 *            single copy: T_loc = n s (M-1)/M (2 c + gamma), c the reads' measured cost
 *            per byte (gamma where unmeasured), plus one flag handshake (the readers' done)
 *   T = max(T_net, T_loc) + (N-1) gamma b + 2 alpha
 * (the two overlap; one piece's reduction per step is exposed; the node's two handshakes,
 * sum and publish, lie on the critical path, a flag handshake costing about a message on
 * one host: so small vectors go to the latency-optimal algorithms)
 * Against the flat ring's 2 (P-1) alpha + 2 n s beta + n s gamma: the network carries
 * 2 (N-1)/N n s per node instead of per process, in M parallel streams.
 *
 * Restrictions: commutative operations (a piece is reduced in ring order, not rank order:
 * no CONVOY_ALGO_NONCOMMUTATIVE). Needs the node segment when some node has 2 or more
 * processes (args.shm_bytes large enough for 2 S M slots of one element); without one, or
 * when the schedule would exceed 2^20 pieces, the predicate refuses. One process per node
 * needs no segment: then it is a pipelined flat ring. Any N, any m_i, any count.
 *
 * Bits: each piece is reduced once, by one chain (node sums in node rank order, then the
 * ring), and afterwards only copied: all ranks get bitwise identical results
 * (CONVOY_ALGO_REPRODUCIBLE), also from run to run for the same layout and piece size.
 *
 * Details: messages between two processes are numbered in time order on both sides; the
 * tag is that number mod 1024 (the executor posts the messages of a repeated tag in step
 * order, so equal tags never cross). Per process at most S receives of partials (scratch
 * slots), S sends and S broadcast receives are in flight, so testing stays cheap at any
 * size.
 * In place, a process's copy of its data into the segment comes before the finished
 * piece overwrites it.
 */
#include "coll/coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_WR, F_CON, F_BW, F_BR, NFLAGS, F_DONE = NFLAGS, NFLAGS_CMA };

/* Most pieces (N K) a schedule may have: the schedule grows with them. */
#define MAX_UNITS ((int64_t)1 << 20)
#define LINE 64

typedef struct plan {
    int N, M, mmin;
    int64_t S;        /* slots per ring */
    int64_t K;        /* pieces per part */
    int64_t piece;    /* elements of the largest piece */
    int64_t cs;       /* bytes per segment slot (0: no segment) */
    int64_t align;    /* of the slots: 64, or 16 in a small segment */
    int64_t b_model;  /* piece bytes from the cost model (0: one piece per process) */
    int64_t b_seg;    /* largest piece the segment allows, bytes (0: no limit) */
    int64_t b_forced; /* CONVOY_ALLREDUCE_NODE_RING_PIECE, or 0 */
    int cma;          /* single copy: peers' pieces read from their buffers (no slots) */
} plan;

static int contiguous(const convoy__dtype *d)
{
    return d->size == d->extent && d->true_lb == 0 && d->true_extent == d->size;
}

/* Address words of the single copy: per reduce-stage unit one per node process (its
 * contribution; the handler's stays unused), per broadcast-stage unit one (the handler's
 * finished piece); sized by the largest node, so that every node's plan agrees. */
static int64_t cma_words(const plan *pl)
{
    return (int64_t)pl->N * pl->K * (pl->M + 1);
}

static int64_t split_off(int64_t n, int64_t k, int64_t i)
{
    const int64_t base = n / k, extra = n % k;
    return i * base + (i < extra ? i : extra);
}

static int64_t split_len(int64_t n, int64_t k, int64_t i)
{
    return n / k + (i < n % k ? 1 : 0);
}

static int64_t slot_bytes(const convoy__dtype *t, int64_t elems, int64_t align)
{
    const int64_t b = t->true_extent + (elems - 1) * t->extent;
    return (b + align - 1) / align * align;
}

/* The division of the vector, the same on every rank. Returns 0, or CONVOY_ERR_ARG when the
 * algorithm does not apply. */
static double plan_cost(const convoy__args *a, const convoy__machine *m, const plan *p);

static int make_plan_as(const convoy__args *a, plan *pl, int cma)
{
    const convoy__topo *t = a->topo;
    const convoy__dtype *ty = &a->rtype;
    memset(pl, 0, sizeof *pl);
    pl->N = t->nnodes;
    pl->M = t->max_ppn;
    pl->mmin = t->max_ppn;
    for (int i = 0; i < t->nnodes; i++)
        if (t->node_size[i] < pl->mmin) pl->mmin = t->node_size[i];
    /* Slots per ring: as many as the largest node has processes (at least 2), so that a
     * writer can fill the slots of every handler of a ring step before the first of them
     * consumed (with fewer, only S handlers reduce at a time; see "Streaming"). */
    pl->S = convoy__param_get(a, "CONVOY_ALLREDUCE_NODE_RING_SLOTS", -1);
    if (pl->S == -1) pl->S = pl->M < 2 ? 2 : pl->M < 256 ? pl->M : 256;
    if (pl->S < 1 || pl->S > 256) return CONVOY_ERR_ARG;
    if (a->count == 0) return 0;
    if (ty->size <= 0 || ty->extent <= 0 || ty->true_extent <= 0) return CONVOY_ERR_ARG;
    /* Single copy where cross-memory attach works, the vector is large enough and whole
     * pieces are contiguous bytes in both buffers (every rank decides alike: count, type
     * and MPI_IN_PLACE are the same on all of them). */
    const int64_t cma_min = convoy__param_get(a, "CONVOY_ALLREDUCE_CMA_MIN", -1);
    pl->cma = cma && a->cma && pl->M > 1 && contiguous(ty) &&
              (a->inplace || contiguous(&a->stype)) &&
              (cma_min < 0 ? a->machine.cma > 0 : a->count * ty->size >= cma_min);
    const int64_t part = (a->count + pl->N - 1) / pl->N; /* elements of the largest part */
    /* Elements per piece: the model's choice, then the caps. */
    const double B = (double)part * (double)ty->size / pl->M;
    const convoy__machine *m = &a->machine;
    double b = m->gamma > 0 && m->alpha > 0 ? sqrt(2.0 * m->alpha * B / m->gamma) : B;
    if (b > B) b = B;
    pl->b_model = (int64_t)b;
    int64_t e = (int64_t)(b / (double)ty->size);
    pl->b_forced = convoy__param_get(a, "CONVOY_ALLREDUCE_NODE_RING_PIECE", 0);
    if (pl->b_forced > 0) e = pl->b_forced / ty->size;
    if (e < 1) e = 1;
    if (pl->M > 1 && !pl->cma) {
        /* 2 S slots per process of the largest node, a cache line apart, or 16 bytes apart
         * in a small segment; fewer slots (down to 1) when even that leaves no room for one
         * element, unless CONVOY_ALLREDUCE_NODE_RING_SLOTS says how many. */
        const int forced = convoy__param_get(a, "CONVOY_ALLREDUCE_NODE_RING_SLOTS", 0) > 0;
        int64_t avail;
        for (;;) {
            const int64_t raw = a->shm_bytes / (2 * pl->S * pl->M);
            avail = raw >= LINE ? raw / LINE * LINE : raw / 16 * 16;
            if (avail >= ty->true_extent || forced || pl->S == 1) break;
            pl->S /= 2;
        }
        if (avail < ty->true_extent) return CONVOY_ERR_ARG;
        pl->align = avail >= LINE ? LINE : 16;
        const int64_t eseg = (avail - ty->true_extent) / ty->extent + 1;
        pl->b_seg = eseg * ty->size;
        if (e > eseg) e = eseg;
    }
    /* c pieces per process and part, K = M c pieces per part. */
    const int64_t c = (part + (int64_t)pl->M * e - 1) / ((int64_t)pl->M * e);
    pl->K = (int64_t)pl->M * (c > 0 ? c : 1);
    if (pl->K > MAX_UNITS / pl->N) return CONVOY_ERR_ARG;
    pl->piece = (part + pl->K - 1) / pl->K;
    pl->cs = pl->M > 1 && !pl->cma ? slot_bytes(ty, pl->piece, pl->align) : 0;
    /* Single copy: one address word per piece and node process in the segment; where they
     * do not fit, the slots. */
    if (pl->cma && cma_words(pl) * 8 > a->shm_bytes) return make_plan_as(a, pl, 0);
    /* By default the model decides (with args.machine, the same on every rank): the single
     * copy only where the setup measured the reads' rate and they cost less than the
     * slots' copies. */
    if (pl->cma && cma_min < 0) {
        plan slots;
        if (make_plan_as(a, &slots, 0) == 0 &&
            plan_cost(a, &a->machine, &slots) <= plan_cost(a, &a->machine, pl))
            *pl = slots;
    }
    return 0;
}

static int make_plan(const convoy__args *a, plan *pl)
{
    return make_plan_as(a, pl, 1);
}

int convoy__allreduce_node_ring_applicable(const convoy__args *a)
{
    plan pl;
    return make_plan(a, &pl) == 0;
}

/* The tag of the next message between this process and one peer, whose messages *n
 * counts: the message's number mod 1024. */
static int chan_tag(int64_t *n)
{
    return (int)((*n)++ % CONVOY_STEP_TAGS);
}

/* A window of steps: the k-th one depends on the (k - S)-th. */
typedef struct window {
    int64_t n, S;
    int32_t *ring;
} window;

static int win_dep(const window *w)
{
    return w->n >= w->S ? w->ring[w->n % w->S] : -1;
}

static void win_push(window *w, int step)
{
    w->ring[w->n % w->S] = step;
    w->n++;
}

/* Appends d to deps if it is a step. */
static void dep_add(int *deps, int *nd, int d)
{
    if (d >= 0) deps[(*nd)++] = d;
}

/* Sends region X on to `peer` of the next node, whose messages *c counts, after step
 * `after` and the send S sends earlier (both stages use it). */
static int send_on(convoy__schedule *s, int64_t *c, window *sends, int peer, convoy__region X,
                   int after)
{
    int deps[2], nd = 0;
    dep_add(deps, &nd, after);
    dep_add(deps, &nd, win_dep(sends));
    int snd = convoy__add_send(s, CONVOY_COMM_ALL, peer, chan_tag(c), X, nd, deps);
    win_push(sends, snd);
    return snd;
}

int convoy__allreduce_node_ring(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int64_t n = a->count, ext = a->rtype.extent, lb = a->rtype.true_lb;
    if (n == 0) return 0;
    plan pl;
    int rc = make_plan(a, &pl);
    if (rc) return rc;
    const int N = pl.N, i = t->node, me = t->node_rank, m = t->ppn;
    const int nxt = (i + 1) % N, prv = (i - 1 + N) % N;
    const int m_next = t->node_size[nxt], m_prev = t->node_size[prv];
    const int64_t K = pl.K, S = pl.S, cs = pl.cs;
    const int seg = m > 1;            /* this node uses the segment */
    const int cma = seg && pl.cma;    /* ... for address words only */
    const int64_t es = a->rtype.size; /* contiguous types when cma: es == ext, lb == 0 */
    if (seg) {
        s->nflags = cma ? NFLAGS_CMA : NFLAGS;
        s->shm_bytes = cma ? (int64_t)N * K * (m + 1) * 8 : 2 * S * m * cs;
    }
    /* Scratch: S slots of one piece for the partials that arrive in the reduce stage, and
     * with single copy one more for a node peer's piece read before it is reduced. */
    const int64_t tslots = (N > 1 ? S : 0) + (cma ? 1 : 0);
    if (tslots) s->tmp_bytes = a->rtype.true_extent + (tslots * pl.piece - 1) * ext;

    /* Bookkeeping, freed at the end. */
    int64_t *cnt = calloc((size_t)m, sizeof *cnt);            /* reduce units per handler */
    int64_t *bcnt = calloc((size_t)m, sizeof *bcnt);          /* broadcast units per handler */
    int64_t *wr_h = malloc((size_t)S * sizeof *wr_h);         /* my last S writes: handler */
    int64_t *wr_c = malloc((size_t)S * sizeof *wr_c);         /*   and its consume position */
    int64_t *pub = malloc((size_t)S * (m + 1) * sizeof *pub); /* my last S publications */
    int32_t *sendstep = malloc((size_t)(N * K) * sizeof *sendstep);   /* reduce-stage send of X */
    int32_t *writestep = malloc((size_t)(N * K) * sizeof *writestep); /* my copy into a slot */
    int32_t *final = malloc((size_t)K * sizeof *final); /* step completing my part's piece */
    /* Messages so far to each process of the next node and from each of the previous. */
    int64_t *out = calloc((size_t)m_next, sizeof *out), *in = calloc((size_t)m_prev, sizeof *in);
    int32_t *wins = malloc((size_t)(3 * S) * sizeof *wins);
    int *deps = malloc((size_t)(m + 4) * sizeof *deps);
    /* Single copy: my reads (the done notification follows them all) and my last wait per
     * node peer and flag (chained: values only grow). */
    int *reads = cma ? malloc((size_t)(2 * N * K) * (size_t)m * sizeof *reads) : NULL;
    int *lastwait = cma ? malloc((size_t)m * NFLAGS_CMA * sizeof *lastwait) : NULL;
    int nreads = 0;
    if (!cnt || !bcnt || !wr_h || !wr_c || !pub || !sendstep || !writestep || !final || !out ||
        !in || !wins || !deps || (cma && (!reads || !lastwait))) {
        s->err = CONVOY_ERR_NO_MEM;
        goto cleanup;
    }
    /* Partials received (scratch slot = number mod S; the reduce that last read it),
     * sends, broadcast receives: at most S of each in flight. */
    window rslot = {0, S, wins}, sends = {0, S, wins + S}, brecv = {0, S, wins + 2 * S};
    for (int64_t k = 0; k < N * K; k++)
        sendstep[k] = writestep[k] = -1;
    for (int k = 0; cma && k < m * NFLAGS_CMA; k++)
        lastwait[k] = -1;

    const int64_t bslot0 = S * m; /* the broadcast slots follow the reduce slots */
#define SLOT(idx, len) convoy__reg(CONVOY_BUF_SHM, CONVOY_T_RECV, (idx)*cs - lb, (len))
#define PIECE(buf, tslot, off, len) convoy__reg((buf), (tslot), (off)*ext, (len))
#define BYTES(buf, off, len) convoy__reg((buf), CONVOY_T_BYTE, (off)*es, (len)*es)
#define WORD(idx) convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, (idx)*8, 8)
#define WAIT_ON(q, f, v)                                                                           \
    (lastwait[(q)*NFLAGS_CMA + (f)] =                                                              \
         convoy__add_wait(s, (q), (f), (uint32_t)(v), CONVOY_DEP(lastwait[(q)*NFLAGS_CMA + (f)])))
    int prev_wr = -1, prev_con = -1, prev_bw = -1, prev_br = -1;
    int64_t tot = 0, btot = 0;
    /* Single copy, T: the scratch piece a peer's contribution is read into before it is
     * reduced into X (after the previous reduction from it). */
    const convoy__region T =
        convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (tslots - 1) * pl.piece * ext - lb, 0);
    int tlast = -1;
    if (cma) {
        /* Every contribution of mine that another process handles is where it is from the
         * start (send buffer, or in place the receive buffer): publish them all, then say
         * so once. In place, a piece is overwritten only by its finished value, which I read
         * after its handler's broadcast notification, issued after its read of my piece. */
        int prev = -1;
        for (int d = 0; d < N; d++) {
            const int p = ((i - d - 1) % N + N) % N;
            const int64_t poff = split_off(n, N, p), plen = split_len(n, N, p);
            for (int64_t q = 0; q < K; q++) {
                const int64_t len = split_len(plen, K, q);
                if (len == 0 || (int)(q % m) == me) continue;
                const int64_t off = poff + split_off(plen, K, q);
                prev = writestep[d * K + q] = convoy__add_publish(
                    s, BYTES(a->inplace ? CONVOY_BUF_RECV : CONVOY_BUF_SEND, off, len),
                    WORD((d * K + q) * m + me), CONVOY_DEP(prev));
            }
        }
        prev_wr = convoy__add_notify(s, F_WR, 1, CONVOY_DEP(prev));
    }

    /* Reduce stage: at distance d node i handles part i-d-1 (d = 0: its own sum only;
     * d = N-1: part i, complete). */
    for (int d = 0; d < N && !s->err; d++) {
        const int p = ((i - d - 1) % N + N) % N;
        const int64_t poff = split_off(n, N, p), plen = split_len(n, N, p);
        for (int64_t q = 0; q < K && !s->err; q++) {
            const int64_t len = split_len(plen, K, q);
            if (len == 0) continue;
            const int64_t off = poff + split_off(plen, K, q);
            const int h = (int)(q % m);
            const convoy__region X = PIECE(CONVOY_BUF_RECV, CONVOY_T_RECV, off, len);
            const convoy__region own =
                a->inplace ? X : PIECE(CONVOY_BUF_SEND, CONVOY_T_SEND, off, len);
            int nd = 0;
            if (cma && h != me) {
                /* Published above. */
            } else if (h != me) {
                /* My contribution, into my next reduce slot once its last reader is done. */
                const int64_t pos = tot - cnt[me];
                int wt = -1;
                if (pos >= S)
                    wt = convoy__add_wait(s, (int)wr_h[pos % S], F_CON,
                                          (uint32_t)(wr_c[pos % S] + 1), CONVOY_DEP(prev_wr));
                int cp = convoy__add_copy(s, own, SLOT(me * S + pos % S, len), CONVOY_DEP(wt));
                nd = 0;
                dep_add(deps, &nd, cp);
                dep_add(deps, &nd, prev_wr);
                prev_wr = convoy__add_notify(s, F_WR, (uint32_t)(pos + 1), nd, deps);
                wr_h[pos % S] = h;
                wr_c[pos % S] = cnt[h];
                writestep[d * K + q] = cp;
            } else {
                /* The node's sum in X: own data, then every other process's slot. */
                int xready = a->inplace || cma ? -1 : convoy__add_copy(s, own, X, 0, NULL);
                if (cma) {
                    /* Single copy: every other process's piece read from its buffer, in
                     * node rank order. Not in place, the first one straight into X and my
                     * own data reduced onto it (own op s_w, where operands commute bitwise
                     * the slots' s_w op own); the others through T. */
                    int first = !a->inplace;
                    for (int w = 0; w < m; w++) {
                        if (w == me) continue;
                        const int wt = WAIT_ON(w, F_WR, 1);
                        const convoy__region word = WORD((d * K + q) * m + w);
                        if (first) {
                            const int rd = convoy__add_read(
                                s, w, word, BYTES(CONVOY_BUF_RECV, off, len), CONVOY_DEP(wt));
                            reads[nreads++] = rd;
                            xready = convoy__add_reduce(s, own, X, CONVOY_DEP(rd));
                            first = 0;
                            continue;
                        }
                        convoy__region Tb = T;
                        Tb.tslot = CONVOY_T_BYTE;
                        Tb.off += lb;
                        Tb.count = len * es;
                        nd = 0;
                        dep_add(deps, &nd, wt);
                        dep_add(deps, &nd, tlast);
                        const int rd = convoy__add_read(s, w, word, Tb, nd, deps);
                        reads[nreads++] = rd;
                        convoy__region Tr = T;
                        Tr.count = len;
                        nd = 0;
                        dep_add(deps, &nd, rd);
                        dep_add(deps, &nd, xready);
                        xready = tlast = convoy__add_reduce(s, Tr, X, nd, deps);
                    }
                } else if (seg) {
                    for (int w = 0; w < m; w++) {
                        if (w == me) continue;
                        const int64_t pos = tot - cnt[w];
                        int wt =
                            convoy__add_wait(s, w, F_WR, (uint32_t)(pos + 1), CONVOY_DEP(prev_con));
                        nd = 0;
                        dep_add(deps, &nd, wt);
                        dep_add(deps, &nd, xready);
                        xready = convoy__add_reduce(s, SLOT(w * S + pos % S, len), X, nd, deps);
                    }
                    nd = 0;
                    dep_add(deps, &nd, xready);
                    dep_add(deps, &nd, prev_con);
                    xready = prev_con =
                        convoy__add_notify(s, F_CON, (uint32_t)(cnt[me] + 1), nd, deps);
                }
                if (d > 0) {
                    /* The previous nodes' partial, into a scratch slot, then into X. */
                    const convoy__region R = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV,
                                                         (rslot.n % S) * pl.piece * ext - lb, len);
                    nd = 0;
                    dep_add(deps, &nd, win_dep(&rslot));
                    int rcv = convoy__add_recv(s, CONVOY_COMM_ALL,
                                               convoy__topo_rank_at(t, prv, (int)(q % m_prev)),
                                               chan_tag(&in[q % m_prev]), R, nd, deps);
                    nd = 0;
                    dep_add(deps, &nd, rcv);
                    dep_add(deps, &nd, xready);
                    xready = convoy__add_reduce(s, R, X, nd, deps);
                    win_push(&rslot, xready);
                }
                if (d < N - 1) {
                    sendstep[d * K + q] =
                        send_on(s, &out[q % m_next], &sends,
                                convoy__topo_rank_at(t, nxt, (int)(q % m_next)), X, xready);
                } else {
                    final[q] = xready;
                }
            }
            tot++;
            cnt[h]++;
        }
    }

    /* Broadcast stage: at distance e node i receives part i-e complete (e = 0: its own),
     * forwards it unless the next node is where it started, and shares it on the node. */
    for (int e = 0; e < N && !s->err; e++) {
        const int p = ((i - e) % N + N) % N;
        const int dr = (e - 1 + N) % N; /* the reduce-stage distance of the same part */
        const int64_t poff = split_off(n, N, p), plen = split_len(n, N, p);
        for (int64_t q = 0; q < K && !s->err; q++) {
            const int64_t len = split_len(plen, K, q);
            if (len == 0) continue;
            const int64_t off = poff + split_off(plen, K, q);
            const int h = (int)(q % m);
            const convoy__region X = PIECE(CONVOY_BUF_RECV, CONVOY_T_RECV, off, len);
            int nd = 0;
            if (h == me) {
                int fin;
                if (e == 0) {
                    fin = final[q];
                } else {
                    /* Into X, after the reduce stage sent the partial from there. */
                    nd = 0;
                    dep_add(deps, &nd, sendstep[dr * K + q]);
                    dep_add(deps, &nd, win_dep(&brecv));
                    fin = convoy__add_recv(s, CONVOY_COMM_ALL,
                                           convoy__topo_rank_at(t, prv, (int)(q % m_prev)),
                                           chan_tag(&in[q % m_prev]), X, nd, deps);
                    win_push(&brecv, fin);
                }
                if (e < N - 1)
                    send_on(s, &out[q % m_next], &sends,
                            convoy__topo_rank_at(t, nxt, (int)(q % m_next)), X, fin);
                if (cma) {
                    /* Publish the finished piece where it is, in my receive buffer. */
                    nd = 0;
                    dep_add(deps, &nd,
                            convoy__add_publish(s, BYTES(CONVOY_BUF_RECV, off, len),
                                                WORD((int64_t)N * K * m + e * K + q),
                                                CONVOY_DEP(fin)));
                    dep_add(deps, &nd, prev_bw);
                    prev_bw = convoy__add_notify(s, F_BW, (uint32_t)(bcnt[me] + 1), nd, deps);
                } else if (seg) {
                    /* Publish: my next broadcast slot, once every reader released it. */
                    const int64_t bpos = bcnt[me];
                    nd = 0;
                    dep_add(deps, &nd, fin);
                    if (bpos >= S) {
                        const int64_t *u = pub + (bpos % S) * (m + 1);
                        for (int r = 0; r < m; r++)
                            if (r != me)
                                dep_add(deps, &nd,
                                        convoy__add_wait(s, r, F_BR,
                                                         (uint32_t)(u[0] - u[1 + r] + 1),
                                                         CONVOY_DEP(prev_bw)));
                    }
                    int cp =
                        convoy__add_copy(s, X, SLOT(bslot0 + me * S + bpos % S, len), nd, deps);
                    nd = 0;
                    dep_add(deps, &nd, cp);
                    dep_add(deps, &nd, prev_bw);
                    prev_bw = convoy__add_notify(s, F_BW, (uint32_t)(bpos + 1), nd, deps);
                    int64_t *u = pub + (bpos % S) * (m + 1);
                    u[0] = btot;
                    for (int r = 0; r < m; r++)
                        u[1 + r] = bcnt[r];
                }
            } else if (cma) {
                /* Read the finished piece from h's receive buffer straight into place. */
                const int wt = WAIT_ON(h, F_BW, bcnt[h] + 1);
                nd = 0;
                dep_add(deps, &nd, wt);
                dep_add(deps, &nd, writestep[dr * K + q]);
                reads[nreads++] = convoy__add_read(s, h, WORD((int64_t)N * K * m + e * K + q),
                                                   BYTES(CONVOY_BUF_RECV, off, len), nd, deps);
            } else {
                /* Copy the finished piece out of h's broadcast slot. */
                const int64_t bpos = bcnt[h], rpos = btot - bcnt[me];
                int wt = convoy__add_wait(s, h, F_BW, (uint32_t)(bpos + 1), CONVOY_DEP(prev_br));
                nd = 0;
                dep_add(deps, &nd, wt);
                if (a->inplace) dep_add(deps, &nd, writestep[dr * K + q]);
                int cp = convoy__add_copy(s, SLOT(bslot0 + h * S + bpos % S, len), X, nd, deps);
                nd = 0;
                dep_add(deps, &nd, cp);
                dep_add(deps, &nd, prev_br);
                prev_br = convoy__add_notify(s, F_BR, (uint32_t)(rpos + 1), nd, deps);
            }
            btot++;
            bcnt[h]++;
        }
    }
    if (cma && !s->err) {
        /* Single copy: I say I have read everything (F_DONE) and return my buffers only
         * when every node peer has said so. */
        convoy__add_notify(s, F_DONE, 1, nreads, reads);
        for (int w = 0; w < m; w++)
            if (w != me) WAIT_ON(w, F_DONE, 1);
    }
#undef SLOT
#undef PIECE
#undef BYTES
#undef WORD
#undef WAIT_ON

cleanup:
    free(cnt);
    free(bcnt);
    free(wr_h);
    free(wr_c);
    free(pub);
    free(sendstep);
    free(writestep);
    free(final);
    free(out);
    free(in);
    free(wins);
    free(deps);
    free(reads);
    free(lastwait);
    return s->err;
}

double convoy__allreduce_node_ring_cost(const convoy__args *a, const convoy__machine *m)
{
    plan pl;
    if (a->count == 0 || make_plan(a, &pl)) return 0;
    return plan_cost(a, m, &pl);
}

static double plan_cost(const convoy__args *a, const convoy__machine *m, const plan *p)
{
    const plan pl = *p;
    const double ns = (double)a->count * (double)a->rtype.size, M = pl.M, N = pl.N;
    const double b = (double)(pl.piece * a->rtype.size);
    const double k = (double)((pl.K + pl.mmin - 1) / pl.mmin);
    const double net = 2.0 * (N - 1) * k * (m->alpha + m->beta * b);
    /* Single copy: no copy into the segment and out again; each process reads 2 (M-1)/M of
     * the vector (its pieces' contributions, the others' finished pieces) at the measured
     * rate of cross-memory attach (m->cma; gamma where unmeasured) and reduces (M-1)/M,
     * plus the readers' done handshake at the end. */
    const double rd = m->cma > 0 ? m->cma : m->gamma;
    /* Slots: a writer is at most S units ahead of the handlers, so at most S of the M
     * handlers reduce at a time; the node sums take M / S times as long where S < M. */
    const double conc = pl.S < pl.M ? (double)pl.S : M;
    const double loc = pl.cma ? ns * (M - 1) / M * (2.0 * rd + m->gamma)
                              : m->gamma * ns * ((M - 1) * M / conc + 2.0 * (M - 1) + 1) / M;
    return (net > loc ? net : loc) + (N - 1) * m->gamma * b + (M > 1 ? 2 * m->alpha : 0) +
           (pl.cma ? convoy__flag_cost(m) : 0);
}

void convoy__allreduce_node_ring_explain(const convoy__args *a, char *buf, size_t len)
{
    plan pl;
    if (make_plan(a, &pl)) {
        snprintf(buf, len, "does not apply");
        return;
    }
    const int64_t size = a->rtype.size;
    if (pl.cma) {
        snprintf(buf, len,
                 "%d nodes, M = %d: single copy (node peers' pieces read from their buffers by "
                 "cross-memory attach), K = %lld pieces per part (%lld per process), pieces of up "
                 "to %lld bytes (model %lld%s)",
                 pl.N, pl.M, (long long)pl.K, (long long)(pl.K / pl.M),
                 (long long)(pl.piece * size), (long long)pl.b_model,
                 pl.b_forced > 0 ? ", CONVOY_ALLREDUCE_NODE_RING_PIECE" : "");
        return;
    }
    snprintf(buf, len,
             "%d nodes, M = %d: K = %lld pieces per part (%lld per process), pieces of up to %lld "
             "bytes (model sqrt(2 alpha B / gamma) = %lld, segment slot limit %lld%s), %lld "
             "slots per ring",
             pl.N, pl.M, (long long)pl.K, (long long)(pl.K / pl.M), (long long)(pl.piece * size),
             (long long)pl.b_model, (long long)pl.b_seg,
             pl.b_forced > 0 ? ", CONVOY_ALLREDUCE_NODE_RING_PIECE" : "", (long long)pl.S);
}
