/*
 * The CONVOY_TUNING_FILE parser: valid files and what their rules match, partial rules
 * (missing ranges match everything), invalid files (each rejected whole, with a message
 * naming the place and the valid values), a missing file. No MPI.
 */
#define _POSIX_C_SOURCE 200809L

#include "select/tuning.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed, passed;

#define CHECK(ok, ...)                                                                             \
    do {                                                                                           \
        if (ok) {                                                                                  \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            fprintf(stderr, "FAIL line %d: ", __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static int parse(const char *text, convoy__tuning *t, char *err)
{
    return convoy__tuning_parse(text, strlen(text), t, err, 512);
}

/* A call: collective, count of 4-byte elements, on `nodes` nodes of `ppn` processes. */
static const char *choice(const convoy__tuning *t, int coll, int64_t count, int nodes, int ppn)
{
    convoy__topo topo = {.size = nodes * ppn, .nnodes = nodes, .max_ppn = ppn};
    convoy__args a = {.coll = coll, .topo = &topo, .count = count};
    a.rtype.size = a.stype.size = 4;
    const convoy__tuning_rule *r = convoy__tuning_find(t, &a);
    return !r ? "model" : r->algo ? r->algo->name : "native";
}

static void valid(void)
{
    const char *text = "{\"convoy_tuning\": 1, \"machine\": {\"alpha\": 1.5e-6},\n"
                       " \"allreduce\": [\n"
                       "  {\"bytes\": [0, 4096], \"nodes\": [1, 8], \"ppn\": 2,\n"
                       "   \"algorithm\": \"dissem\", \"params\": {\"CONVOY_DISSEM_N\": 2}},\n"
                       "  {\"bytes\": [4096, null], \"algorithm\": \"native\"}],\n"
                       " \"barrier\": [{\"algorithm\": \"dissem\"}]}";
    convoy__tuning t;
    char err[512];
    CHECK(parse(text, &t, err) == 0, "valid file rejected: %s", err);
    CHECK(t.n == 3, "3 rules, got %d", t.n);
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLREDUCE, 10, 2, 2), "dissem") == 0, "small, 2x2");
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLREDUCE, 1023, 8, 2), "dissem") == 0, "4092 B");
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLREDUCE, 1024, 2, 2), "native") == 0, "4096 B: hi open");
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLREDUCE, 10, 2, 3), "model") == 0, "ppn 3: no rule");
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLREDUCE, 10, 9, 2), "model") == 0, "9 nodes: no rule");
    CHECK(strcmp(choice(&t, CONVOY_COLL_BARRIER, 0, 5, 7), "dissem") == 0, "barrier: any");
    CHECK(strcmp(choice(&t, CONVOY_COLL_ALLGATHERV, 10, 2, 2), "model") == 0, "no allgatherv");
    CHECK(t.n == 3 && t.rules[0].nparams == 1 && t.rules[0].params[0].value == 2 &&
              strcmp(t.rules[0].params[0].name, "CONVOY_DISSEM_N") == 0,
          "params kept");
    convoy__tuning_free(&t);

    /* Partial: an empty file object and empty rule lists are valid and match nothing. */
    CHECK(parse("{}", &t, err) == 0 && t.n == 0, "{}: %s", err);
    convoy__tuning_free(&t);
    CHECK(parse(" {\"allgatherv\": []} \n", &t, err) == 0 && t.n == 0, "empty list: %s", err);
    convoy__tuning_free(&t);
    CHECK(parse("{\"allgatherv\": [{\"bytes\": 4, \"algorithm\": \"ring\"}]}", &t, err) == 0 &&
              strcmp(choice(&t, CONVOY_COLL_ALLGATHERV, 1, 1, 1), "ring") == 0 &&
              strcmp(choice(&t, CONVOY_COLL_ALLGATHERV, 2, 1, 1), "model") == 0,
          "bytes as one number [4, 5): %s", err);
    convoy__tuning_free(&t);
}

static void invalid(void)
{
    static const struct {
        const char *text, *expect; /* expect: a piece of the message */
    } cases[] = {
        {"", "unexpected end"},
        {"{\"allreduce\": [],}", "trailing comma"},
        {"{\"allreduce\": [] /* c */}", "expected ','"},
        {"{\"allreduce\": [/* c */]}", "unexpected character '/'"},
        {"{'allreduce': []}", "expected a \"key\""},
        {"{\"allreduce\": []} x", "text after"},
        {"[1, 2]", "expected an object"},
        {"{\"alreduce\": []}", "valid: convoy_tuning, machine, comment, allgatherv"},
        {"{\"allreduce\": [{\"algorithm\": \"fast\"}]}", "valid: native, recdbl"},
        {"{\"allreduce\": [{\"bytes\": [0, 10]}]}", "allreduce[0].algorithm: missing"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"size\": 3}]}", "unknown key"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"bytes\": [10, 2]}]}", "hi < lo"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"bytes\": [-1, 2]}]}", "non-negative"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"nodes\": \"2\"}]}", "allreduce[0].nodes"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"params\": {\"CONVOY_DISSEM_N\": 2}}]}",
         "ring does not read"},
        {"{\"allreduce\": [{\"algorithm\": \"dissem\", \"params\": {\"CONVOY_DISSEM_N\": 2.5}}]}",
         "expected an integer"},
        {"{\"allreduce\": [], \"allreduce\": []}", "given twice"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\", \"bytes\": [01, 2]}]}", "leading zero"},
        {"{\"allreduce\": [{\"algorithm\": \"r\\ting\"}]}", "is no allreduce algorithm"},
        {"{\"allreduce\": \"ring\"}", "expected an array"},
        {"{\"allreduce\": [{\"algorithm\": \"ring\"}]", "expected ',' or '}'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        convoy__tuning t = {.n = 99};
        char err[512] = "";
        int rc = parse(cases[i].text, &t, err);
        CHECK(rc != 0 && t.n == 0 && t.rules == NULL, "accepted: %s", cases[i].text);
        CHECK(strstr(err, cases[i].expect) != NULL && strncmp(err, "line ", 5) == 0,
              "%s: message \"%s\" lacks \"%s\"", cases[i].text, err, cases[i].expect);
    }
}

static void files(void)
{
    convoy__tuning t;
    char err[512], path[] = "/tmp/convoy-tuning-test.XXXXXX";
    CHECK(convoy__tuning_load("/nonexistent/convoy.json", &t, err, sizeof err) != 0 && t.n == 0,
          "missing file accepted");
    CHECK(strstr(err, "cannot open") != NULL, "missing file message: %s", err);
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL, "temporary file");
    if (!f) return;
    fputs("{\"reduce_scatter\": [{\"algorithm\": \"rechalving\", \"ppn\": [1, null]}]}\n", f);
    fclose(f);
    CHECK(convoy__tuning_load(path, &t, err, sizeof err) == 0 && t.n == 1, "file: %s", err);
    CHECK(strcmp(choice(&t, CONVOY_COLL_REDUCE_SCATTER, 1 << 20, 3, 64), "rechalving") == 0,
          "rule from a file");
    convoy__tuning_free(&t);
    remove(path);
}

int main(void)
{
    valid();
    invalid();
    files();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
