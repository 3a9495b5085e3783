/*
 * test-pvm-mailbox.c - the message mailbox (pvm_putinfo, pvm_recvinfo,
 * pvm_delinfo, pvm_getmboxinfo) and the PVM 3.3 calls on it (pvm_insert,
 * pvm_lookup, pvm_delete) between thread-mode tasks: owners and
 * PvmDenied, MultiInstance and index reuse, DirectIndex, Persistent
 * entries of tasks that exit, OverWritable, FirstAvail, ReadAndDelete,
 * WaitForInfo, listing patterns, errors and which of them are printed.
 *
 * Expectations are those of genuine PVM 3.4.6: docs/reference/
 * pvm-probed-semantics.md section 10 ("ref §10"), and the probes
 * listed in docs/compat-groups-mailbox.md ("probe") where §10 is silent.
 */
#include "pvmtest.h"

/* ---------------------------------------------------------- helpers */

/* putinfo of a fresh buffer holding one int; the buffer is freed after. */
static int put_int(const char *name, int value, int flags)
{
    int b = pvm_mkbuf(PvmDataDefault);
    CHECK(b > 0);
    int old = pvm_setsbuf(b);
    CHECK_EQ(pvm_pkint(&value, 1, 1), 0);
    pvm_setsbuf(old);
    int r = pvm_putinfo((char *)name, b, flags);
    CHECK_EQ(pvm_freebuf(b), 0);
    return r;
}

/* recvinfo and the int it holds (-1 when it fails; *rc gets the result). */
static int get_int(const char *name, int index, int flags, int *rc)
{
    int v = -1;
    *rc = pvm_recvinfo((char *)name, index, flags);
    if (*rc > 0)
        CHECK_EQ(pvm_upkint(&v, 1, 1), 0);
    return v;
}

static int value_of(const char *name, int index)
{
    int rc;
    int v = get_int(name, index, 0, &rc);
    CHECK(rc > 0);
    return v;
}

/* The entry (index, owner, flags) of class name, from pvm_getmboxinfo. */
struct entry {
    int index, owner, flags;
};

static int entries_of(const char *name, struct entry *out, int max)
{
    int n = -1;
    struct pvmmboxinfo *mi = NULL;
    CHECK_EQ(pvm_getmboxinfo((char *)name, &n, &mi), 0);
    for (int i = 0; i < n; i++) {
        if (strcmp(mi[i].mi_name, name) != 0)
            continue;
        CHECK(mi[i].mi_nentries <= max);
        for (int j = 0; j < mi[i].mi_nentries; j++)
            out[j] = (struct entry){mi[i].mi_indices[j], mi[i].mi_owners[j], mi[i].mi_flags[j]};
        return mi[i].mi_nentries;
    }
    return 0;
}

/* Wait until task tid has exited (its exit tidies its entries). */
static void wait_exit(int tid)
{
    CHECK_EQ(pvm_notify(PvmTaskExit, 7777, 1, &tid), 0);
    struct timeval tmout = {5, 0};
    CHECK(pvm_trecv(-1, 7777, &tmout) > 0);
}

/* A child running one command list: "put:NAME:FLAGS" (the value is its
 * tid), "del:NAME:INDEX", "get:NAME:INDEX:FLAGS"; it reports every result
 * to its parent (tag 1, two ints: result, value) and exits. */
struct commands {
    const char *cmd[6];
};

static void command_child(int ordinal, void *arg)
{
    const struct commands *c = arg;
    for (int i = 0; i < 6 && c->cmd[i]; i++) {
        char name[64];
        int a = 0, b = 0, value = -1, rc;
        pvm_errno = 4242;
        if (sscanf(c->cmd[i], "put:%63[^:]:%d", name, &a) == 2)
            rc = put_int(name, pvm_mytid(), a);
        else if (sscanf(c->cmd[i], "del:%63[^:]:%d", name, &a) == 2)
            rc = pvm_delinfo(name, a, 0);
        else if (sscanf(c->cmd[i], "get:%63[^:]:%d:%d", name, &a, &b) == 3)
            value = get_int(name, a, b, &rc);
        else
            CHECK(!"unknown command");
        int out[3] = {rc, value, pvm_errno};
        CHECK(pvm_initsend(PvmDataDefault) > 0);
        CHECK_EQ(pvm_pkint(out, 3, 1), 0);
        CHECK_EQ(pvm_send(pvm_parent(), 1), 0);
    }
}

