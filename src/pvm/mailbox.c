/*
 * mailbox.c - the message mailbox of PVM 3.4: pvm_putinfo, pvm_recvinfo,
 * pvm_delinfo, pvm_getmboxinfo, and the PVM 3.3 calls built on it,
 * pvm_insert, pvm_lookup and pvm_delete.
 *
 * In PVM the mailbox is a database in the master pvmd (msgbox.c there);
 * here it is a node-level structure that every task of the node reaches
 * directly (one scheduler thread: nothing locks).  The model is PVM's:
 *
 *   - a class is a name; it holds entries sorted by index and exists while
 *     it has entries.  Classes are listed in the order they were created.
 *   - an entry is <index, owner tid, flags, message>.  The message is the
 *     mailbox's own holder (msg_buf_ref of the caller's buffer: nothing is
 *     copied, and copy-on-write keeps later packing by the caller out of it).
 *   - putinfo inserts at index 0 (or at PvmMboxDirectIndex(i) of the flags):
 *     MultiInstance takes the lowest free index from there; otherwise an
 *     existing entry is replaced if the caller owns it or it is
 *     OverWritable, else PvmDenied.  The new entry belongs to the caller
 *     with exactly the flags given.
 *   - when a task leaves, its entries go, except Persistent ones, which stay
 *     with owner 0 (and, not OverWritable, can never be replaced or deleted).
 *
 * Errors and reports follow PVM 3.4.6 (docs/reference/pvm-probed-semantics.md
 * section 10): PvmDenied/PvmExists from putinfo, PvmNotFound from recvinfo,
 * PvmDenied/PvmNotFound from delinfo (and their 3.3 twins) only set
 * pvm_errno; every other error is reported through PvmAutoErr.
 *
 * Deliberate differences: putinfo of a buffer id that does not exist fails
 * (PvmBadParam / PvmNoSuchBuf) where PVM's pvmd never answers; after a
 * recvinfo that finds nothing there is no active receive buffer, where PVM
 * leaves its internal reply message there.
 *
 * pvm_recvinfo(..., PvmMboxWaitForInfo) blocks the calling ULP until a
 * putinfo makes the lookup succeed (or fail with something other than
 * PvmNotFound); the putinfo retries the lookup for every waiter on that
 * name, in arrival order, on the waiter's behalf, as the pvmd does.
 *
 * In a job of several nodes the database lives on node 0 (the master
 * pvmd's place): the other nodes' calls are requests to it carrying the
 * message's serialised form both ways; a waiting recvinfo is answered
 * when a putinfo satisfies it.  A task's end tidies its entries there.
 */
#include <stdlib.h>
#include <string.h>

#include "pvm/pvm.h"
#include "pvm/remote.h"

struct mb_entry {
    list_link_t link;      /* mb_class.entries, by increasing index */
    int index;
    int owner;             /* tid, 0 once a persistent entry's owner left */
    int flags;
    msg_buf_t *msg;        /* the mailbox's holder */
};

struct mb_class {
    list_link_t link;      /* mb_classes, in creation order */
    list_link_t entries;   /* never empty: an empty class is freed */
    char name[];
};

/* A task blocked in pvm_recvinfo(..., PvmMboxWaitForInfo): the request
 * to answer when a putinfo satisfies it (a node 0 task asks its own node
 * the same way, so that a waiting task can move, remote.c). */
struct mb_waiter {
    list_link_t link;
    int tid;
    int node, request;
    int index, flags;
    char name[];
};

/* The array pvm_getmboxinfo last returned to a task, freed by its next
 * call or when it leaves (PVM frees it at the next call). */
struct mb_infolist {
    list_link_t link;
    int tid;
    void *block;
};

static list_link_t mb_classes = {&mb_classes, &mb_classes};
static list_link_t mb_waiters = {&mb_waiters, &mb_waiters};
static list_link_t mb_infolists = {&mb_infolists, &mb_infolists};

