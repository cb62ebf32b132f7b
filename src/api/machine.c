/*
 * The machine parameters of a communicator: alpha (seconds per message), beta (seconds per
 * byte) and gamma (seconds per byte reduced), which the cost models of every algorithm and
 * the pipelined ring's block size use.
 *
 * Measured once per process, at the first blocking setup of a communicator with two or more
 * processes: rank 0 and a partner (the first rank on another node, else rank 1) ping-pong
 * empty and PROBE_BYTES messages; alpha is half the fastest empty round trip, beta the
 * extra half round trip per byte; gamma is rank 0's fastest MPI_Reduce_local (SUM of
 * doubles) per byte. Minimum times, not means: the model wants the machine, not the noise
 * of a loaded host. Rank 0 broadcasts the values, so all ranks of the communicator choose
 * the same algorithms; each process keeps the first values it learns and later
 * communicators reuse them (rank 0 of a later communicator sends its own copy: no new
 * measurement). Nonblocking setups carry rank 0's copy in their allgather of node keys and
 * fall back to the built-in values if rank 0 has none.
 *
 * Not measured (the built-in values, src/select/select.c) under CONVOY_REPRODUCIBLE=1 (no
 * timing-based choice), with CONVOY_MEASURE=0, or when both CONVOY_ALPHA and CONVOY_BETA
 * are given; rank 0's environment decides for all. CONVOY_ALPHA/_BETA/_GAMMA override
 * single values per call (src/api/config.c), CONVOY_REPRODUCIBLE=1 ignores measured ones.
 */
#include "api/internal.h"
#include "platform/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PROBE_BYTES = 1 << 16, PROBE_REPS = 12, REDUCE_DOUBLES = PROBE_BYTES / 8 };

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

/* Fastest half round trip of `bytes` between rank 0 (pinging) and partner (ponging). */
static int pingpong(MPI_Comm comm, int rank, int partner, char *buf, int bytes, double *best)
{
    const int peer = rank == 0 ? partner : 0;
    *best = 1e30;
    for (int i = 0; i < PROBE_REPS + 2; i++) {
        double t0 = PMPI_Wtime();
        int rc;
        if (rank == 0)
            rc = PMPI_Send(buf, bytes, MPI_BYTE, peer, 0, comm) ||
                 PMPI_Recv(buf, bytes, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
        else
            rc = PMPI_Recv(buf, bytes, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE) ||
                 PMPI_Send(buf, bytes, MPI_BYTE, peer, 0, comm);
        if (rc) return MPI_ERR_OTHER;
        double t = (PMPI_Wtime() - t0) / 2;
        if (i >= 2 && t < *best) *best = t; /* the first two warm the path up */
    }
    return MPI_SUCCESS;
}

static int measure(convoy__cstate *cs, int partner, convoy__machine *m)
{
    const int rank = cs->topo.rank;
    char *buf = calloc(1, PROBE_BYTES);
    double *x = rank == 0 ? calloc(2 * REDUCE_DOUBLES, sizeof *x) : NULL;
    int rc = !buf || (rank == 0 && !x) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    double t0 = 0, t1 = 0;
    if (!rc && (rank == 0 || rank == partner) &&
        !(rc = pingpong(cs->priv, rank, partner, buf, 0, &t0)))
        rc = pingpong(cs->priv, rank, partner, buf, PROBE_BYTES, &t1);
    if (!rc && rank == 0) {
        double g = 1e30;
        for (int i = 0; i < PROBE_REPS && !rc; i++) {
            double s = PMPI_Wtime();
            rc = PMPI_Reduce_local(x, x + REDUCE_DOUBLES, REDUCE_DOUBLES, MPI_DOUBLE, MPI_SUM);
            convoy__plat_charge_reduce(REDUCE_DOUBLES,
                                       MPI_DOUBLE); /* simulated: the platform's rate */
            double t = PMPI_Wtime() - s;
            if (t < g) g = t;
        }
        m->alpha = t0 > 0 ? t0 : 1e-7;
        m->beta = t1 > t0 ? (t1 - t0) / PROBE_BYTES : 1e-12;
        m->gamma = g / PROBE_BYTES > 0 ? g / PROBE_BYTES : 1e-12;
    }
    free(buf);
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

int convoy__machine_agree(convoy__cstate *cs)
{
    convoy__machine_builtin(&cs->machine);
    cs->machine_how = "built-in";
    if (cs->topo.size < 2) return MPI_SUCCESS;
    /* Rank 0's view: its cached values (1), or whether to measure now (2), or neither. */
    double v[4] = {0, 0, 0, 0};
    if (cs->topo.rank == 0) {
        convoy__machine m;
        if (convoy__machine_cached(&m))
            v[0] = 1, v[1] = m.alpha, v[2] = m.beta, v[3] = m.gamma;
        else if (should_measure())
            v[0] = 2;
    }
    int rc = PMPI_Bcast(v, 4, MPI_DOUBLE, 0, cs->priv);
    if (rc) return rc;
    if (v[0] == 2) {
        const int partner = partner_of_root(&cs->topo);
        convoy__machine m = cs->machine;
        int err = measure(cs, partner, &m);
        v[0] = err ? 0 : 1, v[1] = m.alpha, v[2] = m.beta, v[3] = m.gamma;
        /* A failed probe (out of memory) on rank 0 or its partner leaves the built-in
         * values everywhere; the broadcast keeps everyone in step either way. */
        if ((rc = PMPI_Bcast(v, 4, MPI_DOUBLE, 0, cs->priv))) return rc;
        if (v[0] == 1) cs->machine_how = "measured";
    } else if (v[0] == 1) {
        cs->machine_how = "measured earlier";
    }
    if (v[0] == 1) {
        cs->machine = (convoy__machine){.alpha = v[1], .beta = v[2], .gamma = v[3]};
        cache_put(&cs->machine);
    }
    return MPI_SUCCESS;
}

void convoy__machine_from_keys(convoy__cstate *cs, const double v[4])
{
    convoy__machine_builtin(&cs->machine);
    cs->machine_how = "built-in";
    if (v[0] == 1) {
        cs->machine = (convoy__machine){.alpha = v[1], .beta = v[2], .gamma = v[3]};
        cs->machine_how = "measured earlier";
    }
}

void convoy__machine_to_keys(double v[4])
{
    convoy__machine m;
    v[0] = v[1] = v[2] = v[3] = 0;
    if (convoy__machine_cached(&m)) v[0] = 1, v[1] = m.alpha, v[2] = m.beta, v[3] = m.gamma;
}

void convoy__machine_of_call(const convoy__config *c, const convoy__cstate *cs, convoy__machine *m)
{
    if (c->reproducible || !cs)
        convoy__machine_builtin(m);
    else
        *m = cs->machine;
    if (c->alpha >= 0) m->alpha = c->alpha;
    if (c->beta >= 0) m->beta = c->beta;
    if (c->gamma >= 0) m->gamma = c->gamma;
}
