/*
 * Barrier with the node's part in the node segment's flags and the nodes' part as an
 * n-way dissemination whose n ports are the node's processes (GASPI-SHAN's shared
 * notifications, papers/000_9e3270d4a632b2e1.txt §3 and papers/001_97ab1fb5063236b5.txt
 * §3; n-way dissemination, papers/003_0922d471b120eaa4.txt §III; using the processes of
 * a node as the ports of the dissemination is not in the papers).
 *
 * Idea: each process has one flag F. It sets F = 1 when it arrives. Among the N nodes,
 * round k = 0..K-1 (K = ceil(log_{n+1} N), n = the smallest node's process count) has
 * distance d = (n+1)^k: node A sends one message to each node A + i d and receives one
 * from each A - i d (mod N), i = 1..n with i d < N, as papers/003's dissemination does
 * for ranks. Message i of a round is sent and received by A's process of node rank i-1
 * (the port), to and from the process of the same node rank on the other node, so the n
 * messages of a round leave from n processes at once. A port sends round k's message only
 * when every process of its node has F >= k + 1 (all of the node's receives of the rounds
 * before are done; for k = 0: all arrived), and sets F = k + 2 when its receive is done;
 * a process with no message in round k sets F = k + 2 at once. A process leaves when
 * every process of its node has F >= K + 1. After round k the node has heard from the
 * (n+1)^(k+1) nodes A, A-1, ... (each message brings the sender node's window of (n+1)^k
 * nodes, as in papers/003), so after K rounds from all. One node (N = 1): arrive, wait for
 * the others' arrival, leave: the barrier is ppn flag stores and loads, no message.
 *
 * Repeated calls: the schedule alternates (shm_alt: flags only, each waited for in the
 * operation that sets it), so a process enters the next barrier without waiting at the
 * segment's gate for its peers' release of this one (exec.c); on one node it runs in step
 * order (convoy__exec_straight: the arrival, then the waits). A call so costs its arrival
 * store and one cache-line transfer from each peer: no gate miss, no release in a polled
 * line (shm.c).
 *
 * Cost: K message latencies (the n messages of a round leave from n processes, in
 * parallel) and K + 1 node flag handshakes: T = K alpha + (K + 1) f, f = the cost of a
 * flag handshake between two processes of a node (convoy__flag_cost in coll.h: 0.2 us,
 * or half a message's alpha where that is more). Against
 * dissemination over all P ranks (ceil(log_{n+1} P) rounds of alpha): one node is no
 * message at all; several nodes need log_{n+1} N rather than log P rounds.
 *
 * Where processes share cores the cost is at least the work bound of its waits
 * (convoy__shared_cores_bound in coll.h: a flag waited for needs its setter scheduled as a
 * message needs its receiver): measured at 4 processes on 2 cores as 2 virtual nodes of 2,
 * 1.8 times the MPI library's barrier by hand (flags inside the nodes, one message between
 * them), 3.3 times through Convoy, against 1.02 for `linear`'s fan-in and fan-out.
 *
 * Restrictions: needs the node segment (a node with 2 or more processes and a segment:
 * args.shm_bytes > 0); without one (one process per node, or past the segment cap, or a
 * nonblocking request planned before its communicator's setup) the predicate refuses.
 * Any node sizes and layouts: n is the smallest node's size, so every node has the ports.
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Rounds among N nodes with n ports. */
static int rounds(int N, int n)
{
    int K = 0;
    for (int64_t reach = 1; reach < N; reach *= n + 1)
        K++;
    return K;
}

static int min_ppn(const convoy__topo *t)
{
    int n = t->node_size[0];
    for (int i = 1; i < t->nnodes; i++)
        if (t->node_size[i] < n) n = t->node_size[i];
    return n;
}

int convoy__barrier_node_flags_applicable(const convoy__args *a)
{
    return a->topo->max_ppn > 1 && a->shm_bytes > 0;
}

int convoy__barrier_node_flags(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = min_ppn(t), K = rounds(N, n), me = t->node_rank;
    int *deps = malloc(((size_t)t->ppn + 1) * sizeof *deps);
    if (!deps) return CONVOY_ERR_NO_MEM;
    s->nflags = 1;
    s->shm_alt = 1; /* flags alone, each waited for in the operation that sets it */
    int prev = convoy__add_notify(s, 0, 1, 0, NULL);
    int64_t d = 1;
    for (int k = 0; k < K; k++, d *= n + 1) {
        const int i = me + 1; /* this process's message of the round, if any */
        if (me < n && i * d < N) {
            int nd = 0;
            deps[nd++] = prev;
            for (int q = 0; q < t->ppn; q++)
                if (q != me) deps[nd++] = convoy__add_wait(s, q, 0, (uint32_t)k + 1, 0, NULL);
            const int to = (int)((t->node + i * d) % N),
                      from = (int)((t->node - i * d % N + N) % N);
            convoy__region none = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0);
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, to, me), k, none, nd,
                             deps);
            int rv = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, from, me), k,
                                      none, 0, NULL);
            prev = convoy__add_notify(s, 0, (uint32_t)k + 2, 2, (const int[]){prev, rv});
        } else {
            prev = convoy__add_notify(s, 0, (uint32_t)k + 2, 1, &prev);
        }
    }
    for (int q = 0; q < t->ppn; q++)
        if (q != me) convoy__add_wait(s, q, 0, (uint32_t)K + 1, 1, &prev);
    free(deps);
    return s->err;
}

/* Waits per process on average (messages received and node peers' flags waited for), for
 * the work bound where processes share cores: per node of q processes and round k, each
 * of the c_k ports with a message waits for its q - 1 peers and receives one message;
 * every process waits for its q - 1 peers at the end. */
static double waits(const convoy__topo *t)
{
    const int N = t->nnodes, n = min_ppn(t), K = rounds(N, n);
    double w = 0;
    for (int i = 0; i < N; i++) {
        const int q = t->node_size[i];
        int64_t d = 1;
        for (int k = 0; k < K; k++, d *= n + 1) {
            int c = 0;
            for (int j = 1; j <= n && j * d < N; j++)
                c++;
            w += (double)c * q; /* (q - 1 flags and one message per port) */
        }
        w += (double)q * (q - 1);
    }
    return t->size > 0 ? w / t->size : 0;
}

double convoy__barrier_node_flags_cost(const convoy__args *a, const convoy__machine *m)
{
    const int K = rounds(a->topo->nnodes, min_ppn(a->topo));
    const double t = K * m->alpha + (K + 1) * convoy__flag_cost(m),
                 w = convoy__shared_cores_bound(m, waits(a->topo));
    return t > w ? t : w;
}