/* 3.3 compatibility entries (pvm_insert): PVM stores them this way. */
#define MB_INSERT_FLAGS (PvmMboxMultiInstance | PvmMboxPersistent)

/* ------------------------------------------------------------ classes */

static struct mb_class *class_find(const char *name)
{
    list_for_each(l, &mb_classes) {
        struct mb_class *c = list_entry(l, struct mb_class, link);
        if (strcmp(c->name, name) == 0)
            return c;
    }
    return NULL;
}

static struct mb_class *class_new(const char *name)
{
    size_t len = strlen(name) + 1;
    struct mb_class *c = malloc(sizeof *c + len);
    if (!c)
        return NULL;
    memcpy(c->name, name, len);
    list_init(&c->entries);
    list_push_back(&mb_classes, &c->link);
    return c;
}

static inline struct mb_entry *entry_of(list_link_t *l)
{
    return list_entry(l, struct mb_entry, link);
}

/* Free e; its class goes with its last entry. */
static void entry_free(struct mb_class *c, struct mb_entry *e)
{
    list_unlink(&e->link);
    msg_buf_unref(e->msg);
    free(e);
    if (list_empty(&c->entries)) {
        list_unlink(&c->link);
        free(c);
    }
}

/* The first entry of c with an index >= index, or the list head. */
static list_link_t *entry_at_or_after(struct mb_class *c, int index)
{
    list_link_t *l = c->entries.next;
    while (l != &c->entries && entry_of(l)->index < index)
        l = l->next;
    return l;
}

static bool may_modify(const struct mb_entry *e, int tid)
{
    return (e->flags & PvmMboxOverWritable) || e->owner == tid;
}

/* ------------------------------------------------------------ the database */

/*
 * Insert msg (consumed on success) as <name, ...> for owner tid: PVM's
 * mb_insert.  req is -1 (3.4 putinfo: index from the flags) or an index
 * asked for by pvm_insert, which never replaces.  Returns the index or
 * PvmDenied / PvmNoMem.
 */
static int mb_insert(int tid, const char *name, int req, int flags, msg_buf_t *msg)
{
    struct mb_class *c = class_find(name);
    bool fresh = !c;
    if (fresh && !(c = class_new(name)))
        return PvmNoMem;
    int index = req >= 0 ? req : (int)PvmMboxDirectIndexOf(flags);
    list_link_t *at = entry_at_or_after(c, index);
    struct mb_entry *old = NULL;
    if (at != &c->entries && entry_of(at)->index == index) {
        if (flags & PvmMboxMultiInstance) {
            if (req >= 0)
                return PvmDenied; /* 3.3 insert: the index is taken */
            while (at != &c->entries && entry_of(at)->index == index) {
                index++;
                at = at->next;
            }
        } else if (!may_modify(entry_of(at), tid)) {
            return PvmDenied;
        } else {
            old = entry_of(at);
            at = at->next;
        }
    }
    struct mb_entry *e = malloc(sizeof *e);
    if (!e) {
        if (fresh) {
            list_unlink(&c->link);
            free(c);
        }
        return PvmNoMem;
    }
    *e = (struct mb_entry){.index = index, .owner = tid, .flags = flags, .msg = msg};
    list_insert_between(&e->link, at->prev, at);
    if (old) /* never the class's last entry: e is in it too */
        entry_free(c, old);
    return index;
}

/*
 * Look <name, index> up for task tid: PVM's mb_lookup.  With
 * PvmMboxFirstAvail the first entry at or after index.  On success *out is
 * a new holder of the message (ReadAndDelete: the mailbox's own, the entry
 * being gone) and the entry's index is returned; else PvmNotFound,
 * PvmDenied (ReadAndDelete of an entry tid may not delete) or PvmNoMem.
 */
