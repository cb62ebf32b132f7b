/*
 * Allreduce by n-way dissemination, adapted for non-idempotent operations (End,
 * Yahyapour, Simmendinger, Alrutz, "Adaption of the n-way dissemination algorithm for
 * GASPI split-phase allreduce", INFOCOMP 2015, papers/003 §III-IV), with the small-message
 * dissemination of papers/001 as its n = 1 case (partial results of earlier rounds
 * re-used and sent ahead to the ranks that need them in the last round).
 *
 * Idea: k = ceil(log_{n+1} P) rounds. In round l = 1 .. k-1 rank p sends its partial
 * result S_{l-1} to p + i (n+1)^(l-1) and receives S_{l-1} of p - j (n+1)^(l-1),
 * i, j = 1..n, combining the received ones in the order j = 1, 2, ..., n. After the j-th
 * combination of round l rank p holds the "window" of its (j+1) (n+1)^(l-1) left
 * neighbours including itself (papers/003 eq. (4)); these window sizes (and 1, its own
 * data) are its data boundaries (eq. (5)). After k-1 rounds it holds the window of
 * m = (n+1)^(k-1) ranks; the last round has to bring the remaining P - m ranks exactly
 * once. For P = (n+1)^k the n full windows of p - s m (s = 1..n) do ("plain"); for
 * idempotent operations (args->idempotent) overlap is harmless and the first
 * ceil(P/m) - 1 of them do (the plain algorithm without its redundant messages).
 *
 * Otherwise the last round is the paper's adaptation (§IV): P = s m + A_snd - A_rcv
 * (eq. (8), here with window sizes: A(l, j) = (j+1)(n+1)^(l-1), A(0) = 1, so
 * n sum_{i=0}^{l-2} (n+1)^i + j (n+1)^(l-1) = A(l, j) - 1): senders 1..s-1 send their full
 * window, sender s = p - s m sends its stored window A_snd = A(l_snd, j_snd) (made in round
 * l_snd), and the receiver "takes out" its own window A_rcv = A(l_rcv, j_rcv): without an
 * inverse, it keeps from round l_rcv on a second accumulator C of everything received after
 * that boundary (the paper's partial result stored in the round it is made) and ends with
 * C combined with the last round's messages, which bring the taken-out ranks again by wrap-
 * around. Theorem 1's five cases are the tuple's shapes: 1 (l_rcv, l_snd > 0), 2 (l_rcv > 0,
 * l_snd = 0: the sender's own data), 3 (P = s m: only s-1 full windows), 4 (l_rcv = 0,
 * l_snd = 1: the sender sends one boundary less, A(1, j_snd) - 1 = j_snd ranks, no take-out)
 * and 5 (l_rcv = 0, l_snd > 1: the receiver takes out its own data). The paper's closing
 * note (a sender boundary on the receiver's base border g_B: P = s m + A_snd, "complies to
 * case 4") is printed as "4 (g_B)": a stored window of more than n + 1 ranks, no take-out.
 *
 * My derivations where the paper is short: (a) the five cases are one rule, "the last
 * round's windows, read outward from the receiver's own window minus its taken-out part,
 * are contiguous and add up to P": then every rank is counted exactly once. (b) Among the
 * tuples of a (P, n) the one with the fewest last-round messages is used, then the fewest
 * extra reductions (no take-out, or the latest boundary). (c) No tuple exists for many
 * (P, n) (e.g. n = 1 and P - 2^(k-1) not of the form 2^a or 2^a - 2^b; 830 of P = 2..1000
 * for n = 1, 252 for n = 7). There ("fallback") the remaining P - m (+ a take-out) ranks
 * are tiled by several stored windows: the base-(n+1) digits d_e of that length give d_{k-1}
 * full windows and one window d_e (n+1)^e per other non-zero digit, each sent by the rank at
 * the right end of its piece (a peer off the standard pattern). Summing t one-digit
 * numbers never gives more than t non-zero digits, so this is the fewest windows. The
 * fallback costs M - 1 more messages (M = its window count, up to n + k - 1), no extra
 * round: every stored window is sent ahead in the round after it is made (papers/001),
 * into its own receive buffer posted at the start, so the operation ends after
 * max(k - 1, l + 1) rounds over its windows' rounds l (a full window: l = k - 1, hence
 * k). For n = 1 without full windows that is k - 1 = floor(log2 P) rounds, fewer than
 * ceil(log2 P) + 1 (recursive doubling with its fold); the rounds are those of a
 * lockstep in which a rank moves at most n + M messages each way per round.
 *
 * Cost: (k-1) rounds of n messages of the whole vector and n reductions, then M messages
 * and reductions, plus one reduction per piece after a take-out boundary. Modelled as
 * alpha (1 + (q - 1)/4) + q (beta + gamma) bytes for a round of q concurrent messages
 * (my assumption: a further message in flight costs a quarter of a latency of injection
 * overhead), each round's bytes at the level its distances reach (lane-aware, as
 * recursive doubling's: convoy__round_cost); n in 1..7 (the paper's range, at most
 * P - 1) with the lowest predicted time, the smallest on ties, unless CONVOY_DISSEM_N
 * forces it (clamped to P - 1). For small vectors: every round moves the whole vector.
 *
 * Restrictions: commutative operations (each rank combines in its own order); the
 * registry line declares neither CONVOY_ALGO_NONCOMMUTATIVE nor CONVOY_ALGO_REPRODUCIBLE
 * (floating-point results may differ in the last bits between ranks).
 */
