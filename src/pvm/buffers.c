/*
 * buffers.c - a task's message buffer ids (UPVM's LBIDs) and the PVM calls
 * on them: mkbuf, freebuf, initsend, get/set of the active send and receive
 * buffers, bufinfo, getminfo/setminfo, packing and unpacking, pkmesg.
 *
 * Ids are small integers of the task, handed out lowest-free first and
 * shared by send and receive buffers, as in PVM.  Each id holds its own
 * msg_buf_t handle; the data behind it may be shared with other tasks'
 * handles (a message sent locally), and the msg layer copies it before a
 * write (copy-on-write).  So packing more into a buffer that was sent
 * never changes what the receiver sees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvm/pvm.h"
#include "pvm/tev.h"

/* ------------------------------------------------------------ the table */

static int table_grow(struct pvm_task *t)
{
    int n = t->nbufs ? 2 * t->nbufs : 16;
    struct pvm_bufslot *s = pvm_task_realloc(t, t->bufs, (size_t)n * sizeof *s);
    if (!s)
        return PvmNoMem;
    memset(s + t->nbufs, 0, (size_t)(n - t->nbufs) * sizeof *s);
    if (t->nbufs == 0)
        t->free_hint = 1; /* id 0 means "no buffer" */
    t->bufs = s;
    t->nbufs = n;
    return 0;
}

int pvm_buf_install(struct pvm_task *t, msg_buf_t *b)
{
    int id = t->free_hint > 0 ? t->free_hint : 1;
    while (id < t->nbufs && t->bufs[id].buf)
        id++;
    if (id >= t->nbufs && table_grow(t) != 0)
        return PvmNoMem;
    t->bufs[id] = (struct pvm_bufslot){b, NULL, false, false};
    t->free_hint = id + 1;
    return id;
}

void pvm_buf_drop(struct pvm_task *t, int id)
{
    struct pvm_bufslot *s = &t->bufs[id];
    if (s->queued) { /* a probed message still in the queue */
        list_unlink(&s->queued->link);
        s->queued->lbid = 0;
        pvm_qmsg_free(s->queued);
    } else {
        msg_buf_unref(s->buf);
    }
    *s = (struct pvm_bufslot){NULL, NULL, false, false};
    if (id < t->free_hint)
        t->free_hint = id;
    if (t->sbuf == id)
        t->sbuf = 0;
    if (t->rbuf == id)
        t->rbuf = 0;
}

void pvm_bufs_release(struct pvm_task *t)
{
    for (int id = 1; id < t->nbufs; id++)
        if (t->bufs[id].buf)
            pvm_buf_drop(t, id);
    list_link_t *l;
    while ((l = list_pop_front(&t->inq)))
        pvm_qmsg_free(list_entry(l, struct pvm_qmsg, link));
    pvm_task_free(t, t->bufs);
    t->bufs = NULL;
    t->nbufs = 0;
}

int pvm_buf_make(struct pvm_task *t, int enc)
{
    msg_buf_t *b;
    int rc = msg_buf_new(enc == PvmDataTrace ? PvmDataDefault : enc, &b);
    if (rc != 0)
        return pvm_code_from_errno(rc);
    msg_hdr_t *h = msg_buf_hdr(b);
    h->src = t->tid;
    h->ctx = t->ctx;
    if (enc == PvmDataTrace && (rc = pvm_tev_user_header(b)) != 0) {
        msg_buf_unref(b);
        return pvm_code_from_errno(rc);
    }
    int id = pvm_buf_install(t, b);
    if (id < 0)
        msg_buf_unref(b);
    else
        t->bufs[id].trace = enc == PvmDataTrace;
    return id;
}

void pvm_set_rbuf_replacing(struct pvm_task *t, int id)
{
    if (t->rbuf && t->rbuf != id)
        pvm_buf_drop(t, t->rbuf);
    t->rbuf = id;
}