static int mb_lookup(int tid, const char *name, int index, int flags, msg_buf_t **out)
{
    struct mb_class *c = class_find(name);
    if (!c)
        return PvmNotFound;
    list_link_t *at = entry_at_or_after(c, index);
    if (at == &c->entries ||
        (!(flags & PvmMboxFirstAvail) && entry_of(at)->index != index))
        return PvmNotFound;
    struct mb_entry *e = entry_of(at);
    int found = e->index;
    if (flags & PvmMboxReadAndDelete) {
        if (!may_modify(e, tid))
            return PvmDenied;
        *out = e->msg;
        e->msg = NULL;
        entry_free(c, e);
        return found;
    }
    int rc = pvm_buf_for_receiver(e->msg, out);
    return rc ? rc : found;
}

/* Delete <name, index> for task tid: its index, PvmNotFound or PvmDenied. */
static int mb_delete(int tid, const char *name, int index)
{
    struct mb_class *c = class_find(name);
    if (!c)
        return PvmNotFound;
    list_link_t *at = entry_at_or_after(c, index);
    if (at == &c->entries || entry_of(at)->index != index)
        return PvmNotFound;
    if (!may_modify(entry_of(at), tid))
        return PvmDenied;
    entry_free(c, entry_of(at));
    return index;
}

/* ------------------------------------------------------------ waiters */

static void reply_lookup(int node, int request, int rc, msg_buf_t *msg);

/* A putinfo on name: retry the lookup of every waiter for it. */
static void wake_waiters(const char *name)
{
    for (list_link_t *l = mb_waiters.next, *next; l != &mb_waiters; l = next) {
        next = l->next;
        struct mb_waiter *w = list_entry(l, struct mb_waiter, link);
        if (strcmp(w->name, name) != 0)
            continue;
        msg_buf_t *msg = NULL;
        int rc = mb_lookup(w->tid, w->name, w->index, w->flags, &msg);
        if (rc == PvmNotFound)
            continue;
        list_unlink(l);
        reply_lookup(w->node, w->request, rc, msg);
        free(w);
    }
}


/* ------------------------------------------------------------ node 0 serves */

enum mb_request { MBQ_PUT, MBQ_LOOKUP, MBQ_DELETE, MBQ_INFO, MBQ_GONE };

/* A request's fixed part; the name (NUL-terminated) and, for a put, the
 * message's serialised form follow. */
struct mb_wire {
    int32_t tid, index, flags;
};

static void *info_build(list_link_t *classes, const char *pattern, int *n_out);
static void tidy_entries(int tid);
static bool match_anywhere(const char *s, const char *p);
static int count_entries(const struct mb_class *c);

/* The answer to a lookup: its result, and the message when found. */
static void reply_lookup(int node, int request, int rc, msg_buf_t *msg)
{
    size_t len = rc >= 0 ? msg_buf_serial_size(msg) : 0;
    void *wire = len ? malloc(len) : NULL;
    if (len && (!wire || msg_buf_serialize(msg, wire, len, &len) != 0)) {
        rc = PvmNoMem;
        len = 0;
    }
    node_rpc_reply(node, request, rc, wire, len);
    free(wire);
    msg_buf_unref(msg);
}

static void serve_lookup(int src, int request, const struct mb_wire *q, const char *name)
{
    msg_buf_t *msg = NULL;
    int rc = mb_lookup(q->tid, name, q->index, q->flags, &msg);
    if (rc != PvmNotFound || !(q->flags & PvmMboxWaitForInfo)) {
        reply_lookup(src, request, rc, msg);
        return;
    }
    size_t nlen = strlen(name) + 1;
    struct mb_waiter *w = malloc(sizeof *w + nlen);
    if (!w) {
        node_rpc_reply(src, request, PvmNoMem, NULL, 0);
        return;
    }
    *w = (struct mb_waiter){.tid = q->tid, .node = src, .request = request,
                            .index = q->index, .flags = q->flags};
    memcpy(w->name, name, nlen);
    list_push_back(&mb_waiters, &w->link);
}

