/*
 * tev-tracer.c - a PVM tracer and the task it traces, written against the
 * PVM 3 API only, so that it builds against UPVM (cc -DTEV_UPVM, libupvm)
 * and against genuine PVM 3.4.6 (gcc tev-tracer.c -lpvm3) and reads the
 * trace events of both (tests/tev/compare-genuine.sh compares them).
 *
 *   tev-tracer MODE      MODE: full | buffered | count | time | user | nested | misc | reg
 *
 * The tracer (started from the shell) makes itself its children's tracer
 * (PvmTraceTid, PvmTraceCode 77), sets their mask (send, recv, spawn, exit;
 * user_defined in mode user; initsend, mkbuf and pkint in mode nested,
 * where mkbuf, called inside initsend, must not be traced; in mode misc
 * parent, getcontext, bufinfo, pstat, config, siblings, mstat, which the
 * child then calls too) and their
 * buffering and option for MODE,
 * spawns one child and receives: the child sends it 4 bytes with tag 10
 * and 12 bytes with tag 11, receives one int with tag 12 and exits (in
 * mode user it also sends a user-defined event first).  The tracer decodes
 * every trace message as a tracer written for PVM would (markers, event
 * ids, names, data ids, types), checks what each event must hold (values
 * included: tags, destinations, sizes, the child's tid), and prints the
 * events' shapes, one line each, with tids and times replaced by names:
 *
 *   D 0x402f send TS:6=* TU:6=* TID:6=C MNB:6=4 DST:6=P MC:6=10 MCX:6=0
 *
 * (D: descriptor form, R: raw form, U: user event; did:type=value).
 *
 * Mode reg: the tracer sets no tracer for its children but registers
 * itself with pvm_reg_tracer (tag 77, mode full's mask, unbuffered, full):
 * the child, spawned without a tracer, gets the registered one's, and its
 * events are mode full's.  The child's own pvm_reg_tracer must fail with
 * PvmAlready (it sends the result as the int of its tag-10 message); the
 * tracer's second call unregisters (0), its third registers again (0).
 * The pvmd sends the registered tracer newtask and endtask, not spntask
 * (genuine PVM 3.4.6's: its spawner's pvmd sends spntask to the tracer
 * the spawn named, none).
 * Exits 0 when every check passed, 1 (saying which failed) otherwise.
 */
#include <limits.h>
#include <pvm3.h>
#include <pvmtev.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifdef TEV_UPVM
#include <upvm.h>
#endif

#define TRACE_TAG 77
#define MAX_EVENTS 64
#define MAX_FIELDS 16
#define MAX_ARRAY 16

static int failures;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            fprintf(stderr, "tev-tracer:%d: check failed: %s: ", __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                         \
            fputc('\n', stderr);                                  \
            failures++;                                           \
        }                                                         \
    } while (0)

/* ------------------------------------------------------------ the child */

static void child_send(int to, int tag, int n, int first)
{
    int v[3] = {first, 2, 3};
    pvm_initsend(PvmDataDefault);
    pvm_pkint(v, n, 1);
    pvm_send(to, tag);
}

/* Mode misc: calls of several kinds, each traced once. */
static void child_misc(int parent)
{
    int n, tag, src, *sibs;
    struct pvmhostinfo *hi;
    pvm_getcontext();
    pvm_bufinfo(pvm_getsbuf(), &n, &tag, &src); /* no buffer yet: an error */
    pvm_pstat(parent);
    pvm_config(&n, &tag, &hi);
    pvm_siblings(&sibs);
    pvm_mstat("no.such.host.invalid");
}

static int parent_tid; /* main's pvm_parent(), when main is the child's */

static int child_main(int argc, char **argv)
{
    int parent = parent_tid > 0 ? parent_tid : pvm_parent(); /* one call */
    if (argc > 1 && strcmp(argv[argc - 1], "misc") == 0)
        child_misc(parent);
    fprintf(stderr, "tev-tracer child: pid %d\n", (int)getpid()); /* which node */
    if (argc > 1 && strcmp(argv[argc - 1], "user") == 0) {
        pvm_initsend(PvmDataTrace);
        int v = 42;
        pvm_pkint(&v, 1, 1);
        pvm_pkstr("hello");
        pvm_send(PVM_TRACE_TID, PVM_TRACE_CODE);
    }
    int first = 1;
    if (argc > 1 && strcmp(argv[argc - 1], "reg") == 0) {
        Pvmtmask m;
        TEV_MASK_INIT(m);
        first = pvm_reg_tracer(0, 99, 0, 0, m, 0, PvmTraceFull); /* a second tracer */
    }
    child_send(parent, 10, 1, first);
    child_send(parent, 11, 3, 1);
    pvm_recv(parent, 12);
    pvm_exit();
    return 0;
}