#include "coll/coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_N 7       /* the cost model's range of n (papers/003 §V: n in 1..7) */
#define MAX_FORCED 64 /* CONVOY_DISSEM_N beyond this is clamped (bounded plan arrays) */
#define TAG_LAST 512

static int64_t ipow(int64_t b, int e)
{
    int64_t r = 1;
    while (e-- > 0)
        r *= b;
    return r;
}

/* Window size -> (l, j): 1 -> (0, 0); (j+1)(n+1)^(l-1) -> (l, j), j in 1..n. */
static void window_lj(int64_t w, int n, int *l, int *j)
{
    *l = 0;
    *j = 0;
    if (w <= 1) return;
    int64_t b = 1;
    for (int ll = 1;; ll++, b *= n + 1) {
        if (w % b == 0 && w / b >= 2 && w / b <= n + 1) {
            *l = ll;
            *j = (int)(w / b) - 1;
            return;
        }
        if (b > w) break;
    }
}

/* The windows tiling `len` ranks: d_{k-1} full windows, then one per non-zero lower
 * base-(n+1) digit, largest first. Returns the count, or -1 if more than max. */
static int tile(int64_t len, int n, int k, int64_t m, int64_t *win, int max)
{
    int cnt = 0;
    int64_t full = len / m, rest = len % m;
    for (int64_t i = 0; i < full; i++) {
        if (cnt == max) return -1;
        win[cnt++] = m;
    }
    for (int e = k - 2; e >= 0; e--) {
        int64_t b = ipow(n + 1, e), d = rest / b;
        rest %= b;
        if (!d) continue;
        if (cnt == max) return -1;
        win[cnt++] = d * b;
    }
    return cnt;
}

/* Pieces received after the boundary of window t (extra reductions of a take-out). */
static int64_t pieces_after(int64_t t, int n, int k)
{
    int l, j;
    window_lj(t, n, &l, &j);
    if (l == 0) return (int64_t)n * (k - 1);
    return (n - j) + (int64_t)n * (k - 1 - l);
}