/* getmboxinfo's answer: per class its name, entry count, and the count's
 * (index, owner, flags) triples. */
static void serve_info(int src, int request, const char *pattern)
{
    size_t len = 0;
    list_for_each(l, &mb_classes) {
        const struct mb_class *c = list_entry(l, struct mb_class, link);
        if (match_anywhere(c->name, pattern))
            len += strlen(c->name) + 1 + sizeof(int) * (1 + 3 * (size_t)count_entries(c));
    }
    unsigned char *buf = malloc(len + 1), *p = buf;
    if (!buf) {
        node_rpc_reply(src, request, PvmNoMem, NULL, 0);
        return;
    }
    list_for_each(l, &mb_classes) {
        const struct mb_class *c = list_entry(l, struct mb_class, link);
        if (!match_anywhere(c->name, pattern))
            continue;
        p = (unsigned char *)stpcpy((char *)p, c->name) + 1;
        int n = count_entries(c);
        memcpy(p, &n, sizeof n);
        p += sizeof n;
        list_for_each(el, &c->entries) {
            const struct mb_entry *e = entry_of(el);
            int v[3] = {e->index, e->owner, e->flags};
            memcpy(p, v, sizeof v);
            p += sizeof v;
        }
    }
    node_rpc_reply(src, request, 0, buf, len);
    free(buf);
}

static void serve_put(int src, int request, const struct mb_wire *q, const char *name,
                      const void *wire, size_t len)
{
    msg_buf_t *msg;
    int rc = pvm_code_from_errno(msg_buf_deserialize(wire, len, &msg));
    if (rc == 0 && (rc = mb_insert(q->tid, name, q->index, q->flags, msg)) < 0)
        msg_buf_unref(msg);
    node_rpc_reply(src, request, rc, NULL, 0);
    if (rc >= 0)
        wake_waiters(name);
}

/* K_MBOX {a: op, b: request; payload: struct mb_wire, name, message}. */
void pvm_mbox_serve(int src, const struct node_frame *f, const void *p, size_t len)
{
    struct mb_wire q;
    const char *name = (const char *)p + sizeof q;
    const char *nul = len > sizeof q ? memchr(name, 0, len - sizeof q) : NULL;
    if (!nul) {
        node_rpc_reply(src, f->b, PvmSysErr, NULL, 0);
        return;
    }
    memcpy(&q, p, sizeof q);
    const char *rest = nul + 1;
    switch (f->a) {
    case MBQ_PUT:
        serve_put(src, f->b, &q, name, rest, len - (size_t)(rest - (const char *)p));
        break;
    case MBQ_LOOKUP: serve_lookup(src, f->b, &q, name); break;
    case MBQ_DELETE: node_rpc_reply(src, f->b, mb_delete(q.tid, name, q.index), NULL, 0); break;
    case MBQ_INFO: serve_info(src, f->b, name); break;
    case MBQ_GONE: tidy_entries(q.tid); break; /* told, not asked */
    default: node_rpc_reply(src, f->b, PvmBadParam, NULL, 0); break;
    }
}

/* ------------------------------------------------------------ here or node 0 */

static bool db_here(void)
{
    return node_job_self() == 0;
}

/* A request to node 0; the result (and *data, *len if given). */
static int ask(int op, int tid, const char *name, int index, int flags, const void *extra,
               size_t extra_len, void **data, size_t *len)
{
    size_t nlen = strlen(name) + 1;
    size_t total = sizeof(struct mb_wire) + nlen;
    unsigned char *req = malloc(total);
    if (!req)
        return PvmNoMem;
    struct mb_wire q = {tid, index, flags};
    memcpy(req, &q, sizeof q);
    memcpy(req + sizeof q, name, nlen);
    int rc = pvm_rpc(0, K_MBOX, op, 0, req, total, extra, extra_len, PvmSysErr, data, len);
    free(req);
    return rc;
}

