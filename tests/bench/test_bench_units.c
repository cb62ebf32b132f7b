/*
 * Unit tests of convoy-bench's pure parts (no MPI): statistics, argument parsing, the
 * clock-offset estimate of --sync window, the six distributions of papers/002 §3 as
 * the benchmark uses them (their totals m and shapes), and the single-copy bound. Expected values
 * are derived by hand in the comments, never computed by the code under test.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"
#include "check/dist.h"
#include "clock.h"
#include "parse.h"
#include "stats.h"

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b) CHECK(fabs((a) - (b)) <= 1e-12 * (1.0 + fabs(b)))

static void test_median(void)
{
    double odd[] = {3, 1, 2};
    bench_sort(odd, 3);
    CHECK(odd[0] == 1 && odd[1] == 2 && odd[2] == 3);
    CHECK_NEAR(bench_median_sorted(odd, 3), 2.0);
    double even[] = {4, 1, 3, 2};
    bench_sort(even, 4);
    CHECK_NEAR(bench_median_sorted(even, 4), 2.5);
    double one[] = {7};
    CHECK_NEAR(bench_median_sorted(one, 1), 7.0);
    CHECK(isnan(bench_median_sorted(one, 0)));
}

static void test_ci_ranks(void)
{
    /* B ~ Binomial(n, 1/2); j is the largest with P(B <= j-1) <= 0.025.
     * n = 5: P(B <= 0) = 1/32 = 0.03125 > 0.025, so no 95% interval exists: j = 0.
     * n = 6: P(B <= 0) = 1/64 = 0.0156, P(B <= 1) = 7/64 = 0.109: j = 1 -> [x1, x6].
     * n = 10: P(B <= 1) = 11/1024 = 0.0107, P(B <= 2) = 56/1024 = 0.0547: j = 2 -> [x2, x9].
     * n = 20: P(B <= 5) = 21700/1048576 = 0.0207, P(B <= 6) = 60460/1048576 = 0.0577:
     *         j = 6 -> [x6, x15] (the textbook table's ranks for n = 20). */
    CHECK(bench_ci_rank(1) == 0);
    CHECK(bench_ci_rank(5) == 0);
    CHECK(bench_ci_rank(6) == 1);
    CHECK(bench_ci_rank(10) == 2);
    CHECK(bench_ci_rank(20) == 6);
    /* n = 100: the table value is j = 40 (P(B <= 39) = 0.0176, P(B <= 40) = 0.0284). */
    CHECK(bench_ci_rank(100) == 40);
    /* The normal approximation used above n = 1000 agrees with the exact rank within one
     * where both can be computed. */
    for (int64_t n = 30; n <= 1000; n += 7) {
        int64_t e = bench_ci_rank_exact(n), a = bench_ci_rank_normal(n);
        CHECK(e - a <= 1 && a - e <= 1);
    }
    /* Large n stays sane and symmetric-ish: j close to n/2 - sqrt(n). */
    int64_t j = bench_ci_rank(1000000);
    CHECK(j > 499000 && j < 499100);
}