void convoy__dissem_plan_make(int P, int n, int idempotent, convoy__dissem_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    if (n > MAX_FORCED) n = MAX_FORCED;
    if (n > P - 1) n = P - 1;
    if (n < 1) n = 1;
    pl->n = n;
    pl->P = P;
    pl->kase = CONVOY_DISSEM_PLAIN;
    pl->m = 1;
    while (pl->m * (n + 1) < P) {
        pl->m *= n + 1;
        pl->k++;
    }
    if (P > 1) pl->k++;
    const int k = pl->k;
    const int64_t m = pl->m;
    if (P <= 1) return;
    if (m * (n + 1) == P || idempotent) {
        /* Plain: as many full windows as cover P (all n for P = (n+1)^k). */
        pl->nwin = (int)((P + m - 1) / m) - 1;
        for (int i = 0; i < pl->nwin; i++)
            pl->win[i] = m;
        pl->kase = m * (n + 1) == P ? CONVOY_DISSEM_PLAIN : CONVOY_DISSEM_IDEM;
    } else {
        /* Candidates: take-out t in {0} and the window sizes below m, the tiling of
         * P - m + t. A tuple has at most n windows of which at most one is not full. */
        int best_tuple = 0, have = 0;
        int64_t best_cost = 0;
        /* The window sizes below m (at most 1 + n (k-1) <= 1 + 64 * 5 for n <= 64). */
        int64_t sizes[1024];
        int ns = 0;
        sizes[ns++] = 1;
        for (int l = 1; l < k; l++)
            for (int j = 1; j <= n && ns < 1024; j++) {
                int64_t w = (j + 1) * ipow(n + 1, l - 1);
                if (w < m) sizes[ns++] = w;
            }
        for (int ti = -1; ti < ns; ti++) {
            const int64_t t = ti < 0 ? 0 : sizes[ti];
            int64_t win[CONVOY_DISSEM_MAXWIN];
            int cnt = tile(P - m + t, n, k, m, win, CONVOY_DISSEM_MAXWIN);
            if (cnt < 1) continue;
            int partial = 0;
            for (int i = 0; i < cnt; i++)
                partial += win[i] != m;
            /* A window reaching exactly P from the receiver would be its own: never
             * needed (drop it and the take-out), never chosen. */
            int64_t d = m, selfpeer = 0;
            for (int i = 0; i < cnt; i++) {
                if (d % P == 0) selfpeer = 1;
                d += win[i];
            }
            if (selfpeer) continue;
            const int tuple = cnt <= n && partial <= 1;
            const int64_t cost = (int64_t)cnt * 1000000 + (t ? pieces_after(t, n, k) + 1 : 0);
            if (!have || (tuple && !best_tuple) || (tuple == best_tuple && cost < best_cost)) {
                have = 1;
                best_tuple = tuple;
                best_cost = cost;
                pl->take = t;
                pl->nwin = cnt;
                memcpy(pl->win, win, (size_t)cnt * sizeof *win);
            }
        }
        /* Name it: the tuple (s, l_snd, l_rcv, j_snd, j_rcv) and Theorem 1's case. */
        if (!best_tuple) {
            pl->kase = CONVOY_DISSEM_FALLBACK;
        } else {
            int nfull = 0;
            int64_t a_snd = 0;
            for (int i = 0; i < pl->nwin; i++) {
                if (pl->win[i] == m)
                    nfull++;
                else
                    a_snd = pl->win[i];
            }
            if (!a_snd && pl->take) { /* the last full window is the partial one */
                a_snd = m;
                nfull--;
            }
            pl->s = nfull + 1;
            window_lj(a_snd, n, &pl->lsnd, &pl->jsnd);
            window_lj(pl->take, n, &pl->lrcv, &pl->jrcv);
            if (!a_snd) {
                pl->kase = 3; /* P = s m */
                pl->lsnd = pl->jsnd = 0;
            } else if (pl->take > 0 && pl->lrcv > 0) {
                pl->kase = pl->lsnd > 0 ? 1 : 2;
            } else if (pl->take > 0) {
                pl->kase = 5; /* l_rcv = 0, l_snd > 1 (l_snd <= 1 would be cheaper as 4) */
            } else if (a_snd <= n) {
                /* Case 4: the paper's tuple has l_rcv = 0, l_snd = 1, j_snd = a_snd; the
                 * sender sends up to g_1[j_snd - 1], i.e. a_snd ranks. */
                pl->kase = 4;
                pl->lsnd = 1;
                pl->jsnd = (int)a_snd;
            } else {
                pl->kase = CONVOY_DISSEM_GB;
            }
            if (pl->kase != CONVOY_DISSEM_GB && pl->take == 0) pl->lrcv = pl->jrcv = 0;
        }
    }
    /* Rounds: standard k-1, each window in the round after it is made (sent ahead). */
    pl->rounds = k - 1;
    for (int i = 0; i < pl->nwin; i++) {
        int l, j;
        if (pl->win[i] == m)
            l = k - 1;
        else
            window_lj(pl->win[i], n, &l, &j);
        if (l + 1 > pl->rounds) pl->rounds = l + 1;
    }
    pl->extra = pl->take ? pieces_after(pl->take, n, k) : 0;
}