/* Insert msg (consumed on success); wakes the waiters it satisfies. */
static int db_insert(int tid, const char *name, int req, int flags, msg_buf_t *msg)
{
    if (db_here()) {
        int rc = mb_insert(tid, name, req, flags, msg);
        if (rc >= 0)
            wake_waiters(name);
        return rc;
    }
    size_t len = msg_buf_serial_size(msg);
    void *wire = malloc(len ? len : 1);
    int rc = wire ? pvm_code_from_errno(msg_buf_serialize(msg, wire, len, &len)) : PvmNoMem;
    if (rc == 0)
        rc = ask(MBQ_PUT, tid, name, req, flags, wire, len, NULL, NULL);
    free(wire);
    if (rc >= 0)
        msg_buf_unref(msg); /* node 0 holds its copy */
    return rc;
}

/* Look up (and with PvmMboxWaitForInfo wait) for t: mb_lookup's results. */
static int db_lookup(struct pvm_task *t, const char *name, int index, int flags,
                     msg_buf_t **out)
{
    if (db_here()) {
        int rc = mb_lookup(t->tid, name, index, flags, out);
        if (rc != PvmNotFound || !(flags & PvmMboxWaitForInfo))
            return rc;
        /* a wait: asked like any node (its answer can follow the task) */
    }
    void *data = NULL;
    size_t len = 0;
    /* request and name as two pieces: nothing of the node's is held while
     * it waits, so a task waiting for an entry can move */
    struct mb_wire q = {t->tid, index, flags};
    int rc = pvm_rpc_movable(0, K_MBOX, MBQ_LOOKUP, 0, &q, sizeof q, name, strlen(name) + 1,
                             PvmSysErr, &data, &len);
    if (rc >= 0) {
        int drc = msg_buf_deserialize(data, len, out);
        if (drc != 0)
            rc = pvm_code_from_errno(drc);
    }
    free(data);
    return rc;
}

static int db_delete(int tid, const char *name, int index)
{
    return db_here() ? mb_delete(tid, name, index)
                     : ask(MBQ_DELETE, tid, name, index, 0, NULL, 0, NULL, NULL);
}

/* getmboxinfo's block: built here, or from node 0's answer through a
 * list of classes rebuilt (entries without messages) for info_build. */
static void *db_info(const char *pattern, int *n)
{
    if (db_here())
        return info_build(&mb_classes, pattern, n);
    void *data = NULL;
    size_t len = 0;
    if (ask(MBQ_INFO, 0, pattern, 0, 0, NULL, 0, &data, &len) != 0)
        return NULL;
    list_link_t classes = {&classes, &classes};
    const unsigned char *p = data, *end = p + len;
    bool ok = true;
    while (ok && p < end) {
        const unsigned char *nul = memchr(p, 0, (size_t)(end - p));
        int count = 0;
        ok = nul && (size_t)(end - nul - 1) >= sizeof count;
        struct mb_class *c = NULL;
        if (ok) {
            memcpy(&count, nul + 1, sizeof count);
            ok = count >= 0 && (size_t)(end - nul - 1 - sizeof count) >= 3 * sizeof(int) *
                                                                         (size_t)count;
        }
        if (ok && (c = malloc(sizeof *c + (size_t)(nul - p) + 1))) {
            memcpy(c->name, p, (size_t)(nul - p) + 1);
            list_init(&c->entries);
            list_push_back(&classes, &c->link);
        }
        ok = ok && c;
        p = ok ? nul + 1 + sizeof count : end;
        for (int i = 0; ok && i < count; i++, p += 3 * sizeof(int)) {
            struct mb_entry *e = calloc(1, sizeof *e);
            if (!(ok = e != NULL))
                break;
            int v[3];
            memcpy(v, p, sizeof v);
            *e = (struct mb_entry){.index = v[0], .owner = v[1], .flags = v[2]};
            list_push_back(&c->entries, &e->link);
        }
    }
    void *block = ok ? info_build(&classes, "", n) : NULL;
    list_link_t *l;
    while ((l = list_pop_front(&classes))) {
        struct mb_class *c = list_entry(l, struct mb_class, link);
        list_link_t *el;
        while ((el = list_pop_front(&c->entries)))
            free(entry_of(el));
        free(c);
    }
    free(data);
    return block;
}

