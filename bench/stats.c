/*
 * Statistics of convoy-bench: see stats.h.
 *
 * The median and its order-statistics interval are used rather than the mean and a
 * t-interval because repetition times of collectives are skewed with a long right tail
 * (interrupts, a descheduled process on an oversubscribed node); the median ignores the
 * tail and the binomial interval assumes nothing about the distribution.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

int bench_samples_add(bench_samples *s, double x)
{
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 64;
        double *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

void bench_samples_free(bench_samples *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *x, int64_t n)
{
    if (n > 1) qsort(x, (size_t)n, sizeof *x, cmp_double);
}

double bench_median_sorted(const double *x, int64_t n)
{
    if (n <= 0) return NAN;
    if (n % 2) return x[n / 2];
    return 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int64_t bench_ci_rank_exact(int64_t n)
{
    /* Accumulate P(B <= i) term by term in log space, so that 2^-n does not underflow
     * to zero before the binomial coefficient has grown. */
    const double tail = 0.025;
    double lfact_n = lgamma((double)n + 1.0), ln2n = (double)n * log(2.0), cdf = 0.0;
    int64_t j = 0;
    for (int64_t i = 0; i <= n / 2; i++) {
        cdf += exp(lfact_n - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0) - ln2n);
        if (cdf > tail) break;
        j = i + 1;
    }
    return j;
}

int64_t bench_ci_rank_normal(int64_t n)
{
    /* P(B <= j-1) ~ Phi((j - 1/2 - n/2) / (sqrt(n)/2)) <= 0.025 gives
     * j <= n/2 + 1/2 - 1.96 sqrt(n)/2. */
    double j = floor((double)n / 2.0 + 0.5 - 0.98 * sqrt((double)n));
    return j < 1.0 ? 0 : (int64_t)j;
}

int64_t bench_ci_rank(int64_t n)
{
    return n <= 1000 ? bench_ci_rank_exact(n) : bench_ci_rank_normal(n);
}

void bench_summarize(double *x, int64_t n, double rel, bench_summary *out)
{
    out->n = n;
    out->median = out->min = out->max = out->ci_lo = out->ci_hi = NAN;
    out->ci_ok = 0;
    if (n <= 0) return;
    bench_sort(x, n);
    out->min = x[0];
    out->max = x[n - 1];
    out->median = bench_median_sorted(x, n);
    int64_t j = bench_ci_rank(n);
    if (j > 0) {
        out->ci_lo = x[j - 1];
        out->ci_hi = x[n - j];
        out->ci_ok = out->median - out->ci_lo <= rel * out->median &&
                     out->ci_hi - out->median <= rel * out->median;
    }
}

int bench_converged(double *x, int64_t n, int64_t min_n, double rel)
{
    if (n < min_n) return 0;
    bench_summary s;
    bench_summarize(x, n, rel, &s);
    return s.ci_ok;
}