static void test_summary(void)
{
    /* 1..10 shuffled: median 5.5, CI [x2, x9] = [2, 9], min 1, max 10. */
    double x[] = {7, 3, 10, 1, 5, 9, 2, 8, 6, 4};
    bench_summary s;
    bench_summarize(x, 10, 0.05, &s);
    CHECK(s.n == 10);
    CHECK_NEAR(s.median, 5.5);
    CHECK_NEAR(s.min, 1.0);
    CHECK_NEAR(s.max, 10.0);
    CHECK_NEAR(s.ci_lo, 2.0);
    CHECK_NEAR(s.ci_hi, 9.0);
    CHECK(!s.ci_ok); /* 5.5 - 2 = 3.5 is far more than 5% of 5.5 */

    /* Ten samples at 100 with two outliers at the ends: sorted
     * 50, 100 x 8, 400 -> median 100, CI [x2, x9] = [100, 100]: within 5%. */
    double y[] = {100, 400, 100, 100, 50, 100, 100, 100, 100, 100};
    bench_summarize(y, 10, 0.05, &s);
    CHECK_NEAR(s.median, 100.0);
    CHECK_NEAR(s.ci_lo, 100.0);
    CHECK_NEAR(s.ci_hi, 100.0);
    CHECK(s.ci_ok);

    /* Boundary: median 100, CI exactly [95, 105] is within +-5%; [94, 105] is not.
     * Sorted: 90, 95, 100 x 6, 105, 110 (n = 10, j = 2: x2 = 95, x9 = 105). */
    double z[] = {110, 100, 95, 100, 100, 90, 100, 105, 100, 100};
    bench_summarize(z, 10, 0.05, &s);
    CHECK_NEAR(s.ci_lo, 95.0);
    CHECK_NEAR(s.ci_hi, 105.0);
    CHECK(s.ci_ok);
    double w[] = {110, 100, 94, 100, 100, 90, 100, 105, 100, 100};
    bench_summarize(w, 10, 0.05, &s);
    CHECK(!s.ci_ok);

    /* Five samples have no 95% interval: never converged, whatever their spread. */
    double v[] = {1, 1, 1, 1, 1};
    bench_summarize(v, 5, 0.05, &s);
    CHECK(isnan(s.ci_lo) && isnan(s.ci_hi) && !s.ci_ok);
    CHECK(!bench_converged(v, 5, 1, 0.05));

    /* The minimum sample count of the stop rule. */
    double u[20];
    for (int i = 0; i < 20; i++)
        u[i] = 42.0;
    CHECK(!bench_converged(u, 9, 10, 0.05));
    CHECK(bench_converged(u, 10, 10, 0.05));

    /* No samples. */
    bench_summarize(NULL, 0, 0.05, &s);
    CHECK(s.n == 0 && isnan(s.median) && !s.ci_ok);

    /* The growable array. */
    bench_samples smp = {0};
    for (int i = 0; i < 1000; i++)
        CHECK(bench_samples_add(&smp, i) == 0);
    CHECK(smp.n == 1000 && smp.v[999] == 999.0);
    bench_samples_free(&smp);
    CHECK(smp.n == 0 && smp.v == NULL);
}

static int counts_are(const char *s, const int64_t *want, int nwant)
{
    int64_t *c;
    int n;
    if (bench_parse_counts(s, &c, &n)) return 0;
    int ok = n == nwant;
    for (int i = 0; ok && i < n; i++)
        ok = c[i] == want[i];
    free(c);
    return ok;
}

static void test_counts(void)
{
    int64_t v;
    CHECK(bench_parse_count("0", &v) == 0 && v == 0);
    CHECK(bench_parse_count("255", &v) == 0 && v == 255);
    CHECK(bench_parse_count("1K", &v) == 0 && v == 1024);
    CHECK(bench_parse_count("16k", &v) == 0 && v == 16384);
    CHECK(bench_parse_count("1M", &v) == 0 && v == 1048576);
    CHECK(bench_parse_count("64M", &v) == 0 && v == 67108864);
    CHECK(bench_parse_count("2G", &v) == 0 && v == 2147483648LL);
    CHECK(bench_parse_count("", &v) != 0);
    CHECK(bench_parse_count("K", &v) != 0);
    CHECK(bench_parse_count("-1", &v) != 0);
    CHECK(bench_parse_count("1X", &v) != 0);
    CHECK(bench_parse_count("1KK", &v) != 0);
    CHECK(bench_parse_count("1.5K", &v) != 0);
    CHECK(bench_parse_count("99999999999999999999", &v) != 0);
    CHECK(bench_parse_count("9999999999999G", &v) != 0);

    CHECK(counts_are("1K,16K,1M", (const int64_t[]){1024, 16384, 1048576}, 3));
    CHECK(counts_are("1,255,10000,1000000", (const int64_t[]){1, 255, 10000, 1000000}, 4));
    /* Ranges in powers of 4 by default, of F with :F; HI included when on the way. */
    CHECK(counts_are("1K:64K", (const int64_t[]){1024, 4096, 16384, 65536}, 4));
    CHECK(counts_are("1K:32K", (const int64_t[]){1024, 4096, 16384}, 3));
    CHECK(counts_are("1:8:2", (const int64_t[]){1, 2, 4, 8}, 4));
    CHECK(counts_are("1K:64M",
                     (const int64_t[]){1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20,
                                       1 << 22, 1 << 24, 1 << 26},
                     9));
    CHECK(counts_are("5:5", (const int64_t[]){5}, 1));
    CHECK(counts_are("0,1:4", (const int64_t[]){0, 1, 4}, 3));
    /* A range near the top must not overflow into an endless loop. */
    CHECK(counts_are("1G:4G:2", (const int64_t[]){1LL << 30, 1LL << 31, 1LL << 32}, 3));

    int64_t *c;
    int n;
    const char *bad[] = {"",    ",",   "1K,",   ",1K",   "1K:",   ":1K",
                         "0:8", "8:1", "1:8:1", "1:8:x", "1K;2K", "1K:2K:2:2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = bench_parse_counts(bad[i], &c, &n);
        if (rc == 0) fprintf(stderr, "accepted bad count list '%s'\n", bad[i]);
        CHECK(rc != 0);
        CHECK(c == NULL && n == 0);
    }

    char buf[32];
    bench_format_count(16384, buf, sizeof buf);
    CHECK(strcmp(buf, "16K") == 0);
    bench_format_count(1048576, buf, sizeof buf);
    CHECK(strcmp(buf, "1M") == 0);
    bench_format_count(1000, buf, sizeof buf);
    CHECK(strcmp(buf, "1000") == 0);
    bench_format_count(0, buf, sizeof buf);
    CHECK(strcmp(buf, "0") == 0);
    bench_format_count(3072, buf, sizeof buf);
    CHECK(strcmp(buf, "3K") == 0);
}