/* ------------------------------------------------------------ the calls */

static inline bool name_ok(const char *name)
{
    return name && *name;
}

/* Report code unless it is one of the two PVM only records in pvm_errno. */
static int fail_unless(struct pvm_task *t, const char *fn, int code, int quiet1, int quiet2)
{
    if (code == quiet1 || code == quiet2)
        return pvm_fail_silent(code);
    return pvm_fail(t, fn, code);
}

int pvm_putinfo(char *name, int bufid, int flags)
{
    TASK_OR_FAIL(t, "pvm_putinfo");
    if (!name_ok(name) || bufid <= 0)
        return pvm_fail(t, "pvm_putinfo", PvmBadParam);
    msg_buf_t *b = pvm_buf(t, bufid), *msg;
    if (!b)
        return pvm_fail(t, "pvm_putinfo", PvmNoSuchBuf);
    int rc = pvm_code_from_errno(msg_buf_ref(b, &msg));
    if (rc == 0 && (rc = db_insert(t->tid, name, -1, flags, msg)) < 0)
        msg_buf_unref(msg);
    if (rc < 0)
        return fail_unless(t, "pvm_putinfo", rc, PvmDenied, PvmExists);
    return rc;
}

int pvm_recvinfo(char *name, int index, int flags)
{
    TASK_OR_FAIL(t, "pvm_recvinfo");
    if (!(flags & PvmMboxWaitForInfo))
        pvm_poll_yield(); /* a polled lookup: let the putter run */
    if (!name_ok(name) || index < 0)
        return pvm_fail(t, "pvm_recvinfo", PvmBadParam);
    /* Like a receive, it frees the receive buffer first, found or not. */
    pvm_set_rbuf_replacing(t, 0);
    msg_buf_t *msg = NULL;
    int rc = db_lookup(t, name, index, flags, &msg);
    if (rc >= 0 && (rc = pvm_buf_install(t, msg)) < 0)
        msg_buf_unref(msg);
    if (rc < 0)
        return fail_unless(t, "pvm_recvinfo", rc, PvmNotFound, PvmNotFound);
    pvm_set_rbuf_replacing(t, rc);
    return rc;
}

int pvm_delinfo(char *name, int index, int flags)
{
    TASK_OR_FAIL(t, "pvm_delinfo");
    if (!name_ok(name) || index < 0)
        return pvm_fail(t, "pvm_delinfo", PvmBadParam);
    int rc = db_delete(t->tid, name, index);
    return rc < 0 ? pvm_fail_silent(rc) : rc; /* NotFound, Denied: silent */
}

/* ------------------------------------------------------------ getmboxinfo */

/*
 * Does name match pattern?  PVM's pvmmatchstring: '*' matches any run of
 * characters, "\*" a star, and the pattern may match anywhere in the name
 * (it is not anchored: "O" matches "PO"); an empty pattern matches all.
 */
static bool match_here(const char *s, const char *p);

static bool match_anywhere(const char *s, const char *p)
{
    while (*p == '*')
        p++;
    if (!*p)
        return true;
    for (; *s; s++)
        if (match_here(s, p))
            return true;
    return false;
}

static bool match_here(const char *s, const char *p)
{
    for (;;) {
        if (!*p)
            return true;
        if (*p == '*')
            return match_anywhere(s, p + 1);
        if (p[0] == '\\' && p[1] == '*')
            p++;
        if (*s != *p)
            return false;
        s++;
        p++;
    }
}

static int count_entries(const struct mb_class *c)
{
    int n = 0;
    list_for_each(l, &c->entries)
        n++;
    return n;
}

