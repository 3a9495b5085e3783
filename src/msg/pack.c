/*
 * pack.c - packing and unpacking typed items in PVM 3.4.6's encodings.
 *
 * What PVM 3.4.6 does, and where we learned it (file/function of the PVM
 * 3.4.6 sources, cross-checked by running Debian's libpvm3 3.4.6-5 on
 * x86_64; tests/msg/test-msg-xdr.c holds the byte patterns):
 *
 * XDR (PvmDataDefault): pmsg.c enc_xdr_* / dec_xdr_*, built on the RPC
 * library's xdr_short/xdr_int/xdr_long/... over xdrmem (LINUX64 builds do
 * not define BOGUSXDR or USE_XDR_LONGLONG, see conf/LINUX64.def):
 *   byte    the bytes themselves (every stride-th), then zero to three pad
 *           bytes up to a multiple of 4 (enc_xdr_byte pads the fragment
 *           length; dec_xdr_byte rounds the cursor up the same way).  So
 *           every pvm_pkbyte call pads: two 1-byte packs take 8 bytes.  PVM
 *           leaves the pad bytes uninitialised; we write zeros.
 *   short   4 bytes big-endian, sign-extended (xdr_short).
 *   ushort  packed with enc_xdr_short too (the encoders[] table), so 0xffff
 *           goes out as ff ff ff ff and 0x8000 as ff ff 80 00; unpacked
 *           with xdr_u_short: the low 16 bits.
 *   int, uint    4 bytes big-endian.
 *   long    4 bytes big-endian on LP64 too (xdr_long is 32-bit on the
 *           wire); unpacked sign-extended (glibc's xdr_long; Debian's
 *           libtirpc-based build zero-extends, so a packed -2 unpacks as
 *           4294967294 there, a bug of that port).  A value outside int32 gives
 *           -EOVERFLOW (enc_xdr_long; the pvm_pack(3PVM) man page:
 *           "packing an 8-byte long with XDR encoding if the value won't
 *           fit into 4 bytes").  Note: Debian's build links libtirpc, whose
 *           xdr_long does not fail, so that build silently keeps the low 32
 *           bits and returns 0; we follow PVM's code and manual.  PVM has
 *           packed the items before the bad one by then; we pack none.
 *   ulong   4 bytes big-endian (enc_xdr_ulong), unpacked zero-extended;
 *           above 0xffffffff: -EOVERFLOW as for long.
 *   float   4 bytes IEEE big-endian; double 8 bytes IEEE big-endian.
 *   cplx, dcplx  the real then the imaginary part, each as float/double;
 *           stride counts complex numbers (enc_xdr_cplx: std*2-1 floats).
 *   string  pvm_pkstr (lpvmpack.c): an int strlen+1, then that many bytes
 *           (the NUL included) as bytes, padded; pvm_upkstr reads the int
 *           and unpacks that many bytes.
 *
 * Raw (PvmDataRaw): enc_raw_any/dec_raw_any copy each item's native bytes
 * (sizeof(long) = 8 here), every stride-th item, no padding; a string is a
 * native int then its bytes.
 *
 * In place (PvmDataInPlace): enc_inp_any keeps (pointer, length) of the
 * user's array instead of copying; stride != 1 is -ENOSYS; a NULL
 * pointer or a count of 0 packs nothing and succeeds.  pvm_pkstr gives
 * -ENOSYS.  Unpacking (the decoders are enc_alien) gives -EBADMSG.
 *
 * Alien (a raw message from another data signature; pmsg_setenc): only
 * bytes unpack (dec_raw_any); everything else is -EBADMSG.
 *
 * Errors (pvm_pk* and pvm_upk* in lpvmpack.c, and runs of libpvm3), each
 * PVM code written as the negative errno this layer returns for it (msg.h
 * has the table; src/pvm turns them back into PVM's codes):
 *   - count < 0: -EINVAL.  count 0: nothing, 0 (even when no data
 *     is left).
 *   - stride is not checked: 0 packs the same item count times, a negative
 *     stride walks backwards through memory.  We do the same, and only
 *     refuse (-EINVAL) a NULL pointer or a count * stride span that
 *     overflows the address space, where PVM would crash.
 *   - Past the end: -ENODATA (byteupk -> pmsg_decmore, dec_xdr_step).
 *     PVM has stored the items that were there and moved the cursor past
 *     them; we store nothing and leave the cursor (outputs only on
 *     success).
 *   - Another type than was packed: XDR records no types, so PVM
 *     reinterprets the bytes and returns 0 when enough are left, else
 *     -ENODATA: an int unpacked as a short is truncated (70000 -> 4464),
 *     an int 0x3f800000 unpacked as a float is 1.0, two ints unpacked as a
 *     double are its two halves, a string unpacked as an int gives its
 *     length + 1.  An int unpacked as a string is a length: more than is
 *     left gives -ENODATA (PVM first copies what is left into the user's
 *     buffer; we copy nothing), <= 0 stores nothing and returns 0.
 */