/* Run the commands in a child; results[i] = {rc, value, errno}. */
static void run_child(struct commands *c, int results[][3])
{
    int tid;
    CHECK_EQ(upvm_task_spawn_func(command_child, c, 1, &tid), 1);
    for (int i = 0; i < 6 && c->cmd[i]; i++) {
        struct timeval tmout = {5, 0};
        CHECK(pvm_trecv(tid, 1, &tmout) > 0);
        CHECK_EQ(pvm_upkint(results[i], 3, 1), 0);
    }
    wait_exit(tid);
}

/* Persistent entries (one per name) put by a child that then exits: entries
 * no task owns. */
static void orphan_entries(const char *name1, const char *name2)
{
    char put1[64], put2[64];
    snprintf(put1, sizeof put1, "put:%s:%d", name1, PvmMboxPersistent);
    snprintf(put2, sizeof put2, "put:%s:%d", name2, PvmMboxPersistent);
    struct commands c = {{put1, name2 ? put2 : NULL}};
    int res[6][3];
    run_child(&c, res);
    CHECK_EQ(res[0][0], 0);
    if (name2)
        CHECK_EQ(res[1][0], 0);
}

/* ---------------------------------------------------------- tests */

TEST(starts_empty)
{
    int n = -1;
    struct pvmmboxinfo *mi = NULL;
    CHECK_EQ(pvm_getmboxinfo("*", &n, &mi), 0); /* ref §10: 0 classes */
    CHECK_EQ(n, 0);
}

TEST(default_entry_is_locked_to_its_owner)
{
    /* ref §10: the owner's second put replaces the first */
    CHECK_EQ(put_int("A", 1, PvmMboxDefault), 0);
    CHECK_EQ(put_int("A", 2, PvmMboxDefault), 0);
    CHECK_EQ(value_of("A", 0), 2);

    /* another task: put (plain or OverWritable) and delinfo are PvmDenied,
     * silent; ReadAndDelete is PvmDenied too, and that one is printed */
    struct commands c = {{"put:A:0", "put:A:4", "del:A:0", "get:A:0:16"}};
    int res[6][3];
    capture_begin();
    run_child(&c, res);
    const char *err = capture_end();
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(res[i][0], PvmDenied);
        CHECK_EQ(res[i][2], PvmDenied);
    }
    CHECK(strstr(err, "pvm_putinfo") == NULL && strstr(err, "pvm_delinfo") == NULL);
    CHECK_STR_CONTAINS(err, "pvm_recvinfo(): Permission denied");
    CHECK_EQ(value_of("A", 0), 2);
    CHECK_EQ(pvm_delinfo("A", 0, 0), 0);
}

TEST(multi_instance_and_lowest_free_index)
{
    /* ref §10, "M": indices 0, 1, 2; a default put by the owner replaces 0 */
    CHECK_EQ(put_int("M", 10, PvmMboxMultiInstance), 0);
    CHECK_EQ(put_int("M", 11, PvmMboxMultiInstance), 1);
    CHECK_EQ(put_int("M", 12, PvmMboxMultiInstance), 2);
    CHECK_EQ(put_int("M", 13, PvmMboxDefault), 0);
    /* another task: MultiInstance gets 3, a default put is refused */
    struct commands c = {{"put:M:2", "put:M:0"}};
    int res[6][3];
    run_child(&c, res);
    CHECK_EQ(res[0][0], 3);
    CHECK_EQ(res[1][0], PvmDenied);

    struct entry e[8];
    int me = pvm_mytid();
    CHECK_EQ(entries_of("M", e, 8), 3); /* the child's left with it */
    CHECK(e[0].index == 0 && e[0].owner == me && e[0].flags == 0);
    CHECK(e[1].index == 1 && e[1].owner == me && e[1].flags == PvmMboxMultiInstance);
    CHECK(e[2].index == 2 && e[2].owner == me);
    CHECK_EQ(value_of("M", 0), 13);
    CHECK_EQ(value_of("M", 1), 11);

    int rc;
    pvm_errno = 4242;
    capture_begin();
    CHECK_EQ(get_int("M", 9, 0, &rc), -1); /* ref §10: NotFound, silent */
    CHECK_EQ(rc, PvmNotFound);
    CHECK_EQ(pvm_delinfo("M", 1, 0), 1); /* the deleted index */
    CHECK_EQ(get_int("M", 1, 0, &rc), -1);
    CHECK_EQ(rc, PvmNotFound);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(pvm_errno, PvmNotFound);
    /* FirstAvail: the first index >= the one asked for */
    CHECK_EQ(get_int("M", 1, PvmMboxFirstAvail, &rc), 12);
    /* ReadAndDelete: returns it and deletes it */
    CHECK_EQ(get_int("M", 2, PvmMboxReadAndDelete, &rc), 12);
    CHECK_EQ(get_int("M", 2, 0, &rc), -1);
    CHECK_EQ(rc, PvmNotFound);
    /* the lowest free index is reused */
    CHECK_EQ(put_int("M", 14, PvmMboxMultiInstance), 1);
    CHECK_EQ(entries_of("M", e, 8), 2);
    CHECK(e[0].index == 0 && e[1].index == 1);
    CHECK_EQ(pvm_delinfo("M", 0, 0), 0);
    CHECK_EQ(pvm_delinfo("M", 1, 0), 1);
    CHECK_EQ(entries_of("M", e, 8), 0); /* the class went with its last entry */
}

