/*
 * The trial: the MPI library's collective against Convoy's close candidates, timed in
 * the program's own calls. Where the library's collective is a candidate
 * (CONVOY_NATIVE_CANDIDATE, on in the drop-in), the cost model predicts it from the
 * library's ping-pong latency, and at small counts its collectives are not what that
 * predicts: at np 4 as 2 x 2 on this 2-core host its Allgather of 256 ints took 7.0 us
 * where the model said 3.1 (Convoy's `direct`: 4.7, predicted 4.7), its Allreduce of 255
 * ints 7.6 against 2.9; the drop-in handed both back, where Convoy would have taken
 * 0.61-0.78 of the library's time.
 *
 * So the blocking calls of each kind take turns among sides: side 0, the one to beat (the
 * library's collective), then the model's choice and, for calls it predicts at least
 * CONVOY_TRIAL_MIN (1 ms: see open_sides), Convoy's other algorithms predicted within
 * CONVOY_TRIAL_WITHIN (3) times the choice's time, the best first, up to CONVOY_TRIAL_SIDES
 * in all (calls of CONVOY_TRIAL_BYTES, 1 MiB, or more per process whatever their predicted
 * time, from within twice that factor). The model misses among Convoy's own algorithms too: at np 4
 * as 2 x 2 on 2 cores, where processes share cores, Allgatherv of 1M ints per rank predicted 1454
 * us for `node_segment` and 2716 for `direct`, which took 0.88 of the library's time against
 * `node_segment`'s 1.04 (halffull: 0.60 against 0.81). So where the library's collective is no
 * candidate (programs calling convoy_*), the collectives that only move data (Allgather(v),
 * Alltoall, Barrier: whichever side runs, the result has the same bits) time Convoy's candidates
 * the same way, side 0 the model's choice; the reductions keep the model's choice, so that a
 * repeated call keeps giving the same bits (MPI's advice for reductions).
 *
 * Each side runs once untimed (which builds and touches what it needs), then K =
 * CONVOY_TRIAL_CALLS times timed, in cycles of one call per side (their order rotated by one
 * each cycle: see next_side); each rank notes each call's time from start to return. After
 * the last one the ranks take each call's slowest time (one MAX-allreduce of the sides x K
 * times on the private communicator) and compare each other side with side 0 cycle by cycle
 * (so that the host's drift cancels): a side qualifies if the median of its K ratios is
 * below CONVOY_NATIVE_MARGIN (0.9) and it was faster in at least 3/4 of the cycles (beyond
 * the noise: the sign test's 5 % level at K = 16); the qualifying side with the lowest median
 * ratio serves the kind from then on, and where none qualifies side 0 does. Except in a large
 * kind without the library (open_sides): there side 0 is only the model's guess, and any side
 * whose median ratio is below 1 qualifies. Convoy's sides
 * are timed on the full path (planned, not kept calls), which costs more than their repeats
 * will: that too favours the library. Under SimGrid the trial is off unless CONVOY_TRIAL=1:
 * a simulated cluster is there to show the models' choices.
 *
 * A kind: the collective, the call's bytes (convoy__args_bytes) and its count vector
 * (Allgatherv, Reduce_scatter): what every rank passes alike, so every rank counts the same
 * calls (MPI orders a communicator's collectives alike everywhere). Up to CONVOY_TRIALS
 * kinds per communicator get a record, opened by their first call in call order and never
 * dropped, so whether a kind has one is the same everywhere; later kinds follow the model.
 * Its sides are fixed when it opens, from the arguments and the machine parameters, which
 * are the same on every rank (where it has one side, that side serves the kind untimed).
 * cs->trials_open counts the records still timing (tools that time a steady state wait for
 * none: convoy__comm_trials_open).
 *
 * Every rank must take the same side in every call. A call's class (the model's choice, or
 * the side of a verdict or a timed call: CONVOY_TRIAL_*) is a function of its kind's record
 * as the call finds it, which every rank changes at the same calls, and each class's choice
 * is a function of the arguments; plan.c's memo keys its entries by the class, and what runs
 * without planning (fast.c's kept calls, and the drop-in's memo of them) keeps only calls
 * whose class is final: the model's where no record will be opened (not timed, or the
 * records full), or a verdict.
 *
 * Timed: the collectives in which every rank's result depends on every rank's input, so
 * that each rank's time from call to return covers the call's whole course and the slowest
 * rank's is the call's. Not the rooted ones and the scans: as they come, with the root
 * first, a linear Bcast's other ranks find their data waiting and return at once (0.5 us
 * where the library's took 18, whose forwarding ranks wait for their parents; np 4, 1 int),
 * which says nothing of its latency from a common start (1.08 of the library's there);
 * after a barrier, Bcast of 64K ints timed 0.75-0.85 of the library's and took 1.07-1.16
 * from agreed starts. Nor Gather(v) and Scatter(v), whose arguments differ by rank; nor
 * nonblocking and persistent calls (which do not match blocking ones), a forced algorithm,
 * a tuning file, CONVOY_REPRODUCIBLE, CONVOY_CHECK_ARGS. The model decides those, as it
 * does everything under CONVOY_TRIAL=0. CONVOY_VERBOSE prints each verdict and its figures.
 *
 * Cost: (K + 1) x sides calls of each kind on the full path (34-85), K + 1 on each side,
 * one allreduce of sides x K doubles, and the records (CONVOY_TRIALS of 0.7 KiB) made on a
 * communicator's first timed call.
 */