#ifdef TEV_UPVM
UPVM_TASK("tev-child", child_main)
#endif

/* ------------------------------------------------------------ decoding */

struct field {
    int did, type, count; /* count: for an array */
    int ival;             /* an int scalar */
    int ivals[MAX_ARRAY]; /* an int array */
    char sval[MAX_ARRAY][32]; /* a string, or a string array */
};

struct event {
    bool pvmd;    /* from the pvmd (newtask, spntask, endtask), not the child */
    char form;    /* 'D', 'R', 'U' */
    int id;       /* kind | ENTRY/EXIT */
    char name[32];
    int nfields;
    struct field f[MAX_FIELDS];
};

static int tracer_tid, child_tid;
static time_t started;

static struct event events[MAX_EVENTS];
static int nevents;
static int nmessages, nbuffered; /* the child's */
static bool from_pvmd;           /* the message being decoded */
static int ntables, table_ids;   /* the data-id tables, the ids in the last */
static unsigned table_hash;      /* of its names and descriptions */

/* The descriptors seen, by event id: what a raw event's values are. */
static struct event *described(int id)
{
    for (int i = 0; i < nevents; i++)
        if (events[i].form == 'D' && events[i].id == id && events[i].pvmd == from_pvmd)
            return &events[i];
    return NULL;
}

static int upk_int(void)
{
    int v = INT_MIN;
    if (pvm_upkint(&v, 1, 1) < 0)
        return INT_MIN;
    return v;
}

static void upk_value(struct field *f)
{
    int base = f->type & ~TEV_DATA_ARRAY;
    bool array = f->type & TEV_DATA_ARRAY;
    int n = array ? f->count : 1;
    for (int i = 0; i < n; i++) {
        if (base == TEV_DATA_INT) {
            int v = upk_int();
            if (!array)
                f->ival = v;
            else if (i < MAX_ARRAY)
                f->ivals[i] = v;
        } else if (base == TEV_DATA_STRING) {
            char s[256] = "";
            pvm_upkstr(s);
            if (i < MAX_ARRAY)
                snprintf(f->sval[i], sizeof f->sval[i], "%.31s", s);
        } else if (base == TEV_DATA_LONG) { /* 4 bytes (PvmDataDefault) */
            long l;
            pvm_upklong(&l, 1, 1);
        } else if (base == TEV_DATA_BYTE) {
            char s[256] = "";
            pvm_upkbyte(s, n < 255 ? n : 255, 1);
            snprintf(f->sval[0], sizeof f->sval[0], "%.31s", s);
            return;
        } else {
            CHECK(0, "type %d not decoded", f->type);
        }
    }
}

/* One event after its marker m: its id, [name], fields, end marker. */
static void decode_event(int m)
{
    CHECK(nevents < MAX_EVENTS, "too many events");
    if (nevents >= MAX_EVENTS)
        return;
    struct event *e = &events[nevents++];
    memset(e, 0, sizeof *e);
    e->pvmd = from_pvmd;
    e->form = m == TEV_MARK_EVENT_DESC ? 'D' : m == TEV_MARK_EVENT_RECORD ? 'R' : 'U';
    e->id = upk_int();
    if (e->form != 'R')
        pvm_upkstr(e->name);
    if (e->form == 'D') {
        for (int did; (did = upk_int()) != TEV_MARK_EVENT_DESC_END;) {
            CHECK(did >= 0 && did <= TEV_DID_MAX, "bad did %d in %s", did, e->name);
            if (did < 0 || did > TEV_DID_MAX || e->nfields == MAX_FIELDS)
                return;
            struct field *f = &e->f[e->nfields++];
            f->did = did;
            f->type = upk_int();
            if (f->type & TEV_DATA_ARRAY)
                f->count = upk_int();
            upk_value(f);
        }
    } else if (e->form == 'R') {
        const struct event *d = described(e->id);
        CHECK(d != NULL, "raw event 0x%x before its descriptor", e->id);
        if (!d)
            return;
        if (e != d) /* (a described event is never the one being read) */
            memcpy(e->name, d->name, sizeof e->name);
        for (int i = 0; i < d->nfields; i++) {
            struct field *f = &e->f[e->nfields++];
            f->did = d->f[i].did;
            f->type = d->f[i].type;
            if (f->type & TEV_DATA_ARRAY)
                f->count = upk_int();
            upk_value(f);
        }
        int end = upk_int();
        CHECK(end == TEV_MARK_EVENT_RECORD_END, "raw event 0x%x ends with %d", e->id, end);
    } else { /* user event: time, then typed values up to its end marker */
        e->f[0] = (struct field){.did = TEV_DID_TS, .type = TEV_DATA_INT, .ival = upk_int()};
        e->f[1] = (struct field){.did = TEV_DID_TU, .type = TEV_DATA_INT, .ival = upk_int()};
        e->nfields = 2;
        for (int type; (type = upk_int()) != TEV_MARK_USER_EVENT_RECORD_END;) {
            CHECK(type >= 0 && type <= (TEV_DATA_ARRAY | 15), "bad user type %d", type);
            if (type < 0 || e->nfields == MAX_FIELDS)
                return;
            struct field *f = &e->f[e->nfields++];
            f->did = -1;
            f->type = type;
            if (type & TEV_DATA_ARRAY)
                f->count = upk_int();
            upk_value(f);
        }
    }
}