TEST(direct_index)
{
    /* ref §10: DirectIndex(5) -> 5; with MultiInstance and 5 taken -> 6 */
    CHECK_EQ(put_int("D", 50, PvmMboxDirectIndex(5)), 5);
    CHECK_EQ(put_int("D", 51, PvmMboxDirectIndex(5) | PvmMboxMultiInstance), 6);
    CHECK_EQ(value_of("D", 5), 50);
    CHECK_EQ(value_of("D", 6), 51);
    /* probe: the owner re-putting at a direct index replaces that entry */
    CHECK_EQ(put_int("D", 52, PvmMboxDirectIndex(5)), 5);
    CHECK_EQ(value_of("D", 5), 52);
    struct entry e[4];
    CHECK_EQ(entries_of("D", e, 4), 2);
    CHECK_EQ(e[0].flags, 5 << 10);                          /* flags kept as given */
    CHECK_EQ(e[1].flags, (5 << 10) | PvmMboxMultiInstance);
    /* ref §10: flags 0x40000000 are taken as a direct index */
    CHECK_EQ(put_int("Dbig", 1, 0x40000000), 1048576);
    CHECK_EQ(pvm_delinfo("D", 5, 0), 5);
    CHECK_EQ(pvm_delinfo("D", 6, 0), 6);
    CHECK_EQ(pvm_delinfo("Dbig", 1048576, 0), 1048576);
}

TEST(persistent_entries_outlive_their_owner)
{
    struct commands c = {{"put:P:1", "put:NP:0", "put:PO:5"}};
    int res[6][3];
    run_child(&c, res);
    int child = 0;
    for (int i = 0; i < 3; i++)
        CHECK_EQ(res[i][0], 0);
    int rc;
    /* ref §10: the non-persistent entry went with its owner */
    CHECK_EQ(get_int("NP", 0, 0, &rc), -1);
    CHECK_EQ(rc, PvmNotFound);
    child = value_of("P", 0);
    CHECK(child > 0 && child != pvm_mytid());
    /* persistent ones stay, with owner 0 */
    struct entry e[2];
    CHECK_EQ(entries_of("P", e, 2), 1);
    CHECK(e[0].owner == 0 && e[0].flags == PvmMboxPersistent);
    CHECK_EQ(entries_of("PO", e, 2), 1);
    CHECK(e[0].owner == 0 && e[0].flags == (PvmMboxPersistent | PvmMboxOverWritable));
    /* and cannot be replaced or deleted by anyone, unless OverWritable */
    CHECK_EQ(put_int("P", 3, PvmMboxDefault), PvmDenied);
    CHECK_EQ(pvm_delinfo("P", 0, 0), PvmDenied);
    CHECK_EQ(value_of("P", 0), child);
    CHECK_EQ(value_of("PO", 0), child);
    CHECK_EQ(put_int("PO", 7, PvmMboxDefault), 0); /* now mine, flags 0 */
    CHECK_EQ(entries_of("PO", e, 2), 1);
    CHECK(e[0].owner == pvm_mytid() && e[0].flags == 0);
    CHECK_EQ(pvm_delinfo("PO", 0, 0), 0);
}