#include "msg/msg_impl.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "util/copy.h"

/* Per PVM_* type: native item size and XDR item size (0: not a type this
 * table handles: PVM_STR). */
static const struct {
    uint8_t nsize, xsize;
} types[] = {
    [PVM_STR] = {0, 0},
    [PVM_BYTE] = {1, 1},
    [PVM_SHORT] = {sizeof(short), 4},
    [PVM_INT] = {sizeof(int), 4},
    [PVM_FLOAT] = {sizeof(float), 4},
    [PVM_CPLX] = {2 * sizeof(float), 8},
    [PVM_DOUBLE] = {sizeof(double), 8},
    [PVM_DCPLX] = {2 * sizeof(double), 16},
    [PVM_LONG] = {sizeof(long), 4},
    [PVM_USHORT] = {sizeof(short), 4},
    [PVM_UINT] = {sizeof(int), 4},
    [PVM_ULONG] = {sizeof(long), 4},
};
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE sizes");
_Static_assert(sizeof(int) == 4 && sizeof(short) == 2, "PVM's int sizes");

static bool type_ok(int type)
{
    return type > PVM_STR && type <= PVM_ULONG;
}

/* The user's array: count items of nsize bytes, every stride-th.  Refuse
 * what would make our address arithmetic overflow. */
static int check_array(const void *ptr, int count, int stride, size_t nsize,
                       ptrdiff_t *step)
{
    size_t span;
    size_t s = stride < 0 ? (size_t)-(long)stride : (size_t)stride;

    if (count < 0)
        return -EINVAL;
    if (count == 0)
        return 0;
    if (!ptr)
        return -EINVAL;
    if (__builtin_mul_overflow(s, nsize, &span) ||
        __builtin_mul_overflow(span, (size_t)count, &span) ||
        span > PTRDIFF_MAX)
        return -EINVAL;
    *step = (ptrdiff_t)stride * (ptrdiff_t)nsize;
    return 0;
}

