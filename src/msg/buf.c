/*
 * buf.c - message buffers: handles, shared data, copy-on-write, pools,
 * and the serialised form.
 *
 * Allocation budget (the same-node fast path): a message of up to
 * SMALL_CAP bytes costs no malloc once the pools are warm: its handle and
 * its data block come from per-thread free lists.  Bigger blocks come in
 * power-of-two size classes up to LARGE_MAX, each with its own free list
 * (M-PVM's pooled blocks: without them every big message is a fresh
 * malloc whose pages the kernel must fault in again, as glibc gives them
 * back at free); bigger still are plain mallocs.  A message grows by
 * doubling.  A local send
 * (msg_buf_ref) costs one handle and no copy.  No atomics, no locks: the
 * pools are per thread and reference counts belong to the one thread that
 * uses a message (msg.h).
 */
#include "msg/msg_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/copy.h"

/* Pools are off under the sanitizers, so that every release is a free()
 * that ASan can check. */
#ifdef UPVM_SANITIZE
enum { POOL_ENABLED = 0 };
#else
enum { POOL_ENABLED = 1 };
#endif

#define SMALL_BLOCK   ((size_t)512)                            /* bytes */
#define SMALL_CAP     (SMALL_BLOCK - sizeof(struct msg_data)) /* data */
#define POOL_MAX_DATA 64  /* blocks kept per thread (32 KiB) */
#define POOL_MAX_BUFS 256 /* handles kept per thread (10 KiB) */
/* Large blocks: class k (1 .. NCLASSES-1) holds blocks of 512 << k bytes. */
#define NCLASSES      14                     /* up to 4 MiB */
#define LARGE_MAX     (SMALL_BLOCK << (NCLASSES - 1))
#define LARGE_BUDGET  ((size_t)32 << 20)    /* bytes cached per thread */
#define LARGE_PER_CLASS 64
_Static_assert(sizeof(struct msg_data) % 8 == 0, "data bytes stay aligned");

/* A free list.  Per thread: a ULP never changes threads while it runs, and
 * a thread that exits with objects cached leaks at most the sizes above
 * (call msg_pool_trim first). */
struct pool {
    void *head;
    int n;
};
#define MSG_TLS __thread __attribute__((tls_model("initial-exec")))
static MSG_TLS struct pool data_pool, buf_pool;
static MSG_TLS struct pool large_pool[NCLASSES]; /* [0] unused */
static MSG_TLS size_t large_cached;               /* bytes in large_pool */
static MSG_TLS msg_stats_t stats;

static void *pool_get(struct pool *p, size_t size)
{
    void *o = p->head;
    if (POOL_ENABLED && o) {
        memcpy(&p->head, o, sizeof(void *));
        p->n--;
        return o;
    }
    return malloc(size);
}

static void pool_put(struct pool *p, void *o, int max)
{
    if (POOL_ENABLED && p->n < max) {
        memcpy(o, &p->head, sizeof(void *));
        p->head = o;
        p->n++;
        return;
    }
    free(o);
}

static void pool_drain(struct pool *p)
{
    while (p->head) {
        void *o = p->head;
        memcpy(&p->head, o, sizeof(void *));
        free(o);
    }
    p->n = 0;
}

void msg_pool_trim(void)
{
    pool_drain(&data_pool);
    pool_drain(&buf_pool);
    for (int k = 1; k < NCLASSES; k++)
        pool_drain(&large_pool[k]);
    large_cached = 0;
}

void msg_get_stats(msg_stats_t *st)
{
    *st = stats;
}

/* ---------------------------------------------------------- data blocks */

/* The size class of a block of `bytes` bytes (1 .. NCLASSES-1), or 0
 * when it is too big for the pools. */
static int large_class(size_t bytes)
{
    if (bytes > LARGE_MAX)
        return 0;
    int k = 1;
    while ((SMALL_BLOCK << k) < bytes)
        k++;
    return k;
}

/* A new data block with room for at least cap bytes, refs = 1. */
static struct msg_data *data_alloc(size_t cap)
{
    struct msg_data *d;
    int pclass = 0;

