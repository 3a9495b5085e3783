/*
 * tev.c - PVM 3.4.6's own tracing, per task (tev.h says how the API
 * functions use it; docs/pvm-tracing.md what a tracer receives).
 *
 * A traced task packs its events into an ordinary PvmDataDefault message
 * with the ordinary encoders, exactly as libpvm's tev.c lays them out:
 *
 *   first event of a kind (and ENTRY/EXIT), the descriptor form:
 *     -5, kind|ENTRY or EXIT, name, then per value: did, type, [count], value(s), -6
 *   afterwards, the raw form:
 *     -7, kind|ENTRY or EXIT, then per value: [count], value(s), -8
 *
 * with TS, TU (gettimeofday) and TID first.  Unbuffered (PvmTraceBuffer
 * 0), each event is a message; buffered, a message starts with -1, takes
 * events until its size reaches the buffer's, and ends with -2.  With
 * PvmTraceTime/PvmTraceCount nothing is sent per event: each kind is
 * counted (and timed) instead, once for its ENTRY and once for its EXIT
 * event, as libpvm does, and pvm_exit sends one summary message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "pvm/tev.h"

/* ------------------------------------------------------------ names */

/* The names a tracer sees (the event's name in a descriptor, the
 * "timing"/"profiling" lists): PVM's, the event's macro in lower case. */
static const char *const event_names[TEV_MAX + 1] = {
    [TEV_ADDHOSTS] = "addhosts",       [TEV_BARRIER] = "barrier",
    [TEV_BCAST] = "bcast",             [TEV_BUFINFO] = "bufinfo",
    [TEV_CONFIG] = "config",           [TEV_DELETE] = "delete",
    [TEV_DELHOSTS] = "delhosts",       [TEV_EXIT] = "exit",
    [TEV_FREEBUF] = "freebuf",         [TEV_GETFDS] = "getfds",
    [TEV_GETINST] = "getinst",         [TEV_GETOPT] = "getopt",
    [TEV_GETRBUF] = "getrbuf",         [TEV_GETSBUF] = "getsbuf",
    [TEV_GETTID] = "gettid",           [TEV_GSIZE] = "gsize",
    [TEV_HALT] = "halt",               [TEV_INITSEND] = "initsend",
    [TEV_INSERT] = "insert",           [TEV_JOINGROUP] = "joingroup",
    [TEV_KILL] = "kill",               [TEV_LOOKUP] = "lookup",
    [TEV_LVGROUP] = "lvgroup",         [TEV_MCAST] = "mcast",
    [TEV_MKBUF] = "mkbuf",             [TEV_MSTAT] = "mstat",
    [TEV_MYTID] = "mytid",             [TEV_NOTIFY] = "notify",
    [TEV_NRECV] = "nrecv",             [TEV_PARENT] = "parent",
    [TEV_PERROR] = "perror",           [TEV_PKBYTE] = "pkbyte",
    [TEV_PKCPLX] = "pkcplx",           [TEV_PKDCPLX] = "pkdcplx",
    [TEV_PKDOUBLE] = "pkdouble",       [TEV_PKFLOAT] = "pkfloat",
    [TEV_PKINT] = "pkint",             [TEV_PKUINT] = "pkuint",
    [TEV_PKLONG] = "pklong",           [TEV_PKULONG] = "pkulong",
    [TEV_PKSHORT] = "pkshort",         [TEV_PKUSHORT] = "pkushort",
    [TEV_PKSTR] = "pkstr",             [TEV_PROBE] = "probe",
    [TEV_PSTAT] = "pstat",             [TEV_RECV] = "recv",
    [TEV_RECVF] = "recvf",             [TEV_SEND] = "send",
    [TEV_SENDSIG] = "sendsig",         [TEV_SETOPT] = "setopt",
    [TEV_SETRBUF] = "setrbuf",         [TEV_SETSBUF] = "setsbuf",
    [TEV_SPAWN] = "spawn",             [TEV_START_PVMD] = "start_pvmd",
    [TEV_TASKS] = "tasks",             [TEV_TICKLE] = "tickle",
    [TEV_TIDTOHOST] = "tidtohost",     [TEV_TRECV] = "trecv",
    [TEV_UPKBYTE] = "upkbyte",         [TEV_UPKCPLX] = "upkcplx",
    [TEV_UPKDCPLX] = "upkdcplx",       [TEV_UPKDOUBLE] = "upkdouble",
    [TEV_UPKFLOAT] = "upkfloat",       [TEV_UPKINT] = "upkint",
    [TEV_UPKUINT] = "upkuint",         [TEV_UPKLONG] = "upklong",
    [TEV_UPKULONG] = "upkulong",       [TEV_UPKSHORT] = "upkshort",
    [TEV_UPKUSHORT] = "upkushort",     [TEV_UPKSTR] = "upkstr",
    [TEV_VERSION] = "version",         [TEV_REG_HOSTER] = "reg_hoster",
    [TEV_REG_RM] = "reg_rm",           [TEV_REG_TASKER] = "reg_tasker",
    [TEV_REG_TRACER] = "reg_tracer",   [TEV_NEWTASK] = "newtask",
    [TEV_ENDTASK] = "endtask",         [TEV_SPNTASK] = "spntask",
    [TEV_ARCHCODE] = "archcode",       [TEV_CATCHOUT] = "catchout",
    [TEV_GETMWID] = "getmwid",         [TEV_GETTMASK] = "gettmask",
    [TEV_HOSTSYNC] = "hostsync",       [TEV_PACKF] = "packf",
    [TEV_PRECV] = "precv",             [TEV_PSEND] = "psend",
    [TEV_REDUCE] = "reduce",           [TEV_SETMWID] = "setmwid",
    [TEV_SETTMASK] = "settmask",       [TEV_UNPACKF] = "unpackf",
    [TEV_GATHER] = "gather",           [TEV_SCATTER] = "scatter",
    [TEV_PUTINFO] = "putinfo",         [TEV_GETINFO] = "getinfo",
    [TEV_DELINFO] = "delinfo",         [TEV_GETMBOXINFO] = "getmboxinfo",
    [TEV_NEWCONTEXT] = "newcontext",   [TEV_FREECONTEXT] = "freecontext",
    [TEV_SETCONTEXT] = "setcontext",   [TEV_GETCONTEXT] = "getcontext",
    [TEV_SIBLINGS] = "siblings",       [TEV_GETMINFO] = "getminfo",
    [TEV_SETMINFO] = "setminfo",       [TEV_ADDMHF] = "addmhf",
    [TEV_DELMHF] = "delmhf",           [TEV_MHF_INVOKE] = "mhf_invoke",
    [TEV_TIMING] = "timing",           [TEV_PROFILING] = "profiling",
    [TEV_USER_DEFINED] = "user_defined",
};