static unsigned hash_str(unsigned h, const char *s)
{
    while (*s)
        h = h * 33 + (unsigned char)*s++;
    return h * 33;
}

/* The pvmd's data-id table: (id, name, description)... up to its end. */
static void decode_table(void)
{
    ntables++;
    table_ids = 0;
    table_hash = 5381;
    for (int id; (id = upk_int()) != TEV_MARK_DATA_ID_END;) {
        CHECK(id == table_ids, "data id %d at place %d", id, table_ids);
        if (id != table_ids)
            return;
        char name[64] = "", desc[256] = "";
        pvm_upkstr(name);
        pvm_upkstr(desc);
        table_hash = hash_str(hash_str(table_hash, name), desc);
        if (id == TEV_DID_CC)
            CHECK(strcmp(name, "CC") == 0 && strcmp(desc, "Condition Code") == 0, "%s: %s", name,
                  desc);
        table_ids++;
    }
}

/* A trace message: one event, or a buffer of them, or the data-id table. */
static void decode_message(int src)
{
    from_pvmd = src != child_tid;
    int m = upk_int();
    if (m == TEV_MARK_DATA_ID) {
        decode_table();
        return;
    }
    if (!from_pvmd)
        nmessages++;
    if (m == TEV_MARK_EVENT_BUFFER) {
        nbuffered++;
        while ((m = upk_int()) != TEV_MARK_EVENT_BUFFER_END && m != INT_MIN)
            decode_event(m);
        CHECK(m == TEV_MARK_EVENT_BUFFER_END, "buffer without its end marker");
        return;
    }
    CHECK(m == TEV_MARK_EVENT_DESC || m == TEV_MARK_EVENT_RECORD ||
              m == TEV_MARK_USER_EVENT_RECORD,
          "a message starts with %d", m);
    decode_event(m);
}

/* ------------------------------------------------------------ checking */

static const struct field *field(const struct event *e, int did)
{
    for (int i = 0; i < e->nfields; i++)
        if (e->f[i].did == did)
            return &e->f[i];
    return NULL;
}

static int value(const struct event *e, int did)
{
    const struct field *f = field(e, did);
    CHECK(f != NULL, "%s 0x%x has no did %d", e->name, e->id, did);
    return f ? f->ival : INT_MIN;
}

/* e has exactly these dids, in this order, each an int scalar unless
 * listed in arrays. */
static void check_dids(const struct event *e, const int *dids, int n)
{
    CHECK(e->nfields == n, "%s 0x%x has %d values, not %d", e->name, e->id, e->nfields, n);
    for (int i = 0; i < n && i < e->nfields; i++)
        CHECK(e->f[i].did == dids[i], "%s 0x%x value %d is did %d, not %d", e->name, e->id, i,
              e->f[i].did, dids[i]);
}


static void check_header(const struct event *e)
{
    int ts = value(e, TEV_DID_TS), tu = value(e, TEV_DID_TU);
    CHECK(ts >= started - 5 && ts <= time(NULL) + 5, "%s: TS %d", e->name, ts);
    CHECK(tu >= 0 && tu < 1000000, "%s: TU %d", e->name, tu);
    CHECK(value(e, TEV_DID_TID) == child_tid, "%s: TID t%x, the child is t%x", e->name,
          value(e, TEV_DID_TID), child_tid);
}

static void expect(int i, char form, int id)
{
    CHECK(i < nevents, "event %d missing (%c 0x%x)", i, form, id);
    if (i >= nevents)
        return;
    CHECK(events[i].form == form && events[i].id == id, "event %d is %c 0x%x, not %c 0x%x", i,
          events[i].form, events[i].id, form, id);
}

#define E(kind) ((kind) | TEV_EVENT_ENTRY)
#define X(kind) ((kind) | TEV_EVENT_EXIT)

