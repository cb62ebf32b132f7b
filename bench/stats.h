/*
 * Statistics of convoy-bench: the median of repetition times, its distribution-free 95%
 * confidence interval (order statistics, binomial method) and the stop rule built on it.
 *
 * Pure C without MPI, so the unit tests check it on hand-derived samples.
 */
#ifndef CONVOY_BENCH_STATS_H
#define CONVOY_BENCH_STATS_H

#include <stdint.h>

/* A growable array of repetition times (seconds). */
typedef struct bench_samples {
    double *v;
    int64_t n, cap;
} bench_samples;

/* Returns 0, or -1 when out of memory. */
int bench_samples_add(bench_samples *s, double x);
void bench_samples_free(bench_samples *s);

void bench_sort(double *x, int64_t n);
/* Median of n >= 1 sorted values (mean of the middle two when n is even). */
double bench_median_sorted(const double *x, int64_t n);

/*
 * The 95% confidence interval of the median by order statistics: with B ~ Binomial(n, 1/2)
 * the number of samples below the true median, [x_(j), x_(n+1-j)] (1-based) covers it with
 * probability 1 - 2 P(B <= j-1). Returns the largest j >= 1 with P(B <= j-1) <= 0.025, or 0
 * when even [x_(1), x_(n)] covers less than 95% (n <= 5). Exact for n <= 1000, the normal
 * approximation with continuity correction above (it differs from the exact rank by at most
 * one there, and the exact sum would cost O(n) per call).
 */
int64_t bench_ci_rank(int64_t n);
int64_t bench_ci_rank_exact(int64_t n);
int64_t bench_ci_rank_normal(int64_t n);

typedef struct bench_summary {
    int64_t n;
    double median, min, max;
    double ci_lo, ci_hi; /* NaN when n is too small for a 95% interval */
    int ci_ok;           /* the interval lies within +-rel of the median */
} bench_summary;

/* Sorts x[0..n) in place and summarises it; rel is the stop rule's relative half-width
 * (0.05: the interval must lie within 5% of the median on both sides). n may be 0. */
void bench_summarize(double *x, int64_t n, double rel, bench_summary *out);

/* The convergence half of the stop rule: at least min_n samples and a 95% interval of the
 * median within +-rel of it. Sorts x in place. */
int bench_converged(double *x, int64_t n, int64_t min_n, double rel);

#endif
