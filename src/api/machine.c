/*
 * The machine parameters of a communicator: alpha (seconds per message), beta (seconds per
 * byte) and gamma (seconds per byte reduced), which the cost models of every algorithm and
 * the pipelined ring's block size use.
 *
 * Measured once per process, at the first blocking setup of a communicator with two or more
 * processes: rank 0 and a partner (the first rank on another node, else rank 1) ping-pong
 * empty and PROBE_BYTES messages the way Convoy's executor moves them (nonblocking posts,
 * completed by testing under the executor's wait policy, convoy__backoff): alpha is half
 * the fastest empty round trip, beta the extra half round trip per byte, beta_large that of
 * a large message (CONVOY_BETA_LARGE_BYTES) over a PROBE_BYTES one: a middle message runs
 * from the caches (and, in many libraries, on the eager path) where a large one streams from
 * memory; and where processes share cores the difference of two short round trips is at
 * the scheduler's mercy, so the three sizes take turns (pingpong_pair). convoy__machine_sized says
 * how a call uses the two (coll.h; docs/architecture.md, "A call's machine"). alpha_native is half
 * the fastest empty round trip with blocking sends and receives, the MPI library's own path, which
 * its collectives take. The two differ: where processes share cores each test that finds nothing
 * yields the core (8.4 vs 2.5 us at 4 processes on 2 cores, and every round of a Convoy schedule
 * pays it); SMPI charges a nonblocking send a per-byte injection cost that a blocking rendezvous
 * send does not pay (a 256 KiB Isend between two simulated Hydra nodes takes 55 us, a blocking
 * ping-pong's half round trip 22). gamma is rank 0's fastest MPI_Reduce_local (SUM of doubles) per
 * byte, cma its fastest process_vm_readv of its own PROBE_BYTES per byte (0 where not permitted);
 * the overhead is Convoy's per-call work on a repeated call (measure_overhead: the path
 * src/api/fast.c takes). Minimum times, not means: the model wants the machine, not the noise of a
 * loaded host. Rank 0 broadcasts the values, so all ranks of the communicator choose the same
 * algorithms; each process keeps the first values it learns and later communicators reuse them
 * (rank 0 of a later communicator sends its own copy: no new measurement). Nonblocking setups carry
 * rank 0's copy in their allgather of node keys and fall back to the built-in values if rank 0 has
 * none.
 *
 * The lane-aware fields (papers/004 §2: coll.h): alpha_node (Convoy's path) and beta_node the same
 * way between rank 0 and its node's next process (when rank 0's node has one); beta_nic from the
 * lane pattern of papers/004 §2: the k = min(processes of rank 0's node, of the partner's node)
 * processes of rank 0's node ping-pong PROBE_BYTES with the processes of the same node ranks on the
 * partner's node, all at once (a barrier starts them; the slowest pair counts): a node's k *
 * PROBE_BYTES leave in that time, so beta_nic is its half round trip per byte over k. Left 0 (=
 * flat values) where a node has one process or there is one node.
 *
 * The gaps (coll.h): what each further message of a burst costs over a single message, on
 * Convoy's path (BURST messages posted at once against one, each closed by an empty reply,
 * empty and of PROBE_BYTES): rank 0 to its partner (gap, gap_b), to its node neighbour
 * (gap_node, gap_node_b), and the two node processes sending BURST to each other at once
 * (xgap_node, xgap_node_b: each further message pair of an exchange). What they see is
 * whatever serialises a process's messages: under SMPI each MPI_Isend's smpi/ois (and each
 * completed eager receive's smpi/or), on a real library its per-message path and eager
 * copies, or the wire where that is slower.
 *
 * Not measured (the built-in values, src/select/select.c) under CONVOY_REPRODUCIBLE=1 (no
 * timing-based choice), with CONVOY_MEASURE=0, or when both CONVOY_ALPHA and CONVOY_BETA
 * are given; rank 0's environment decides for all. CONVOY_ALPHA/_BETA/_GAMMA override
 * single values per call (src/api/config.c), CONVOY_REPRODUCIBLE=1 ignores measured ones.
 */