    if (cap <= SMALL_CAP) {
        d = pool_get(&data_pool, SMALL_BLOCK);
        cap = SMALL_CAP;
        pclass = 1; /* the small pool: class 1 is never a large one */
    } else if ((pclass = large_class(sizeof(*d) + cap)) != 0) {
        size_t bytes = SMALL_BLOCK << pclass;
        if (large_pool[pclass].head)
            large_cached -= bytes;
        d = pool_get(&large_pool[pclass], bytes);
        cap = bytes - sizeof(*d);
        pclass += 1; /* 2 .. NCLASSES: large class pclass - 1 */
    } else {
        d = malloc(sizeof(*d) + cap);
    }
    if (!d)
        return NULL;
    d->refs = 1;
    d->enc = PvmDataDefault;
    d->sig = MSG_SIG_XDR;
    d->alien = false;
    d->pclass = (uint8_t)pclass;
    d->len = 0;
    d->cap = cap;
    d->ilen = 0;
    stats.datas++;
    return d;
}

/* Give a block's memory back to its pool (or to malloc). */
static void data_free(struct msg_data *d)
{
    if (d->pclass == 1) {
        pool_put(&data_pool, d, POOL_MAX_DATA);
    } else if (d->pclass > 1) {
        int k = d->pclass - 1;
        size_t bytes = SMALL_BLOCK << k;
        if (large_cached + bytes <= LARGE_BUDGET && large_pool[k].n < LARGE_PER_CLASS) {
            pool_put(&large_pool[k], d, LARGE_PER_CLASS);
            if (POOL_ENABLED)
                large_cached += bytes;
        } else {
            free(d);
        }
    } else {
        free(d);
    }
}

static void data_release(struct msg_data *d)
{
    if (--d->refs > 0)
        return;
    stats.datas--;
    data_free(d);
}

int msg_data_reserve(msg_buf_t *b, size_t need)
{
    struct msg_data *d = b->d, *nd;
    size_t want, cap;

    if (need <= d->cap - d->len)
        return 0;
    if (need > MSG_MAX_LEN - d->len)
        return -ENOMEM; /* PVM: "Message buffer size has exceeded ..." */
    want = d->len + need;
    cap = d->cap < 1024 ? 1024 : d->cap;
    while (cap < want)
        cap = cap > MSG_MAX_LEN / 2 ? MSG_MAX_LEN : cap * 2;

    if (d->pclass == 0 && cap > LARGE_MAX) { /* beyond the pools: grow in place */
        if (!(nd = realloc(d, sizeof(*nd) + cap)))
            return -ENOMEM;
        nd->cap = cap;
        b->d = nd;
        return 0;
    }
    if (!(nd = data_alloc(cap)))
        return -ENOMEM;
    size_t ncap = nd->cap;
    uint8_t nclass = nd->pclass;
    memcpy(nd, d, sizeof(*d) + d->len);
    nd->cap = ncap;
    nd->pclass = nclass;
    stats.datas--; /* one block replaces the other */
    data_free(d);
    b->d = nd;
    return 0;
}

/* ------------------------------------------------------------- handles */

static msg_buf_t *buf_alloc(struct msg_data *d)
{
    msg_buf_t *b = pool_get(&buf_pool, sizeof(*b));
    if (!b)
        return NULL;
    b->d = d;
    b->rpos = 0;
    memset(&b->hdr, 0, sizeof(b->hdr));
    stats.bufs++;
    return b;
}

int msg_native_dsig(void)
{
    /* PVM's pvmgetdsig() (pmsg.c) packs, low bits first: short size and
     * byte order (bits 0-4), int (5-9), long (10-14), float format and
     * order (15-20), double (21-26).  Sizes are log2(bytes); order 0 is
     * little endian, 3 big endian; float format 1 is IEEE single, 2 IEEE
     * double.  LINUX64 (x86_64) gives 0x408c41, which libpvm3 3.4.6
     * reports in pvm_getminfo() for a raw buffer. */
    const int le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 3;
    int sig = 0;
    sig |= ((le << 3) | __builtin_ctz(sizeof(short))) << 0;
    sig |= ((le << 3) | __builtin_ctz(sizeof(int))) << 5;
    sig |= ((le << 3) | __builtin_ctz(sizeof(long))) << 10;
    sig |= ((le << 4) | 1) << 15;
    sig |= ((le << 4) | 2) << 21;
    return sig;
}

/* The data signature of encoding enc, or -EINVAL / -ENOSYS for a bad one. */
static int enc_sig(int enc)
{
    /* pvm_mkbuf (lpvmpack.c) accepts 0, 1, 2 and 4, else a bad parameter. */
    switch (enc) {
    case PvmDataDefault:
        return MSG_SIG_XDR;
    case PvmDataRaw:
        return msg_native_dsig();
    case PvmDataInPlace:
        return MSG_SIG_INPLACE;
    case PvmDataTrace:
        return -ENOSYS; /* user-defined trace events: not in UPVM */
    default:
        return -EINVAL;
    }
}

