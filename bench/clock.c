/* Clock-offset estimation: see clock.h. */
#include "clock.h"

int bench_clock_offset(const double *sent, const double *remote, const double *recvd, int n,
                       double *offset, double *rtt)
{
    int best = -1;
    for (int k = 0; k < n; k++)
        if (best < 0 || recvd[k] - sent[k] < recvd[best] - sent[best]) best = k;
    if (best < 0) return -1;
    *rtt = recvd[best] - sent[best];
    *offset = remote[best] - 0.5 * (sent[best] + recvd[best]);
    return best;
}