static void check_send(const struct event *e, bool entry, int bytes, int tag)
{
    static const int in[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_MNB,
                             TEV_DID_DST, TEV_DID_MC, TEV_DID_MCX};
    static const int out[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_CC};
    check_header(e);
    if (!entry) {
        check_dids(e, out, 4);
        CHECK(value(e, TEV_DID_CC) == 0, "send CC %d", value(e, TEV_DID_CC));
        return;
    }
    check_dids(e, in, 7);
    CHECK(value(e, TEV_DID_MNB) == bytes, "send MNB %d, not %d", value(e, TEV_DID_MNB), bytes);
    CHECK(value(e, TEV_DID_DST) == tracer_tid, "send DST t%x", value(e, TEV_DID_DST));
    CHECK(value(e, TEV_DID_MC) == tag, "send MC %d, not %d", value(e, TEV_DID_MC), tag);
    CHECK(value(e, TEV_DID_MCX) == 0, "send MCX %d", value(e, TEV_DID_MCX));
}

static void check_recv(const struct event *e, bool entry)
{
    static const int in[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_RST,
                             TEV_DID_RMC, TEV_DID_RCX};
    static const int out[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_MB,
                              TEV_DID_MNB, TEV_DID_MC, TEV_DID_MCX, TEV_DID_SRC};
    check_header(e);
    if (entry) {
        check_dids(e, in, 6);
        CHECK(value(e, TEV_DID_RST) == tracer_tid, "recv RST t%x", value(e, TEV_DID_RST));
        CHECK(value(e, TEV_DID_RMC) == 12, "recv RMC %d", value(e, TEV_DID_RMC));
        CHECK(value(e, TEV_DID_RCX) == 0, "recv RCX %d", value(e, TEV_DID_RCX));
        return;
    }
    check_dids(e, out, 8);
    CHECK(value(e, TEV_DID_MB) > 0, "recv MB %d", value(e, TEV_DID_MB));
    CHECK(value(e, TEV_DID_MNB) == 4, "recv MNB %d", value(e, TEV_DID_MNB));
    CHECK(value(e, TEV_DID_MC) == 12, "recv MC %d", value(e, TEV_DID_MC));
    CHECK(value(e, TEV_DID_SRC) == tracer_tid, "recv SRC t%x", value(e, TEV_DID_SRC));
}

/* The child's events in PvmTraceFull: two sends (the first of each of
 * ENTRY/EXIT described, the second raw), the receive, the exit. */
static void check_full(int first)
{
    int i = first;
    expect(i, 'D', E(TEV_SEND));
    CHECK(strcmp(events[i].name, "send") == 0, "name %s", events[i].name);
    check_send(&events[i++], true, 4, 10);
    expect(i, 'D', X(TEV_SEND));
    check_send(&events[i++], false, 0, 0);
    expect(i, 'R', E(TEV_SEND));
    check_send(&events[i++], true, 12, 11);
    expect(i, 'R', X(TEV_SEND));
    check_send(&events[i++], false, 0, 0);
    expect(i, 'D', E(TEV_RECV));
    CHECK(strcmp(events[i].name, "recv") == 0, "name %s", events[i].name);
    check_recv(&events[i++], true);
    expect(i, 'D', X(TEV_RECV));
    check_recv(&events[i++], false);
    expect(i, 'D', E(TEV_EXIT));
    CHECK(strcmp(events[i].name, "exit") == 0, "name %s", events[i].name);
    static const int hdr[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID};
    check_header(&events[i]);
    check_dids(&events[i++], hdr, 3);
    CHECK(nevents == i, "%d events, not %d", nevents, i);
}

/* PvmTraceCount / PvmTraceTime: one summary, "exit" once, "recv" and
 * "send" twice per call (ENTRY and EXIT both count, as in libpvm). */
