/* Offline predictor: every bcast candidate's predicted time on N x n, count ints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/lane.h"
#include "select/select.h"
int main(int argc, char **argv)
{
    if (argc < 10) { fprintf(stderr, "usage: N n count alpha_us beta_ns anode_us bnode_ns bnic_ns overhead_us [o_us o_ns]\n"); return 2; }
    int N = atoi(argv[1]), n = atoi(argv[2]);
    long long count = atoll(argv[3]);
    convoy__machine m = {0};
    m.alpha = atof(argv[4]) * 1e-6; m.beta = atof(argv[5]) * 1e-9;
    m.alpha_node = atof(argv[6]) * 1e-6; m.beta_node = atof(argv[7]) * 1e-9;
    m.beta_nic = atof(argv[8]) * 1e-9; m.overhead = atof(argv[9]) * 1e-6; m.gamma = 3e-10;
    if (argc > 15) {
        m.gap = atof(argv[10]) * 1e-6; m.gap_b = atof(argv[11]) * 1e-9;
        m.gap_node = atof(argv[12]) * 1e-6; m.gap_node_b = atof(argv[13]) * 1e-9;
        m.xgap_node = atof(argv[14]) * 1e-6; m.xgap_node_b = atof(argv[15]) * 1e-9;
    }
    const char *collname = getenv("COLL") ? getenv("COLL") : "bcast";
    int coll = convoy__coll_parse(collname);
    int P = N * n;
    int64_t *ids = malloc(P * sizeof *ids);
    for (int r = 0; r < P; r++) ids[r] = r / n;
    convoy__topo t;
    int root = getenv("ROOT") ? atoi(getenv("ROOT")) : 0;
    if (convoy__topo_from_ids(&t, P, 0, ids)) return 1;
    const convoy__dtype it = {.size = 4, .extent = 4, .true_lb = 0, .true_extent = 4};
    convoy__args a = {.coll = coll, .topo = &t, .count = count, .stype = it, .rtype = it,
                      .commutative = 1, .shm_bytes = 65536, .machine = m, .root = root};
    int64_t *rcs = malloc(2 * P * sizeof *rcs);
    for (int i = 0; i < P; i++) rcs[i] = count, rcs[P + i] = i * count;
    if (coll != CONVOY_COLL_BCAST) { a.rcounts = rcs; a.displs = rcs + P; }
    const convoy__algo *best = convoy__select(&a, &m, NULL, 0);
    printf("choice %s:", best ? best->name : "none");
    for (int i = 0; i < convoy__nalgos; i++) {
        const convoy__algo *c = &convoy__algos[i];
        if (convoy__algo_serves(c, a.coll) && c->cost && (!c->applicable || c->applicable(&a)))
            printf(" [%s %.1f]", c->name, 1e6 * convoy__algo_time(c, &a, &m));
    }
    printf("\n");
    if (coll == CONVOY_COLL_BCAST) {
        convoy__args b = a; b.machine = m;
        const convoy__machine node = convoy__lane_level(&m, 0);
        const int64_t per = (a.count + n - 1) / n;
        printf("  lane phases: scatter %.2f lanes %.2f node allgatherv %.2f\n",
               1e6 * convoy__posted_cost(&node, n - 1, (double)a.count * 4 / n),
               1e6 * convoy__lane_cost_equal(&b, CONVOY_COLL_BCAST, N, n, per),
               1e6 * convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, n, 0, per,
                                   CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE));
        printf("  hier phases: lane %.2f node tree %.2f\n",
               1e6 * convoy__lane_cost_equal(&b, CONVOY_COLL_BCAST, N, 1, a.count),
               1e6 * convoy__binomial_bcast_cost(&node, n, (double)a.count * 4));
    }
    const convoy__algo *kp = convoy__algo_find(coll, "klane_pipeline");
    if (kp && kp->explain) { char line[256]; kp->explain(&a, line, sizeof line); printf("  klane: %s\n", line); }
    return 0;
}