/* Each data id's short name and description, as PVM's data-id table
 * (pvm_reg_tracer's tracer receives it) gives them. */
static const struct {
    const char *name, *desc;
} did_names[TEV_DID_MAX + 1] = {
    [TEV_DID_AN] = {"AN", "PVM Architecture Name"},
    [TEV_DID_AC] = {"AC", "PVM Architecture Code"},
    [TEV_DID_AS] = {"AS", "Argument Strings (Argc/Argv)"},
    [TEV_DID_BF] = {"BF", "Block Flag"},
    [TEV_DID_CC] = {"CC", "Condition Code"},
    [TEV_DID_CN] = {"CN", "Class Name"},
    [TEV_DID_CI] = {"CI", "Class Index"},
    [TEV_DID_CF] = {"CF", "Class Flags"},
    [TEV_DID_CD] = {"CD", "Class Data"},
    [TEV_DID_CR] = {"CR", "Returned Class Data"},
    [TEV_DID_CL] = {"CL", "Returned Class Names"},
    [TEV_DID_CDA] = {"CDA", "Collective Data Address"},
    [TEV_DID_CDT] = {"CDT", "Collective Data Type"},
    [TEV_DID_CDX] = {"CDX", "Collective Data"},
    [TEV_DID_CDC] = {"CDC", "Collective Count"},
    [TEV_DID_CGI] = {"CGI", "Collective Group Result Instance"},
    [TEV_DID_CRF] = {"CRF", "Collective Reduce Function"},
    [TEV_DID_CXC] = {"CXC", "Current Message Context"},
    [TEV_DID_CXF] = {"CXF", "Freed Message Context"},
    [TEV_DID_CXN] = {"CXN", "New Message Context"},
    [TEV_DID_CXS] = {"CXS", "Set Message Context"},
    [TEV_DID_ERI] = {"ERI", "PVM Error Identifier"},
    [TEV_DID_ERR] = {"ERR", "PVM Error String"},
    [TEV_DID_FDS] = {"FDS", "File Descriptors"},
    [TEV_DID_FP] = {"FP", "File Pointer"},
    [TEV_DID_GN] = {"GN", "Group Name"},
    [TEV_DID_GI] = {"GI", "Group Instance Number"},
    [TEV_DID_GT] = {"GT", "Group Task ID"},
    [TEV_DID_GS] = {"GS", "Group Size"},
    [TEV_DID_GBC] = {"GBC", "Group Barrier Count"},
    [TEV_DID_HN] = {"HN", "Host Name"},
    [TEV_DID_HNL] = {"HNL", "Host Name List"},
    [TEV_DID_HNA] = {"HNA", "Host Name Alias"},
    [TEV_DID_HPT] = {"HPT", "Host PVMD Task ID"},
    [TEV_DID_HA] = {"HA", "Host Architecture"},
    [TEV_DID_HSP] = {"HSP", "Host Speed"},
    [TEV_DID_HIS] = {"HIS", "Host Information Structures"},
    [TEV_DID_HCS] = {"HCS", "Host Clock Seconds"},
    [TEV_DID_HCU] = {"HCU", "Host Clock Microseconds"},
    [TEV_DID_HDS] = {"HDS", "Host Delta Seconds"},
    [TEV_DID_HDU] = {"HDU", "Host Delta Microseconds"},
    [TEV_DID_HS] = {"HS", "Host Status"},
    [TEV_DID_INB] = {"INB", "Info Number of Message Bytes"},
    [TEV_DID_IMC] = {"IMC", "Info Message Code"},
    [TEV_DID_IST] = {"IST", "Info Message Source Task"},
    [TEV_DID_MC] = {"MC", "Message Code"},
    [TEV_DID_MCX] = {"MCX", "Message Context"},
    [TEV_DID_MB] = {"MB", "Message Buffer"},
    [TEV_DID_MNB] = {"MNB", "Message Number of Bytes"},
    [TEV_DID_SRC] = {"SRC", "Message Source Task ID"},
    [TEV_DID_DST] = {"DST", "Message Destination Task ID"},
    [TEV_DID_MDL] = {"MDL", "Message Destination Task ID List"},
    [TEV_DID_MTS] = {"MTS", "Message Timeout Seconds"},
    [TEV_DID_MTU] = {"MTU", "Message Timeout Microseconds"},
    [TEV_DID_MRF] = {"MRF", "Message Receive Function"},
    [TEV_DID_MRB] = {"MRB", "Message Receive Buffer"},
    [TEV_DID_MSB] = {"MSB", "Message Send Buffer"},
    [TEV_DID_ME] = {"ME", "Message Encoding"},
    [TEV_DID_MHI] = {"MHI", "Message Handler Index"},
    [TEV_DID_AST] = {"AST", "Actual Message Sender Task ID"},
    [TEV_DID_AMC] = {"AMC", "Actual Message Code"},
    [TEV_DID_AML] = {"AML", "Actual Message Length"},
    [TEV_DID_NE] = {"NE", "Notify Event ID"},
    [TEV_DID_NMC] = {"NMC", "Notify Message Code"},
    [TEV_DID_NCT] = {"NCT", "Notify Count"},
    [TEV_DID_NTL] = {"NTL", "Notify Task ID List"},
    [TEV_DID_NH] = {"NH", "Number of Hosts"},
    [TEV_DID_NA] = {"NA", "Number of Architectures"},
    [TEV_DID_OPT] = {"OPT", "PVM Option ID"},
    [TEV_DID_OPV] = {"OPV", "PVM Option Value"},
    [TEV_DID_OS] = {"OS", "Output String"},
    [TEV_DID_PDA] = {"PDA", "Pack Data Address"},
    [TEV_DID_PDT] = {"PDT", "Pack Data Type"},
    [TEV_DID_PC] = {"PC", "Pack Count"},
    [TEV_DID_PSD] = {"PSD", "Pack Stride"},
    [TEV_DID_PSG] = {"PSG", "Pack String"},
    [TEV_DID_PF] = {"PF", "Pack Format"},
    [TEV_DID_PRF] = {"PRF", "Profiling Count"},
    [TEV_DID_RST] = {"RST", "Receive Msg Source Task / Wildcard"},
    [TEV_DID_RMC] = {"RMC", "Receive Msg Code / Wildcard"},
    [TEV_DID_RCX] = {"RCX", "Receive Msg Context"},
    [TEV_DID_SN] = {"SN", "Signal Number"},
    [TEV_DID_SE] = {"SE", "Spawn Executable File"},
    [TEV_DID_SF] = {"SF", "Spawn Flags"},
    [TEV_DID_SW] = {"SW", "Spawn Where"},
    [TEV_DID_SC] = {"SC", "Spawn Count"},
    [TEV_DID_STL] = {"STL", "Spawned Task ID List"},
    [TEV_DID_SIB] = {"SIB", "Sibling Task ID List"},
    [TEV_DID_TID] = {"TID", "Task ID"},
    [TEV_DID_PT] = {"PT", "Parent Task ID"},
    [TEV_DID_MT] = {"MT", "My Task ID"},
    [TEV_DID_TF] = {"TF", "Task Flags"},
    [TEV_DID_TN] = {"TN", "Task Name"},
    [TEV_DID_PID] = {"PID", "Task Process ID"},
    [TEV_DID_TT] = {"TT", "Target Task ID"},
    [TEV_DID_TW] = {"TW", "Tasks Where"},
    [TEV_DID_TIS] = {"TIS", "Task Information Structures"},
    [TEV_DID_TNT] = {"TNT", "Task Info - Number of Tasks"},
    [TEV_DID_TST] = {"TST", "Task Status"},
    [TEV_DID_TUS] = {"TUS", "Task User Usage Seconds"},
    [TEV_DID_TUU] = {"TUU", "Task User Usage Microseconds"},
    [TEV_DID_TSS] = {"TSS", "Task System Usage Seconds"},
    [TEV_DID_TSU] = {"TSU", "Task System Usage Microseconds"},
    [TEV_DID_TES] = {"TES", "Task Exit Status"},
    [TEV_DID_TA] = {"TA", "Tickle Arguments"},
    [TEV_DID_TR] = {"TR", "Tickle Responses"},
    [TEV_DID_TS] = {"TS", "Time Seconds"},
    [TEV_DID_TU] = {"TU", "Time Microseconds"},
    [TEV_DID_TGS] = {"TGS", "Timing Seconds"},
    [TEV_DID_TGU] = {"TGU", "Timing Microseconds"},
    [TEV_DID_TMW] = {"TMW", "Trace Mask Who"},
    [TEV_DID_TM] = {"TM", "Trace Mask"},
    [TEV_DID_TRC] = {"TRC", "Tracer Message Trace Context"},
    [TEV_DID_TRT] = {"TRT", "Tracer Message Trace Tag"},
    [TEV_DID_TRX] = {"TRX", "Tracer Message Output Context"},
    [TEV_DID_TRO] = {"TRO", "Tracer Message Output Tag"},
    [TEV_DID_TRM] = {"TRM", "Tracer Trace Mask"},
    [TEV_DID_TRB] = {"TRB", "Tracer Trace Buffering"},
    [TEV_DID_TRL] = {"TRL", "Tracer Trace Options"},
    [TEV_DID_VER] = {"VER", "PVM Version"},
    [TEV_DID_VCT] = {"VCT", "Trace Event Count"},
    [TEV_DID_VID] = {"VID", "Trace Event ID"},
    [TEV_DID_WID] = {"WID", "Wait Identifier Number"},
};