static void test_split(void)
{
    char **v;
    int n;
    CHECK(bench_split("a,bb,ccc", &v, &n) == 0 && n == 3);
    if (n == 3) CHECK(!strcmp(v[0], "a") && !strcmp(v[1], "bb") && !strcmp(v[2], "ccc"));
    bench_strv_free(v, n);
    CHECK(bench_split("-", &v, &n) == 0 && n == 1 && !strcmp(v[0], "-"));
    bench_strv_free(v, n);
    CHECK(bench_split("a,,b", &v, &n) != 0);
    CHECK(bench_split("", &v, &n) != 0);
}

/* papers/002 §3: with base count c over p processes,
 *   regular    m_i = c                       m = pc
 *   broadcast  m_0 = c, others 0             m = c
 *   spike      m_0 = c/2, m_i = c/(2(p-1))   m = c
 *   halffull   m_{2k} = 2c, m_{2k+1} = 0     m = pc (p even)
 *   decreasing m_i = 2c(p-1-i)/(p-1)         m = pc
 *   geometric  m_{i-1+j} = cp/(i log p), i = 1, 2, 4, ..., j < i
 * (integer division as in the paper, so totals are exact when c divides evenly). */
static int64_t dist_sum(const char *name, int p, int64_t c, int64_t *m)
{
    CHECK(convoy__dist_counts(name, p, c, 1, m) == 0);
    int64_t s = 0;
    for (int i = 0; i < p; i++)
        s += m[i];
    return s;
}

