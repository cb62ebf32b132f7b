/*
 * Node-local allgatherv through the node segment, streamed in chunks with flow control
 * (see shm_stream.h).
 *
 * Layout of the segment: node process w owns slots w*S .. w*S+S-1, each of C bytes.
 * Writer w, chunk j (slot j mod S):
 *     [j >= S: wait until every reader has consumed chunk j-S]  -> copy chunk into slot
 *     -> notify flag 0 = j+1 (after the notification of chunk j-1: values only grow)
 * Reader r of writer w, chunk j:
 *     wait w's flag 0 >= j+1 -> copy slot into the receive buffer
 *     -> notify flag 1+w = j+1 (after r's previous "consumed" for w)
 * A reader that sees flag 0 >= j+1 knows chunk j is in its slot and that it is not yet
 * overwritten: chunk j+S needs this reader's "consumed j" first.
 *
 * Cost: every block crosses memory twice (into the segment, out of it) per reader; the
 * point is correctness of the segment protocol, not speed.
 */
#include "shm_stream.h"

int convoy__test_shm_stream(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int n = t->ppn, me = t->node_rank;
    const int64_t seg = convoy__param_get(a, "CONVOY_SEGMENT_BYTES", a->shm_bytes);
    const int64_t slots = convoy__param_get(a, "CONVOY_SHM_STREAM_SLOTS", 2);
    const int64_t esize = a->rtype.size, ext = a->rtype.extent;
    /* n <= 1024 bounds the dependency list of a chunk below (one wait per reader). */
    if (a->coll != CONVOY_COLL_ALLGATHERV || seg <= 0 || slots < 2 || esize <= 0 || n > 1024)
        return CONVOY_ERR_ARG;
    const int64_t chunk = seg / n / slots / esize; /* elements per chunk */
    if (chunk < 1) return CONVOY_ERR_ARG;
    const int64_t cbytes = chunk * esize;
    s->shm_bytes = (int64_t)n * slots * cbytes;

    /* My block, in my receive buffer first: from there it streams in receive-type units,
     * whatever the send type is. */
    const int myrank = t->rank;
    const int64_t mycount = a->rcounts[myrank];
    int own = -1;
    if (!a->inplace && mycount > 0)
        own = convoy__add_copy(
            s, convoy__reg(CONVOY_BUF_SEND, CONVOY_T_SEND, 0, a->count),
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[myrank] * ext, mycount), 0, NULL);

    /* Writer side. */
    int prev_note = -1;
    for (int64_t j = 0; j * chunk < mycount; j++) {
        const int64_t k = mycount - j * chunk < chunk ? mycount - j * chunk : chunk;
        int deps[1 + 1024], nd = 0; /* own copy + one wait per reader */
        if (own >= 0) deps[nd++] = own;
        if (j >= slots)
            for (int r = 0; r < n; r++)
                if (r != me)
                    deps[nd++] = convoy__add_wait(s, r, 1 + me, (uint32_t)(j - slots + 1), 0, NULL);
        int cp = convoy__add_copy(
            s,
            convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, (a->displs[myrank] + j * chunk) * ext, k),
            convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE, ((int64_t)me * slots + j % slots) * cbytes,
                        k * esize),
            nd, deps);
        int nd2 = 0, d2[2];
        d2[nd2++] = cp;
        if (prev_note >= 0) d2[nd2++] = prev_note;
        prev_note = convoy__add_notify(s, 0, (uint32_t)(j + 1), nd2, d2);
    }

    /* Reader side: every other node process's block. */
    for (int w = 0; w < n; w++) {
        if (w == me) continue;
        const int wrank = convoy__topo_rank_at(t, t->node, w);
        const int64_t count = a->rcounts[wrank];
        int prev_consumed = -1;
        for (int64_t j = 0; j * chunk < count; j++) {
            const int64_t k = count - j * chunk < chunk ? count - j * chunk : chunk;
            int wt = convoy__add_wait(s, w, 0, (uint32_t)(j + 1), 0, NULL);
            int cp =
                convoy__add_copy(s,
                                 convoy__reg(CONVOY_BUF_SHM, CONVOY_T_BYTE,
                                             ((int64_t)w * slots + j % slots) * cbytes, k * esize),
                                 convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                                             (a->displs[wrank] + j * chunk) * ext, k),
                                 CONVOY_DEP(wt));
            int nd = 0, d[2];
            d[nd++] = cp;
            if (prev_consumed >= 0) d[nd++] = prev_consumed;
            prev_consumed = convoy__add_notify(s, 1 + w, (uint32_t)(j + 1), nd, d);
        }
    }
    /* Every process declares all flags, so that the node agrees on their number even
     * where a process has nothing to read or write. */
    if (s->nflags < 1 + n) s->nflags = 1 + n;
    return s->err;
}