const char *pvm_tev_name(int kind)
{
    return kind >= TEV_FIRST && kind <= TEV_MAX ? event_names[kind] : NULL;
}

const char *pvm_tev_did_name(int did)
{
    return did >= TEV_DID_FIRST && did <= TEV_DID_MAX ? did_names[did].name : NULL;
}

const char *pvm_tev_did_desc(int did)
{
    return did >= TEV_DID_FIRST && did <= TEV_DID_MAX ? did_names[did].desc : NULL;
}

/* The same, for the tools (upvm.h): the console's `trace` and `spawn -@`. */
const char *upvm_tev_name(int kind) { return pvm_tev_name(kind); }
const char *upvm_tev_did_name(int did) { return pvm_tev_did_name(did); }
const char *upvm_tev_did_desc(int did) { return pvm_tev_did_desc(did); }

/* ------------------------------------------------------------ state */

/* What one event kind has had (PvmTraceTime, PvmTraceCount). */
struct tev_tally {
    int count;
    struct timeval total;
};

struct pvm_tev {
    struct pvm_tracer self, child;
    bool inside;              /* in an API call entered while traced: the
                               * calls it makes are not traced (tev.h) */
    /* the event being packed */
    enum { PACK_NONE, PACK_DESC, PACK_RAW } packing;
    int kind;
    struct timeval mark;      /* PvmTraceTime: when it began */
    msg_buf_t *buf;           /* the open trace message, NULL: none */
    uint8_t described[TEV_MAX + 1]; /* a bit per ENTRY, EXIT descriptor sent */
    struct tev_tally tally[TEV_MAX + 1];
};

/* "No event": TEV_MASK_LENGTH - 1 '@' and a NUL (TEV_MASK_INIT). */
static void mask_init(char *m)
{
    memset(m, '@', TEV_MASK_LENGTH - 1);
    m[TEV_MASK_LENGTH - 1] = '\0';
}