static void test_distributions(void)
{
    int64_t m[64];
    const int ps[] = {2, 3, 4, 5, 8, 16, 33, 64};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        int p = ps[k];
        /* c a multiple of 2(p-1) and of p-1: every quotient below is exact. */
        int64_t c = 2 * (int64_t)(p - 1) * 6;
        CHECK(dist_sum("regular", p, c, m) == p * c);
        for (int i = 0; i < p; i++)
            CHECK(m[i] == c);
        CHECK(dist_sum("broadcast", p, c, m) == c);
        CHECK(m[0] == c);
        for (int i = 1; i < p; i++)
            CHECK(m[i] == 0);
        CHECK(dist_sum("spike", p, c, m) == c);
        CHECK(m[0] == c / 2);
        for (int i = 1; i < p; i++)
            CHECK(m[i] == c / (2 * (p - 1)));
        /* halffull: 2c on even ranks, so m = pc for even p and (p+1)c for odd p. */
        CHECK(dist_sum("halffull", p, c, m) == (p % 2 ? p + 1 : p) * c);
        for (int i = 0; i < p; i++)
            CHECK(m[i] == (i % 2 ? 0 : 2 * c));
        CHECK(dist_sum("decreasing", p, c, m) == p * c);
        CHECK(m[0] == 2 * c && m[p - 1] == 0);
        for (int i = 1; i < p; i++)
            CHECK(m[i] < m[i - 1]);
        /* Not exact for other c: never more than pc, less by under p. */
        int64_t s = dist_sum("decreasing", p, 1000, m);
        CHECK(s <= p * 1000 && s > p * 1000 - p);
        /* geometric: non-increasing, constant within each group i-1 .. 2i-2. */
        dist_sum("geometric", p, c, m);
        for (int i = 1; i < p; i++)
            CHECK(m[i] <= m[i - 1]);
        for (int i = 1; 2 * i - 2 < p; i *= 2)
            for (int j = i - 1; j <= 2 * i - 2 && j < p; j++)
                CHECK(m[j] == m[i - 1]);
    }
    /* geometric for p = 2^k: groups i = 1 .. p/2 are full, each holding cp/log p in all,
     * and the last (i = p) holds only rank p-1 with c/log p: m = pc + c/log p.
     * p = 8, c = 24: 64 | 32 32 | 16 16 16 16 | 8, m = 200 = 8*24 + 24/3. */
    CHECK(dist_sum("geometric", 8, 24, m) == 200);
    CHECK(m[0] == 64 && m[1] == 32 && m[2] == 32 && m[3] == 16 && m[6] == 16 && m[7] == 8);
    CHECK(dist_sum("geometric", 16, 48, m) == 16 * 48 + 48 / 4);
    /* p = 1: every distribution gives the single process the base count. */
    const char *six[] = {"regular", "broadcast", "spike", "halffull", "decreasing", "geometric"};
    for (int d = 0; d < 6; d++)
        CHECK(dist_sum(six[d], 1, 77, m) == 77);
    /* c = 0: all empty. */
    for (int d = 0; d < 6; d++)
        CHECK(dist_sum(six[d], 8, 0, m) == 0);
    /* Unknown names and bad arguments are refused. */
    CHECK(convoy__dist_counts("uniform", 4, 8, 1, m) != 0);
    CHECK(convoy__dist_counts("regular", 0, 8, 1, m) != 0);
    CHECK(convoy__dist_counts("regular", 4, -1, 1, m) != 0);
}

/* The single-copy bound at 1 byte per ns, in ns (bench_bound_time's seconds x 1e9). */
static double bound_ns(const char *coll, int p, int64_t count, const int *rc, int root,
                       const int *host_of, const int *cores_of)
{
    return 1e9 * bench_bound_time(coll, p, 4, count, rc, root, host_of, cores_of, 1e9);
}

