/*
 * A minimal harness for the unit tests: EXPECT records a failure with its line and goes
 * on, so one run shows every broken expectation; unit_done() prints "N passed, M failed"
 * as the last line and gives the exit status.
 */
#ifndef CONVOY_UNIT_H
#define CONVOY_UNIT_H

#include <stdio.h>

static long unit_passed, unit_failed;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            unit_passed++;                                                                         \
        } else {                                                                                   \
            unit_failed++;                                                                         \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static int unit_done(void)
{
    printf("%ld passed, %ld failed\n", unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}

#endif