TEST(overwritable)
{
    CHECK_EQ(put_int("O", 20, PvmMboxOverWritable), 0);
    CHECK_EQ(put_int("O2", 22, PvmMboxOverWritable), 0);
    /* ref §10: another task may overwrite it (it becomes the owner, with
     * the flags it gave) and delete an OverWritable entry */
    struct commands c = {{"put:O:0", "get:O:0:0", "del:O2:0"}};
    int res[6][3];
    run_child(&c, res);
    CHECK_EQ(res[0][0], 0);
    CHECK(res[1][0] > 0 && res[1][1] != 20); /* the child's own value */
    CHECK_EQ(res[2][0], 0);
    /* the child exited and its entry "O" (flags 0) went with it */
    struct entry e[2];
    CHECK_EQ(entries_of("O", e, 2), 0);
    CHECK_EQ(entries_of("O2", e, 2), 0);

    /* while the other task owns it, the original owner is refused */
    CHECK_EQ(put_int("O3", 1, PvmMboxOverWritable), 0);
    struct commands c2 = {{"put:O3:1"}}; /* Persistent: it stays */
    run_child(&c2, res);
    CHECK_EQ(res[0][0], 0);
    CHECK_EQ(put_int("O3", 2, PvmMboxDefault), PvmDenied);
    CHECK_EQ(pvm_delinfo("O3", 0, 0), PvmDenied);
}

TEST(bad_arguments_and_reports)
{
    int me = pvm_mytid(), rc;
    CHECK_EQ(put_int("X", 30, PvmMboxDefault), 0);
    /* ref §10: BadParam is printed for each function */
    capture_begin();
    int r1 = pvm_delinfo("X", -1, 0), r2 = pvm_delinfo("", 0, 0), r3 = pvm_delinfo(NULL, 0, 0);
    get_int("X", -1, 0, &rc); /* no "any index" wildcard */
    int r4 = rc;
    get_int("", 0, 0, &rc);
    int r5 = rc;
    int r6 = pvm_recvinfo(NULL, 0, 0);
    int b = pvm_mkbuf(PvmDataDefault);
    int r7 = pvm_putinfo("", b, 0), r8 = pvm_putinfo(NULL, b, 0);
    const char *err = capture_end();
    CHECK(r1 == PvmBadParam && r2 == PvmBadParam && r3 == PvmBadParam);
    CHECK(r4 == PvmBadParam && r5 == PvmBadParam && r6 == PvmBadParam);
    CHECK(r7 == PvmBadParam && r8 == PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_delinfo", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_recvinfo", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_putinfo", "Bad parameter"));

    /* ref §10: delinfo by the owner / again / of nothing: 0, NotFound silent */
    capture_begin();
    CHECK_EQ(pvm_delinfo("X", 0, 0), 0);
    CHECK_EQ(pvm_delinfo("X", 0, 0), PvmNotFound);
    CHECK_EQ(pvm_delinfo("nosuch", 0, 0), PvmNotFound);
    get_int("nosuch", 0, 0, &rc);
    CHECK_EQ(rc, PvmNotFound);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(pvm_errno, PvmNotFound);

    /* Deviation (PVM hangs: its pvmd never answers): a buffer id that is
     * not a buffer is an error, reported. */
    capture_begin();
    int r9 = pvm_putinfo("bad", 9999, 0), r10 = pvm_putinfo("bad0", 0, 0);
    int r11 = pvm_putinfo("badneg", -1, 0);
    err = capture_end();
    CHECK_EQ(r9, PvmNoSuchBuf);
    CHECK_EQ(r10, PvmBadParam);
    CHECK_EQ(r11, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_putinfo", "No such buffer"));
    CHECK_EQ(pvm_freebuf(b), 0);
    (void)me;
}

TEST(recvinfo_gives_the_receive_buffer)
{
    int me = pvm_mytid();
    /* probe: the stored message is the buffer as it was at putinfo */
    int b = pvm_initsend(PvmDataDefault), v = 5;
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
    CHECK_EQ(pvm_putinfo("B", b, 0), 0);
    v = 6;
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0); /* packed after the put: not stored */
    int id = pvm_recvinfo("B", 0, 0);
    CHECK(id > 0);
    /* ref §10: the result is the active receive buffer */
    CHECK_EQ(pvm_getrbuf(), id);
    int len, tag, src, two[2] = {-1, -1};
    CHECK_EQ(pvm_bufinfo(id, &len, &tag, &src), 0);
    CHECK(len == 4 && tag == 0 && src == me); /* probe */
    CHECK_EQ(pvm_upkint(two, 1, 1), 0);
    CHECK_EQ(two[0], 5);
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_upkint(two + 1, 1, 1), PvmNoData); /* 6 was not stored */
    pvm_setopt(PvmAutoErr, 1);

    /* ... and the next receive frees it (its id may be reused at once) */
    send_int(me, 5, 0);
    int next = pvm_recv(me, 5);
    CHECK(next > 0);
    pvm_setopt(PvmAutoErr, 0);
    if (next == id)
        CHECK(pvm_bufinfo(id, NULL, &tag, NULL) == 0 && tag == 5);
    else
        CHECK_EQ(pvm_bufinfo(id, NULL, NULL, NULL), PvmNoSuchBuf);
    pvm_setopt(PvmAutoErr, 1);

    /* recvinfo frees the receive buffer even when it finds nothing (PVM
     * then leaves its internal reply there; UPVM leaves none) */
    int r = pvm_getrbuf();
    CHECK(r > 0);
    CHECK_EQ(pvm_recvinfo("nosuch", 0, 0), PvmNotFound);
    CHECK_EQ(pvm_getrbuf(), 0);
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_bufinfo(r, NULL, NULL, NULL), PvmNoSuchBuf);
    pvm_setopt(PvmAutoErr, 1);
    /* a bad argument leaves it alone */
    id = pvm_recvinfo("B", 0, 0);
    capture_begin();
    CHECK_EQ(pvm_recvinfo("", 0, 0), PvmBadParam);
    capture_end();
    CHECK_EQ(pvm_getrbuf(), id);

    /* probe: a received message keeps its tag and source in the mailbox */
    send_int(me, 77, 9);
    int got = pvm_recv(me, 77);
    CHECK_EQ(pvm_putinfo("S", got, 0), 0);
    id = pvm_recvinfo("S", 0, 0);
    CHECK_EQ(pvm_bufinfo(id, &len, &tag, &src), 0);
    CHECK(tag == 77 && src == me);
    CHECK_EQ(pvm_delinfo("B", 0, 0), 0);
    CHECK_EQ(pvm_delinfo("S", 0, 0), 0);
}

