/*
 * The registry of algorithms and the default choice between them.
 *
 * One line per algorithm in registry.c: its collective, name, builder, applicability
 * predicate, cost model and the parameters it reads. Selection picks the applicable
 * algorithm with the lowest predicted time under the machine parameters, unless
 * CONVOY_<COLL>_ALGO names one.
 */
#ifndef CONVOY_SELECT_H
#define CONVOY_SELECT_H

#include "coll/coll.h"

enum {
    CONVOY_ALGO_REPRODUCIBLE = 1,   /* every rank gets bitwise identical results */
    CONVOY_ALGO_NONCOMMUTATIVE = 2, /* keeps rank order: valid for non-commutative ops */
    CONVOY_ALGO_BASELINE = 4,       /* a flat algorithm MPI libraries run themselves: the
                                       model of the native collective (convoy__native_cost) */
    CONVOY_ALGO_FLAT = 8            /* flat (topology-unaware) but no baseline; baselines are
                                       flat too (convoy__algo_cost) */
};

typedef struct convoy__algo {
    int coll;         /* enum convoy__coll */
    int also;         /* a second collective whose table lists it (Allgather for an allgatherv
                         algorithm, the block form for a reduce_scatter one), 0: none */
    const char *name; /* as in CONVOY_<COLL>_ALGO=name and convoy-check --algo */
    convoy__builder build;
    int (*applicable)(const convoy__args *a); /* NULL: always */
    double (*cost)(const convoy__args *a, const convoy__machine *m);
    const char *params; /* parameter names it reads, space separated, or NULL */
    unsigned props;
    /* NULL, or a line on how the builder chose its parameters (CONVOY_VERBOSE=1). */
    void (*explain)(const convoy__args *a, char *buf, size_t len);
} convoy__algo;

extern const convoy__algo convoy__algos[];
extern const int convoy__nalgos;

const char *convoy__coll_name(int coll);
int convoy__coll_parse(const char *name);
const convoy__algo *convoy__algo_find(int coll, const char *name);
/* Whether al is in coll's table (its own collective, or the one it is also listed under). */
int convoy__algo_serves(const convoy__algo *al, int coll);

/* Built-in machine parameters (the measured ones come from src/api/machine.c). */
void convoy__machine_builtin(convoy__machine *m);

/* Chooses the algorithm for these arguments. forced: a name (from the environment or a
 * tool), or NULL. reproducible: only algorithms that give every rank bitwise identical
 * results (CONVOY_REPRODUCIBLE=1). Returns NULL if a forced name is unknown or not
 * usable, or if no algorithm is (the MPI library's collective then serves the call). */
const convoy__algo *convoy__select(const convoy__args *a, const convoy__machine *m,
                                   const char *forced, int reproducible);

/* The MPI library's collective as a candidate: the best of the applicable baselines
 * (CONVOY_ALGO_BASELINE), which is what MPI libraries run, without Convoy's per-call
 * overhead (m->overhead, added to every Convoy algorithm's cost). < 0: no model (no
 * baseline applies), the native collective is then no candidate. */
double convoy__native_cost(const convoy__args *a, const convoy__machine *m);
/* Convoy's candidates for the call (not reproducible), best first as the model ranks them:
 * its choice (convoy__select's) and every other usable algorithm predicted within `within`
 * times its time, up to max (at most CONVOY_CLOSE_MAX) of them into out; returns how many
 * (0: none applies). The trial (src/api/trial.c) times them. */
enum { CONVOY_CLOSE_MAX = 8 };
int convoy__select_close(const convoy__args *a, const convoy__machine *m, double within,
                         const convoy__algo **out, int max);
/* How much faster than the MPI library's collective Convoy's must be (predicted, or timed
 * by the trial, src/api/trial.c) to serve a call in its place: a tie goes to the library. */
#define CONVOY_NATIVE_MARGIN 0.9
/* The drop-in's last choice, between al (Convoy's choice) and the MPI library's
 * collective: 1 unless al with Convoy's overhead is predicted below CONVOY_NATIVE_MARGIN of
 * the library's; *tn: the library's prediction (< 0: no model, al stays). */
int convoy__native_preferred(const convoy__algo *al, const convoy__args *a,
                             const convoy__machine *m, double *tn);
/* An algorithm's cost model under m. A flat algorithm's (CONVOY_ALGO_FLAT, _BASELINE)
 * rounds mix messages inside and between nodes, and a round ends with its slowest message:
 * where nodes have several processes, it is costed with the slower level's alpha and beta
 * (its own model speaks of one alpha and beta). Every cost goes through here. */
double convoy__algo_cost(const convoy__algo *al, const convoy__args *a, const convoy__machine *m);
/* An algorithm's predicted time as Convoy runs it: its cost plus m->overhead. */
double convoy__algo_time(const convoy__algo *al, const convoy__args *a, const convoy__machine *m);

#endif