static bool mask_any(const char *m)
{
    for (int k = TEV_FIRST; k <= TEV_MAX; k++)
        if (TEV_MASK_CHECK(m, k))
            return true;
    return false;
}

/* No tracer, nothing traced: what a task without settings has. */
static void tracer_none(struct pvm_tracer *tr)
{
    *tr = (struct pvm_tracer){0};
    mask_init(tr->mask);
}

/* t's tracing state, made (no tracer, empty masks) if it has none: NULL
 * only when out of memory. */
static struct pvm_tev *tev_of(struct pvm_task *t)
{
    if (!t->tev && (t->tev = pvm_task_alloc(t, sizeof *t->tev))) {
        tracer_none(&t->tev->self);
        tracer_none(&t->tev->child);
    }
    return t->tev;
}

/* Does t send events?  Its own tracer is another task, some event is on,
 * and the option is one of PVM's three (libpvm sends nothing for others
 * either: it logs "Bogus Tracing Option"). */
static void tev_update(struct pvm_task *t)
{
    const struct pvm_tracer *s = t->tev ? &t->tev->self : NULL;
    t->tev_on = s && s->tid > 0 && s->tid != t->tid && s->opt >= PvmTraceFull &&
                s->opt <= PvmTraceCount && mask_any(s->mask);
}

/* ------------------------------------------------------------ packing */

/* A pack's result, not looked at: as in libpvm, a value that cannot be
 * packed (no memory) is left out of the event. */
static inline void unchecked(int rc)
{
    (void)rc;
}

static void pack_int(msg_buf_t *b, int v)
{
    unchecked(msg_pack(b, PVM_INT, &v, 1, 1));
}

static void pack_str(msg_buf_t *b, const char *s)
{
    unchecked(msg_pack_str(b, s ? s : ""));
}

/* The did and type of a value in the descriptor form, and the count of an
 * array in both forms.  False when nothing is to be packed. */
static bool value_head(struct pvm_task *t, int did, int type, bool array, int n)
{
    struct pvm_tev *v = t->tev;
    if (!v || v->packing == PACK_NONE || !v->buf)
        return false;
    if (v->packing == PACK_DESC) {
        pack_int(v->buf, did);
        pack_int(v->buf, type | (array ? TEV_DATA_ARRAY : TEV_DATA_SCALAR));
    }
    if (array)
        pack_int(v->buf, n);
    return true;
}

void pvm_tev_int(struct pvm_task *t, int did, int v)
{
    if (value_head(t, did, TEV_DATA_INT, false, 1))
        pack_int(t->tev->buf, v);
}

void pvm_tev_ints(struct pvm_task *t, int did, const int *v, int n)
{
    if (value_head(t, did, TEV_DATA_INT, true, n) && n > 0)
        unchecked(msg_pack(t->tev->buf, PVM_INT, v, n, 1));
}

void pvm_tev_long(struct pvm_task *t, int did, long v)
{
    /* libpvm's XDR packs a long's low 4 bytes, whatever the rest (an
     * address of 64 bits too): so does the trace */
    if (value_head(t, did, TEV_DATA_LONG, false, 1))
        pack_int(t->tev->buf, (int)(uint32_t)(unsigned long)v);
}

void pvm_tev_str(struct pvm_task *t, int did, const char *s)
{
    if (value_head(t, did, TEV_DATA_STRING, false, 1))
        pack_str(t->tev->buf, s);
}

void pvm_tev_strs(struct pvm_task *t, int did, char *const *s, int n)
{
    if (value_head(t, did, TEV_DATA_STRING, true, n))
        for (int i = 0; i < n; i++)
            pack_str(t->tev->buf, s ? s[i] : "");
}

static struct timeval now_tv(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv;
}

/* TS, TU and TID: every event's first values. */
static void pack_header(struct pvm_task *t, struct timeval tv)
{
    pvm_tev_int(t, TEV_DID_TS, (int)tv.tv_sec);
    pvm_tev_int(t, TEV_DID_TU, (int)tv.tv_usec);
    pvm_tev_int(t, TEV_DID_TID, t->tid);
}

/* Open t's event kind|ee (libpvm's tev_begin): true when its values are
 * to be given (always, as in libpvm, even when they are only counted). */
static bool tev_begin(struct pvm_task *t, int kind, int ee)
{
    struct pvm_tev *v = t->tev;
    if (!TEV_MASK_CHECK(v->self.mask, kind))
        return false;
    v->kind = kind;
    v->packing = PACK_NONE;
    if (v->self.opt == PvmTraceTime)
        v->mark = now_tv();
    if (v->self.opt != PvmTraceFull)
        return true;
    struct timeval tv = now_tv();
    bool desc = !(v->described[kind] & (ee >> 14));
    v->described[kind] |= (uint8_t)(ee >> 14);
    bool fresh = !v->buf;
    if (fresh && msg_buf_new(PvmDataDefault, &v->buf) != 0) {
        v->buf = NULL;
        return true; /* out of memory: the event is lost */
    }
    if (fresh && v->self.buf)
        pack_int(v->buf, TEV_MARK_EVENT_BUFFER);
    pack_int(v->buf, desc ? TEV_MARK_EVENT_DESC : TEV_MARK_EVENT_RECORD);
    pack_int(v->buf, kind | ee);
    if (desc)
        pack_str(v->buf, event_names[kind]);
    v->packing = desc ? PACK_DESC : PACK_RAW;
    pack_header(t, tv);
    return true;
}

/* The summed time of a PvmTraceTime event: now - mark, added. */
static void tally_time(struct tev_tally *y, struct timeval mark)
{
    struct timeval d, tv = now_tv();
    timersub(&tv, &mark, &d);
    timeradd(&y->total, &d, &y->total);
}