int pvm_buf_install_as_rbuf(struct pvm_task *t, msg_buf_t *b)
{
    /* Free the old one first: its id is then usually the lowest free. */
    if (t->rbuf)
        pvm_buf_drop(t, t->rbuf);
    int id = pvm_buf_install(t, b);
    if (id > 0)
        t->rbuf = id;
    return id;
}

/* ------------------------------------------------------------ the calls */

static int mkbuf_body(struct pvm_task *t, int enc)
{
    if (enc != PvmDataDefault && enc != PvmDataRaw && enc != PvmDataInPlace &&
        enc != PvmDataTrace)
        return pvm_fail(t, "pvm_mkbuf", PvmBadParam);
    int id = pvm_buf_make(t, enc);
    return id < 0 ? pvm_fail(t, "pvm_mkbuf", id) : id;
}

int pvm_mkbuf(int enc)
{
    TASK_OR_FAIL(t, "pvm_mkbuf");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_MKBUF)) {
        pvm_tev_int(t, TEV_DID_ME, enc);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, TEV_DID_MB, mkbuf_body(t, enc));
}

static int freebuf_body(struct pvm_task *t, int id)
{
    if (id < 0)
        return pvm_fail(t, "pvm_freebuf", PvmBadParam);
    if (id == 0)
        return 0;
    if (!pvm_buf(t, id))
        return pvm_fail(t, "pvm_freebuf", PvmNoSuchBuf);
    pvm_buf_drop(t, id);
    return 0;
}

int pvm_freebuf(int id)
{
    TASK_OR_FAIL(t, "pvm_freebuf");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_FREEBUF)) {
        pvm_tev_int(t, TEV_DID_MB, id);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, TEV_DID_CC, freebuf_body(t, id));
}

/* Is every id below id in use (so that a new buffer would get id)?
 * Raises the free hint past what it checked. */
static bool no_free_id_below(struct pvm_task *t, int id)
{
    for (int i = t->free_hint; i < id; i++)
        if (!t->bufs[i].buf) {
            t->free_hint = i;
            return false;
        }
    if (t->free_hint < id + 1)
        t->free_hint = id + 1; /* id itself is in use */
    return true;
}

static int initsend_body(struct pvm_task *t, int enc)
{
    /* The common case, initsend after send: the old buffer's id and block
     * are reused (PVM frees it and the new one gets the lowest free id,
     * which is the same id unless a lower one is free). */
    int id = t->sbuf;
    /* (a bad or trace encoding fails the reset and takes the path below,
     * which reports it as PVM does) */
    if (likely(id && !t->bufs[id].queued && no_free_id_below(t, id)) &&
        msg_buf_reset(t->bufs[id].buf, enc) == 0) {
        msg_hdr_t *h = msg_buf_hdr(t->bufs[id].buf);
        h->src = t->tid;
        h->ctx = t->ctx;
        t->bufs[id].ctx_set = false;
        t->bufs[id].trace = false;
        return id;
    }
    if (t->sbuf)
        pvm_buf_drop(t, t->sbuf); /* PVM frees it even when enc is bad */
    id = pvm_mkbuf(enc);
    if (id < 0)
        return pvm_fail(t, "pvm_initsend", id);
    t->sbuf = id;
    return id;
}

int pvm_initsend(int enc)
{
    TASK_OR_FAIL(t, "pvm_initsend");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_INITSEND)) {
        pvm_tev_int(t, TEV_DID_ME, enc);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, TEV_DID_MSB, initsend_body(t, enc));
}

int pvm_getsbuf(void)
{
    TASK_OR_FAIL(t, "pvm_getsbuf");
    struct pvm_api a;
    pvm_api_enter_bare(t, &a, TEV_GETSBUF);
    return pvm_api_leave_int(t, &a, TEV_DID_MSB, t->sbuf);
}

int pvm_getrbuf(void)
{
    TASK_OR_FAIL(t, "pvm_getrbuf");
    struct pvm_api a;
    pvm_api_enter_bare(t, &a, TEV_GETRBUF);
    return pvm_api_leave_int(t, &a, TEV_DID_MRB, t->rbuf);
}