void convoy__dissem_plan_describe(const convoy__dissem_plan *pl, char *buf, size_t len)
{
    char w[256] = "";
    size_t u = 0;
    for (int i = 0; i < pl->nwin && u + 24 < sizeof w; i++)
        u += (size_t)snprintf(w + u, sizeof w - u, "%s%lld", i ? "+" : "", (long long)pl->win[i]);
    if (!pl->nwin) snprintf(w, sizeof w, "none");
    char what[128];
    switch (pl->kase) {
    case CONVOY_DISSEM_PLAIN: snprintf(what, sizeof what, "plain"); break;
    case CONVOY_DISSEM_IDEM: snprintf(what, sizeof what, "plain (idempotent)"); break;
    case CONVOY_DISSEM_FALLBACK: snprintf(what, sizeof what, "fallback"); break;
    default:
        snprintf(what, sizeof what, "tuple (s=%d, l_snd=%d, l_rcv=%d, j_snd=%d, j_rcv=%d) case %s",
                 pl->s, pl->lsnd, pl->lrcv, pl->jsnd, pl->jrcv,
                 pl->kase == CONVOY_DISSEM_GB ? "4 (g_B)"
                 : pl->kase == 1              ? "1"
                 : pl->kase == 2              ? "2"
                 : pl->kase == 3              ? "3"
                 : pl->kase == 4              ? "4"
                                              : "5");
    }
    snprintf(buf, len,
             "P=%d n=%d k=%d m=%lld %s; last round: windows %s (%d messages), take-out %lld "
             "(%lld extra reductions); rounds %d, messages per rank %lld",
             pl->P, pl->n, pl->k, (long long)pl->m, what, w, pl->nwin, (long long)pl->take,
             (long long)pl->extra, pl->rounds,
             (long long)pl->n * (pl->k > 0 ? pl->k - 1 : 0) + pl->nwin);
}

/* A round of q concurrent messages to distances d, 2 d, ..., q d: its latency and bytes at
 * the level those distances reach from rank 0's node (convoy__round_cost), a quarter
 * latency per further message, and the q reductions. */
static double round_time(const convoy__machine *mc, const convoy__topo *topo, int q, int64_t d,
                         double bytes)
{
    return convoy__round_cost(mc, q, convoy__round_off_shift(topo, d, q), bytes) +
           mc->alpha * (q - 1) / 4.0 + q * mc->gamma * bytes;
}

static double plan_cost(const convoy__dissem_plan *pl, double bytes, const convoy__machine *mc,
                        const convoy__topo *topo)
{
    if (pl->P <= 1) return 0;
    /* Round j's n messages go (n+1)^j ranks and multiples away, the last round's windows
     * beyond m = (n+1)^(k-1) (as the standard pattern's next round would). */
    double t = 0;
    int64_t d = 1;
    for (int j = 0; j < pl->k - 1; j++, d *= pl->n + 1)
        t += round_time(mc, topo, pl->n, d, bytes);
    if (pl->nwin) t += round_time(mc, topo, pl->nwin, pl->m, bytes);
    return t + (double)pl->extra * mc->gamma * bytes;
}

/* n: forced by CONVOY_DISSEM_N (> 0), else the cheapest of 1..7 under the machine. */
int convoy__allreduce_dissem_n(const convoy__args *a, int *forced)
{
    const int P = a->topo->size;
    const int64_t f = convoy__param_get(a, "CONVOY_DISSEM_N", 0);
    *forced = f > 0;
    if (P <= 2) return 1;
    if (f > 0)
        return (int)(f > P - 1 ? (P - 1 < MAX_FORCED ? P - 1 : MAX_FORCED)
                               : (f < MAX_FORCED ? f : MAX_FORCED));
    const double bytes = (double)a->count * (double)a->rtype.size;
    int best = 1;
    double best_t = 0;
    for (int n = 1; n <= MAX_N && n <= P - 1; n++) {
        convoy__dissem_plan pl;
        convoy__dissem_plan_make(P, n, a->idempotent, &pl);
        double t = plan_cost(&pl, bytes, &a->machine, a->topo);
        if (n == 1 || t < best_t) {
            best = n;
            best_t = t;
        }
    }
    return best;
}

void convoy__allreduce_dissem_plan(const convoy__args *a, convoy__dissem_plan *pl)
{
    int forced;
    convoy__dissem_plan_make(a->topo->size, convoy__allreduce_dissem_n(a, &forced), a->idempotent,
                             pl);
}

/* What the builder tracks while it appends steps. */
typedef struct bctx {
    const convoy__args *a;
    convoy__schedule *s;
    const convoy__dissem_plan *pl;
    int P, p;
    int64_t cnt, slot;
    convoy__region acc;
    int last; /* the step after which acc holds the current partial result (-1: from the start) */
    int store[CONVOY_DISSEM_MAXWIN]; /* per window: its scratch slot (-1: acc or send buffer) */
    int wl[CONVOY_DISSEM_MAXWIN], wj[CONVOY_DISSEM_MAXWIN];
    int64_t dist[CONVOY_DISSEM_MAXWIN];
} bctx;