/* Bytes from n up to the next multiple of 4. */
static size_t pad4(size_t n)
{
    return (4 - (n & 3)) & 3;
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------- encoders */

static void put_be32(unsigned char *o, uint32_t v)
{
    v = msg_be32(v);
    memcpy(o, &v, 4);
}

static uint32_t get_be32(const unsigned char *i)
{
    uint32_t v;
    memcpy(&v, i, 4);
    return msg_be32(v);
}

static void put_be64(unsigned char *o, uint64_t v)
{
    v = msg_be64(v);
    memcpy(o, &v, 8);
}

static uint64_t get_be64(const unsigned char *i)
{
    uint64_t v;
    memcpy(&v, i, 8);
    return msg_be64(v);
}

/* XDR: is every long/ulong representable in 32 bits? */
static int xdr_range_check(int type, const unsigned char *p, int count,
                           ptrdiff_t step)
{
    for (int i = 0; i < count; i++, p += step) {
        if (type == PVM_LONG) {
            long v;
            memcpy(&v, p, sizeof(v));
            if (v < INT32_MIN || v > INT32_MAX)
                return -EOVERFLOW;
        } else {
            unsigned long v;
            memcpy(&v, p, sizeof(v));
            if (v > UINT32_MAX)
                return -EOVERFLOW;
        }
    }
    return 0;
}

/* Encode count items from p (step bytes apart) as XDR at o. */
static void xdr_encode(int type, unsigned char *o, const unsigned char *p,
                       int count, ptrdiff_t step)
{
    switch (type) {
    case PVM_BYTE:
        if (step == 1) { /* bytes need no conversion: the common case */
            util_copy(o, p, (size_t)count);
            break;
        }
        for (int i = 0; i < count; i++, p += step)
            *o++ = *p;
        break;
    case PVM_SHORT:
    case PVM_USHORT: /* both as xdr_short: sign-extended */
        for (int i = 0; i < count; i++, p += step, o += 4) {
            int16_t v;
            memcpy(&v, p, 2);
            put_be32(o, (uint32_t)(int32_t)v);
        }
        break;
    case PVM_INT:
    case PVM_UINT:
    case PVM_FLOAT:
        for (int i = 0; i < count; i++, p += step, o += 4) {
            uint32_t v;
            memcpy(&v, p, 4);
            put_be32(o, v);
        }
        break;
    case PVM_LONG: /* range checked: the low 32 bits are the value */
    case PVM_ULONG:
        for (int i = 0; i < count; i++, p += step, o += 4) {
            unsigned long v;
            memcpy(&v, p, sizeof(v));
            put_be32(o, (uint32_t)v);
        }
        break;
    case PVM_DOUBLE:
        for (int i = 0; i < count; i++, p += step, o += 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            put_be64(o, v);
        }
        break;
    case PVM_CPLX:
        for (int i = 0; i < count; i++, p += step, o += 8) {
            uint32_t re, im;
            memcpy(&re, p, 4);
            memcpy(&im, p + 4, 4);
            put_be32(o, re);
            put_be32(o + 4, im);
        }
        break;
    case PVM_DCPLX:
        for (int i = 0; i < count; i++, p += step, o += 16) {
            uint64_t re, im;
            memcpy(&re, p, 8);
            memcpy(&im, p + 8, 8);
            put_be64(o, re);
            put_be64(o + 8, im);
        }
        break;
    }
}

/* Decode count XDR items at i into p (step bytes apart). */
static void xdr_decode(int type, unsigned char *p, const unsigned char *i,
                       int count, ptrdiff_t step)
{
    switch (type) {
    case PVM_BYTE:
        if (step == 1) {
            util_copy(p, i, (size_t)count);
            break;
        }
        for (int k = 0; k < count; k++, p += step)
            *p = *i++;
        break;
    case PVM_SHORT:
    case PVM_USHORT: /* xdr_short / xdr_u_short: the low 16 bits */
        for (int k = 0; k < count; k++, p += step, i += 4) {
            uint16_t v = (uint16_t)get_be32(i);
            memcpy(p, &v, 2);
        }
        break;
    case PVM_INT:
    case PVM_UINT:
    case PVM_FLOAT:
        for (int k = 0; k < count; k++, p += step, i += 4) {
            uint32_t v = get_be32(i);
            memcpy(p, &v, 4);
        }
        break;
    case PVM_LONG: /* xdr_long: sign-extended */
        for (int k = 0; k < count; k++, p += step, i += 4) {
            long v = (int32_t)get_be32(i);
            memcpy(p, &v, sizeof(v));
        }
        break;
    case PVM_ULONG: /* xdr_u_long: zero-extended */
        for (int k = 0; k < count; k++, p += step, i += 4) {
            unsigned long v = get_be32(i);
            memcpy(p, &v, sizeof(v));
        }
        break;
    case PVM_DOUBLE:
        for (int k = 0; k < count; k++, p += step, i += 8) {
            uint64_t v = get_be64(i);
            memcpy(p, &v, 8);
        }
        break;
    case PVM_CPLX:
        for (int k = 0; k < count; k++, p += step, i += 8) {
            uint32_t re = get_be32(i), im = get_be32(i + 4);
            memcpy(p, &re, 4);
            memcpy(p + 4, &im, 4);
        }
        break;
    case PVM_DCPLX:
        for (int k = 0; k < count; k++, p += step, i += 16) {
            uint64_t re = get_be64(i), im = get_be64(i + 8);
            memcpy(p, &re, 8);
            memcpy(p + 8, &im, 8);
        }
        break;
    }
}

/* Raw: the native bytes of each item. */
static void raw_copy_in(unsigned char *o, const unsigned char *p, int count,
                        ptrdiff_t step, size_t nsize)
{
    if (step == (ptrdiff_t)nsize) {
        util_copy(o, p, (size_t)count * nsize);
        return;
    }
    for (int i = 0; i < count; i++, p += step, o += nsize)
        memcpy(o, p, nsize);
}

static void raw_copy_out(unsigned char *p, const unsigned char *i, int count,
                         ptrdiff_t step, size_t nsize)
{
    if (step == (ptrdiff_t)nsize) {
        util_copy(p, i, (size_t)count * nsize);
        return;
    }
    for (int k = 0; k < count; k++, p += step, i += nsize)
        memcpy(p, i, nsize);
}

/* ---------------------------------------------------------------- pack */

static int pack_inplace(msg_buf_t *b, const void *ptr, int count, int stride,
                        size_t nsize)
{
    struct msg_seg seg;
    int cc;

    if (stride != 1)
        return -ENOSYS;
    if (!ptr || count == 0)
        return 0; /* enc_inp_any: nothing to reference */
    seg.ptr = ptr;
    seg.len = (size_t)count * nsize;
    if (seg.len > MSG_MAX_LEN - b->d->ilen)
        return -ENOMEM;
    if ((cc = msg_buf_make_private(b)) || (cc = msg_data_reserve(b, sizeof(seg))))
        return cc;
    memcpy(b->d->bytes + b->d->len, &seg, sizeof(seg));
    b->d->len += sizeof(seg);
    b->d->ilen += seg.len;
    return 0;
}

int msg_pack(msg_buf_t *b, int type, const void *ptr, int count, int stride)
{
    const unsigned char *p = ptr;
    ptrdiff_t step = 0;
    size_t nsize, need;
    int cc;

    if (type == PVM_STR)
        return msg_pack_str(b, ptr);
    if (count < 0 || !type_ok(type))
        return -EINVAL;
    if (b->d->alien)
        return -EBADMSG;
    nsize = types[type].nsize;
    if (b->d->enc == PvmDataInPlace)
        return pack_inplace(b, ptr, count, stride, nsize);
    if ((cc = check_array(ptr, count, stride, nsize, &step)))
        return cc;

    if (b->d->enc == PvmDataRaw) {
        need = (size_t)count * nsize;
    } else {
        if ((type == PVM_LONG || type == PVM_ULONG) &&
            (cc = xdr_range_check(type, p, count, step)))
            return cc;
        need = (size_t)count * types[type].xsize;
        if (type == PVM_BYTE)
            need += pad4(b->d->len + need);
    }
    if (need == 0)
        return 0;
    if ((cc = msg_buf_make_private(b)) || (cc = msg_data_reserve(b, need)))
        return cc;

    unsigned char *o = b->d->bytes + b->d->len;
    if (b->d->enc == PvmDataRaw) {
        raw_copy_in(o, p, count, step, nsize);
    } else {
        xdr_encode(type, o, p, count, step);
        if (type == PVM_BYTE)
            memset(o + count, 0, need - (size_t)count);
    }
    b->d->len += need;
    return 0;
}

int msg_pack_str(msg_buf_t *b, const char *s)
{
    size_t slen, need;
    int32_t l;
    int cc;

    if (!s)
        return -EINVAL; /* pvm_pack(3PVM): "(char *)0 is not allowed" */
    if (b->d->enc == PvmDataInPlace)
        return -ENOSYS;
    if (b->d->alien)
        return -EBADMSG;
    slen = strlen(s) + 1;
    if (slen > INT32_MAX)
        return -EINVAL;
    l = (int32_t)slen;
    need = 4 + slen;
    if (b->d->enc == PvmDataDefault)
        need += pad4(b->d->len + need);
    if ((cc = msg_buf_make_private(b)) || (cc = msg_data_reserve(b, need)))
        return cc;

    unsigned char *o = b->d->bytes + b->d->len;
    if (b->d->enc == PvmDataDefault)
        put_be32(o, (uint32_t)l);
    else
        memcpy(o, &l, 4);
    memcpy(o + 4, s, slen);
    memset(o + 4 + slen, 0, need - 4 - slen);
    b->d->len += need;
    return 0;
}

/* -------------------------------------------------------------- unpack */

int msg_unpack(msg_buf_t *b, int type, void *ptr, int count, int stride)
{
    const struct msg_data *d = b->d;
    unsigned char *p = ptr;
    ptrdiff_t step = 0;
    size_t nsize, need, left;
    int cc;

    if (type == PVM_STR)
        return msg_unpack_str(b, ptr, SIZE_MAX);
    if (count < 0 || !type_ok(type))
        return -EINVAL;
    if (d->enc == PvmDataInPlace || (d->alien && type != PVM_BYTE))
        return -EBADMSG;
    nsize = types[type].nsize;
    if ((cc = check_array(ptr, count, stride, nsize, &step)))
        return cc;
    if (count == 0)
        return 0;

    left = d->len - b->rpos;
    need = (size_t)count * (d->enc == PvmDataRaw ? nsize : types[type].xsize);
    if (need > left)
        return -ENODATA;

    const unsigned char *i = d->bytes + b->rpos;
    if (d->enc == PvmDataRaw) {
        raw_copy_out(p, i, count, step, nsize);
    } else {
        xdr_decode(type, p, i, count, step);
        if (type == PVM_BYTE) /* dec_xdr_byte: cursor to the next word */
            need += min_size(pad4(b->rpos + need), left - need);
    }
    b->rpos += need;
    return 0;
}

int msg_unpack_str(msg_buf_t *b, char *s, size_t cap)
{
    const struct msg_data *d = b->d;
    size_t left, n;
    int32_t l;

    if (d->enc == PvmDataInPlace || d->alien)
        return -EBADMSG;
    left = d->len - b->rpos;
    if (left < 4)
        return -ENODATA;
    if (d->enc == PvmDataDefault)
        l = (int32_t)get_be32(d->bytes + b->rpos);
    else
        memcpy(&l, d->bytes + b->rpos, 4);
    if (l <= 0) { /* pvm_upkstr: byteupk of <= 0 bytes does nothing */
        b->rpos += 4;
        return 0;
    }
    n = (size_t)l;
    if (n > left - 4)
        return -ENODATA;
    if (n > cap)
        return -EOVERFLOW;
    if (!s)
        return -EINVAL;
    memcpy(s, d->bytes + b->rpos + 4, n);
    n += 4;
    if (d->enc == PvmDataDefault)
        n += min_size(pad4(b->rpos + n), left - n);
    b->rpos += n;
    return 0;
}