#include "api/internal.h"
#include "platform/platform.h"
#include "shm/shm.h"
#include "topo/topo_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 32 KiB: below the eager limits of the MPI libraries (SMPI's detached-send threshold is
 * 64 KiB, and a 64 KiB message is already past it), as the messages of small and middle
 * collectives are. At 64 KiB the probe measured SMPI's rendezvous path (simulated Hydra:
 * 0.197 ns/B between nodes, 0.284 in a node) while every message of a 1152-int Bcast or
 * Reduce paid the eager one (0.330, 0.417: 1152-int Reduce `hier` predicted 0.70 of its
 * simulated time at 36 x 8). */
enum {
    PROBE_BYTES = CONVOY_BETA_BYTES,
    PROBE_REPS = 12,
    PAIR_REPS = 48, /* the ping-pongs of alpha and beta (see pingpong_pair) */
    REDUCE_DOUBLES = PROBE_BYTES / 8,
    BURST = 8,
    BURST_REPS = PROBE_REPS
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static convoy__machine cache;
static int cached;

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static int should_measure(void)
{
    const char *m = getenv("CONVOY_MEASURE");
    if (m && strcmp(m, "0") == 0) return 0;
    if (env_on("CONVOY_REPRODUCIBLE")) return 0;
    return !(getenv("CONVOY_ALPHA") && getenv("CONVOY_BETA"));
}

int convoy__machine_cached(convoy__machine *m)
{
    pthread_mutex_lock(&cache_lock);
    int have = cached;
    if (have) *m = cache;
    pthread_mutex_unlock(&cache_lock);
    return have;
}

static void cache_put(const convoy__machine *m)
{
    pthread_mutex_lock(&cache_lock);
    if (!cached) cache = *m, cached = 1;
    pthread_mutex_unlock(&cache_lock);
}

/* Completes n requests the way Convoy's executor does (testing under its wait policy). */
static int complete(int n, MPI_Request *q)
{
    if (convoy__plat_blocking_waits()) return PMPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    unsigned iter = 0;
    int done = 0, rc;
    while (!(rc = PMPI_Testall(n, q, &done, MPI_STATUSES_IGNORE)) && !done)
        convoy__backoff(&iter);
    return rc;
}

/* One message: blocking (the MPI library's path), or as Convoy's executor moves it (exec). */
static int message(int send, MPI_Comm comm, int peer, char *buf, int bytes, int exec)
{
    if (!exec)
        return send ? PMPI_Send(buf, bytes, MPI_BYTE, peer, 0, comm)
                    : PMPI_Recv(buf, bytes, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
    MPI_Request q;
    int rc = send ? PMPI_Isend(buf, bytes, MPI_BYTE, peer, 0, comm, &q)
                  : PMPI_Irecv(buf, bytes, MPI_BYTE, peer, 0, comm, &q);
    return rc ? rc : complete(1, &q);
}

/* The probes of `pair`: an empty message on Convoy's path (exec) and the MPI library's
 * (blocking calls), a PROBE_BYTES and a CONVOY_BETA_LARGE_BYTES one on Convoy's. */
enum { PROBE_EMPTY, PROBE_EMPTY_NATIVE, PROBE_MIDDLE, PROBE_LARGE, PROBES };

/* Fastest half round trips between a (pinging) and b (ponging) of the probes, the
 * probes taking turns repetition by repetition (the blocking one only with `native`), in a
 * rotating order, PAIR_REPS times. One probe after the other, a host that sped up or slowed
 * down between them made one look faster than it is: the drop-in compared Convoy's alpha
 * with the library's measured in another state; and where processes share cores the empty
 * round trip's best of 12 came out 5.4-11.4 us from setup to setup while the 32 KiB one's
 * stayed at 10.3-12.3, so beta, their difference, ranged 0.001-0.448 ns/B (np 4 as 2 x 2,
 * ten setups; a near-zero beta made a middle message free). Taking turns, 48 times: alpha
 * 4.6-8.9 us, beta 0.150-0.398 ns/B (ten setups interleaved with the former). */
static int pingpong_pair(MPI_Comm comm, int rank, int a, int b, char *buf, int native,
                         double best[PROBES])
{
    static const int bytes[PROBES] = {0, 0, PROBE_BYTES, CONVOY_BETA_LARGE_BYTES};
    const int peer = rank == a ? b : a;
    for (int k = 0; k < PROBES; k++)
        best[k] = 0;
    for (int i = 0; i < PAIR_REPS + 2; i++)
        for (int j = 0; j < PROBES; j++) {
            const int k = (i + j) % PROBES, exec = k != PROBE_EMPTY_NATIVE;
            if (!exec && !native) continue;
            double t0 = PMPI_Wtime();
            int rc = message(rank == a, comm, peer, buf, bytes[k], exec) ||
                     message(rank != a, comm, peer, buf, bytes[k], exec);
            if (rc) return MPI_ERR_OTHER;
            double t = (PMPI_Wtime() - t0) / 2;
            /* (the first two warm the path up) */
            if (i >= 2 && (t < best[k] || best[k] == 0)) best[k] = t;
        }
    return MPI_SUCCESS;
}

/* Fastest time of a burst of k messages of `bytes` from a to b, all posted at once (b's
 * receives too), closed by an empty message from b to a; with `both`, b sends k to a at
 * the same time (an exchange). Timed on a; buf holds BURST + 1 messages (the last one
 * sent, the others received). */
static int burst(MPI_Comm comm, int rank, int a, int b, char *buf, int bytes, int k, int both,
                 double *best)
{
    const int peer = rank == a ? b : a, sends = rank == a || both, recvs = rank == b || both;
    MPI_Request q[2 * BURST];
    *best = 1e30;
    for (int i = 0; i < BURST_REPS + 2; i++) {
        const double t0 = PMPI_Wtime();
        int n = 0, rc = MPI_SUCCESS;
        for (int j = 0; j < k && recvs && !rc; j++)
            rc = PMPI_Irecv(buf + (size_t)j * bytes, bytes, MPI_BYTE, peer, 3, comm, &q[n++]);
        for (int j = 0; j < k && sends && !rc; j++)
            rc = PMPI_Isend(buf + (size_t)BURST * bytes, bytes, MPI_BYTE, peer, 3, comm, &q[n++]);
        if (!rc) rc = complete(n, q);
        if (!rc) rc = message(rank == b, comm, peer, buf, 0, 1);
        if (rc) return MPI_ERR_OTHER;
        const double t = PMPI_Wtime() - t0;
        if (i >= 2 && t < *best) *best = t;
    }
    return MPI_SUCCESS;
}

/* The gap (coll.h) between a and b: what each further message of a burst costs over a
 * single one, empty and of PROBE_BYTES (*g per message, *gb per byte); with `both`, each
 * further message pair of an exchange. Run by a and b; the values are a's. */
static int gap_pair(MPI_Comm comm, int rank, int a, int b, char *buf, int both, double *g,
                    double *gb)
{
    double t[4] = {0};
    const int size[4] = {0, 0, PROBE_BYTES, PROBE_BYTES}, k[4] = {1, BURST, 1, BURST};
    for (int i = 0; i < 4; i++)
        if (burst(comm, rank, a, b, buf, size[i], k[i], both, &t[i])) return MPI_ERR_OTHER;
    const double g0 = (t[1] - t[0]) / (BURST - 1), g1 = (t[3] - t[2]) / (BURST - 1);
    /* > 0 marks it measured: a gap hidden entirely by the latency is a very small one. */
    *g = g0 > 1e-9 ? g0 : 1e-9;
    *gb = g1 > g0 ? (g1 - g0) / PROBE_BYTES : 0;
    return MPI_SUCCESS;
}

/* Empty, PROBE_BYTES and CONVOY_BETA_LARGE_BYTES half round trips between rank 0's side `a`
 * and `b` (pairs run by the two ranks only) on Convoy's path: alpha, beta and beta_large;
 * alpha_native (if not NULL) from an empty blocking one. */
static int pair(MPI_Comm comm, int me, int a, int b, char *buf, double *alpha, double *beta,
                double *beta_large, double *alpha_native)
{
    double t[PROBES];
    int rc = pingpong_pair(comm, me, a, b, buf, alpha_native != NULL, t);
    const double t0 = t[PROBE_EMPTY], t1 = t[PROBE_MIDDLE], t2 = t[PROBE_LARGE];
    *alpha = t0 > 0 ? t0 : 1e-7;
    if (alpha_native) *alpha_native = t[PROBE_EMPTY_NATIVE] > 0 ? t[PROBE_EMPTY_NATIVE] : 1e-7;
    *beta = t1 > t0 ? (t1 - t0) / PROBE_BYTES : 1e-12;
    *beta_large = t2 > t1 ? (t2 - t1) / (CONVOY_BETA_LARGE_BYTES - PROBE_BYTES) : 1e-12;
    return rc;
}

/* Rank 0's node neighbour, the node pair's other process; -1 where rank 0's node has one. */
static int root_neighbour(const convoy__topo *t)
{
    return t->node_size[t->node_of[0]] > 1 ? convoy__topo_rank_at(t, t->node_of[0], 1) : -1;
}

/* The lane levels (see the top): node pair, then all lanes of rank 0's node at once. Every
 * rank calls it; the values are rank 0's. */
static int measure_levels(convoy__cstate *cs, int partner, char *buf, convoy__machine *m)
{
    const convoy__topo *t = &cs->topo;
    const int rank = t->rank, n0 = t->node_size[t->node_of[0]], nb = root_neighbour(t);
    int rc = MPI_SUCCESS;
    if (nb >= 0 && (rank == 0 || rank == nb) &&
        ((rc = pair(cs->priv, rank, 0, nb, buf, &m->alpha_node, &m->beta_node, &m->beta_node_large,
                    NULL)) ||
         (rc = gap_pair(cs->priv, rank, 0, nb, buf, 0, &m->gap_node, &m->gap_node_b)) ||
         (rc = gap_pair(cs->priv, rank, 0, nb, buf, 1, &m->xgap_node, &m->xgap_node_b))))
        return rc;
    const int pn = t->node_of[partner], k = n0 < t->node_size[pn] ? n0 : t->node_size[pn];
    if (pn == t->node_of[0] || k < 2) return MPI_SUCCESS;
    /* All k pairs at once, started together; the slowest pair's best round counts. */
    double best = 1e30;
    for (int i = 0; i < PROBE_REPS + 2 && !rc; i++) {
        if ((rc = PMPI_Barrier(cs->priv))) break;
        double t0 = PMPI_Wtime();
        if (t->node_rank < k && (t->node == t->node_of[0] || t->node == pn)) {
            const int a = convoy__topo_rank_at(t, t->node_of[0], t->node_rank);
            const int b = convoy__topo_rank_at(t, pn, t->node_rank);
            const int peer = rank == a ? b : a;
            rc = message(rank == a, cs->priv, peer, buf, PROBE_BYTES, 1) ||
                 message(rank != a, cs->priv, peer, buf, PROBE_BYTES, 1);
            if (rc) rc = MPI_ERR_OTHER;
        }
        double dt = (PMPI_Wtime() - t0) / 2, slowest = 0;
        if (!rc) rc = PMPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, cs->priv);
        if (i >= 2 && slowest < best) best = slowest;
    }
    if (!rc && best > m->alpha) m->beta_nic = (best - m->alpha) / ((double)k * PROBE_BYTES);
    return rc;
}

static _Thread_local int measuring;

int convoy__machine_measuring(void)
{
    return measuring;
}

static double measure_overhead(void)
{
#ifdef CONVOY_SIMGRID
    /* Simulated: Convoy's own work costs no simulated time (convoy-smpirun turns SMPI's
     * computation benchmarking off), and a communicator of one process breaks some of
     * SMPI's selectable collectives (allreduce redbcast's bcast NTSB sends to rank -1). */
    return 0;
#else
    /* On a communicator of its own, freed at once: its Convoy state must not outlive the
     * measurement (a state left on the library's private MPI_COMM_SELF would be freed only
     * by MPI_Finalize's attribute deletion, which SMPI does not allow at that point). */
    MPI_Comm self;
    if (PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS) return 0;
    int x = 1, y;
    double tc = 1e30, tn = 1e30;
    measuring = 1; /* no CONVOY_VERBOSE lines from these calls (they would be timed) */
    for (int i = 0; i < 2 * PROBE_REPS; i++) {
        double t0 = PMPI_Wtime();
        convoy_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, self);
        double t1 = PMPI_Wtime();
        PMPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, self);
        double t2 = PMPI_Wtime();
        if (i >= 2 && t1 - t0 < tc) tc = t1 - t0; /* the first ones make the state */
        if (i >= 2 && t2 - t1 < tn) tn = t2 - t1;
    }
    measuring = 0;
    PMPI_Comm_free(&self);
    return tc > tn ? tc - tn : 0;