static convoy__region slot_reg(const bctx *b, int i)
{
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_RECV, (int64_t)i * b->slot - b->a->rtype.true_lb,
                       b->cnt);
}

/* The windows made at (l, j) that this rank sends in the last round: stored (a copy of
 * acc, once per size) and sent ahead at once. The copy becomes acc's last reader. */
static void windows_at(bctx *b, int l, int j)
{
    int made = -1;
    for (int i = 0; i < b->pl->nwin; i++) {
        if (b->wl[i] != l || b->wj[i] != j || b->pl->win[i] == b->pl->m) continue;
        convoy__region src = b->store[i] >= 0
                                 ? slot_reg(b, b->store[i])
                                 : convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, b->cnt);
        if (b->store[i] >= 0 && made < 0)
            made = convoy__add_copy(b->s, b->acc, src, CONVOY_DEP(b->last));
        convoy__add_send(b->s, CONVOY_COMM_ALL, (int)((b->p + b->dist[i]) % b->P), TAG_LAST + i,
                         src, CONVOY_DEP(b->store[i] >= 0 ? made : -1));
    }
    if (made >= 0) b->last = made;
}

int convoy__allreduce_dissem(const convoy__args *a, convoy__schedule *s)
{
    const int P = a->topo->size;
    const int64_t cnt = a->count;
    if (cnt == 0) return 0;
    bctx b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.s = s;
    b.P = P;
    b.p = a->topo->rank;
    b.cnt = cnt;
    b.acc = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, cnt);
    b.last = -1;
    if (!a->inplace)
        b.last = convoy__add_copy(s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, cnt), b.acc, 0,
                                  NULL);
    if (P == 1) return s->err;

    convoy__dissem_plan pl;
    convoy__allreduce_dissem_plan(a, &pl);
    b.pl = &pl;
    const int n = pl.n, k = pl.k, M = pl.nwin, p = b.p;
    const int64_t m = pl.m;

    /* Scratch slots: n receive slots of the standard rounds, M of the last round, C, and
     * one stored window per distinct partial size this rank sends. */
    b.slot = (a->rtype.true_extent + (cnt - 1) * a->rtype.extent + 15) / 16 * 16;
    int nslot = 0;
    const int rb0 = nslot;
    nslot += n;
    const int lw0 = nslot;
    nslot += M;
    const int cslot = pl.take ? nslot++ : -1;
    int64_t d = m;
    for (int i = 0; i < M; i++) {
        b.dist[i] = d;
        d += pl.win[i];
        if (b.dist[i] % P == 0) return CONVOY_ERR_INTERN;
        b.store[i] = -1;
        if (pl.win[i] == m) {
            b.wl[i] = k - 1;
            b.wj[i] = n;
            continue;
        }
        window_lj(pl.win[i], n, &b.wl[i], &b.wj[i]);
        if (b.wl[i] == 0 && !a->inplace) continue; /* own data: the send buffer */
        for (int q = 0; q < i; q++)
            if (pl.win[q] == pl.win[i]) b.store[i] = b.store[q];
        if (b.store[i] < 0) b.store[i] = nslot++;
    }
    s->tmp_bytes = (int64_t)nslot * b.slot;

    int *ibuf = malloc((size_t)(5 * n + 2 * M + 8) * sizeof *ibuf);
    if (!ibuf) return CONVOY_ERR_NO_MEM;
    int *rbfree = ibuf, *rbfree2 = ibuf + n, *snd = ibuf + 2 * n, *rcv = ibuf + 3 * n,
        *deps = ibuf + 4 * n, *lrecv = ibuf + 5 * n + 4, *wsend = lrecv + M;
    int nwsend = 0;

    /* The last round's receives, posted now: windows sent ahead find them waiting. */
    for (int i = 0; i < M; i++)
        lrecv[i] = convoy__add_recv(s, CONVOY_COMM_ALL, (int)((p - b.dist[i] % P + P) % P),
                                    TAG_LAST + i, slot_reg(&b, lw0 + i), 0, NULL);
    windows_at(&b, 0, 0);

    /* Take-out boundary (tl, tj): the pieces after it also go into C. */
    int tl = -1, tj = 0, clast = -1;
    if (pl.take) window_lj(pl.take, n, &tl, &tj);
    for (int j = 0; j < n; j++)
        rbfree[j] = rbfree2[j] = -1;
    int64_t dl = 1;
    for (int l = 1; l < k; l++, dl *= n + 1) {
        for (int i = 1; i <= n; i++)
            snd[i - 1] = convoy__add_send(s, CONVOY_COMM_ALL, (int)((p + i * dl) % P), l, b.acc,
                                          CONVOY_DEP(b.last));
        for (int j = 1; j <= n; j++) {
            int fd[2], nd = 0;
            if (rbfree[j - 1] >= 0) fd[nd++] = rbfree[j - 1];
            if (rbfree2[j - 1] >= 0) fd[nd++] = rbfree2[j - 1];
            rcv[j - 1] = convoy__add_recv(s, CONVOY_COMM_ALL, (int)(((p - j * dl) % P + P) % P), l,
                                          slot_reg(&b, rb0 + j - 1), nd, fd);
        }
        for (int j = 1; j <= n; j++) {
            int nd = 0;
            deps[nd++] = rcv[j - 1];
            if (b.last >= 0) deps[nd++] = b.last;
            if (j == 1) /* acc is overwritten: this round's sends of it must be done */
                for (int i = 0; i < n; i++)
                    deps[nd++] = snd[i];
            b.last = convoy__add_reduce(s, slot_reg(&b, rb0 + j - 1), b.acc, nd, deps);
            rbfree[j - 1] = b.last;
            rbfree2[j - 1] = -1;
            if (tl >= 0 && (l > tl || (l == tl && j > tj))) {
                int cd[2] = {rcv[j - 1], clast};
                clast = clast < 0 ? convoy__add_copy(s, slot_reg(&b, rb0 + j - 1),
                                                     slot_reg(&b, cslot), 1, cd)
                                  : convoy__add_reduce(s, slot_reg(&b, rb0 + j - 1),
                                                       slot_reg(&b, cslot), 2, cd);
                rbfree2[j - 1] = clast;
            }
            windows_at(&b, l, j);
        }
    }
    if (pl.take && clast < 0) {
        free(ibuf);
        return CONVOY_ERR_INTERN;
    }
    /* The last round: the full windows from acc, then everything received combined into
     * acc, or into C when the receiver takes its own window out (C then becomes acc). */
    for (int i = 0; i < M; i++)
        if (pl.win[i] == m)
            wsend[nwsend++] = convoy__add_send(s, CONVOY_COMM_ALL, (int)((p + b.dist[i]) % P),
                                               TAG_LAST + i, b.acc, CONVOY_DEP(b.last));
    const convoy__region target = pl.take ? slot_reg(&b, cslot) : b.acc;
    int tlast = pl.take ? clast : b.last;
    for (int i = 0; i < M; i++) {
        int nd = 0, dd[2 + CONVOY_DISSEM_MAXWIN];
        dd[nd++] = lrecv[i];
        if (tlast >= 0) dd[nd++] = tlast;
        if (!pl.take && i == 0)
            for (int q = 0; q < nwsend; q++)
                dd[nd++] = wsend[q];
        tlast = convoy__add_reduce(s, slot_reg(&b, lw0 + i), target, nd, dd);
    }
    if (pl.take) {
        int nd = 0, big[3 + CONVOY_DISSEM_MAXWIN];
        big[nd++] = tlast;
        if (b.last >= 0) big[nd++] = b.last;
        for (int q = 0; q < nwsend; q++)
            big[nd++] = wsend[q];
        convoy__add_copy(s, slot_reg(&b, cslot), b.acc, nd, big);
    }
    free(ibuf);
    return s->err;
}

double convoy__allreduce_dissem_cost(const convoy__args *a, const convoy__machine *m)
{
    convoy__dissem_plan pl;
    convoy__allreduce_dissem_plan(a, &pl);
    return plan_cost(&pl, (double)a->count * (double)a->rtype.size, m, a->topo);
}

void convoy__allreduce_dissem_explain(const convoy__args *a, char *buf, size_t len)
{
    int forced;
    const int n = convoy__allreduce_dissem_n(a, &forced);
    convoy__dissem_plan pl;
    convoy__dissem_plan_make(a->topo->size, n, a->idempotent, &pl);
    char d[512];
    convoy__dissem_plan_describe(&pl, d, sizeof d);
    snprintf(buf, len, "n=%d (%s): %s", pl.n, forced ? "CONVOY_DISSEM_N" : "cost model", d);
}