static void check_summary(bool timing)
{
    CHECK(nevents == 1 && nmessages == 1, "%d events in %d messages", nevents, nmessages);
    const struct event *e = &events[0];
    int kind = timing ? TEV_TIMING : TEV_PROFILING;
    expect(0, 'D', kind);
    CHECK(strcmp(e->name, timing ? "timing" : "profiling") == 0, "name %s", e->name);
    static const int counted[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_VCT,
                                  TEV_DID_VID, TEV_DID_PRF};
    static const int timed[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_VCT,
                                TEV_DID_VID, TEV_DID_TGS, TEV_DID_TGU, TEV_DID_PRF};
    check_dids(e, timing ? timed : counted, timing ? 8 : 6);
    check_header(e);
    CHECK(value(e, TEV_DID_VCT) == 3, "VCT %d", value(e, TEV_DID_VCT));
    const struct field *vid = field(e, TEV_DID_VID), *prf = field(e, TEV_DID_PRF);
    /* exit: its ENTRY only; recv: 1 call x 2; send: 2 calls x 2 */
    static const char *names[] = {"exit", "recv", "send"};
    static const int counts[] = {1, 2, 4};
    CHECK(vid && prf && vid->count == 3 && prf->count == 3, "VID/PRF of 3");
    for (int k = 0; vid && prf && k < 3; k++) {
        CHECK(strcmp(vid->sval[k], names[k]) == 0, "VID[%d] %s", k, vid->sval[k]);
        CHECK(prf->ivals[k] == counts[k], "PRF[%d] (%s) %d, not %d", k, names[k],
              prf->ivals[k], counts[k]);
    }
}

/* ------------------------------------------------------------ printing */

/* The short names of the data ids these events hold (pvmtev.h's). */
static const char *did_name(int did)
{
    static char other[16];
    switch (did) {
    case -1: return "-";
    case TEV_DID_CC: return "CC";
    case TEV_DID_MC: return "MC";
    case TEV_DID_MCX: return "MCX";
    case TEV_DID_MB: return "MB";
    case TEV_DID_MNB: return "MNB";
    case TEV_DID_SRC: return "SRC";
    case TEV_DID_DST: return "DST";
    case TEV_DID_PRF: return "PRF";
    case TEV_DID_RST: return "RST";
    case TEV_DID_RMC: return "RMC";
    case TEV_DID_RCX: return "RCX";
    case TEV_DID_TID: return "TID";
    case TEV_DID_TS: return "TS";
    case TEV_DID_TU: return "TU";
    case TEV_DID_TGS: return "TGS";
    case TEV_DID_TGU: return "TGU";
    case TEV_DID_VCT: return "VCT";
    case TEV_DID_VID: return "VID";
    case TEV_DID_PT: return "PT";
    case TEV_DID_TF: return "TF";
    case TEV_DID_TN: return "TN";
    case TEV_DID_TST: return "TST";
    case TEV_DID_TUS: return "TUS";
    case TEV_DID_TUU: return "TUU";
    case TEV_DID_TSS: return "TSS";
    case TEV_DID_TSU: return "TSU";
    case TEV_DID_ME: return "ME";
    case TEV_DID_MSB: return "MSB";
    case TEV_DID_PDA: return "PDA";
    case TEV_DID_PC: return "PC";
    case TEV_DID_PSD: return "PSD";
    case TEV_DID_CXC: return "CXC";
    case TEV_DID_INB: return "INB";
    case TEV_DID_IMC: return "IMC";
    case TEV_DID_IST: return "IST";
    case TEV_DID_TT: return "TT";
    case TEV_DID_NH: return "NH";
    case TEV_DID_NA: return "NA";
    case TEV_DID_SIB: return "SIB";
    case TEV_DID_HN: return "HN";
    case TEV_DID_HS: return "HS";
    }
    snprintf(other, sizeof other, "%d", did);
    return other;
}

static void print_value(const struct field *f)
{
    int base = f->type & ~TEV_DATA_ARRAY;
    /* what differs from run to run, or between PVM and UPVM (buffer ids:
     * docs/compat.md) */
    if (f->did == TEV_DID_TS || f->did == TEV_DID_TU || f->did == TEV_DID_MB ||
        f->did == TEV_DID_TGS || f->did == TEV_DID_TGU || f->did == TEV_DID_TN ||
        f->did == TEV_DID_TUS || f->did == TEV_DID_TUU || f->did == TEV_DID_TSS ||
        f->did == TEV_DID_TSU || f->did == TEV_DID_PDA || f->did == TEV_DID_MSB) {
        printf("*");
        return;
    }
    if (f->type & TEV_DATA_ARRAY && base != TEV_DATA_BYTE) {
        printf("[");
        for (int i = 0; i < f->count && i < MAX_ARRAY; i++) {
            if (base == TEV_DATA_STRING)
                printf("%s%s", i ? "," : "", f->sval[i]);
            else if (f->ivals[i] == tracer_tid || f->ivals[i] == child_tid)
                printf("%s%s", i ? "," : "", f->ivals[i] == tracer_tid ? "P" : "C");
            else
                printf("%s%d", i ? "," : "", f->ivals[i]);
        }
        printf("]");
        return;
    }
    if (base == TEV_DATA_STRING || base == TEV_DATA_BYTE)
        printf("%s", f->sval[0]);
    else if (base == TEV_DATA_INT && f->ival == tracer_tid)
        printf("P");
    else if (base == TEV_DATA_INT && f->ival == child_tid)
        printf("C");
    else if (base == TEV_DATA_INT)
        printf("%d", f->ival);
    else
        printf("?");
}