#endif
}

/* The flag handshake (convoy__flag_cost): rank 0 and its node neighbour ping-pong through
 * the last flag of the segment (no schedule uses it at setup; its small values never
 * satisfy a schedule's waits, whose values carry the operation number above bit 32),
 * waiting as the executor does (convoy__backoff); half the fastest round trip. Both call
 * it only after every rank's probes succeeded (no one is left waiting). Not under SimGrid,
 * where polling costs no simulated time: the estimate from alpha stays. */
static void measure_flag(convoy__cstate *cs, convoy__machine *m)
{
#ifndef CONVOY_SIMGRID
    const convoy__topo *t = &cs->topo;
    convoy__shm *seg = cs->shm;
    if (!seg || root_neighbour(t) < 0) return;
    const int me = t->rank == 0 ? 0 : t->rank == root_neighbour(t) ? 1 : -1;
    if (me < 0) return;
    const int f = seg->nflags - 1;
    double best = 1e30;
    for (uint64_t i = 0; i < PROBE_REPS + 2; i++) {
        const double t0 = PMPI_Wtime();
        unsigned iter = 0;
        if (me == 1) {
            while (!convoy__shm_reached(seg, 0, f, 2 * i + 1))
                convoy__backoff(&iter);
            convoy__shm_notify(seg, f, 2 * i + 2);
        } else {
            convoy__shm_notify(seg, f, 2 * i + 1);
            while (!convoy__shm_reached(seg, 1, f, 2 * i + 2))
                convoy__backoff(&iter);
        }
        const double d = PMPI_Wtime() - t0;
        if (i >= 2 && d < best) best = d; /* (the first ones wake the peer) */
    }
    if (me == 0) m->flag = best / 2;
#else
    (void)cs, (void)m;
#endif
}