int msg_buf_new(int enc, msg_buf_t **out)
{
    struct msg_data *d;
    msg_buf_t *b;
    int sig = enc_sig(enc);

    if (sig < 0) /* a Pvm error code (every signature is positive) */
        return sig;
    if (!(d = data_alloc(0)))
        return -ENOMEM;
    if (!(b = buf_alloc(d))) {
        data_release(d);
        return -ENOMEM;
    }
    d->enc = enc;
    d->sig = sig;
    *out = b;
    return 0;
}

int msg_buf_reset(msg_buf_t *b, int enc)
{
    int sig = enc_sig(enc);

    if (sig < 0)
        return sig;
    if (b->d->refs > 1) { /* others hold the old message: start a new one */
        struct msg_data *d = data_alloc(0);
        if (!d)
            return -ENOMEM;
        data_release(b->d);
        b->d = d;
    }
    struct msg_data *d = b->d;
    d->enc = enc;
    d->sig = sig;
    d->alien = false;
    d->len = 0;
    d->ilen = 0;
    b->rpos = 0;
    memset(&b->hdr, 0, sizeof(b->hdr));
    return 0;
}

/* The bytes an in-place message refers to, copied now into a new raw data
 * block: what the message is when it leaves. */
static struct msg_data *inplace_snapshot(const struct msg_data *src)
{
    struct msg_data *d = data_alloc(src->ilen);
    unsigned char *p;

    if (!d)
        return NULL;
    d->enc = PvmDataRaw;
    d->sig = msg_native_dsig();
    p = d->bytes;
    for (size_t off = 0; off < src->len; off += sizeof(struct msg_seg)) {
        struct msg_seg s;
        memcpy(&s, src->bytes + off, sizeof(s));
        memcpy(p, s.ptr, s.len);
        p += s.len;
    }
    d->len = src->ilen;
    return d;
}

int msg_buf_ref(msg_buf_t *b, msg_buf_t **out)
{
    struct msg_data *d;
    msg_buf_t *nb;

    if (b->d->enc == PvmDataInPlace) {
        if (!(d = inplace_snapshot(b->d)))
            return -ENOMEM;
    } else {
        d = b->d;
        d->refs++;
    }
    if (!(nb = buf_alloc(d))) {
        data_release(d);
        return -ENOMEM;
    }
    nb->hdr = b->hdr;
    *out = nb;
    return 0;
}

void msg_buf_unref(msg_buf_t *b)
{
    if (!b)
        return;
    data_release(b->d);
    stats.bufs--;
    pool_put(&buf_pool, b, POOL_MAX_BUFS);
}

int msg_buf_make_private(msg_buf_t *b)
{
    struct msg_data *old = b->d, *d;

    if (old->refs == 1)
        return 0;
    if (!(d = data_alloc(old->len)))
        return -ENOMEM;
    d->enc = old->enc;
    d->sig = old->sig;
    d->alien = old->alien;
    d->ilen = old->ilen;
    d->len = old->len;
    memcpy(d->bytes, old->bytes, old->len);
    old->refs--; /* others still hold it: never the last reference */
    b->d = d;
    stats.copies++;
    return 0;
}

int msg_buf_refs(const msg_buf_t *b)
{
    return (int)b->d->refs;
}

/* ---------------------------------------------------------- inspection */

msg_hdr_t *msg_buf_hdr(msg_buf_t *b)
{
    return &b->hdr;
}

int msg_buf_enc(const msg_buf_t *b)
{
    return b->d->enc;
}

int msg_buf_enc_sig(const msg_buf_t *b)
{
    return b->d->sig;
}

size_t msg_buf_len(const msg_buf_t *b)
{
    return b->d->enc == PvmDataInPlace ? b->d->ilen : b->d->len;
}

size_t msg_buf_remaining(const msg_buf_t *b)
{
    if (b->d->enc == PvmDataInPlace)
        return 0;
    return b->d->len - b->rpos;
}

void msg_buf_rewind(msg_buf_t *b)
{
    b->rpos = 0;
}

size_t msg_buf_tell(const msg_buf_t *b)
{
    return b->rpos;
}

int msg_buf_seek(msg_buf_t *b, size_t pos)
{
    if (pos > b->d->len)
        return -EINVAL;
    b->rpos = pos;
    return 0;
}

/* ------------------------------------------------------ serialised form */

static void put32(unsigned char *p, uint32_t v)
{
    v = msg_be32(v);
    memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return msg_be32(v);
}

