/*
 * Allgatherv by the pipelined (blocked) ring with virtual reranking (Träff, Ripke, Siebert,
 * Balaji, Thakur, Gropp; papers/002_0aef061110c1ae58.txt, §2.2-2.4).
 *
 * Idea: the data of process i, m_i elements, is cut into b_i = max(1, ceil(m_i / B))
 * blocks of at most B (the last one partial). Process i plays a virtual node of b_i virtual
 * processes of a linear ring over b = sum b_i virtual processes; the virtual processes of
 * one actual process pass nothing to each other, so in virtual round k an actual process
 * sends one block to its ring successor (its own blocks first, last one first, then the
 * blocks it received b_i rounds earlier) and receives one block from its predecessor.
 * Only real data moves: a partial block partially, an empty block (m_i = 0) not at all.
 * Regular blocks travel every round, so irregular counts cost about as much as regular
 * ones of the same total, instead of (p - 1) times the largest block (the linear ring).
 *
 * Rounds (one send and one receive per process each; convoy-check measures them):
 *   all m_i > 0:  r = b - min_i b_i                                          (eq. (1))
 *   z processes with m_i = 0, n = p - z > 0 with data, N = sum_{m_i > 0} b_i = b - z
 *   blocks of real data, g_j = the run of empty processes right before process j in the
 *   ring: when b_j > g_j for every j with data (or n = 1),
 *                 r = N - 1 + max_j g_j,  and with equidistant placement
 *                 r = N - 1 + ceil(z / n) = b - z - 1 + ceil(z / (p - z))     (§2.3)
 * Derivation (the paper's is garbled): empty processes forward what arrives one round
 * later and send nothing else. A process j with data sends its b_j own blocks in rounds
 * 1..b_j; its first foreign block arrives in round g_j + 1 (g_j empty processes delay the
 * stream of the previous process with data by one round each), so with b_j > g_j it has
 * one queued in every round from b_j + 1 on and never idles: every process with data sends
 * in every round until done. Hence the empty process d places behind a process with data
 * receives all N blocks in rounds d .. N + d - 1, and a process with data behind a run of
 * g receives its N - b_j foreign blocks in rounds g + 1 .. g + N - b_j; the last one of
 * the longest run finishes last (N - 1 + g_max >= N > N - b_j). Empty runs of length
 * ceil(z / n) cannot be avoided (pigeonhole), and that last empty process needs all N
 * blocks, one per round, the first arriving in round ceil(z / n) at the earliest: the count
 * is optimal for the ring. It equals the paper's b - z - 1 + floor(z / (p - z)) when
 * (p - z) divides z; otherwise the paper's count is below that lower bound (z = 1, p = 3:
 * the empty process must receive all N blocks, N rounds, not N - 1). Where some b_j <= g_j,
 * process j idles until blocks arrive; skipping empty messages never delays a real one, so
 * the count stays at most eq. (1) (z > 0: b - 1).
 *
 * Virtual reranking (§2.2 Fig. 1, §2.3): the ring visits the processes of each node
 * consecutively, so that per round one process per node receives from another node and
 * one sends to another node (also for nodes of different sizes and scattered ranks).
 * Empty processes are spread equidistantly within that constraint: the empty processes of
 * a node with data sit in the gaps before its processes with data (larger gaps before
 * larger data, so b_j > g_j holds as often as possible) and the node ends with a process
 * with data (§2.3: "the last processes have m_i > 0", so every node sends real data off
 * the node from round 1); nodes without data are placed before nodes with data, largest
 * first, each before the node whose largest gap grows least (their processes lengthen the
 * run before that node's first process with data, which the spreading inside the node
 * then takes into account). With one node, or one process per node, this reaches
 * ceil(z / n); otherwise the SMP constraint can force longer runs (r = N - 1 + g_max).
 *
 * Block size: CONVOY_ALLGATHERV_BLOCK (bytes) forces B; otherwise eq. (2): minimize
 * r (alpha + beta B) with r ~ m / B + c, the partial blocks counted as half a block each:
 * B = sqrt(m (alpha / beta) / c), m the total bytes, c = n / 2 - 1 + ceil(z / n) (the
 * paper's printed (p + z) / 2 - 1 + floor(z / (p - z)) mixes up the sign of z and the
 * rounding, see above). Regular counts use B = m' (one block each: the linear ring); z =
 * p - 1 (a broadcast) is a linear pipeline of ceil(m / B) + p - 2 rounds, so c = p - 2
 * there (no pipelining for p = 2); c <= 0 also means one block each. alpha and beta are
 * the communicator's machine parameters (args.machine: given, or measured once and agreed
 * by all ranks), so B is the same on every rank. CONVOY_VERBOSE=1 prints B and the eq. (2)
 * value it came from (convoy__allgatherv_pipelined_explain). B is at least one byte
 * and at most the largest m_i. The builder and the model see the call in bytes
 * (src/coll/bytes.c), so every rank cuts at the same byte whatever its datatype.
 *
 * Cost: r (alpha + beta B) with r as above (§2.4).
 *
 * Details: the own data is copied into the receive buffer and sent from the send buffer
 * when block boundaries fall on whole send-type elements (else from the receive buffer,
 * after the copy); receives go straight to their final place (any receive datatype, any
 * displacements); tags are the virtual round mod 1024, the same on both sides. Each
 * receive waits for the one two receives earlier, each send for the one two sends earlier,
 * so at most two of each are in flight (testing does not grow with p or b).
 */