/* ---------------------------------------------------------- WaitForInfo */

static int waiter_log[8], nwaiter_log;

/* Blocks for "W" (flags in arg) and logs its ordinal and the value. */
static void waiting_child(int ordinal, void *arg)
{
    int rc;
    int v = get_int("W", 0, PvmMboxWaitForInfo | (int)(intptr_t)arg, &rc);
    CHECK(rc > 0);
    waiter_log[nwaiter_log++] = ordinal * 100 + v;
    send_int(pvm_parent(), 2, v);
}

static void late_putter(int ordinal, void *arg)
{
    upvm_sleep_ns(20 * 1000 * 1000);
    waiter_log[nwaiter_log++] = -1;
    CHECK_EQ(put_int("W", 7, PvmMboxDefault), 0);
}

TEST(wait_for_info_blocks_until_put)
{
    /* ref §10: recvinfo with WaitForInfo blocks until another task puts */
    nwaiter_log = 0;
    int tid;
    CHECK_EQ(upvm_task_spawn_func(late_putter, NULL, 1, &tid), 1);
    uint64_t t0 = upvm_now_ns();
    int rc;
    CHECK_EQ(get_int("W", 0, PvmMboxWaitForInfo, &rc), 7);
    CHECK(upvm_now_ns() - t0 >= 15 * 1000 * 1000);
    CHECK_EQ(nwaiter_log, 1);
    CHECK_EQ(waiter_log[0], -1); /* the put came first */
    wait_exit(tid);
    CHECK_EQ(get_int("W", 0, 0, &rc), -1); /* the putter's entry left with it */
}