/* setsbuf/setrbuf: the old one is kept, not freed. */
static int set_active_body(struct pvm_task *t, const char *fn, int id, bool send)
{
    if (id < 0)
        return pvm_fail(t, fn, PvmBadParam);
    if (id > 0 && !pvm_buf(t, id))
        return pvm_fail(t, fn, PvmNoSuchBuf);
    int *slot = send ? &t->sbuf : &t->rbuf;
    int old = *slot;
    *slot = id;
    return old;
}

static int set_active(const char *fn, int id, bool send)
{
    TASK_OR_FAIL(t, fn);
    struct pvm_api a;
    if (pvm_api_enter(t, &a, send ? TEV_SETSBUF : TEV_SETRBUF)) {
        pvm_tev_int(t, TEV_DID_MB, id);
        pvm_tev_end(t);
    }
    return pvm_api_leave_int(t, &a, send ? TEV_DID_MSB : TEV_DID_MRB,
                             set_active_body(t, fn, id, send));
}

int pvm_setsbuf(int id) { return set_active("pvm_setsbuf", id, true); }
int pvm_setrbuf(int id) { return set_active("pvm_setrbuf", id, false); }

/* The buffer id names, or a reported error. */
static int lookup(struct pvm_task *t, const char *fn, int id, msg_buf_t **out)
{
    if (id <= 0)
        return pvm_fail(t, fn, PvmBadParam);
    if (!(*out = pvm_buf(t, id)))
        return pvm_fail(t, fn, PvmNoSuchBuf);
    return 0;
}

static int bufinfo_body(int id, int *bytes, int *tag, int *tid)
{
    TASK_OR_FAIL(t, "pvm_bufinfo");
    msg_buf_t *b;
    int rc = lookup(t, "pvm_bufinfo", id, &b);
    if (rc)
        return rc;
    const msg_hdr_t *h = msg_buf_hdr(b);
    if (bytes)
        *bytes = msg_buf_enc(b) == PvmDataInPlace ? 0 : (int)msg_buf_len(b);
    if (tag)
        *tag = h->tag;
    if (tid)
        *tid = h->src;
    return 0;
}

int pvm_bufinfo(int id, int *bytes, int *tag, int *tid)
{
    struct pvm_task *t = pvm_current();
    struct pvm_api a = {0};
    if (t && pvm_api_enter(t, &a, TEV_BUFINFO)) {
        pvm_tev_int(t, TEV_DID_MB, id);
        pvm_tev_end(t);
    }
    int b = 0, g = 0, s = 0; /* the caller's pointers, as they were */
    int *bp = bytes ? bytes : &b, *gp = tag ? tag : &g, *sp = tid ? tid : &s;
    int cc = bufinfo_body(id, bp, gp, sp);
    if (t && pvm_api_leave(t, &a)) { /* as libpvm: the code in all three on failure */
        pvm_tev_int(t, TEV_DID_CC, cc);
        pvm_tev_int(t, TEV_DID_INB, cc < 0 ? cc : *bp);
        pvm_tev_int(t, TEV_DID_IMC, cc < 0 ? cc : *gp);
        pvm_tev_int(t, TEV_DID_IST, cc < 0 ? cc : *sp);
        pvm_tev_end(t);
    }
    return cc;
}

int pvm_getminfo(int id, struct pvmminfo *mi)
{
    TASK_OR_FAIL(t, "pvm_getminfo");
    msg_buf_t *b;
    int rc = lookup(t, "pvm_getminfo", id, &b);
    if (rc)
        return rc;
    if (!mi)
        return pvm_fail(t, "pvm_getminfo", PvmBadParam);
    const msg_hdr_t *h = msg_buf_hdr(b);
    *mi = (struct pvmminfo){
        .len = msg_buf_enc(b) == PvmDataInPlace ? 0 : (int)msg_buf_len(b),
        .ctx = h->ctx, .tag = h->tag, .wid = h->wid, .enc = msg_buf_enc_sig(b),
        .crc = 0, .src = h->src, .dst = h->dst,
    };
    return 0;
}