#include "api/internal.h"
#include "select/tuning.h"

#include <stdio.h>
#include <stdlib.h>

/* See above: the collectives timed where the library's collective is a candidate (native),
 * and those timed without it, which move data only (every side's result has the same bits). */
static int timed_coll(int coll, int native)
{
    switch (coll) {
    case CONVOY_COLL_ALLGATHER:
    case CONVOY_COLL_ALLGATHERV:
    case CONVOY_COLL_ALLTOALL:
    case CONVOY_COLL_BARRIER: return 1;
    case CONVOY_COLL_ALLREDUCE:
    case CONVOY_COLL_REDUCE_SCATTER:
    case CONVOY_COLL_REDUCE_SCATTER_BLOCK: return native;
    default: return 0;
    }
}

/* Whether r's calls are timed at all (before its arguments are known). */
static int timed(const convoy_request r)
{
    const convoy__config *c = &r->cfg;
    return r->blocking && !r->deferred && c->trial && !c->algo[r->coll] && !c->reproducible &&
           !c->check_args && !c->tuning_file && timed_coll(r->coll, c->native_candidate);
}

static uint64_t vector_hash(const convoy__args *a)
{
    if (!a->rcounts || (a->coll != CONVOY_COLL_ALLGATHERV && a->coll != CONVOY_COLL_REDUCE_SCATTER))
        return 0;
    /* In bytes: a rank may count in a datatype of its own (MPI asks only for equal type
     * signatures), and then its element counts differ from its peers'. */
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < a->topo->size; i++)
        h = (h ^ (uint64_t)(a->rcounts[i] * a->rtype.size)) * 0x100000001b3ull;
    return h;
}

static convoy__trial *find(convoy__cstate *cs, const convoy__args *a, int64_t bytes, uint64_t vh)
{
    for (int i = 0; i < cs->ntrials; i++) {
        convoy__trial *t = &cs->trial[i];
        if (t->coll == a->coll && t->bytes == bytes && t->vhash == vh) return t;
    }
    return NULL;
}

void convoy__trial_unplanned(convoy_request r)
{
    r->trial_final = !timed(r);
}

/* The side of a kind's next timed call: one call per side in each cycle, the order rotated
 * by one from cycle to cycle, so that no side always takes the same place in a pattern of
 * the program's (a loop making two calls of the kind, the first after other work and the
 * second right after it, would favour one place). */
static int next_side(const convoy__trial *t)
{
    return (t->calls % t->sides + t->calls / t->sides) % t->sides;
}