#include "coll/coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* m_i, n, z and the largest m_i, from the counts. */
typedef struct counts_info {
    int n, z;
    int64_t total, maxm;
    int regular;
} counts_info;

static counts_info count_info(const convoy__args *a)
{
    counts_info c = {0, 0, 0, 0, 1};
    for (int i = 0; i < a->topo->size; i++) {
        const int64_t m = a->rcounts[i];
        if (m > 0) c.n++;
        c.total += m;
        if (m > c.maxm) c.maxm = m;
        if (m != a->rcounts[0]) c.regular = 0;
    }
    c.z = a->topo->size - c.n;
    return c;
}

/* The constant c of eq. (2) (see the top), or <= 0 where one block each is best. */
static double eq2_const(const counts_info *c, int p)
{
    return c->n == 1 ? p - 2.0 : c->n / 2.0 - 1.0 + (double)((c->z + c->n - 1) / c->n);
}

/* alpha / beta in bytes: the message size whose transfer costs one start-up. */
static double alpha_over_beta(const convoy__args *a)
{
    return a->machine.beta > 0 ? a->machine.alpha / a->machine.beta : 0;
}

int64_t convoy__allgatherv_pipelined_block(const convoy__args *a)
{
    const counts_info c = count_info(a);
    const int64_t size = a->rtype.size, forced = convoy__param_get(a, "CONVOY_ALLGATHERV_BLOCK", 0);
    if (c.maxm == 0) return 1;
    if (size <= 0) return c.maxm; /* no bytes to pipeline */
    int64_t be = c.maxm;
    if (forced > 0) {
        be = forced / size;
    } else if (!c.regular) {
        const double cst = eq2_const(&c, a->topo->size);
        if (cst > 0)
            be = (int64_t)(sqrt((double)c.total * (double)size * alpha_over_beta(a) / cst) /
                           (double)size);
    }
    return be < 1 ? 1 : be > c.maxm ? c.maxm : be;
}