int pvm_setminfo(int id, struct pvmminfo *mi)
{
    TASK_OR_FAIL(t, "pvm_setminfo");
    msg_buf_t *b;
    int rc = lookup(t, "pvm_setminfo", id, &b);
    if (rc)
        return rc;
    if (!mi)
        return pvm_fail(t, "pvm_setminfo", PvmBadParam);
    msg_hdr_t *h = msg_buf_hdr(b);
    t->bufs[id].ctx_set = true;
    h->ctx = mi->ctx;
    h->tag = mi->tag;
    h->wid = mi->wid;
    h->src = mi->src;
    h->dst = mi->dst;
    return 0;
}

/* ------------------------------------------------------------ packing */

/* A pack that failed with -ENOMEM: when it would take the message past
 * its largest size (rather than out of memory), PvmNoMem alone misleads,
 * so that is said, once per node. */
static void say_too_large(const char *fn, const msg_buf_t *b, int type, int n)
{
    static bool said;
    static const unsigned char width[] = {
        [PVM_BYTE] = 1, [PVM_SHORT] = 2, [PVM_INT] = 4,  [PVM_FLOAT] = 4,  [PVM_CPLX] = 8,
        [PVM_DOUBLE] = 8, [PVM_DCPLX] = 16, [PVM_LONG] = 8, [PVM_USHORT] = 2, [PVM_UINT] = 4,
        [PVM_ULONG] = 8};
    size_t w = type >= 0 && (size_t)type < sizeof width && width[type] ? width[type] : 1;
    size_t would = msg_buf_len(b) + (size_t)(n > 0 ? n : 0) * w;
    if (said || would <= MSG_MAX_LEN)
        return;
    said = true;
    fprintf(stderr, "upvm: %s(): a message holds at most %zu bytes (PVM counts them in an "
                    "int), and this one would hold about %zu: PvmNoMem, as PVM says it; send "
                    "the data in several messages (said once per node)\n",
            fn, MSG_MAX_LEN, would);
}

static inline int pack_body(struct pvm_task *t, const char *fn, int type, const void *p, int n,
                            int stride)
{
    msg_buf_t *b = pvm_buf(t, t->sbuf);
    if (unlikely(!b))
        return pvm_fail(t, fn, PvmNoBuf);
    int rc = likely(!t->bufs[t->sbuf].trace) ? msg_pack(b, type, p, n, stride)
                                             : pvm_tev_user_pack(b, type, p, n, stride);
    if (unlikely(rc == -ENOMEM))
        say_too_large(fn, b, type, n);
    return unlikely(rc) ? pvm_fail(t, fn, pvm_code_from_errno(rc)) : 0;
}

static inline int unpack_body(struct pvm_task *t, const char *fn, int type, void *p, int n,
                              int stride)
{
    msg_buf_t *b = pvm_buf(t, t->rbuf);
    if (unlikely(!b))
        return pvm_fail(t, fn, PvmNoBuf);
    int rc = msg_unpack(b, type, p, n, stride);
    return unlikely(rc) ? pvm_fail(t, fn, pvm_code_from_errno(rc)) : 0;
}

/* A pk or upk call's ENTRY event (libpvm's: the data's address, count,
 * stride; for pkstr/upkstr the address only). */
static void pack_entry(struct pvm_task *t, const void *p, int n, int stride, bool counted)
{
    pvm_tev_long(t, TEV_DID_PDA, (long)p);
    if (counted) {
        pvm_tev_int(t, TEV_DID_PC, n);
        pvm_tev_int(t, TEV_DID_PSD, stride);
    }
    pvm_tev_end(t);
}

static inline int pack(const char *fn, int kind, int type, const void *p, int n, int stride)
{
    TASK_OR_FAIL(t, fn);
    struct pvm_api a;
    if (pvm_api_enter(t, &a, kind))
        pack_entry(t, p, n, stride, true);
    return pvm_api_leave_int(t, &a, TEV_DID_CC, pack_body(t, fn, type, p, n, stride));
}