/* A new record's sides: the library's collective where it is a candidate, then Convoy's
 * choice and, where the model predicts it at least CONVOY_TRIAL_MIN, its other candidates
 * predicted within CONVOY_TRIAL_WITHIN of it, at this call's size as plan.c sizes the
 * machine. With one side it serves the kind untimed.
 *
 * Large calls, whose bytes (convoy__args_bytes: what each process ends with, the whole
 * result of an Allgather(v), what it receives of an Alltoall) are CONVOY_TRIAL_BYTES (1 MiB)
 * or more, have their other candidates whatever the predicted time, from within twice
 * CONVOY_TRIAL_WITHIN. There the models miss by more than the trial's margin for a reason of
 * their own: they charge copies at rates probed on data that stays in cache, and how fast
 * this host moves data that does not changes from minute to minute. At np 2 on one node,
 * Allgatherv of 256K-4M ints per rank (regular, halffull, geometric) predicted
 * `node_segment` 3.1 times faster than `direct` (517 against 1619 us at 1M regular), which
 * took 0.5-1.2 of its time as the host's state changed (`node_segment` 0.78-0.88 of the
 * library's time, then 1.2-1.95 a few minutes later, `direct` 0.97-1.05 throughout):
 * excluded by both rules, `direct` was never timed. And there the full path's few
 * microseconds over a kept call are below the noise. Without the library such a kind is
 * open: side 0, the model's choice, is there because of that miss and is no better a guess
 * than the others, so it keeps the kind only where no side's median ratio to it is below 1.
 * With the margin (0.9, 3 of 4 cycles) the trial's noise could leave it there against a
 * faster side: np 4 as 2 x 2, Allgatherv of 1M ints per rank (halffull), `direct` at 0.908
 * of `node_segment` and faster in 12 of 16 cycles, then 0.43 of the library's time, where
 * `node_segment` takes 0.72-0.92. (With the library a candidate the margin stays: the
 * library is the one a program must never fall behind.)
 *
 * Why the floor: timed calls run planned, through the executor, and a verdict's repeats
 * run kept (fast.c: the direct kernel, the one-round message path), which is faster for
 * some algorithms than for others. Below a millisecond that difference outweighed the
 * algorithms': at np 4 as 2 x 2 the trial chose Alltoall `pairwise` for 1 and 1K ints and
 * `lane` for 16K in three runs of three, 1.4-2.1 of the library's time, where the kept
 * `linear` took 0.9 (and 6.3-6.7 us against `pairwise`'s 8.8-19.5 in a loop of 3000 calls
 * of 1 int each); at 1M ints per rank Allgatherv's sides differ by milliseconds. */
static void open_sides(convoy_request r, const convoy__args *a, convoy__trial *t)
{
    const convoy__machine m = convoy__machine_sized(&a->machine, (double)t->bytes / a->topo->size);
    const int lib = r->cfg.native_candidate, large = t->bytes >= r->cfg.trial_bytes;
    const double within = r->cfg.trial_within * (large ? 2 : 1);
    int n = convoy__select_close(a, &m, within, t->algo + lib, CONVOY_TRIAL_SIDES - lib);
    if (n > 1 && !large && convoy__algo_time(t->algo[lib], a, &m) < r->cfg.trial_min) n = 1;
    t->sides = lib + n;
    t->open = large && !lib;
    if (t->sides < 2)
        t->verdict = CONVOY_TRIAL_SIDE;
    else
        r->cs->trials_open++;
}

