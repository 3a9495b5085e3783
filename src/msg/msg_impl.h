/*
 * msg_impl.h - the msg layer's private structures, shared by buf.c,
 * pack.c and packf.c.  Other layers include only msg.h.
 */
#ifndef UPVM_MSG_IMPL_H
#define UPVM_MSG_IMPL_H

#include "msg/msg.h"

#include <stdbool.h>

/* PVM 3.4.6's internal encoding values (pvm_mkbuf in lpvmpack.c; what
 * pvm_getminfo reports): raw is the packer's data signature instead. */
#define MSG_SIG_XDR     0x10000000
#define MSG_SIG_INPLACE 0x20000000


/*
 * One message's data: shared by every holder (msg_buf_t) that refers to
 * it, freed with the last.  A writer must be the only holder (refs == 1).
 *
 * For XDR and raw messages bytes[0 .. len) is the message itself.  For an
 * in-place message bytes[] holds a table of struct msg_seg (len bytes of
 * it) describing the user's memory, and ilen is the sum of their lengths.
 */
struct msg_data {
    uint32_t refs;   /* holders */
    int32_t enc;     /* PvmDataDefault, PvmDataRaw or PvmDataInPlace */
    int32_t sig;     /* msg_buf_enc_sig() */
    bool alien;      /* raw from another data signature: bytes only */
    uint8_t pclass;  /* size class of its pool (buf.c), 0: plain malloc */
    size_t len;      /* bytes used in bytes[] */
    size_t cap;      /* bytes available in bytes[] */
    size_t ilen;     /* in place: bytes referenced */
    unsigned char bytes[]; /* the data (or the in-place table) */
};

/* A piece of user memory referenced by an in-place message.  Stored in
 * bytes[] unaligned: read and write it with memcpy. */
struct msg_seg {
    const void *ptr;
    size_t len;
};

/* One holder's handle. */
struct msg_buf {
    struct msg_data *d; /* never NULL */
    size_t rpos;        /* read cursor: offset into d->bytes */
    msg_hdr_t hdr;      /* this holder's header */
};

/* Big-endian (XDR and wire) from/to host order. */
static inline uint32_t msg_be32(uint32_t v)
{
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap32(v) : v;
}

static inline uint64_t msg_be64(uint64_t v)
{
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap64(v) : v;
}

/* buf.c: make room for need more bytes in b's (private) data.  May move
 * b->d.  Returns 0 or -ENOMEM. */
MSG_NODISCARD int msg_data_reserve(msg_buf_t *b, size_t need);

#endif /* UPVM_MSG_IMPL_H */
