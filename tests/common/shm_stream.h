/*
 * A test builder: node-local allgatherv streamed through the node segment.
 *
 * It exists to exercise the segment machinery (notifications in both directions, slot
 * reuse, data much larger than the segment) in the checker and, through
 * convoy__run_schedule, in the MPI tests. It is not an algorithm for users.
 */
#ifndef CONVOY_TEST_SHM_STREAM_H
#define CONVOY_TEST_SHM_STREAM_H

#include "coll/coll.h"

/* Each node process copies its block into its own slots of the segment in chunks and
 * notifies; the other node processes wait for the notification, copy the chunk into
 * their receive buffers and notify "consumed", which lets the writer reuse the slot.
 *
 * Only the node's own blocks are gathered: with one node (the intended use) that is a
 * complete allgatherv, with several nodes the blocks of other nodes are left alone.
 *
 * Parameters (args.params): CONVOY_SEGMENT_BYTES, the segment data bytes to use (default
 * a->shm_bytes); CONVOY_SHM_STREAM_SLOTS, slots per writer (default 2, at least 2). A
 * chunk holds floor(segment / (node size * slots) / element size) elements, at least one.
 *
 * Flags: flag 0 of a process counts the chunks it has written, flag 1 + w counts the
 * chunks of node process w it has consumed. Returns 0, or CONVOY_ERR_ARG when the
 * segment cannot hold one element per slot. */
int convoy__test_shm_stream(const convoy__args *a, convoy__schedule *s);

#endif