static inline int unpack(const char *fn, int kind, int type, void *p, int n, int stride)
{
    TASK_OR_FAIL(t, fn);
    struct pvm_api a;
    if (pvm_api_enter(t, &a, kind))
        pack_entry(t, p, n, stride, true);
    return pvm_api_leave_int(t, &a, TEV_DID_CC, unpack_body(t, fn, type, p, n, stride));
}

#define PACK_PAIR(suffix, ctype, TYPE, KIND)                                  \
    int pvm_pk##suffix(ctype *p, int n, int stride)                           \
    {                                                                         \
        return pack("pvm_pk" #suffix, TEV_PK##KIND, TYPE, p, n, stride);      \
    }                                                                         \
    int pvm_upk##suffix(ctype *p, int n, int stride)                          \
    {                                                                         \
        return unpack("pvm_upk" #suffix, TEV_UPK##KIND, TYPE, p, n, stride);  \
    }

PACK_PAIR(byte, char, PVM_BYTE, BYTE)
PACK_PAIR(short, short, PVM_SHORT, SHORT)
PACK_PAIR(ushort, unsigned short, PVM_USHORT, USHORT)
PACK_PAIR(int, int, PVM_INT, INT)
PACK_PAIR(uint, unsigned int, PVM_UINT, UINT)
PACK_PAIR(long, long, PVM_LONG, LONG)
PACK_PAIR(ulong, unsigned long, PVM_ULONG, ULONG)
PACK_PAIR(float, float, PVM_FLOAT, FLOAT)
PACK_PAIR(double, double, PVM_DOUBLE, DOUBLE)
PACK_PAIR(cplx, float, PVM_CPLX, CPLX)
PACK_PAIR(dcplx, double, PVM_DCPLX, DCPLX)

static int pkstr_body(struct pvm_task *t, char *s)
{
    msg_buf_t *b = pvm_buf(t, t->sbuf);
    if (!b)
        return pvm_fail(t, "pvm_pkstr", PvmNoBuf);
    int rc = !t->bufs[t->sbuf].trace ? msg_pack_str(b, s) /* NULL: PvmBadParam (PVM crashes) */
             : !s ? -EINVAL
                  : pvm_tev_user_pack(b, PVM_STR, s, (int)strlen(s), 1);
    return rc ? pvm_fail(t, "pvm_pkstr", pvm_code_from_errno(rc)) : 0;
}

int pvm_pkstr(char *s)
{
    TASK_OR_FAIL(t, "pvm_pkstr");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_PKSTR))
        pack_entry(t, s, 0, 0, false);
    return pvm_api_leave_int(t, &a, TEV_DID_CC, pkstr_body(t, s));
}

static int upkstr_body(struct pvm_task *t, char *s)
{
    msg_buf_t *b = pvm_buf(t, t->rbuf);
    if (!b)
        return pvm_fail(t, "pvm_upkstr", PvmNoBuf);
    if (!s) /* PVM would write through NULL: refuse after the length check */
        return pvm_fail(t, "pvm_upkstr", msg_buf_remaining(b) < 4 ? PvmNoData : PvmBadParam);
    int rc = msg_unpack_str(b, s, SIZE_MAX);
    return rc ? pvm_fail(t, "pvm_upkstr", pvm_code_from_errno(rc)) : 0;
}

int pvm_upkstr(char *s)
{
    TASK_OR_FAIL(t, "pvm_upkstr");
    struct pvm_api a;
    if (pvm_api_enter(t, &a, TEV_UPKSTR))
        pack_entry(t, s, 0, 0, false);
    return pvm_api_leave_int(t, &a, TEV_DID_CC, upkstr_body(t, s));
}