/* Free the array getmboxinfo last gave task tid. */
static void infolist_drop(int tid)
{
    list_for_each(l, &mb_infolists) {
        struct mb_infolist *h = list_entry(l, struct mb_infolist, link);
        if (h->tid == tid) {
            list_unlink(&h->link);
            free(h->block);
            free(h);
            return;
        }
    }
}

/* Fill one class's record: its three arrays go at *ints, its name at
 * *chars (both tails advance). */
static void fill_class(struct pvmmboxinfo *mi, const struct mb_class *c, int **ints,
                       char **chars)
{
    int n = count_entries(c);
    mi->mi_nentries = n;
    mi->mi_indices = *ints;
    mi->mi_owners = *ints + n;
    mi->mi_flags = *ints + 2 * n;
    *ints += 3 * n;
    int i = 0;
    list_for_each(l, &c->entries) {
        const struct mb_entry *e = entry_of(l);
        mi->mi_indices[i] = e->index;
        mi->mi_owners[i] = e->owner;
        mi->mi_flags[i] = e->flags;
        i++;
    }
    size_t len = strlen(c->name) + 1;
    mi->mi_name = memcpy(*chars, c->name, len);
    *chars += len;
}

/*
 * The matching classes in one malloc'ed block: the records, then every
 * class's three int arrays, then the names.  *n gets the count.
 */
static void *info_build(list_link_t *classes, const char *pattern, int *n_out)
{
    int n = 0;
    size_t nints = 0, nchars = 0;
    list_for_each(l, classes) {
        const struct mb_class *c = list_entry(l, struct mb_class, link);
        if (!match_anywhere(c->name, pattern))
            continue;
        n++;
        nints += 3 * (size_t)count_entries(c);
        nchars += strlen(c->name) + 1;
    }
    struct pvmmboxinfo *mi =
        malloc(sizeof *mi * (size_t)n + sizeof(int) * nints + nchars + 1);
    if (!mi)
        return NULL;
    int *ints = (int *)(mi + n);
    char *chars = (char *)(ints + nints);
    int i = 0;
    list_for_each(l, classes) {
        const struct mb_class *c = list_entry(l, struct mb_class, link);
        if (match_anywhere(c->name, pattern))
            fill_class(&mi[i++], c, &ints, &chars);
    }
    *n_out = n;
    return mi;
}

int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes)
{
    TASK_OR_FAIL(t, "pvm_getmboxinfo");
    infolist_drop(t->tid);
    int n = 0;
    struct mb_infolist *h = malloc(sizeof *h);
    void *block = h ? db_info(pattern ? pattern : "", &n) : NULL;
    if (!block) {
        free(h);
        return pvm_fail(t, "pvm_getmboxinfo", PvmNoMem);
    }
    h->tid = t->tid;
    h->block = block;
    list_push_back(&mb_infolists, &h->link);
    if (nclasses)
        *nclasses = n;
    if (classes)
        *classes = block;
    return 0;
}

/* ------------------------------------------------------------ PVM 3.3 */

int pvm_insert(char *name, int req, int data)
{
    TASK_OR_FAIL(t, "pvm_insert");
    if (!name_ok(name) || req < -1)
        return pvm_fail(t, "pvm_insert", PvmBadParam);
    msg_buf_t *msg;
    int rc = pvm_code_from_errno(msg_buf_new(PvmDataDefault, &msg));
    if (rc == 0) {
        msg_buf_hdr(msg)->src = t->tid;
        if ((rc = pvm_code_from_errno(msg_pack(msg, PVM_INT, &data, 1, 1))) == 0)
            rc = db_insert(t->tid, name, req, MB_INSERT_FLAGS, msg);
        if (rc < 0)
            msg_buf_unref(msg);
    }
    if (rc < 0)
        return fail_unless(t, "pvm_insert", rc, PvmDupEntry, PvmDupEntry);
    return rc;
}