static void print_events(void)
{
    printf("messages %d buffered %d\n", nmessages, nbuffered);
    printf("T %d tables of %d ids, hash %08x\n", ntables, table_ids, table_hash);
    for (int i = 0; i < nevents; i++) {
        const struct event *e = &events[i];
        printf("%s%c 0x%x %s", e->pvmd ? "pvmd " : "", e->form, e->id, e->name);
        for (int k = 0; k < e->nfields; k++) {
            const struct field *f = &e->f[k];
            printf(" %s:%d=", did_name(f->did), f->type);
            print_value(f);
        }
        printf("\n");
    }
}

/* ------------------------------------------------------------ the tracer */

static void set_child_mask(bool user, bool nested, bool misc)
{
    Pvmtmask m;
    TEV_MASK_INIT(m);
    TEV_MASK_SET(m, TEV_SEND);
    TEV_MASK_SET(m, TEV_RECV);
    TEV_MASK_SET(m, TEV_SPAWN);
    TEV_MASK_SET(m, TEV_EXIT);
    if (user)
        TEV_MASK_SET(m, TEV_USER_DEFINED);
    if (nested) {
        TEV_MASK_SET(m, TEV_INITSEND);
        TEV_MASK_SET(m, TEV_MKBUF);
        TEV_MASK_SET(m, TEV_PKINT);
    }
    if (misc) {
        static const int kinds[] = {TEV_PARENT, TEV_GETCONTEXT, TEV_BUFINFO, TEV_GETSBUF,
                                    TEV_PSTAT, TEV_CONFIG, TEV_SIBLINGS, TEV_MSTAT};
        for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            TEV_MASK_SET(m, kinds[k]);
    }
    CHECK(pvm_settmask(PvmTaskChild, m) == 0, "settmask");
    Pvmtmask back;
    CHECK(pvm_gettmask(PvmTaskChild, back) == 0 && memcmp(m, back, TEV_MASK_LENGTH) == 0,
          "gettmask gives the mask back");
}

static int spawn_child(const char *self, const char *mode)
{
    char *args[] = {(char *)mode, NULL};
    int tid = -1;
#ifdef TEV_UPVM
    (void)self;
    int n = pvm_spawn("tev-child", args, PvmTaskDefault, NULL, 1, &tid);
#else
    char path[PATH_MAX];
    if (!realpath(self, path))
        snprintf(path, sizeof path, "%s", self);
    int n = pvm_spawn(path, args, PvmTaskDefault, NULL, 1, &tid);
#endif
    CHECK(n == 1, "spawn: %d (t%x)", n, tid);
    return n == 1 ? tid : -1;
}

static bool seen(bool pvmd, int id)
{
    for (int i = 0; i < nevents; i++)
        if (events[i].pvmd == pvmd && events[i].id == id)
            return true;
    return false;
}

/* Receive trace messages until the child's last event (its EXIT, or the
 * summary) and the pvmd's endtask have come, 10 s at most for each. */
static void collect(int last)
{
    struct timeval tmout = {10, 0};
    while (!seen(false, last) || !seen(true, TEV_ENDTASK)) {
        int id = pvm_trecv(-1, TRACE_TAG, &tmout);
        CHECK(id > 0, "no trace message within 10 s (%d events so far)", nevents);
        if (id <= 0)
            return;
        int bytes, tag, src;
        pvm_bufinfo(id, &bytes, &tag, &src);
        CHECK(src == child_tid || src == (int)0x80000000, "a trace message from t%x", src);
        decode_message(src);
    }
}

/* The pvmd's events: newtask, spntask (the child, its parent), endtask.
 * Mode reg: no spntask (the spawner's pvmd sends it to the tracer the
 * spawn gave, none; the registered one is put in by the child's pvmd). */