void pvm_tev_end(struct pvm_task *t)
{
    struct pvm_tev *v = t->tev;
    if (!v)
        return;
    struct tev_tally *y = &v->tally[v->kind];
    switch (v->self.opt) {
    case PvmTraceFull:
        if (v->packing == PACK_NONE || !v->buf)
            break;
        pack_int(v->buf, v->packing == PACK_DESC ? TEV_MARK_EVENT_DESC_END
                                                 : TEV_MARK_EVENT_RECORD_END);
        v->packing = PACK_NONE;
        if (!v->self.buf || msg_buf_len(v->buf) >= (size_t)v->self.buf)
            pvm_tev_flush(t);
        break;
    case PvmTraceTime:
        tally_time(y, v->mark);
        y->count++;
        break;
    case PvmTraceCount:
        y->count++;
        break;
    }
}

/* ------------------------------------------------------------ the points */

/* The calls the UPVM trace's timeline shows, by the names a user knows. */
static const char *const timeline_names[TEV_MAX + 1] = {
    [TEV_SEND] = "pvm_send",         [TEV_PSEND] = "pvm_psend",
    [TEV_MCAST] = "pvm_mcast",       [TEV_RECV] = "pvm_recv",
    [TEV_TRECV] = "pvm_trecv",       [TEV_NRECV] = "pvm_nrecv",
    [TEV_PRECV] = "pvm_precv",       [TEV_PROBE] = "pvm_probe",
    [TEV_SPAWN] = "pvm_spawn",       [TEV_EXIT] = "pvm_exit",
    [TEV_BARRIER] = "pvm_barrier",   [TEV_BCAST] = "pvm_bcast",
    [TEV_REDUCE] = "pvm_reduce",     [TEV_GATHER] = "pvm_gather",
    [TEV_SCATTER] = "pvm_scatter",   [TEV_JOINGROUP] = "pvm_joingroup",
    [TEV_LVGROUP] = "pvm_lvgroup",   [TEV_KILL] = "pvm_kill",
    [TEV_NOTIFY] = "pvm_notify",     [TEV_PSTAT] = "pvm_pstat",
    [TEV_TASKS] = "pvm_tasks",       [TEV_CONFIG] = "pvm_config",
};

void pvm_trc_enter(struct pvm_task *t, struct pvm_api *a)
{
    if (a->kind < 0 || a->kind > TEV_MAX || !timeline_names[a->kind])
        return;
    a->counted = true;
    a->shown = t->trc_depth++ == 0;
    if (a->shown)
        trc_put(TRC_API_ENTER, 0, (uint32_t)t->tid, (uint32_t)a->kind, 0,
                trc_str(timeline_names[a->kind]));
}

void pvm_trc_leave(struct pvm_task *t, struct pvm_api *a)
{
    t->trc_depth--;
    if (a->shown)
        trc_put(TRC_API_LEAVE, 0, (uint32_t)t->tid, (uint32_t)a->kind, 0, 0);
}

bool pvm_tev_enter(struct pvm_task *t, struct pvm_api *a)
{
    if (t->tev->inside)
        return false; /* inside another traced call */
    t->tev->inside = true;
    a->top = true;
    return tev_begin(t, a->kind, TEV_EVENT_ENTRY);
}

bool pvm_tev_leave(struct pvm_task *t, struct pvm_api *a)
{
    a->top = false;
    if (t->tev)
        t->tev->inside = false;
    return t->tev_on && tev_begin(t, a->kind, TEV_EVENT_EXIT);
}

/* ------------------------------------------------------------ sending */

/* Send b (consumed) to t's tracer, as t's ordinary messages go. */
static void send_to_tracer(struct pvm_task *t, msg_buf_t *b)
{
    const struct pvm_tracer *s = &t->tev->self;
    if (s->tid <= 0 || s->tid == t->tid) {
        msg_buf_unref(b);
        return;
    }
    (void)pvm_send_msg(t, b, s->tid, s->tag, s->ctx);
}

/* The PvmTraceTime / PvmTraceCount summary: every kind that happened, its
 * count (and time), in one descriptor-form event; the tallies restart. */
static msg_buf_t *summary(struct pvm_task *t)
{
    struct pvm_tev *v = t->tev;
    bool timing = v->self.opt == PvmTraceTime;
    const char *names[TEV_MAX + 1];
    int secs[TEV_MAX + 1], usecs[TEV_MAX + 1], counts[TEV_MAX + 1], n = 0;
    for (int k = TEV_FIRST; k <= TEV_MAX; k++) {
        struct tev_tally *y = &v->tally[k];
        if (y->count <= 0)
            continue;
        names[n] = event_names[k];
        secs[n] = (int)y->total.tv_sec;
        usecs[n] = (int)y->total.tv_usec;
        counts[n++] = y->count;
        *y = (struct tev_tally){0};
    }
    if (msg_buf_new(PvmDataDefault, &v->buf) != 0)
        return v->buf = NULL;
    int kind = timing ? TEV_TIMING : TEV_PROFILING;
    pack_int(v->buf, TEV_MARK_EVENT_DESC);
    pack_int(v->buf, kind); /* no ENTRY/EXIT bit here */
    pack_str(v->buf, event_names[kind]);
    v->packing = PACK_DESC;
    pack_header(t, now_tv());
    pvm_tev_int(t, TEV_DID_VCT, n);
    pvm_tev_strs(t, TEV_DID_VID, (char *const *)names, n);
    if (timing) {
        pvm_tev_ints(t, TEV_DID_TGS, secs, n);
        pvm_tev_ints(t, TEV_DID_TGU, usecs, n);
    }
    pvm_tev_ints(t, TEV_DID_PRF, counts, n);
    pack_int(v->buf, TEV_MARK_EVENT_DESC_END);
    v->packing = PACK_NONE;
    msg_buf_t *b = v->buf;
    v->buf = NULL;
    return b;
}

void pvm_tev_flush(struct pvm_task *t)
{
    struct pvm_tev *v = t->tev;
    if (!v || v->self.tid <= 0 || v->self.tid == t->tid)
        return;
    msg_buf_t *b = NULL;
    switch (v->self.opt) {
    case PvmTraceFull:
        if (!(b = v->buf))
            return;
        if (v->self.buf)
            pack_int(b, TEV_MARK_EVENT_BUFFER_END);
        v->buf = NULL;
        break;
    case PvmTraceTime:
    case PvmTraceCount:
        b = summary(t);
        break;
    default:
        return;
    }
    if (b)
        send_to_tracer(t, b);
}