static void test_bound(void)
{
    const int one_host[4] = {0, 0, 0, 0}, two_hosts[4] = {0, 0, 2, 2}, cores2[4] = {2, 2, 2, 2};
    const int cores1[4] = {1, 1, 1, 1};
    /* Allgatherv of 8 ints on rank 0 alone (the broadcast distribution), 4 processes on
     * one host of 2 cores: ranks 1-3 receive 32 B each, 96 B on 2 cores: 48 ns (not the
     * neediest's 32 B times 4 processes over 2 cores, 64). */
    const int bcast[4] = {8, 0, 0, 0}, regular[4] = {2, 2, 2, 2};
    CHECK_NEAR(bound_ns("allgatherv", 4, 8, bcast, -1, one_host, cores2), 48.0);
    /* Regular, 2 ints each: every rank receives 24 B, 96 B on 2 cores: 48 ns. */
    CHECK_NEAR(bound_ns("allgatherv", 4, 2, regular, -1, one_host, cores2), 48.0);
    /* Two hosts of 2 cores (ranks 0-1, 2-3): host 0 receives 32 B (rank 1), host 2 64 B
     * on 2 cores (32 ns); the neediest process's 32 B at one core take as long: 32 ns. */
    CHECK_NEAR(bound_ns("allgatherv", 4, 8, bcast, -1, two_hosts, cores2), 32.0);
    /* One core: the host's 96 B at 1 B/ns. */
    CHECK_NEAR(bound_ns("allgatherv", 4, 8, bcast, -1, one_host, cores1), 96.0);
    /* Allreduce, Allgather and Alltoall of 10 ints, one host of 2 cores: each rank
     * receives 40 B, 3 x 40 and 3 x 40: 4 x 40 / 2 = 80 ns, 4 x 120 / 2 = 240 ns. */
    CHECK_NEAR(bound_ns("allreduce", 4, 10, NULL, -1, one_host, cores2), 80.0);
    CHECK_NEAR(bound_ns("allgather", 4, 10, NULL, -1, one_host, cores2), 240.0);
    CHECK_NEAR(bound_ns("alltoall", 4, 10, NULL, -1, one_host, cores2), 240.0);
    /* Bcast of 10 ints: the three non-roots receive 40 B each, 120 B on 2 cores: 60 ns
     * whichever the root. Gather: the root receives 120 B, alone: 120 ns. Reduce: the
     * root's 40 B. Scan: ranks 1-3, 40 B each: 60 ns. */
    CHECK_NEAR(bound_ns("bcast", 4, 10, NULL, -1, one_host, cores2), 60.0);
    CHECK_NEAR(bound_ns("bcast", 4, 10, NULL, 2, one_host, cores2), 60.0);
    CHECK_NEAR(bound_ns("gather", 4, 10, NULL, -1, one_host, cores2), 120.0);
    CHECK_NEAR(bound_ns("reduce", 4, 10, NULL, 1, one_host, cores2), 40.0);
    CHECK_NEAR(bound_ns("scan", 4, 10, NULL, -1, one_host, cores2), 60.0);
    /* Bcast on two hosts with the root rotating: the least over the roots. Root on host 0:
     * host 0 receives 40 B, host 2 80 B on 2 cores, 40 ns; alike for a root on host 2. */
    CHECK_NEAR(bound_ns("bcast", 4, 10, NULL, -1, two_hosts, cores2), 40.0);
    /* Scatterv of {8, 0, 0, 0} from root 0: nobody else receives anything; from root 1,
     * rank 0 receives 32 B alone: 32 ns; rotating: the least, 0. */
    CHECK_NEAR(bound_ns("scatterv", 4, 8, bcast, 0, one_host, cores2), 0.0);
    CHECK_NEAR(bound_ns("scatterv", 4, 8, bcast, 1, one_host, cores2), 32.0);
    CHECK_NEAR(bound_ns("scatterv", 4, 8, bcast, -1, one_host, cores2), 0.0);
    /* Nothing from others: one process, a barrier. */
    CHECK_NEAR(bound_ns("allreduce", 1, 10, NULL, -1, one_host, cores2), 0.0);
    CHECK_NEAR(bound_ns("barrier", 4, 0, NULL, -1, one_host, cores2), 0.0);
}

static void test_clock_offset(void)
{
    /* The reference's clock runs 5 s ahead. Ping k leaves at 10k, travels d_out, the
     * reference stamps, the reply travels d_back. The estimate from a ping is
     * remote - (sent + recvd)/2 = 5 + (d_out - d_back)/2; the shortest round trip wins. */
    double d_out[] = {3e-3, 1e-6, 2e-5, 4e-4};
    double d_back[] = {1e-3, 3e-6, 2e-5, 1e-4};
    double sent[4], remote[4], recvd[4], off = 0, rtt = 0;
    for (int k = 0; k < 4; k++) {
        sent[k] = 10.0 * k;
        remote[k] = sent[k] + d_out[k] + 5.0;
        recvd[k] = sent[k] + d_out[k] + d_back[k];
    }
    /* Ping 1 has the shortest round trip, 4 us: offset 5 + (1 - 3)/2 us = 5 - 1 us. */
    CHECK(bench_clock_offset(sent, remote, recvd, 4, &off, &rtt) == 1);
    CHECK(fabs(rtt - 4e-6) < 1e-9);
    CHECK(fabs(off - (5.0 - 1e-6)) < 1e-9);
    /* The error is at most half the round trip. */
    CHECK(fabs(off - 5.0) <= rtt / 2);
    CHECK(bench_clock_offset(sent, remote, recvd, 0, &off, &rtt) == -1);
}

int main(void)
{
    test_median();
    test_ci_ranks();
    test_summary();
    test_counts();
    test_split();
    test_distributions();
    test_bound();
    test_clock_offset();
    if (failures) {
        fprintf(stderr, "test_bench_units: %d checks failed\n", failures);
        return 1;
    }
    printf("test_bench_units: all checks passed\n");
    return 0;
}