static void check_pvmd(int first, bool spntask_too)
{
    static const int newtask[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID,
                                  TEV_DID_PT, TEV_DID_TF, TEV_DID_TN};
    static const int spntask[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_PT};
    static const int endtask[] = {TEV_DID_TS, TEV_DID_TU, TEV_DID_TID, TEV_DID_TST,
                                  TEV_DID_TUS, TEV_DID_TUU, TEV_DID_TSS, TEV_DID_TSU};
    /* one table from each pvmd that sends an event: the child's (newtask)
     * and the spawner's (spntask), one pvmd on one host */
    CHECK(ntables >= 1 && ntables <= 2 && table_ids == TEV_DID_MAX + 1, "%d tables of %d ids",
          ntables, table_ids);
    int i = first;
    expect(i, 'D', TEV_NEWTASK);
    check_dids(&events[i], newtask, 6);
    check_header(&events[i]);
    CHECK(value(&events[i], TEV_DID_PT) == tracer_tid, "newtask PT");
    CHECK(value(&events[i++], TEV_DID_TF) == 0, "newtask TF");
    if (spntask_too) {
        expect(i, 'D', TEV_SPNTASK);
        check_dids(&events[i], spntask, 4);
        check_header(&events[i]);
        CHECK(value(&events[i++], TEV_DID_PT) == tracer_tid, "spntask PT");
    }
    expect(i, 'D', TEV_ENDTASK);
    check_dids(&events[i], endtask, 8);
    check_header(&events[i]);
    CHECK(value(&events[i++], TEV_DID_TST) == 0, "endtask TST");
    CHECK(nevents == i, "%d events, not %d", nevents, i);
}

/* Put the pvmd's events after the child's, each in its order. */
static int split_events(void)
{
    struct event sorted[MAX_EVENTS];
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nevents; i++)
            if (events[i].pvmd == (pass == 1))
                sorted[n++] = events[i];
    memcpy(events, sorted, (size_t)n * sizeof *events);
    int children = 0;
    while (children < n && !events[children].pvmd)
        children++;
    return children;
}