TEST(waiters_are_served_in_order)
{
    /* Two children wait with ReadAndDelete: a put serves the first, whose
     * read deletes the entry; the second waits for the next put.  A third
     * waits plainly.  (The entries are OverWritable: readers may delete.) */
    nwaiter_log = 0;
    int tids[2], t3;
    CHECK_EQ(upvm_task_spawn_func(waiting_child, (void *)(intptr_t)PvmMboxReadAndDelete, 2,
                                  tids), 2);
    upvm_yield(); /* both are waiting now */
    CHECK_EQ(put_int("W", 1, PvmMboxOverWritable), 0);
    struct timeval tmout = {5, 0};
    CHECK(pvm_trecv(-1, 2, &tmout) > 0);
    CHECK_EQ(nwaiter_log, 1);
    CHECK_EQ(waiter_log[0], 0 * 100 + 1);
    int rc;
    CHECK_EQ(get_int("W", 0, 0, &rc), -1); /* read and deleted */
    CHECK_EQ(put_int("W", 2, PvmMboxOverWritable), 0);
    CHECK(pvm_trecv(-1, 2, &tmout) > 0);
    CHECK_EQ(waiter_log[1], 1 * 100 + 2);
    CHECK_EQ(upvm_task_spawn_func(waiting_child, NULL, 1, &t3), 1);
    upvm_yield();
    CHECK_EQ(put_int("W", 3, PvmMboxOverWritable), 0);
    CHECK(pvm_trecv(-1, 2, &tmout) > 0);
    CHECK_EQ(waiter_log[2], 0 * 100 + 3);
    CHECK_EQ(value_of("W", 0), 3); /* a plain read leaves it */
    CHECK_EQ(pvm_delinfo("W", 0, 0), 0);
    wait_exit(t3);
}

TEST(killed_waiter_leaves_nothing_behind)
{
    int tid;
    nwaiter_log = 0;
    CHECK_EQ(upvm_task_spawn_func(waiting_child, NULL, 1, &tid), 1);
    upvm_yield();
    CHECK_EQ(pvm_kill(tid), 0);
    CHECK_EQ(pvm_pstat(tid), PvmNoTask);
    CHECK_EQ(put_int("W", 4, PvmMboxDefault), 0);
    CHECK_EQ(nwaiter_log, 0);
    CHECK_EQ(pvm_delinfo("W", 0, 0), 0);
}

/* ---------------------------------------------------------- listing */

static void other_lister(int ordinal, void *arg)
{
    int n;
    struct pvmmboxinfo *mi;
    CHECK_EQ(pvm_getmboxinfo("*", &n, &mi), 0);
    CHECK_EQ(pvm_getmboxinfo("Q*", &n, &mi), 0);
}

static int names_matching(const char *pattern, char *out, size_t cap)
{
    int n = -1;
    struct pvmmboxinfo *mi = NULL;
    CHECK_EQ(pvm_getmboxinfo((char *)pattern, &n, &mi), 0);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(out, mi[i].mi_name, cap - strlen(out) - 2);
        strcat(out, " ");
    }
    return n;
}

TEST(getmboxinfo_patterns)
{
    orphan_entries("P", "O3"); /* as the cases above leave them */
    const char *names[] = {"A", "M", "R", "RO", "O", "xOx"};
    for (int i = 0; i < 6; i++)
        CHECK_EQ(put_int(names[i], i, 0), 0);
    char got[256];
    /* ref §10: "*", "" and NULL list everything, in creation order (the
     * persistent "P" and "O3" come first) */
    CHECK_EQ(names_matching("*", got, sizeof got), 8);
    CHECK(strcmp(got, "P O3 A M R RO O xOx ") == 0);
    CHECK_EQ(names_matching("", got, sizeof got), 8);
    CHECK_EQ(names_matching(NULL, got, sizeof got), 8);
    /* '*' is the only special character; "[AM]" matches nothing */
    CHECK_EQ(names_matching("[AM]", got, sizeof got), 0);
    CHECK_EQ(names_matching("M*", got, sizeof got), 1);
    CHECK_EQ(names_matching("nomatch*", got, sizeof got), 0);
    /* probe: the match is not anchored: "O" is found in PO and xOx */
    CHECK_EQ(names_matching("O", got, sizeof got), 4);
    CHECK(strcmp(got, "O3 RO O xOx ") == 0);
    CHECK_EQ(names_matching("R*O", got, sizeof got), 1);
    CHECK_EQ(names_matching("x*x", got, sizeof got), 1);

    /* PVM keeps the array until this task's next call: other tasks'
     * calls do not touch it (ASan would see a use after free) */
    int n;
    struct pvmmboxinfo *mi;
    CHECK_EQ(pvm_getmboxinfo("A", &n, &mi), 0);
    int tid;
    CHECK_EQ(upvm_task_spawn_func(other_lister, NULL, 1, &tid), 1);
    wait_exit(tid);
    CHECK_EQ(n, 1);
    CHECK(strcmp(mi[0].mi_name, "A") == 0 && mi[0].mi_nentries == 1);
    CHECK(mi[0].mi_owners[0] == pvm_mytid() && mi[0].mi_indices[0] == 0);
    for (int i = 0; i < 6; i++)
        CHECK_EQ(pvm_delinfo((char *)names[i], 0, 0), 0);
}

