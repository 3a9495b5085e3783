/*
 * test-tev-mask.c - pvm_settmask/pvm_gettmask and the trace options
 * (pvm_setopt/pvm_getopt) with genuine PVM 3.4.6's values, checks and
 * errors (lpvmgen.c; docs/pvm-tracing.md).
 */
#include <pvm3.h>
#include <pvmtev.h>
#include <string.h>

#include "harness.h"

/* A mask as TEV_MASK_INIT makes it: 35 '@' and a NUL. */
TEST(mask_init_is_35_at_signs)
{
    Pvmtmask m;
    memset(m, 'x', sizeof m);
    TEV_MASK_INIT(m);
    for (int i = 0; i < TEV_MASK_LENGTH - 1; i++)
        CHECK_EQ(m[i], '@');
    CHECK_EQ(m[TEV_MASK_LENGTH - 1], '\0');
    CHECK_EQ(strlen(m), 35);
    TEV_MASK_SET(m, TEV_SEND); /* 47: bit 3 of character 11 */
    CHECK_EQ(m[11], '@' | 8);
    CHECK(TEV_MASK_CHECK(m, TEV_SEND));
    CHECK(!TEV_MASK_CHECK(m, TEV_RECV));
    TEV_MASK_UNSET(m, TEV_SEND);
    CHECK_EQ(m[11], '@');
}

/* A task's masks start empty ('@'s), and give back what was set, for
 * itself and its children apart. */
TEST(settmask_gettmask_round_trip)
{
    CHECK(pvm_mytid() > 0);
    Pvmtmask m, back, none;
    TEV_MASK_INIT(none);
    CHECK_EQ(pvm_gettmask(PvmTaskSelf, back), 0);
    CHECK_EQ(memcmp(back, none, TEV_MASK_LENGTH), 0);
    CHECK_EQ(pvm_gettmask(PvmTaskChild, back), 0);
    CHECK_EQ(memcmp(back, none, TEV_MASK_LENGTH), 0);
    TEV_MASK_INIT(m);
    TEV_MASK_SET(m, TEV_SEND);
    TEV_MASK_SET(m, TEV_USER_DEFINED);
    CHECK_EQ(pvm_settmask(PvmTaskChild, m), 0);
    CHECK_EQ(pvm_gettmask(PvmTaskChild, back), 0);
    CHECK_EQ(memcmp(back, m, TEV_MASK_LENGTH), 0);
    CHECK_EQ(pvm_gettmask(PvmTaskSelf, back), 0); /* its own: unchanged */
    CHECK_EQ(memcmp(back, none, TEV_MASK_LENGTH), 0);
    TEV_MASK_SET(m, TEV_RECV);
    CHECK_EQ(pvm_settmask(PvmTaskSelf, m), 0);
    CHECK_EQ(pvm_gettmask(PvmTaskSelf, back), 0);
    CHECK_EQ(memcmp(back, m, TEV_MASK_LENGTH), 0);
    pvm_exit();
}

/* who other than PvmTaskSelf/PvmTaskChild: PvmBadParam, reported. */
TEST(bad_who_is_badparam)
{
    CHECK(pvm_mytid() > 0);
    pvm_setopt(PvmAutoErr, 0);
    Pvmtmask m;
    TEV_MASK_INIT(m);
    CHECK_EQ(pvm_gettmask(2, m), PvmBadParam);
    CHECK_EQ(pvm_settmask(-1, m), PvmBadParam);
    CHECK_EQ(pvm_errno, PvmBadParam);
    pvm_exit();
}

/* The trace options: defaults 0, what PVM accepts and refuses. */
TEST(trace_options)
{
    int me = pvm_mytid();
    CHECK(me > 0);
    pvm_setopt(PvmAutoErr, 0);
    static const int opts[] = {PvmTraceTid, PvmTraceCode, PvmTraceBuffer, PvmTraceOptions,
                               PvmSelfTraceTid, PvmSelfTraceCode, PvmSelfTraceBuffer,
                               PvmSelfTraceOptions, PvmTraceContext, PvmSelfTraceContext};
    for (unsigned i = 0; i < sizeof opts / sizeof opts[0]; i++)
        CHECK_EQ(pvm_getopt(opts[i]), 0);
    /* children's tracer: none, the task itself, or its own tracer */
    CHECK_EQ(pvm_setopt(PvmTraceTid, me + 1), PvmBadParam);
    CHECK_EQ(pvm_setopt(PvmTraceTid, me), 0);
    CHECK_EQ(pvm_getopt(PvmTraceTid), me);
    CHECK_EQ(pvm_setopt(PvmTraceCode, 77), 0);
    CHECK_EQ(pvm_setopt(PvmTraceBuffer, 4096), 0);
    CHECK_EQ(pvm_getopt(PvmTraceBuffer), 4096);
    CHECK_EQ(pvm_setopt(PvmTraceOptions, 4), PvmBadParam);
    CHECK_EQ(pvm_setopt(PvmTraceOptions, PvmTraceCount), 0);
    CHECK_EQ(pvm_setopt(PvmTraceOptions, PvmTraceFull), PvmTraceCount); /* the old value */
    CHECK_EQ(pvm_setopt(PvmSelfTraceOptions, 0), PvmBadParam);
    CHECK_EQ(pvm_setopt(PvmSelfTraceContext, 5), PvmNotImpl);
    /* its own tracer's code without a tracer: "Error 0", unchanged */
    CHECK_EQ(pvm_setopt(PvmSelfTraceCode, 9), 0);
    CHECK_EQ(pvm_getopt(PvmSelfTraceCode), 0);
    /* a new own tracer is the children's too (tid, context, code) */
    CHECK_EQ(pvm_setopt(PvmSelfTraceTid, me), 0);
    CHECK_EQ(pvm_getopt(PvmSelfTraceTid), me);
    CHECK_EQ(pvm_getopt(PvmTraceCode), 0);
    CHECK_EQ(pvm_setopt(PvmSelfTraceCode, 9), 0);
    CHECK_EQ(pvm_getopt(PvmSelfTraceCode), 9);
    CHECK_EQ(pvm_getopt(PvmTraceCode), 9);
    pvm_exit();
}

/* A task that traces itself to itself sends no events (PVM: never to
 * the task itself), and calls still work; only the "pvmd" tells it, as
 * the new tracer, that the task started (spntask, the data-id table,
 * newtask: PVM's pvmd does that too). */
TEST(tracing_to_itself_sends_nothing)
{
    int me = pvm_mytid();
    CHECK(me > 0);
    Pvmtmask m;
    TEV_MASK_INIT(m);
    TEV_MASK_SET(m, TEV_SEND);
    TEV_MASK_SET(m, TEV_MYTID);
    CHECK_EQ(pvm_settmask(PvmTaskSelf, m), 0);
    CHECK_EQ(pvm_setopt(PvmSelfTraceTid, me), 0);
    CHECK_EQ(pvm_setopt(PvmSelfTraceOptions, PvmTraceFull), 0);
    CHECK_EQ(pvm_mytid(), me);
    int v = 5;
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
    CHECK_EQ(pvm_send(me, 3), 0);
    CHECK(pvm_recv(me, 3) > 0);
    int n = 0, id, src;
    while ((id = pvm_nrecv(-1, -1)) > 0) {
        CHECK_EQ(pvm_bufinfo(id, NULL, NULL, &src), 0);
        CHECK_EQ(src, (int)0x80000000);
        n++;
    }
    CHECK_EQ(n, 3);
    pvm_exit();
}

HARNESS_MAIN()