int main(int argc, char **argv)
{
    if ((parent_tid = pvm_parent()) > 0)
        return child_main(argc, argv);
    const char *mode = argc > 1 ? argv[1] : "full";
    bool user = strcmp(mode, "user") == 0, nested = strcmp(mode, "nested") == 0;
    bool misc = strcmp(mode, "misc") == 0, reg = strcmp(mode, "reg") == 0;
    int opt = strcmp(mode, "count") == 0  ? PvmTraceCount
              : strcmp(mode, "time") == 0 ? PvmTraceTime
                                          : PvmTraceFull;
    int buf = strcmp(mode, "buffered") == 0 ? 4096 : 0;
    started = time(NULL);
    tracer_tid = pvm_mytid();
    CHECK(tracer_tid > 0, "mytid %d", tracer_tid);
    if (reg) {
        /* the registered tracer's settings, for the tasks without a tracer */
        Pvmtmask m, none;
        set_child_mask(false, false, false); /* mode full's mask, into m */
        CHECK(pvm_gettmask(PvmTaskChild, m) == 0, "gettmask");
        TEV_MASK_INIT(none);
        CHECK(pvm_settmask(PvmTaskChild, none) == 0, "settmask"); /* the child's own: none */
        CHECK(pvm_getopt(PvmTraceTid) == 0, "no tracer for the children");
        int cc = pvm_reg_tracer(0, TRACE_TAG, 0, 0, m, 0, PvmTraceFull);
        CHECK(cc == 0, "pvm_reg_tracer: %d", cc);
        goto spawn;
    }
    CHECK(pvm_setopt(PvmTraceTid, tracer_tid) == 0, "PvmTraceTid");
    CHECK(pvm_getopt(PvmTraceTid) == tracer_tid, "PvmTraceTid read back");
    CHECK(pvm_setopt(PvmTraceCode, TRACE_TAG) == 0, "PvmTraceCode");
    CHECK(pvm_setopt(PvmTraceBuffer, buf) == 0, "PvmTraceBuffer");
    pvm_setopt(PvmTraceOptions, opt);
    CHECK(pvm_getopt(PvmTraceOptions) == opt, "PvmTraceOptions %d", pvm_getopt(PvmTraceOptions));
    set_child_mask(user, nested, misc);

spawn:
    child_tid = spawn_child(argv[0], mode);
    fprintf(stderr, "tev-tracer %s: tracer t%x (pid %d), child t%x\n", mode,
            (unsigned)tracer_tid, (int)getpid(), (unsigned)child_tid);
    if (child_tid > 0) {
        CHECK(pvm_recv(child_tid, 10) > 0, "recv 10");
        int first = 0;
        pvm_upkint(&first, 1, 1);
        CHECK(first == (reg ? PvmAlready : 1), "the child's first int: %d", first);
        CHECK(pvm_recv(child_tid, 11) > 0, "recv 11");
        int v = 7;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(child_tid, 12) == 0, "send 12");
        collect(opt == PvmTraceFull ? E(TEV_EXIT) : opt == PvmTraceTime ? TEV_TIMING
                                                                        : TEV_PROFILING);
    }
    if (reg) {
        Pvmtmask m;
        TEV_MASK_INIT(m);
        CHECK(pvm_reg_tracer(0, 0, 0, 0, m, 0, 0) == 0, "the second call unregisters");
        CHECK(pvm_reg_tracer(0, TRACE_TAG, 0, 0, m, 0, PvmTraceFull) == 0,
              "the third registers again");
    }
    int children = split_events();
    print_events();
    check_pvmd(children, !reg);
    nevents = children; /* the child's, from here on */
    if (misc) {
        /* each call's ENTRY and EXIT, described, then the sends, the
         * receive and the exit as in mode full */
        static const int kinds[] = {TEV_PARENT, TEV_GETCONTEXT, TEV_GETSBUF, TEV_BUFINFO,
                                    TEV_PSTAT, TEV_CONFIG, TEV_SIBLINGS, TEV_MSTAT};
        int i = 0;
        for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            expect(i++, 'D', E(kinds[k]));
            expect(i++, 'D', X(kinds[k]));
        }
        expect(i++, 'D', E(TEV_SEND));
        CHECK(nevents == i + 6, "%d events, not %d", nevents, i + 6);
        CHECK(value(&events[1], TEV_DID_PT) == tracer_tid, "parent's PT");
        CHECK(field(&events[13], TEV_DID_SIB) && field(&events[13], TEV_DID_SIB)->count == 1 &&
                  field(&events[13], TEV_DID_SIB)->ivals[0] == child_tid,
              "siblings' SIB");
        CHECK(value(&events[7], TEV_DID_CC) < 0 && value(&events[7], TEV_DID_INB) ==
                  value(&events[7], TEV_DID_CC), "bufinfo of no buffer");
        CHECK(value(&events[11], TEV_DID_NH) == 1 && value(&events[11], TEV_DID_CC) == 0,
              "config's NH, CC");
        CHECK(value(&events[15], TEV_DID_HS) == PvmNoHost, "mstat's HS");
    } else if (nested) {
        /* per send: initsend, pkint, send (ENTRY, EXIT each; never mkbuf,
         * which initsend calls), then recv and exit */
        static const int kinds[] = {TEV_INITSEND, TEV_PKINT, TEV_SEND, TEV_INITSEND,
                                    TEV_PKINT, TEV_SEND, TEV_RECV};
        int i = 0;
        for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            char form = k < 3 ? 'D' : kinds[k] == TEV_RECV ? 'D' : 'R';
            expect(i++, form, E(kinds[k]));
            expect(i++, form, X(kinds[k]));
        }
        expect(i++, 'D', E(TEV_EXIT));
        CHECK(nevents == i, "%d events, not %d", nevents, i);
        CHECK(value(&events[1], TEV_DID_MSB) > 0, "initsend's MSB");
        CHECK(value(&events[2], TEV_DID_PC) == 1 && value(&events[2], TEV_DID_PSD) == 1,
              "pkint's PC, PSD");
    } else if (opt == PvmTraceFull && !user) {
        check_full(0);
        CHECK(nmessages == (buf ? 1 : 7) && nbuffered == (buf ? 1 : 0),
              "%d messages, %d buffered", nmessages, nbuffered);
    } else if (user) {
        /* the ENTRY event of its pvm_send (the buffer: 60 bytes), the user
         * event (sent by that pvm_send), the EXIT event, then the rest */
        expect(0, 'D', E(TEV_SEND));
        CHECK(value(&events[0], TEV_DID_DST) == PVM_TRACE_TID &&
                  value(&events[0], TEV_DID_MC) == PVM_TRACE_CODE &&
                  value(&events[0], TEV_DID_MNB) == 60,
              "its pvm_send (MNB %d)", value(&events[0], TEV_DID_MNB));
        expect(1, 'U', TEV_USER_DEFINED);
        CHECK(strcmp(events[1].name, "user_defined") == 0, "name %s", events[1].name);
        CHECK(events[1].nfields == 4 && events[1].f[2].type == TEV_DATA_INT &&
                  events[1].f[2].ival == 42 &&
                  events[1].f[3].type == (TEV_DATA_BYTE | TEV_DATA_ARRAY) &&
                  events[1].f[3].count == 5 && strcmp(events[1].f[3].sval[0], "hello") == 0,
              "the user event's values: 42, \"hello\"");
        expect(2, 'D', X(TEV_SEND));
        expect(3, 'R', E(TEV_SEND));
        CHECK(nevents == 10 && nmessages == 10, "%d events in %d messages", nevents, nmessages);
    } else {
        check_summary(opt == PvmTraceTime);
    }
    pvm_exit();
    if (failures)
        fprintf(stderr, "tev-tracer %s: %d check(s) failed\n", mode, failures);
    return failures ? 1 : 0;
}