int pvm_lookup(char *name, int req, int *datap)
{
    TASK_OR_FAIL(t, "pvm_lookup");
    pvm_poll_yield();
    if (!name_ok(name) || req < -1)
        return pvm_fail(t, "pvm_lookup", PvmBadParam);
    /* -1: the first entry there is.  The receive buffer is not touched. */
    int flags = req < 0 ? PvmMboxFirstAvail : PvmMboxDefault;
    msg_buf_t *msg = NULL;
    int rc = db_lookup(t, name, req < 0 ? 0 : req, flags, &msg);
    if (rc < 0)
        return fail_unless(t, "pvm_lookup", rc, PvmNoEntry, PvmNoEntry);
    if (datap && msg_unpack(msg, PVM_INT, datap, 1, 1) != 0) {
        /* not an int (an entry from pvm_putinfo): *datap stays as it was */
    }
    msg_buf_unref(msg);
    return rc;
}

int pvm_delete(char *name, int req)
{
    TASK_OR_FAIL(t, "pvm_delete");
    if (!name_ok(name) || req < 0)
        return pvm_fail(t, "pvm_delete", PvmBadParam);
    int rc = db_delete(t->tid, name, req);
    /* PVM's pvm_delete goes through pvm_delinfo, which reports nothing;
     * then only PvmNoEntry stays quiet. */
    return rc < 0 ? fail_unless(t, "pvm_delete", rc, PvmNoEntry, PvmNoEntry) : rc;
}

/* ------------------------------------------------------------ task exit */

/* PVM's mb_tidy: the task's entries go, persistent ones lose their owner. */
static void tidy_entries(int tid)
{
    for (list_link_t *cl = mb_classes.next, *cnext; cl != &mb_classes; cl = cnext) {
        cnext = cl->next;
        struct mb_class *c = list_entry(cl, struct mb_class, link);
        for (list_link_t *l = c->entries.next, *next; l != &c->entries; l = next) {
            next = l->next;
            struct mb_entry *e = entry_of(l);
            if (e->owner != tid)
                continue;
            if (e->flags & PvmMboxPersistent) {
                e->owner = 0;
            } else {
                bool last = next == &c->entries && l->prev == &c->entries;
                entry_free(c, e);
                if (last)
                    break; /* the class is gone */
            }
        }
    }
}

/* tid's waiting lookups (it ended while blocked), or node's (it died). */
static void drop_waiters(int tid, int node)
{
    for (list_link_t *l = mb_waiters.next, *next; l != &mb_waiters; l = next) {
        next = l->next;
        struct mb_waiter *w = list_entry(l, struct mb_waiter, link);
        if (tid ? w->tid != tid : w->node != node)
            continue;
        list_unlink(&w->link);
        free(w);
    }
}

void pvm_mbox_task_leave(struct pvm_task *t)
{
    infolist_drop(t->tid);
    if (db_here()) {
        drop_waiters(t->tid, -1);
        tidy_entries(t->tid);
        return;
    }
    /* Told, not asked: the task is ending. */
    struct mb_wire q = {t->tid, 0, 0};
    struct node_frame f = {K_MBOX, MBQ_GONE, 0, 0};
    node_post(0, &f, &q, sizeof q, "", 1);
}

void pvm_mbox_node_gone(int n)
{
    drop_waiters(0, n);
    /* the entries of its tasks (an owner of another node's tid part may
     * have moved there: the directory knows) */
    for (bool again = true; again;) {
        again = false;
        list_for_each(cl, &mb_classes) {
            struct mb_class *c = list_entry(cl, struct mb_class, link);
            list_for_each(l, &c->entries) {
                int owner = entry_of(l)->owner;
                if (owner && pvm_tid_node(owner) == n) {
                    tidy_entries(owner); /* may free c: look again */
                    again = true;
                    break;
                }
            }
            if (again)
                break;
        }
    }
}