size_t msg_buf_serial_size(const msg_buf_t *b)
{
    return MSG_WIRE_HDR + msg_buf_len(b);
}

/* The wire header of b's serialised form (data length len) at p. */
static void put_header(const msg_buf_t *b, unsigned char *p)
{
    const struct msg_data *d = b->d;
    int sig = d->enc == PvmDataInPlace ? msg_native_dsig() /* leaves as raw, like
                                                              PVM's mxfer() */
                                       : d->sig;
    put32(p + 0, MSG_WIRE_MAGIC);
    p[4] = 0;
    p[5] = 1; /* version */
    p[6] = 0;
    p[7] = MSG_WIRE_HDR;
    put32(p + 8, (uint32_t)sig);
    put32(p + 12, (uint32_t)msg_buf_len(b));
    put32(p + 16, (uint32_t)b->hdr.tag);
    put32(p + 20, (uint32_t)b->hdr.ctx);
    put32(p + 24, (uint32_t)b->hdr.src);
    put32(p + 28, (uint32_t)b->hdr.dst);
    put32(p + 32, (uint32_t)b->hdr.wid);
    put32(p + 36, 0);
}

int msg_buf_serialize(const msg_buf_t *b, void *dst, size_t cap,
                      size_t *len_out)
{
    const struct msg_data *d = b->d;
    size_t n = msg_buf_serial_size(b);
    unsigned char *p = dst;

    if (cap < n)
        return -EOVERFLOW;
    put_header(b, p);
    p += MSG_WIRE_HDR;
    if (d->enc == PvmDataInPlace) {
        for (size_t off = 0; off < d->len; off += sizeof(struct msg_seg)) {
            struct msg_seg s;
            memcpy(&s, d->bytes + off, sizeof(s));
            util_copy(p, s.ptr, s.len);
            p += s.len;
        }
    } else {
        util_copy(p, d->bytes, d->len);
    }
    if (len_out)
        *len_out = n;
    return 0;
}

int msg_buf_serial_iov(const msg_buf_t *b, void *hdr, struct iovec *iov, int max)
{
    const struct msg_data *d = b->d;
    int n = 0;

    if (d->enc != PvmDataInPlace) {
        if (d->len) {
            if (max < 1)
                return -EOVERFLOW;
            iov[n++] = (struct iovec){(void *)d->bytes, d->len}; /* read only */
        }
    } else {
        if (d->len / sizeof(struct msg_seg) > (size_t)(max > 0 ? max : 0))
            return -EOVERFLOW;
        for (size_t off = 0; off < d->len; off += sizeof(struct msg_seg)) {
            struct msg_seg s;
            memcpy(&s, d->bytes + off, sizeof(s));
            if (s.len)
                iov[n++] = (struct iovec){(void *)s.ptr, s.len};
        }
    }
    put_header(b, hdr);
    return n;
}

int msg_buf_deserialize(const void *src, size_t n, msg_buf_t **out)
{
    const unsigned char *p = src;
    struct msg_data *d;
    msg_buf_t *b;
    size_t len;
    int32_t sig;

    if (n < MSG_WIRE_HDR || get32(p) != MSG_WIRE_MAGIC || p[4] != 0 ||
        p[5] != 1 || p[6] != 0 || p[7] != MSG_WIRE_HDR)
        return -EBADMSG;
    len = get32(p + 12);
    if (len != n - MSG_WIRE_HDR || len > MSG_MAX_LEN)
        return -EBADMSG;
    sig = (int32_t)get32(p + 8);
    if (sig == MSG_SIG_INPLACE)
        return -EBADMSG; /* in-place data never travels as such */

    if (!(d = data_alloc(len)))
        return -ENOMEM;
    if (sig == MSG_SIG_XDR) {
        d->enc = PvmDataDefault;
    } else {
        /* PVM's pmsg_setenc(): the native signature decodes as raw, any
         * other as "alien" (enc_alien: bytes only). */
        d->enc = PvmDataRaw;
        d->alien = sig != msg_native_dsig();
    }
    d->sig = sig;
    util_copy(d->bytes, p + MSG_WIRE_HDR, len);
    d->len = len;
    if (!(b = buf_alloc(d))) {
        data_release(d);
        return -ENOMEM;
    }
    b->hdr.tag = (int32_t)get32(p + 16);
    b->hdr.ctx = (int32_t)get32(p + 20);
    b->hdr.src = (int32_t)get32(p + 24);
    b->hdr.dst = (int32_t)get32(p + 28);
    b->hdr.wid = (int32_t)get32(p + 32);
    *out = b;
    return 0;
}