/* Virtual nodes on one host: the two levels' probes are samples of one path. Merged as
 * round trips (the fastest empty, PROBE_BYTES and large one of either), then differenced:
 * the smaller of two betas, each a difference of two noisy minima, is biased low. */
static double min2(double x, double y)
{
    return x < y ? x : y;
}

static void merge_levels(convoy__machine *m)
{
    const double P = PROBE_BYTES, L = CONVOY_BETA_LARGE_BYTES - PROBE_BYTES;
    const double t0 = min2(m->alpha, m->alpha_node),
                 t1 = min2(m->alpha + m->beta * P, m->alpha_node + m->beta_node * P),
                 t2 = min2(m->alpha + m->beta * P + m->beta_large * L,
                           m->alpha_node + m->beta_node * P + m->beta_node_large * L);
    m->alpha = m->alpha_node = t0;
    m->beta = m->beta_node = t1 > t0 ? (t1 - t0) / P : 1e-12;
    m->beta_large = m->beta_node_large = t2 > t1 ? (t2 - t1) / L : 1e-12;
}

static int measure(convoy__cstate *cs, int partner, convoy__machine *m)
{
    const int rank = cs->topo.rank;
    /* A burst's BURST + 1 messages or one large message where the pairs ping-pong (rank 0,
     * its partner, its node neighbour), one probe message elsewhere (the lanes): a simulated
     * cluster's processes all allocate in one address space. */
    const convoy__topo *t = &cs->topo;
    const int pings = rank == 0 || rank == partner || rank == root_neighbour(t);
    const size_t burst = (BURST + 1) * PROBE_BYTES,
                 most = burst > CONVOY_BETA_LARGE_BYTES ? burst : CONVOY_BETA_LARGE_BYTES;
    const size_t nbuf = pings ? most : PROBE_BYTES;
    char *buf = convoy__plat_probe_alloc(nbuf);
    double *x = rank == 0 ? calloc(2 * REDUCE_DOUBLES, sizeof *x) : NULL;
    int rc = !buf || (rank == 0 && !x) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (!rc && (rank == 0 || rank == partner))
        rc = pair(cs->priv, rank, 0, partner, buf, &m->alpha, &m->beta, &m->beta_large,
                  &m->alpha_native);
    if (!rc && (rank == 0 || rank == partner))
        rc = gap_pair(cs->priv, rank, 0, partner, buf, 0, &m->gap, &m->gap_b);
    if (!rc && rank == 0) {
        double g = 1e30;
        for (int i = 0; i < PROBE_REPS && !rc; i++) {
            double s = PMPI_Wtime();
            rc = PMPI_Reduce_local(x, x + REDUCE_DOUBLES, REDUCE_DOUBLES, MPI_DOUBLE, MPI_SUM);
            /* Simulated: free in SMPI, charged at the platform's reduction rate. */
            convoy__plat_charge_reduce(REDUCE_DOUBLES, MPI_DOUBLE);
            double t = PMPI_Wtime() - s;
            if (t < g) g = t;
        }
        m->gamma = g / PROBE_BYTES > 0 ? g / PROBE_BYTES : 1e-12;
        /* Cross-memory attach's rate: a read of this process's own pages takes the same
         * path through the kernel as a peer's (pin, map, copy page by page). */
        m->cma = convoy__shm_cma_rate(x, x + REDUCE_DOUBLES, PROBE_BYTES, PROBE_REPS);
        m->overhead = measure_overhead();
        m->share = convoy__host_share();
    }
    /* Every rank takes part in the levels (the concurrent lanes need a common start). A
     * failed probe above must not leave the others waiting: agree first. */
    int bad = rc != MPI_SUCCESS, any = 0;
    if (PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, cs->priv) || any) {
        convoy__plat_probe_free(buf, nbuf);
        free(x);
        return rc ? rc : MPI_ERR_OTHER;
    }
    measure_flag(cs, m);
    if (buf) rc = measure_levels(cs, partner, buf, m);
    /* Virtual nodes (CONVOY_PPN, CONVOY_NODEMAP) on one host: both levels are one path, so
     * one value from both levels' probes (merge_levels; a loaded host's noise would
     * otherwise decide between flat and nested schedules). */
    int64_t host = convoy__host_key(), other = host;
    if (!rc && rank == partner) rc = PMPI_Send(&host, 1, MPI_INT64_T, 0, 2, cs->priv);
    if (!rc && rank == 0 && partner != 0)
        rc = PMPI_Recv(&other, 1, MPI_INT64_T, partner, 2, cs->priv, MPI_STATUS_IGNORE);
    if (!rc && rank == 0 && other == host && m->alpha_node > 0) {
        merge_levels(m);
        m->gap = m->gap_node = min2(m->gap, m->gap_node);
        m->gap_b = m->gap_node_b = min2(m->gap_b, m->gap_node_b);
    }
    convoy__plat_probe_free(buf, nbuf);
    free(x);
    return rc;
}