/* ---------------------------------------------------------- PVM 3.3 */

TEST(insert_lookup_delete)
{
    int d;
    pvm_errno = 4242;
    capture_begin();
    /* ref §10, 3.3 calls: entries are MultiInstance|Persistent */
    int r1 = pvm_insert("K", -1, 100), r2 = pvm_insert("K", -1, 101);
    int r3 = pvm_insert("K", 0, 102); /* taken: PvmDupEntry, silent */
    int e3 = pvm_errno;
    int r4 = pvm_insert("K", 5, 105);
    int r5 = pvm_insert("K", -2, 1);
    const char *err = capture_end();
    CHECK(r1 == 0 && r2 == 1 && r4 == 5);
    CHECK_EQ(r3, PvmDupEntry);
    CHECK_EQ(e3, PvmDenied);
    CHECK_EQ(r5, PvmBadParam);
    CHECK(strstr(err, "Permission denied") == NULL);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_insert", "Bad parameter"));

    int rbuf = pvm_getrbuf();
    d = -1;
    CHECK_EQ(pvm_lookup("K", 0, &d), 0);
    CHECK_EQ(d, 100);
    d = -1;
    CHECK_EQ(pvm_lookup("K", -1, &d), 0); /* the first there is */
    CHECK_EQ(d, 100);
    CHECK_EQ(pvm_getrbuf(), rbuf); /* probe: lookup leaves it alone */
    capture_begin();
    d = -1;
    CHECK_EQ(pvm_lookup("K", 3, &d), PvmNoEntry);
    CHECK_EQ(d, -1);
    CHECK_EQ(pvm_lookup("nosuch", -1, &d), PvmNoEntry);
    CHECK_EQ(*capture_end(), '\0');
    CHECK_EQ(pvm_lookup("K", 5, &d), 5);
    CHECK_EQ(d, 105);
    CHECK_EQ(pvm_delete("K", 0), 0);
    capture_begin();
    int r6 = pvm_delete("K", 0), r7 = pvm_delete("K", -1);
    err = capture_end();
    CHECK_EQ(r6, PvmNoEntry);
    CHECK_EQ(r7, PvmBadParam); /* no "delete all" */
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_delete", "Bad parameter"));
    CHECK(strstr(err, "Not Found") == NULL);
    CHECK_EQ(pvm_lookup("K", -1, &d), 1);
    CHECK_EQ(d, 101);

    struct entry e[4];
    CHECK_EQ(entries_of("K", e, 4), 2);
    CHECK(e[0].index == 1 && e[0].flags == 3 && e[1].index == 5);
    /* an insert is also a mailbox message holding the int */
    int rc;
    CHECK_EQ(get_int("K", 5, 0, &rc), 105);
    CHECK_EQ(pvm_delete("K", 1), 1);
    CHECK_EQ(pvm_delete("K", 5), 5);

    /* probe (q_del.c): PvmDenied is reported by pvm_delete (the persistent
     * "P" has no owner any more) */
    orphan_entries("P", NULL);
    capture_begin();
    CHECK_EQ(pvm_delete("P", 0), PvmDenied);
    CHECK_STR_CONTAINS(capture_end(), autoerr_line("pvm_delete", "Permission denied"));
    CHECK_EQ(pvm_errno, PvmDenied);
}

/* Every case ends by leaving PVM, which must succeed. */
static void leave_pvm(void) { CHECK_EQ(pvm_exit(), 0); }
HARNESS_AFTER(leave_pvm)

HARNESS_MAIN()