int pvm_vpackf(const char *fmt, va_list ap)
{
    TASK_OR_FAIL(t, "pvm_packf");
    bool fresh = fmt && fmt[0] == '%' && fmt[1] == '+';
    msg_buf_t *b = pvm_buf(t, t->sbuf);
    msg_buf_t *old = b;
    if (!fresh && !b)
        return pvm_fail(t, "pvm_packf", PvmNoBuf);
    int rc = pvm_code_from_errno(msg_vpackf(&b, fmt, ap));
    if (b != old) { /* "%+": like pvm_initsend(enc) */
        if (t->sbuf)
            pvm_buf_drop(t, t->sbuf);
        msg_buf_hdr(b)->src = t->tid;
        msg_buf_hdr(b)->ctx = t->ctx;
        int id = pvm_buf_install(t, b);
        if (id < 0) {
            msg_buf_unref(b);
            return pvm_fail(t, "pvm_packf", id);
        }
        t->sbuf = id;
    }
    return rc ? pvm_fail(t, "pvm_packf", rc) : 0;
}

int pvm_packf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = pvm_vpackf(fmt, ap);
    va_end(ap);
    return rc;
}

int pvm_vunpackf(const char *fmt, va_list ap)
{
    TASK_OR_FAIL(t, "pvm_unpackf");
    msg_buf_t *b = pvm_buf(t, t->rbuf);
    if (!b)
        return pvm_fail(t, "pvm_unpackf", PvmNoBuf);
    int rc = msg_vunpackf(b, fmt, ap);
    return rc ? pvm_fail(t, "pvm_unpackf", pvm_code_from_errno(rc)) : 0;
}

int pvm_unpackf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = pvm_vunpackf(fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------ pkmesg */

/*
 * A message packed into another travels as an int length followed by its
 * serialised form (msg.h: header and data, portable), packed as bytes.
 * pkmesgbody appends only the data bytes: the receiver unpacks them with
 * the ordinary pvm_upk* calls.  Errors are returned silently and leave
 * pvm_errno alone, as in PVM.
 */
static int pack_message(int id, bool body_only)
{
    TASK_OR_FAIL(t, "pvm_pkmesg");
    msg_buf_t *dst = pvm_buf(t, t->sbuf);
    msg_buf_t *src = id > 0 ? pvm_buf(t, id) : NULL;
    if (!dst)
        return PvmNoBuf;
    if (!src)
        return id <= 0 ? PvmBadParam : PvmNoSuchBuf;
    if (src == dst)
        return PvmBadParam;
    size_t n = msg_buf_serial_size(src);
    if (n > INT32_MAX)
        return PvmOverflow;
    unsigned char *wire = malloc(n);
    if (!wire)
        return PvmNoMem;
    int rc = msg_buf_serialize(src, wire, n, NULL);
    if (rc == 0 && body_only) {
        rc = msg_pack(dst, PVM_BYTE, wire + MSG_WIRE_HDR, (int)(n - MSG_WIRE_HDR), 1);
    } else if (rc == 0) {
        int len = (int)n;
        rc = msg_pack(dst, PVM_INT, &len, 1, 1);
        if (rc == 0)
            rc = msg_pack(dst, PVM_BYTE, wire, len, 1);
    }
    free(wire);
    return pvm_code_from_errno(rc);
}

int pvm_pkmesg(int id) { return pack_message(id, false); }
int pvm_pkmesgbody(int id) { return pack_message(id, true); }

int pvm_upkmesg(void)
{
    TASK_OR_FAIL(t, "pvm_upkmesg");
    msg_buf_t *src = pvm_buf(t, t->rbuf);
    if (!src)
        return PvmNoBuf;
    int len;
    int rc = msg_unpack(src, PVM_INT, &len, 1, 1);
    if (rc)
        return pvm_code_from_errno(rc);
    if (len < MSG_WIRE_HDR)
        return PvmBadMsg;
    if ((size_t)len > msg_buf_remaining(src))
        return PvmNoData;
    unsigned char *wire = malloc((size_t)len);
    if (!wire)
        return PvmNoMem;
    msg_buf_t *b = NULL;
    rc = msg_unpack(src, PVM_BYTE, wire, len, 1);
    if (rc == 0)
        rc = msg_buf_deserialize(wire, (size_t)len, &b);
    free(wire);
    if (rc)
        return pvm_code_from_errno(rc);
    int id = pvm_buf_install(t, b);
    if (id < 0) {
        msg_buf_unref(b);
        return id;
    }
    return id;
}