static void pipelined_explain(const convoy__args *a, char *buf, size_t len)
{
    const counts_info c = count_info(a);
    const int64_t size = a->rtype.size, be = convoy__allgatherv_pipelined_block(a);
    if (convoy__param_get(a, "CONVOY_ALLGATHERV_BLOCK", 0) > 0)
        snprintf(buf, len, "B = %lld bytes (CONVOY_ALLGATHERV_BLOCK)", (long long)(be * size));
    else if (c.regular || eq2_const(&c, a->topo->size) <= 0)
        snprintf(buf, len, "B = %lld bytes (one block per process: %s)", (long long)(be * size),
                 c.regular ? "regular counts, the linear ring" : "eq. (2) constant c <= 0");
    else
        snprintf(buf, len,
                 "B = %lld bytes from eq. (2) sqrt(m alpha / (beta c)) = %.0f bytes "
                 "(m = %lld bytes, c = %.1f, alpha/beta = %.0f bytes; whole elements, at most "
                 "the largest m_i)",
                 (long long)(be * size),
                 sqrt((double)(c.total * size) * alpha_over_beta(a) / eq2_const(&c, a->topo->size)),
                 (long long)(c.total * size), eq2_const(&c, a->topo->size), alpha_over_beta(a));
}

static int64_t nblocks(int64_t m, int64_t be)
{
    return m > 0 ? (m + be - 1) / be : 1;
}

/* --- the ring order ------------------------------------------------------------------- */

typedef struct member {
    int64_t m;
    int rank;
} member;

/* Larger data first, then lower rank. */
static int member_cmp(const void *x, const void *y)
{
    const member *u = x, *v = y;
    if (u->m != v->m) return u->m > v->m ? -1 : 1;
    return (u->rank > v->rank) - (u->rank < v->rank);
}

/* Longest run of empty processes before a node's processes with data: own zeros z, nd
 * processes with data, e empty processes arriving from nodes without data before it. */
static int64_t node_gap(int64_t e, int64_t z, int64_t nd)
{
    if (nd == 1) return e + z;
    const int64_t spread = (e + z + nd - 1) / nd;
    return e > spread ? e : spread;
}

static int key_cmp(const void *x, const void *y)
{
    const int64_t u = *(const int64_t *)x, v = *(const int64_t *)y;
    return (u > v) - (u < v);
}

/* ord[q]: the rank at ring position q. Pure in the topology and the counts; needs a
 * process with data. */
static int ring_order(const convoy__args *a, int *ord)
{
    const convoy__topo *t = a->topo;
    const int nn = t->nnodes;
    int64_t *nd = calloc((size_t)nn, sizeof *nd), *inc = calloc((size_t)nn, sizeof *inc);
    int64_t *key = malloc((size_t)nn * sizeof *key);
    int *host = malloc((size_t)nn * sizeof *host), *loaded = malloc((size_t)nn * sizeof *loaded);
    member *mem = malloc((size_t)t->max_ppn * sizeof *mem);
    if (!nd || !inc || !key || !host || !loaded || !mem) {
        free(nd);
        free(inc);
        free(key);
        free(host);
        free(loaded);
        free(mem);
        return CONVOY_ERR_NO_MEM;
    }
    for (int i = 0; i < t->size; i++)
        if (a->rcounts[i] > 0) nd[t->node_of[i]]++;

    /* Nodes without data, largest first (ties: lower node), each before the node with data
     * whose longest gap grows least (ties: fewer arrivals so far, then lower node). That is
     * O(nodes without data * nodes with data) once per schedule; the schedule is cached. */
    int ne = 0, nl = 0;
    for (int k = 0; k < nn; k++) {
        host[k] = -1;
        if (nd[k] == 0)
            key[ne++] = ((int64_t)(t->size - t->node_size[k]) << 32) | k;
        else
            loaded[nl++] = k;
    }
    qsort(key, (size_t)ne, sizeof *key, key_cmp);
    for (int i = 0; i < ne && nl > 0; i++) {
        const int e = (int)(key[i] & 0xffffffff), sz = t->node_size[e];
        int best = -1;
        int64_t best_gap = 0;
        for (int l = 0; l < nl; l++) {
            const int k = loaded[l];
            const int64_t g = node_gap(inc[k] + sz, t->node_size[k] - nd[k], nd[k]);
            if (best < 0 || g < best_gap || (g == best_gap && inc[k] < inc[best])) {
                best = k;
                best_gap = g;
            }
        }
        host[e] = best;
        inc[best] += sz;
    }

    int q = 0;
    for (int l = 0; l < nl; l++) {
        const int k = loaded[l];
        for (int e = 0; e < nn; e++)
            if (host[e] == k)
                for (int j = t->node_first[e]; j < t->node_first[e + 1]; j++)
                    ord[q++] = t->members[j];
        /* The node's processes with data, larger first, behind gaps that do not grow; its
         * empty processes fill the gaps in rank order. */
        const int first = t->node_first[k], size = t->node_size[k];
        int nm = 0;
        for (int j = first; j < first + size; j++)
            if (a->rcounts[t->members[j]] > 0)
                mem[nm++] = (member){a->rcounts[t->members[j]], t->members[j]};
        qsort(mem, (size_t)nm, sizeof *mem, member_cmp);
        const int64_t z = size - nm, e = inc[k], total = z + e;
        int zj = first;
        for (int i = 0; i < nm; i++) {
            /* Gap i: as even as possible, the first at least the arrivals e. */
            int64_t gap;
            if (nm == 1)
                gap = total;
            else if (e * nm >= total)
                gap = i == 0 ? e : z / (nm - 1) + (i - 1 < z % (nm - 1));
            else
                gap = total / nm + (i < total % nm);
            if (i == 0) gap -= e;
            for (; gap > 0; zj++)
                if (a->rcounts[t->members[zj]] == 0) {
                    ord[q++] = t->members[zj];
                    gap--;
                }
            ord[q++] = mem[i].rank;
        }
    }
    free(nd);
    free(inc);
    free(key);
    free(host);
    free(loaded);
    free(mem);
    return q == t->size ? CONVOY_OK : CONVOY_ERR_INTERN;
}

