/*
 * msgtest.h - the msg layer's tests: harness.h (TEST, the runner, the
 * assertions) plus what only they need.
 *
 * Every test must end with as many message handles and data blocks alive
 * as it started with: an after hook checks msg_get_stats() and fails the
 * test otherwise.  ASSERT_DATA compares a message's serialised bytes.
 * A file ends with MSGTEST_MAIN() (HARNESS_MAIN()).
 */
#ifndef UPVM_TESTS_MSGTEST_H
#define UPVM_TESTS_MSGTEST_H

#include "harness.h"
#include "msg/msg.h"

/* The serialised data bytes of b (after the header) must be exactly the
 * n bytes at expect. */
#define ASSERT_DATA(b, expect, n)                                          \
    do {                                                                   \
        unsigned char w_[4096];                                            \
        size_t wl_;                                                        \
        ASSERT_OK(msg_buf_serialize((b), w_, sizeof(w_), &wl_));           \
        ASSERT_EQ(wl_, MSG_WIRE_HDR + (size_t)(n));                        \
        ASSERT_MEM_EQ(w_ + MSG_WIRE_HDR, (expect), (size_t)(n));           \
    } while (0)

static msg_stats_t msgtest_stats;

static inline void msgtest_count(void) { msg_get_stats(&msgtest_stats); }

static inline void msgtest_no_leak(void)
{
    msg_stats_t after;

    msg_get_stats(&after);
    if (after.bufs != msgtest_stats.bufs || after.datas != msgtest_stats.datas)
        FAIL("%s leaked: handles %ld -> %ld, data blocks %ld -> %ld", harness_case(),
             msgtest_stats.bufs, after.bufs, msgtest_stats.datas, after.datas);
    msg_pool_trim();
}

HARNESS_BEFORE(msgtest_count)
HARNESS_AFTER(msgtest_no_leak)

#define MSGTEST_MAIN() HARNESS_MAIN()

#endif /* UPVM_TESTS_MSGTEST_H */