/* The partner of rank 0: the first rank on another node, else rank 1. */
static int partner_of_root(const convoy__topo *t)
{
    for (int r = 1; r < t->size; r++)
        if (t->node_of[r] != t->node_of[0]) return r;
    return 1;
}

/* A machine as the doubles after a flag (v[0]): the broadcasts of machine_agree and the
 * keys of the nonblocking setup carry all its fields. */
static void machine_pack(const convoy__machine *m, double *v)
{
    v[1] = m->alpha, v[2] = m->beta, v[3] = m->gamma, v[4] = m->overhead;
    v[5] = m->alpha_node, v[6] = m->beta_node, v[7] = m->beta_nic, v[8] = m->alpha_native;
    v[9] = m->flag, v[10] = m->cma, v[11] = m->share;
    v[12] = m->gap, v[13] = m->gap_b, v[14] = m->gap_node, v[15] = m->gap_node_b;
    v[16] = m->xgap_node, v[17] = m->xgap_node_b;
    v[18] = m->beta_large, v[19] = m->beta_node_large;
}

static convoy__machine machine_unpack(const double *v)
{
    return (convoy__machine){.alpha = v[1],
                             .beta = v[2],
                             .gamma = v[3],
                             .overhead = v[4],
                             .alpha_node = v[5],
                             .beta_node = v[6],
                             .beta_nic = v[7],
                             .alpha_native = v[8],
                             .flag = v[9],
                             .cma = v[10],
                             .share = v[11],
                             .gap = v[12],
                             .gap_b = v[13],
                             .gap_node = v[14],
                             .gap_node_b = v[15],
                             .xgap_node = v[16],
                             .xgap_node_b = v[17],
                             .beta_large = v[18],
                             .beta_node_large = v[19]};
}