/* --- the schedule --------------------------------------------------------------------- */

/* The steps of this rank on the ring ord, blocks of be elements; copy: the step that
 * copied the own data into the receive buffer, or -1. */
static int emit_ring(const convoy__args *a, convoy__schedule *s, const int *ord, int64_t *nb,
                     int64_t be, int copy)
{
    const int p = a->topo->size, r = a->topo->rank;
    const int64_t ext = a->rtype.extent, rsize = a->rtype.size, ssize = a->stype.size;
    int64_t b = 0;
    int q = 0;
    for (int i = 0; i < p; i++) {
        nb[i] = nblocks(a->rcounts[ord[i]], be);
        b += nb[i];
        if (ord[i] == r) q = i;
    }
    const int qn = (q + 1) % p, qp = (q + p - 1) % p;
    const int64_t nsend = b - nb[qn], nrecv = b - nb[q];
    int *recv_at = malloc((size_t)nrecv * sizeof *recv_at); /* receive step per round, or -1 */
    if (!recv_at) return CONVOY_ERR_NO_MEM;
    /* Own blocks from the send buffer when a block is a whole number of send elements. */
    const int from_send = !a->inplace && ssize > 0 && (be * rsize) % ssize == 0;
    const int next = ord[qn], prev = ord[qp];
    int sq = q, rq = qp;                        /* positions of the next blocks sent/received */
    int64_t sj = nb[q] - 1, rj = nb[qp] - 1;    /* their block index at that position */
    int swin[2] = {-1, -1}, rwin[2] = {-1, -1}; /* the last two sends / receives */
    for (int64_t k = 0; k < (nsend > nrecv ? nsend : nrecv); k++) {
        const int tag = (int)(k % CONVOY_STEP_TAGS);
        if (k < nsend) {
            const int o = ord[sq];
            const int64_t len = a->rcounts[o] - sj * be;
            if (a->rcounts[o] > 0) {
                const int64_t cnt = len < be ? len : be;
                int deps[3], nd = 0;
                convoy__region src = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                                 (a->displs[o] + sj * be) * ext, cnt);
                if (o != r) {
                    /* The block arrived nb[q] rounds ago (-1 only after a failed add). */
                    if (recv_at[k - nb[q]] >= 0) deps[nd++] = recv_at[k - nb[q]];
                } else if (from_send) {
                    src =
                        convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND,
                                    sj * be * rsize / ssize * a->stype.extent, cnt * rsize / ssize);
                } else if (copy >= 0) {
                    deps[nd++] = copy;
                }
                if (swin[0] >= 0) deps[nd++] = swin[0];
                swin[0] = swin[1];
                swin[1] = convoy__add_send(s, CONVOY_COMM_ALL, next, tag, src, nd, deps);
            }
            if (--sj < 0) {
                sq = (sq + p - 1) % p;
                sj = nb[sq] - 1;
            }
        }
        if (k < nrecv) {
            const int o = ord[rq];
            const int64_t len = a->rcounts[o] - rj * be;
            recv_at[k] = -1;
            if (a->rcounts[o] > 0) {
                recv_at[k] = convoy__add_recv(s, CONVOY_COMM_ALL, prev, tag,
                                              convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                                          (a->displs[o] + rj * be) * ext,
                                                          len < be ? len : be),
                                              CONVOY_DEP(rwin[0]));
                rwin[0] = rwin[1];
                rwin[1] = recv_at[k];
            }
            if (--rj < 0) {
                rq = (rq + p - 1) % p;
                rj = nb[rq] - 1;
            }
        }
    }
    free(recv_at);
    return s->err;
}