/* ------------------------------------------------------------ tasks */

/* PVMTMASK, PVMTRCBUF, PVMTRCOPT into tr, as libpvm reads them when a task
 * connects: a mask of another length is no mask. */
static void tracer_from_env(struct pvm_tracer *tr)
{
    const char *m = getenv("PVMTMASK"), *b = getenv("PVMTRCBUF"), *o = getenv("PVMTRCOPT");
    if (m && strlen(m) + 1 == TEV_MASK_LENGTH)
        memcpy(tr->mask, m, TEV_MASK_LENGTH);
    if (b)
        tr->buf = atoi(b);
    if (o)
        tr->opt = atoi(o);
}

static bool tracer_is_none(const struct pvm_tracer *tr)
{
    struct pvm_tracer none;
    tracer_none(&none);
    return memcmp(tr, &none, sizeof none) == 0;
}

/* A task started from the shell while a tracer is registered: the pvmd
 * (tm_conn2) makes it the task's tracer and sends it newtask (parent and
 * flags -1, the name "-": the pvmd's, of the connection, not the task's);
 * libpvm then reads the mask, buffering and option from the tracer's
 * mailbox entry, which holds the registered ones. */
static void registered_tracer(const struct pvm_task *t, struct pvm_tracer *got)
{
    struct pvm_tracer reg;
    if (!pvm_tracer_registered(&reg))
        return;
    *got = reg;
    pvm_tev_newtask(&reg, t->tid, -1, -1, "-");
}

int pvm_tev_task_init(struct pvm_task *t, const struct pvm_tracer *tr)
{
    struct pvm_tracer got;
    if (tr) {
        got = *tr;
        got.mask[TEV_MASK_LENGTH - 1] = '\0';
    } else {
        tracer_none(&got);
        tracer_from_env(&got);
        registered_tracer(t, &got);
    }
    if (tracer_is_none(&got))
        return 0; /* the common case: nothing to keep */
    struct pvm_tev *v = tev_of(t);
    if (!v)
        return PvmNoMem;
    v->self = v->child = got;
    tev_update(t);
    return 0;
}

void pvm_tev_child_tracer(const struct pvm_task *t, struct pvm_tracer *out)
{
    if (t->tev)
        *out = t->tev->child;
    else
        tracer_none(out);
}

void pvm_tev_exec_tracer(struct pvm_tracer *trc)
{
    struct pvm_tracer reg;
    if (trc->tid == 0 && pvm_tracer_registered(&reg))
        *trc = reg;
}

void pvm_tev_self_tracer(const struct pvm_task *t, struct pvm_tracer *out)
{
    if (t->tev)
        *out = t->tev->self;
    else
        tracer_none(out);
}

void pvm_tev_moving(struct pvm_task *t)
{
    if (t->tev && t->tev->buf && t->tev->self.opt == PvmTraceFull)
        pvm_tev_flush(t);
    pvm_tev_release(t); /* what could not be sent */
}

void pvm_tev_release(struct pvm_task *t)
{
    if (!t->tev)
        return;
    msg_buf_unref(t->tev->buf);
    t->tev->buf = NULL;
    t->tev->packing = PACK_NONE;
}

/* ------------------------------------------------------------ masks */

int pvm_gettmask(int who, Pvmtmask mask)
{
    TASK_OR_FAIL(t, "pvm_gettmask");
    if ((who != PvmTaskSelf && who != PvmTaskChild) || !mask)
        return pvm_fail(t, "pvm_gettmask", PvmBadParam);
    struct pvm_tracer none;
    tracer_none(&none);
    const struct pvm_tracer *tr =
        !t->tev ? &none : who == PvmTaskSelf ? &t->tev->self : &t->tev->child;
    memcpy(mask, tr->mask, TEV_MASK_LENGTH);
    return 0;
}

int pvm_settmask(int who, Pvmtmask mask)
{
    TASK_OR_FAIL(t, "pvm_settmask");
    if ((who != PvmTaskSelf && who != PvmTaskChild) || !mask)
        return pvm_fail(t, "pvm_settmask", PvmBadParam);
    struct pvm_tev *v = tev_of(t);
    if (!v)
        return pvm_fail(t, "pvm_settmask", PvmNoMem);
    /* as libpvm: TEV_MASK_LENGTH characters copied, whatever they are */
    memcpy(who == PvmTaskSelf ? v->self.mask : v->child.mask, mask, TEV_MASK_LENGTH);
    tev_update(t);
    return 0;
}

/* ------------------------------------------------------------ options */

static bool is_trace_option(int what)
{
    switch (what) {
    case PvmTraceTid: case PvmTraceCode: case PvmTraceBuffer: case PvmTraceOptions:
    case PvmSelfTraceTid: case PvmSelfTraceCode: case PvmSelfTraceBuffer:
    case PvmSelfTraceOptions: case PvmTraceContext: case PvmSelfTraceContext:
        return true;
    }
    return false;
}

/* The setting `what` names in v. */
static int32_t *option_slot(struct pvm_tev *v, int what)
{
    switch (what) {
    case PvmTraceTid: return &v->child.tid;
    case PvmTraceCode: return &v->child.tag;
    case PvmTraceBuffer: return &v->child.buf;
    case PvmTraceOptions: return &v->child.opt;
    case PvmTraceContext: return &v->child.ctx;
    case PvmSelfTraceTid: return &v->self.tid;
    case PvmSelfTraceCode: return &v->self.tag;
    case PvmSelfTraceBuffer: return &v->self.buf;
    case PvmSelfTraceOptions: return &v->self.opt;
    default: return &v->self.ctx; /* PvmSelfTraceContext */
    }
}

