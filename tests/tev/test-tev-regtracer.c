/*
 * test-tev-regtracer.c - pvm_reg_tracer's job-wide registration (src/pvm/tracer.c,
 * docs/pvm-tracing.md) beyond what tev-tracer's mode reg compares with
 * genuine PVM: the registration ends with its tracer's task, and a task
 * started without a spawn (a ULP's first PVM call: PVM's task started from
 * the shell) gets the registered tracer, which receives the pvmd's newtask
 * for it (parent and flags -1, name "-") and its events.  Run on one node
 * and two (UPVM_NODES=2: node 0 decides, the other node's copy).
 */
#include <pvm3.h>
#include <pvmtev.h>
#include <stdbool.h>
#include <string.h>
#include <sys/time.h>
#include <upvm.h>

#include "harness.h"

#define TRACE_TAG 7

/* A task that registers itself, says the result (tag 1) and leaves when
 * told (tag 2). */
static int tracer_main(int argc, char **argv)
{
    Pvmtmask m;
    TEV_MASK_INIT(m);
    TEV_MASK_SET(m, TEV_MYTID);
    int cc = pvm_reg_tracer(0, TRACE_TAG, 0, 0, m, 0, PvmTraceFull);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&cc, 1, 1);
    pvm_send(pvm_parent(), 1);
    pvm_recv(pvm_parent(), 2);
    pvm_exit();
    return 0;
}
UPVM_TASK("reg-tracer", tracer_main)

static int reg_quiet(int ttag)
{
    Pvmtmask m;
    TEV_MASK_INIT(m);
    TEV_MASK_SET(m, TEV_MYTID);
    int old = pvm_setopt(PvmAutoErr, 0);
    int cc = pvm_reg_tracer(0, ttag, 0, 0, m, 0, PvmTraceFull);
    pvm_setopt(PvmAutoErr, old);
    return cc;
}

/* Another task is the tracer: PvmAlready; once its task has ended, the
 * registration is gone (job-wide: node 0's and every node's copy). */
TEST(registration_ends_with_its_task)
{
    int me = pvm_mytid(), tid = 0, cc = -1;
    CHECK(me > 0);
    CHECK_EQ(pvm_spawn("reg-tracer", NULL, PvmTaskDefault, NULL, 1, &tid), 1);
    CHECK(pvm_recv(tid, 1) > 0);
    pvm_upkint(&cc, 1, 1);
    CHECK_EQ(cc, 0);
    CHECK_EQ(reg_quiet(TRACE_TAG), PvmAlready);
    CHECK_EQ(pvm_notify(PvmTaskExit, 3, 1, &tid), 0);
    pvm_initsend(PvmDataDefault);
    CHECK_EQ(pvm_send(tid, 2), 0);
    CHECK(pvm_recv(-1, 3) > 0); /* it ended */
    /* its end reaches node 0 as a notice: poll, 10 s at most */
    struct timeval t0, now;
    gettimeofday(&t0, NULL);
    while ((cc = reg_quiet(TRACE_TAG)) == PvmAlready) {
        gettimeofday(&now, NULL);
        if (now.tv_sec - t0.tv_sec > 10)
            break;
        upvm_yield();
    }
    CHECK_EQ(cc, 0);           /* registered: this task now */
    CHECK_EQ(reg_quiet(0), 0); /* the toggle: unregistered */
    CHECK_EQ(reg_quiet(TRACE_TAG), 0);
    pvm_exit();
}

/* ------------------------------------------------------------ from the shell */

static volatile int shell_tid;

static void shell_task(void *arg)
{
    (void)arg;
    shell_tid = pvm_mytid(); /* enrolled: no spawn, no parent */
    pvm_exit();
}

/* Unpack one value of a described event: did, type, [count], value(s);
 * ints and strings only (the newtask's). */
static int upk_value(int *did, int *ival, char *sval)
{
    int type, n = 1;
    if (pvm_upkint(did, 1, 1) < 0 || *did < 0)
        return -1;
    pvm_upkint(&type, 1, 1);
    if (type & TEV_DATA_ARRAY)
        pvm_upkint(&n, 1, 1);
    for (int i = 0; i < n; i++) {
        if ((type & ~TEV_DATA_ARRAY) == TEV_DATA_STRING)
            pvm_upkstr(sval);
        else
            pvm_upkint(ival, 1, 1);
    }
    return 0;
}

/* The next trace message's first event (the data-id table skipped): its
 * kind, and for newtask its PT, TF and TN. */
static int next_event(int *pt, int *tf, char *tn)
{
    struct timeval tmout = {10, 0};
again:
    if (pvm_trecv(-1, TRACE_TAG, &tmout) <= 0)
        return -1;
    int m, kind = -1;
    char name[64], s[256];
    while (pvm_upkint(&m, 1, 1) >= 0) {
        if (m == TEV_MARK_DATA_ID) {
            int id;
            while (pvm_upkint(&id, 1, 1) >= 0 && id != TEV_MARK_DATA_ID_END)
                pvm_upkstr(s), pvm_upkstr(s);
            continue;
        }
        if (m != TEV_MARK_EVENT_DESC && m != TEV_MARK_EVENT_RECORD)
            return -1;
        pvm_upkint(&kind, 1, 1);
        if (m == TEV_MARK_EVENT_RECORD)
            return kind;
        pvm_upkstr(name);
        int did, ival = 0;
        while (upk_value(&did, &ival, s) == 0) {
            if (did == TEV_DID_PT)
                *pt = ival;
            else if (did == TEV_DID_TF)
                *tf = ival;
            else if (did == TEV_DID_TN)
                strcpy(tn, s);
        }
        return kind;
    }
    goto again; /* a message of the data-id table only */
}

TEST(a_task_from_the_shell_gets_the_registered_tracer)
{
    int me = pvm_mytid();
    CHECK(me > 0);
    pvm_setopt(PvmAutoErr, 0); /* the unpacks past a message's end */
    CHECK_EQ(reg_quiet(TRACE_TAG), 0);
    upvm_attr_t attr = {0, NULL, UPVM_DETACHED};
    CHECK(upvm_create(shell_task, NULL, &attr) > 0);
    int pt = 0, tf = 0, kind;
    char tn[64] = "";
    bool newtask = false, mytid = false;
    while ((kind = next_event(&pt, &tf, tn)) >= 0 && !(newtask && mytid)) {
        if (kind == TEV_NEWTASK) {
            newtask = true;
            CHECK_EQ(pt, -1);
            CHECK_EQ(tf, -1);
            CHECK(strcmp(tn, "-") == 0);
        }
        if (kind == (TEV_MYTID | TEV_EVENT_ENTRY))
            mytid = true;
        if (kind == TEV_ENDTASK)
            break;
    }
    CHECK(newtask);
    CHECK(mytid); /* the registered mask: its pvm_mytid traced */
    CHECK(shell_tid > 0);
    pvm_exit();
}

HARNESS_MAIN()