/* The builder on the call in bytes (convoy__build_in_bytes). */
static int pipelined(const convoy__args *a, convoy__schedule *s)
{
    const int p = a->topo->size, r = a->topo->rank;
    int copy = -1;
    if (!a->inplace && a->rcounts[r] > 0)
        copy = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
                                convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                            a->displs[r] * a->rtype.extent, a->rcounts[r]),
                                0, NULL);
    if (p == 1 || count_info(a).n == 0) return s->err;
    int *ord = malloc((size_t)p * sizeof *ord);
    int64_t *nb = malloc((size_t)p * sizeof *nb);
    int rc = ord && nb ? ring_order(a, ord) : CONVOY_ERR_NO_MEM;
    if (rc == CONVOY_OK) rc = emit_ring(a, s, ord, nb, convoy__allgatherv_pipelined_block(a), copy);
    free(ord);
    free(nb);
    return rc;
}

/* Rounds as derived above: eq. (1) with all m_i > 0, else N - 1 + ceil(z / n) (the
 * equidistant placement; SMP-forced longer runs or idle processes are not modelled). */
static double pipelined_cost(const convoy__args *a, const convoy__machine *m)
{
    const counts_info c = count_info(a);
    if (c.n == 0 || a->topo->size == 1) return 0;
    const int64_t be = convoy__allgatherv_pipelined_block(a);
    int64_t nreal = 0, minb = INT64_MAX;
    for (int i = 0; i < a->topo->size; i++) {
        const int64_t bi = nblocks(a->rcounts[i], be);
        if (a->rcounts[i] > 0) nreal += bi;
        if (bi < minb) minb = bi;
    }
    const int64_t rounds = c.z == 0 ? nreal - minb : nreal - 1 + (c.z + c.n - 1) / c.n;
    const int64_t bytes = (be < c.maxm ? be : c.maxm) * a->rtype.size;
    return (double)rounds * (m->alpha + m->beta * (double)bytes);
}

int convoy__allgatherv_pipelined(const convoy__args *a, convoy__schedule *s)
{
    return convoy__build_in_bytes(a, s, pipelined);
}

double convoy__allgatherv_pipelined_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__cost_in_bytes(a, m, pipelined_cost);
}

void convoy__allgatherv_pipelined_explain(const convoy__args *a, char *buf, size_t len)
{
    convoy__explain_in_bytes(a, buf, len, pipelined_explain);
}