int pvm_tev_getopt(struct pvm_task *t, int what, bool *handled)
{
    if (!(*handled = is_trace_option(what)))
        return 0;
    return t->tev ? *option_slot(t->tev, what) : 0;
}

/* libpvm's checks of a new value (lpvmgen.c, pvm_setopt): 0 or the error. */
static int option_check(struct pvm_task *t, const struct pvm_tev *v, int what, int val)
{
    const struct pvm_tracer *s = &v->self, *c = &v->child;
    bool child_elsewhere = c->tid > 0 && c->tid != t->tid;
    switch (what) {
    case PvmTraceTid: /* none, the task itself, or its own tracer */
        return !val || val == t->tid || (val == s->tid && c->tag == s->tag) ? 0 : PvmBadParam;
    case PvmTraceContext: /* children traced elsewhere: to its own tracer's */
        return child_elsewhere && val != s->ctx ? PvmBadParam : 0;
    case PvmTraceCode:
        return child_elsewhere && val != s->tag ? PvmBadParam : 0;
    case PvmTraceOptions:
    case PvmSelfTraceOptions:
        return val >= PvmTraceFull && val <= PvmTraceCount ? 0 : PvmBadParam;
    case PvmSelfTraceContext:
        return PvmNotImpl; /* as in PVM 3.4.6 */
    }
    return 0;
}

int pvm_tev_setopt(struct pvm_task *t, int what, int val, int *old)
{
    if (!is_trace_option(what))
        return 1;
    struct pvm_tev *v = tev_of(t);
    if (!v)
        return PvmNoMem;
    /* its own buffering or option changes: what it holds goes first */
    if (what == PvmSelfTraceBuffer || what == PvmSelfTraceOptions)
        pvm_tev_flush(t);
    int rc = option_check(t, v, what, val);
    if (rc)
        return rc;
    int32_t *slot = option_slot(v, what);
    *old = *slot;
    *slot = val;
    /* a new own tracer (or its tag) is its children's too, as in libpvm;
     * the pvmd tells the old one the task ended, the new one it started */
    if (what == PvmSelfTraceTid || what == PvmSelfTraceCode) {
        v->child.tid = v->self.tid;
        v->child.ctx = v->self.ctx;
        v->child.tag = v->self.tag;
        if (*old != val) {
            struct pvm_tracer was = v->self;
            if (what == PvmSelfTraceTid)
                was.tid = *old;
            else
                was.tag = *old;
            pvm_tev_endtask(&was, t, 0);
            pvm_tev_spntask(&v->self, t->tid, t->ptid);
            pvm_tev_newtask(&v->self, t->tid, t->ptid, 0, t->name);
        }
    }
    tev_update(t);
    return 0;
}

/* ------------------------------------------------------------ user events */

int pvm_tev_user_header(msg_buf_t *b)
{
    struct timeval tv = now_tv();
    int head[2] = {TEV_MARK_USER_EVENT_RECORD, TEV_USER_DEFINED};
    int when[2] = {(int)tv.tv_sec, (int)tv.tv_usec};
    int rc = msg_pack(b, PVM_INT, head, 2, 1);
    if (!rc)
        rc = msg_pack_str(b, event_names[TEV_USER_DEFINED]);
    return rc ? rc : msg_pack(b, PVM_INT, when, 2, 1);
}

/* The TEV_DATA_* type a PVM data type is traced as (libpvm's trace
 * encoder packs the unsigned int and short as their signed kin). */
static int user_type(int type)
{
    switch (type) {
    case PVM_STR: case PVM_BYTE: return TEV_DATA_BYTE;
    case PVM_SHORT: case PVM_USHORT: return TEV_DATA_SHORT;
    case PVM_INT: case PVM_UINT: return TEV_DATA_INT;
    case PVM_LONG: return TEV_DATA_LONG;
    case PVM_ULONG: return TEV_DATA_ULONG;
    case PVM_FLOAT: return TEV_DATA_FLOAT;
    case PVM_DOUBLE: return TEV_DATA_DOUBLE;
    case PVM_CPLX: return TEV_DATA_CPLX;
    case PVM_DCPLX: return TEV_DATA_DCPLX;
    }
    return -1;
}

int pvm_tev_user_pack(msg_buf_t *b, int type, const void *p, int n, int stride)
{
    int tt = user_type(type);
    if (tt < 0 || n < 0)
        return -EINVAL;
    if (n == 0) /* a marker of the program's own: an int < 0, alone */
        return (type == PVM_INT || type == PVM_UINT) && p && *(const int *)p < 0
                   ? msg_pack(b, PVM_INT, p, 1, 1)
                   : 0;
    int head[2] = {tt | (n == 1 ? TEV_DATA_SCALAR : TEV_DATA_ARRAY), n};
    int rc = msg_pack(b, PVM_INT, head, n == 1 ? 1 : 2, 1);
    return rc ? rc : msg_pack(b, type == PVM_STR ? PVM_BYTE : type, p, n, stride);
}

int pvm_tev_user_event(struct pvm_task *t)
{
    const struct pvm_tracer *s = t->tev ? &t->tev->self : NULL;
    msg_buf_t *b = pvm_buf(t, t->sbuf);
    if (!s || !TEV_MASK_CHECK(s->mask, TEV_USER_DEFINED))
        return 0; /* as libpvm: not traced, nothing sent, no error */
    if (!b)
        return PvmNoBuf;
    int rc = msg_pack(b, PVM_INT, &(int){TEV_MARK_USER_EVENT_RECORD_END}, 1, 1);
    if (rc)
        return pvm_code_from_errno(rc);
    msg_buf_t *out;
    if ((rc = pvm_buf_for_receiver(b, &out)) != 0)
        return rc;
    if (s->tid <= 0 || s->tid == t->tid) {
        msg_buf_unref(out);
        return 0;
    }
    return pvm_send_msg(t, out, s->tid, s->tag, s->ctx);
}

/* ------------------------------------------------------------ the pvmd's events */

/*
 * What PVM's pvmd sends a task's tracer: newtask when the task starts,
 * spntask when its spawn is done, endtask when it ends, each in the
 * descriptor form the first time a tracer gets that kind from this pvmd
 * (here: this node), and, before the first of them, the data-id table.
 * The pvmd remembers the last 100 tracers of each kind, as PVM's does.
 */