int convoy__trial_state(convoy_request r, const convoy__args *a)
{
    r->trial = NULL;
    r->trial_algo = NULL;
    r->trial_cls = CONVOY_TRIAL_MODEL;
    r->trial_final = 1;
    if (!timed(r)) return MPI_SUCCESS;
    convoy__cstate *cs = r->cs;
    const int64_t bytes = convoy__args_bytes(a);
    const uint64_t vh = vector_hash(a);
    if (!cs->trial && !(cs->trial = calloc(CONVOY_TRIALS, sizeof *cs->trial)))
        return MPI_ERR_NO_MEM;
    convoy__trial *t = find(cs, a, bytes, vh);
    if (!t && cs->ntrials < CONVOY_TRIALS) {
        t = &cs->trial[cs->ntrials++];
        *t = (convoy__trial){.coll = a->coll, .bytes = bytes, .vhash = vh};
        open_sides(r, a, t);
    }
    if (!t) return MPI_SUCCESS;
    const int side = t->verdict ? t->verdict - CONVOY_TRIAL_SIDE : next_side(t);
    r->trial_cls = CONVOY_TRIAL_SIDE + side;
    r->trial_algo = t->algo[side];
    if (t->verdict) return MPI_SUCCESS;
    r->trial = t;
    r->trial_final = 0;
    return MPI_SUCCESS;
}

static int cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double median(const double *v)
{
    double s[CONVOY_TRIAL_CALLS];
    for (int i = 0; i < CONVOY_TRIAL_CALLS; i++)
        s[i] = v[i];
    qsort(s, CONVOY_TRIAL_CALLS, sizeof *s, cmp_double);
    return (s[(CONVOY_TRIAL_CALLS - 1) / 2] + s[CONVOY_TRIAL_CALLS / 2]) / 2;
}

static const char *side_name(const convoy__trial *t, int s)
{
    return t->algo[s] ? t->algo[s]->name : "the MPI library";
}

int convoy__trial_note(convoy_request r, double dt)
{
    convoy__trial *t = r->trial;
    const int side = next_side(t), cycle = t->calls / t->sides;
    /* (The first call of each side, which builds and touches everything, is not timed.) */
    if (cycle >= 1) t->t[side][cycle - 1] = dt;
    if (++t->calls < (1 + CONVOY_TRIAL_CALLS) * t->sides) return MPI_SUCCESS;
    /* Each call's time is its slowest rank's: the call is over when that rank is. */
    double slowest[CONVOY_TRIAL_SIDES][CONVOY_TRIAL_CALLS] = {{0}};
    const int rc = PMPI_Allreduce(t->t, slowest, t->sides * CONVOY_TRIAL_CALLS, MPI_DOUBLE, MPI_MAX,
                                  r->cs->priv);
    /* Each other side against side 0, cycle by cycle (the host's drift cancels), by the
     * median ratio; the lowest of those beyond the margin and the noise. */
    double q[CONVOY_TRIAL_SIDES] = {0};
    int wins[CONVOY_TRIAL_SIDES] = {0}, best = 0;
    for (int s = 1; s < t->sides; s++) {
        double ratio[CONVOY_TRIAL_CALLS];
        for (int i = 0; i < CONVOY_TRIAL_CALLS; i++) {
            ratio[i] = slowest[0][i] > 0 ? slowest[s][i] / slowest[0][i] : 1;
            wins[s] += ratio[i] < 1;
        }
        q[s] = median(ratio);
        const int beats =
            t->open ? q[s] < 1
                    : q[s] < CONVOY_NATIVE_MARGIN && 4 * wins[s] >= 3 * CONVOY_TRIAL_CALLS;
        if (!rc && beats && (!best || q[s] < q[best])) best = s;
    }
    t->verdict = CONVOY_TRIAL_SIDE + best;
    r->cs->trials_open--;
    if (r->cfg.verbose && r->cs->topo.rank == 0) {
        fprintf(stderr, "convoy: MPI_%s of %lld bytes, timed %d times each: %s %.2f us", r->what,
                (long long)t->bytes, CONVOY_TRIAL_CALLS, side_name(t, 0), 1e6 * median(slowest[0]));
        for (int s = 1; s < t->sides; s++)
            fprintf(stderr, ", %s %.2f us (%.3f, faster in %d)", side_name(t, s),
                    1e6 * median(slowest[s]), q[s], wins[s]);
        fprintf(stderr,
                " (medians of the calls' slowest ranks; of the ratios to the first, and how "
                "often faster): %s from now on\n",
                side_name(t, best));
    }
    return rc;
}