int convoy__machine_agree(convoy__cstate *cs)
{
    convoy__machine_builtin(&cs->machine);
    cs->machine_how = "built-in";
    if (cs->topo.size < 2) return MPI_SUCCESS;
    /* Rank 0's view: its cached values (1), or whether to measure now (2), or neither. */
    double v[CONVOY_MACHINE_KEYS] = {0};
    if (cs->topo.rank == 0) {
        if (!convoy__machine_to_keys(v) && should_measure()) v[0] = 2;
    }
    int rc = PMPI_Bcast(v, CONVOY_MACHINE_KEYS, MPI_DOUBLE, 0, cs->priv);
    if (rc) return rc;
    if (v[0] == 2) {
        const int partner = partner_of_root(&cs->topo);
        convoy__machine m = cs->machine;
        int err = measure(cs, partner, &m);
        v[0] = err ? 0 : 1;
        machine_pack(&m, v);
        /* A failed probe (out of memory) leaves the built-in values everywhere; the
         * broadcast keeps everyone in step either way. */
        if ((rc = PMPI_Bcast(v, CONVOY_MACHINE_KEYS, MPI_DOUBLE, 0, cs->priv))) return rc;
        if (v[0] == 1) cs->machine_how = "measured";
    } else if (v[0] == 1) {
        cs->machine_how = "measured earlier";
    }
    if (v[0] == 1) {
        cs->machine = machine_unpack(v);
        cache_put(&cs->machine);
    }
    return MPI_SUCCESS;
}

void convoy__machine_from_keys(convoy__cstate *cs, const double v[CONVOY_MACHINE_KEYS])
{
    convoy__machine_builtin(&cs->machine);
    cs->machine_how = "built-in";
    if (v[0] == 1) {
        cs->machine = machine_unpack(v);
        cs->machine_how = "measured earlier";
    }
}

int convoy__machine_to_keys(double v[CONVOY_MACHINE_KEYS])
{
    convoy__machine m;
    for (int i = 0; i < CONVOY_MACHINE_KEYS; i++)
        v[i] = 0;
    if (!convoy__machine_cached(&m)) return 0;
    v[0] = 1;
    machine_pack(&m, v);
    return 1;
}

void convoy__machine_of_call(const convoy__config *c, const convoy__cstate *cs, convoy__machine *m)
{
    if (c->reproducible || !cs)
        convoy__machine_builtin(m);
    else
        *m = cs->machine;
    if (c->alpha >= 0) m->alpha = c->alpha, m->alpha_native = 0; /* one alpha for both */
    if (c->beta >= 0) m->beta = c->beta, m->beta_large = 0;      /* one beta for every size */
    if (c->gamma >= 0) m->gamma = c->gamma;
}