#define PVMD_REMEMBERS 100

struct tracers_seen {
    int tid[PVMD_REMEMBERS];
    int start, end;
};

static struct tracers_seen seen_table, seen_new, seen_spn, seen_end;

/* Has this node sent tid one before?  If not, it now has. */
static bool seen_before(struct tracers_seen *s, int tid)
{
    for (int i = s->start; i != s->end; i = (i + 1) % PVMD_REMEMBERS)
        if (s->tid[i] == tid)
            return true;
    s->tid[s->end] = tid;
    s->end = (s->end + 1) % PVMD_REMEMBERS;
    if (s->end == s->start)
        s->start = (s->start + 1) % PVMD_REMEMBERS;
    return false;
}

/* One value of a pvmd event: an int, or a string (s non-NULL). */
struct pvmd_value {
    int did;
    int v;
    const char *s;
};

static void pvmd_send(msg_buf_t *b, const struct pvm_tracer *tr)
{
    (void)pvm_send_msg(NULL, b, tr->tid, tr->tag, tr->ctx);
}

/* The data-id table, once per tracer: -3, (id, name, description)..., -4. */
static void send_table(const struct pvm_tracer *tr)
{
    msg_buf_t *b;
    if (seen_before(&seen_table, tr->tid) || msg_buf_new(PvmDataDefault, &b) != 0)
        return;
    pack_int(b, TEV_MARK_DATA_ID);
    for (int i = TEV_DID_FIRST; i <= TEV_DID_MAX; i++) {
        pack_int(b, i);
        pack_str(b, did_names[i].name);
        pack_str(b, did_names[i].desc);
    }
    pack_int(b, TEV_MARK_DATA_ID_END);
    pvmd_send(b, tr);
}

/* A pvmd event of kind (no ENTRY/EXIT bit): TS, TU, then the values. */
static void pvmd_event(const struct pvm_tracer *tr, struct tracers_seen *seen, int kind,
                       const struct pvmd_value *vals, int n)
{
    msg_buf_t *b;
    if (tr->tid <= 0)
        return;
    send_table(tr); /* before a tracer's first event of each kind */
    if (msg_buf_new(PvmDataDefault, &b) != 0)
        return;
    bool desc = !seen_before(seen, tr->tid);
    struct timeval tv = now_tv();
    pack_int(b, desc ? TEV_MARK_EVENT_DESC : TEV_MARK_EVENT_RECORD);
    pack_int(b, kind);
    if (desc)
        pack_str(b, event_names[kind]);
    struct pvmd_value head[2] = {{TEV_DID_TS, (int)tv.tv_sec, NULL},
                                 {TEV_DID_TU, (int)tv.tv_usec, NULL}};
    for (int i = 0; i < n + 2; i++) {
        const struct pvmd_value *x = i < 2 ? &head[i] : &vals[i - 2];
        if (desc) {
            pack_int(b, x->did);
            pack_int(b, x->s ? TEV_DATA_STRING : TEV_DATA_INT);
        }
        if (x->s)
            pack_str(b, x->s);
        else
            pack_int(b, x->v);
    }
    pack_int(b, desc ? TEV_MARK_EVENT_DESC_END : TEV_MARK_EVENT_RECORD_END);
    pvmd_send(b, tr);
}

/* The CPU time t's ULP has had, from the scheduler's TSC count and the
 * TSC's rate measured since this node's first trace (0 until 1 ms has
 * passed): the pvmd's rusage of a process, here.  System time is 0. */
static uint64_t tsc0, ns0;

static void tsc_rate_start(void)
{
    if (!tsc0) {
        tsc0 = __builtin_ia32_rdtsc();
        ns0 = upvm_now_ns();
    }
}

static struct timeval cpu_time(const struct pvm_task *t)
{
    tsc_rate_start();
    uint64_t tsc = __builtin_ia32_rdtsc(), ns = upvm_now_ns();
    struct timeval tv = {0, 0};
    if (ns - ns0 < 1000000 || tsc <= tsc0)
        return tv;
    double ns_per_tick = (double)(ns - ns0) / (double)(tsc - tsc0);
    uint64_t used = (uint64_t)((double)t->ulp->cpu_tsc * ns_per_tick) / 1000;
    tv.tv_sec = (time_t)(used / 1000000);
    tv.tv_usec = (suseconds_t)(used % 1000000);
    return tv;
}

void pvm_tev_newtask(const struct pvm_tracer *tr, int tid, int ptid, int flags, const char *name)
{
    if (tr->tid <= 0)
        return;
    tsc_rate_start();
    const struct pvmd_value v[] = {{TEV_DID_TID, tid, NULL}, {TEV_DID_PT, ptid, NULL},
                                   {TEV_DID_TF, flags, NULL}, {TEV_DID_TN, 0, name ? name : ""}};
    pvmd_event(tr, &seen_new, TEV_NEWTASK, v, 4);
}

void pvm_tev_spntask(const struct pvm_tracer *tr, int tid, int ptid)
{
    const struct pvmd_value v[] = {{TEV_DID_TID, tid, NULL}, {TEV_DID_PT, ptid, NULL}};
    pvmd_event(tr, &seen_spn, TEV_SPNTASK, v, 2);
}

void pvm_tev_endtask(const struct pvm_tracer *tr, const struct pvm_task *t, int status)
{
    if (tr->tid <= 0)
        return;
    struct timeval u = cpu_time(t);
    const struct pvmd_value v[] = {{TEV_DID_TID, t->tid, NULL}, {TEV_DID_TST, status, NULL},
                                   {TEV_DID_TUS, (int)u.tv_sec, NULL},
                                   {TEV_DID_TUU, (int)u.tv_usec, NULL},
                                   {TEV_DID_TSS, 0, NULL}, {TEV_DID_TSU, 0, NULL}};
    pvmd_event(tr, &seen_end, TEV_ENDTASK, v, 6);
}
