/*
 * msg.h - UPVM message buffers: ref-counted, copy-on-write, PVM encodings.
 *
 * The msg layer owns the bytes of a PVM message and the rules for putting
 * typed data into them (packing) and taking it out again (unpacking), in
 * the three encodings of PVM 3.4.6.  It does no scheduling and no I/O; the
 * PVM layer (src/pvm) builds pvm_initsend/pvm_pk* /pvm_send/pvm_recv/...
 * on top of it, and the transport moves serialised buffers between nodes.
 *
 * Holders and data (UPVM's LBID -> GBID)
 *   A msg_buf_t is one holder's handle on a message: the PVM layer keeps
 *   one per buffer id of a task (the LBID).  The handle owns
 *     - a read cursor (each holder unpacks at its own pace),
 *     - the header of the message: msg_hdr_t (tag, context, source, ...),
 *   and points at the message data (the GBID), which is reference-counted
 *   and shared by every handle made with msg_buf_ref().  Sending a buffer
 *   to a task of the same node is msg_buf_ref(): no byte is copied.
 *   Writing is copy-on-write: msg_pack*() on a handle whose data has other
 *   holders first gives that handle a private copy, so no holder ever sees
 *   another's later writes.
 *
 * Encodings (PvmData* of pvm3.h)
 *   PvmDataDefault  XDR as PVM 3.4.6 writes it: big-endian, every item a
 *                   multiple of 4 bytes (see pack.c for each type).  Any
 *                   node, any architecture can read it.
 *   PvmDataRaw      the packer's native bytes, no padding.  Only a node
 *                   with the same data signature (byte order, sizes) can
 *                   unpack anything but bytes from it (see "alien" below).
 *   PvmDataInPlace  packing records (pointer, length) of the user's data
 *                   instead of copying it; the bytes are read when the
 *                   message leaves: at msg_buf_ref() (a local send) or
 *                   msg_buf_serialize() (a remote one).  So the receiver
 *                   sees the data as it was at pvm_send, not at pvm_pk*, and
 *                   the user must keep that memory valid until then.  The
 *                   receiver gets a PvmDataRaw message (as in PVM, whose
 *                   in-place messages travel with the sender's native data
 *                   signature).  Only stride 1 and no strings (-ENOSYS);
 *                   the sender cannot unpack its own in-place buffer
 *                   (-EBADMSG).
 *   A raw message from a node with another data signature is "alien": like
 *   PVM, only bytes can be unpacked from it; other types and any packing
 *   give -EBADMSG.
 *
 * Errors
 *   Functions return 0 or a negative errno (docs/architecture.md, "One
 *   error model"); outputs are written only on success.  Each errno stands
 *   for one of PVM's codes, the one PVM returns for the same misuse, and
 *   pvm_code_from_errno (src/pvm/errors.c) gives that code back at the API:
 *     -EINVAL     bad parameter        -ENODATA   end of buffer (no data)
 *     -ENOMEM     malloc failed        -EBADMSG   can't decode message
 *     -EOVERFLOW  value too large      -ENOSYS    not implemented
 *     -EBADF      no current buffer
 *   This layer names no PVM error code; pvm3.h is included for the names of
 *   the encodings and types (PvmDataDefault, PVM_INT, ...), the wire's.  A failed pack leaves the buffer as it was; a failed
 *   unpack writes nothing and leaves the cursor where it was (PVM itself
 *   may have consumed and stored part of the data: see pack.c).  Nothing
 *   aborts on bad input and nothing reads outside the buffer.
 *
 * Threads and context
 *   Any thread, but all handles that share one data block must be used by
 *   one thread at a time (reference counts are plain integers: sharing is
 *   for ULPs of one node, on its scheduler thread).  To pass a message to
 *   another thread, hand over a handle whose data has no other holder
 *   (msg_buf_make_private), or serialise it.  Different messages may be
 *   used on different threads at the same time.  No function blocks or
 *   switches ULPs; the only system interaction is malloc when a pool is
 *   empty or a message outgrows its block.
 *
 * Undefined (not checked): a msg_buf_t pointer that is not a live handle;
 * user arrays shorter than count*stride items.
 */
#ifndef UPVM_MSG_H
#define UPVM_MSG_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <pvm3.h>

#if defined(__GNUC__)
#define MSG_NODISCARD __attribute__((warn_unused_result))
#else
#define MSG_NODISCARD
#endif

typedef struct msg_buf msg_buf_t;

/* The header of a message as one holder sees it (struct pvmminfo minus
 * what the data determines).  Not shared: each handle has its own. */
typedef struct msg_hdr {
    int32_t tag; /* message tag */
    int32_t ctx; /* context */
    int32_t src; /* source tid */
    int32_t dst; /* destination tid */
    int32_t wid; /* wait id */
} msg_hdr_t;

/* ------------------------------------------------------------ lifetime */

/*
 * msg_buf_new - a new, empty message in encoding enc (PvmDataDefault,
 * PvmDataRaw or PvmDataInPlace) with a zeroed header; *out is the only
 * holder.  Errors: -EINVAL (unknown encoding, as pvm_mkbuf), -ENOSYS
 * (PvmDataTrace), -ENOMEM.
 */
MSG_NODISCARD int msg_buf_new(int enc, msg_buf_t **out);

/*
 * msg_buf_reset - make b a new, empty message in encoding enc with a
 * zeroed header, as msg_buf_new would, reusing b's data block when b is its
 * only holder (other holders keep the old message).  Errors as msg_buf_new;
 * b is unchanged then.
 */
MSG_NODISCARD int msg_buf_reset(msg_buf_t *b, int enc);

/*
 * msg_buf_ref - a new holder of b's message (a local send): *out shares
 * b's data, copies b's header and starts reading at the beginning.  No
 * data is copied, except for an in-place b: then *out gets a PvmDataRaw
 * copy of the user's bytes as they are now (they are read here).
 * Errors: -ENOMEM.
 */
MSG_NODISCARD int msg_buf_ref(msg_buf_t *b, msg_buf_t **out);

/* msg_buf_unref - drop the holder b (NULL is ignored); its data is freed
 * with its last holder.  b must not be used afterwards. */
void msg_buf_unref(msg_buf_t *b);

/*
 * msg_buf_make_private - make sure no other holder shares b's data,
 * copying it if needed (copy-on-write; msg_pack* does this itself).
 * Errors: -ENOMEM (b is unchanged).
 */
MSG_NODISCARD int msg_buf_make_private(msg_buf_t *b);

/* Number of holders sharing b's data (1 when private). */
int msg_buf_refs(const msg_buf_t *b);

/* ---------------------------------------------------------- inspection */

/* The largest message, in bytes: PVM reports lengths in an int.  A pack
 * past it fails with -ENOMEM (PVM's PvmNoMem). */
#define MSG_MAX_LEN ((size_t)INT32_MAX)

/* b's header, to read or change (changing it never copies data). */
msg_hdr_t *msg_buf_hdr(msg_buf_t *b);

/* Encoding: PvmDataDefault, PvmDataRaw or PvmDataInPlace. */
int msg_buf_enc(const msg_buf_t *b);

/* The encoding as pvm_getminfo() reports it in PVM 3.4.6: 0x10000000 for
 * XDR, 0x20000000 for in place, the packer's data signature for raw
 * (0x408c41 on x86_64 Linux). */
int msg_buf_enc_sig(const msg_buf_t *b);

/* Length of the message in bytes as it travels (for in-place buffers: the
 * bytes referenced so far; PVM's pvm_bufinfo says 0 for those before the
 * send). */
size_t msg_buf_len(const msg_buf_t *b);

/* Bytes left to unpack after b's read cursor (0 for in-place buffers). */
size_t msg_buf_remaining(const msg_buf_t *b);

/* Set b's read cursor back to the start of the message. */
void msg_buf_rewind(msg_buf_t *b);

/* b's read cursor (bytes unpacked so far), and setting it (a buffer that
 * moved with its task to another node): 0, or -EINVAL past the end. */
size_t msg_buf_tell(const msg_buf_t *b);
int msg_buf_seek(msg_buf_t *b, size_t pos);

/* The data signature of this node (PVM's pvmgetdsig()). */
int msg_native_dsig(void);

/* ---------------------------------------------------- pack and unpack */

/*
 * msg_pack - append count items of type (PVM_BYTE ... PVM_ULONG of
 * pvm3.h) read from ptr, every stride-th item (stride is counted in items:
 * 1 = contiguous; 0 repeats one item; negative walks backwards, as in PVM).
 * PVM_STR packs the one string ptr points to (count, stride ignored), as
 * msg_pack_str.  Errors:
 *   -EINVAL     count < 0; ptr NULL with count > 0 (PVM would crash);
 *               count * stride items do not fit in the address space;
 *               unknown type
 *   -EOVERFLOW  XDR: a long/ulong that does not fit in 32 bits
 *   -ENOSYS     in place: stride != 1
 *   -EBADMSG    b is alien (received raw from another architecture)
 *   -ENOMEM     no memory to grow the message
 * On error nothing was appended.
 */
MSG_NODISCARD int msg_pack(msg_buf_t *b, int type, const void *ptr, int count,
                           int stride);

/*
 * msg_unpack - the reverse of msg_pack: store count items of type at ptr,
 * every stride-th item, from b's read cursor.  PVM_STR unpacks one string
 * as msg_unpack_str(b, ptr, SIZE_MAX).  Errors:
 *   -ENODATA    fewer bytes left than count items need (nothing stored)
 *   -EINVAL     as msg_pack
 *   -EBADMSG    in-place buffer; alien buffer and type is not PVM_BYTE
 * No type is recorded in the data (PVM does not either): unpacking another
 * type than was packed succeeds whenever enough bytes are left, and gives
 * those bytes' meaning in the requested type.
 */
MSG_NODISCARD int msg_unpack(msg_buf_t *b, int type, void *ptr, int count,
                             int stride);

/*
 * msg_pack_str - append the NUL-terminated string s (pvm_pkstr): its
 * length + 1 as an int, then its bytes and the NUL.  Errors: -EINVAL (s
 * NULL, or longer than INT_MAX - 1), -ENOSYS (in place), -EBADMSG (alien),
 * -ENOMEM.
 */
MSG_NODISCARD int msg_pack_str(msg_buf_t *b, const char *s);

/*
 * msg_unpack_str - unpack a string (pvm_upkstr) into s, which has room for
 * cap bytes (SIZE_MAX: unknown, as pvm_upkstr).  Stores exactly the bytes
 * that were packed, the NUL included.  Errors: -ENODATA (the recorded
 * length runs past the end of the message), -EOVERFLOW (it is more than
 * cap), -EBADMSG (in place).  A recorded length <= 0 (from unpacking
 * other data as a string) stores nothing and returns 0, as in PVM.
 */
MSG_NODISCARD int msg_unpack_str(msg_buf_t *b, char *s, size_t cap);

/* -------------------------------------------------- formatted packing */

/*
 * msg_packf / msg_vpackf - pvm_packf: pack what fmt describes (see
 * pvm_pack(3PVM) and packf.c).  A format starting with "%+" takes an int
 * encoding and starts a new message: *bufp is then replaced by a new
 * buffer (the caller still holds, and must release, the old one), even if
 * packing fails later.  Without "%+" *bufp must not be NULL (-EBADF).
 * Errors: those of msg_buf_new and msg_pack*, -EINVAL for an unknown
 * conversion.  What was packed before an error stays packed, as in PVM.
 */
MSG_NODISCARD int msg_packf(msg_buf_t **bufp, const char *fmt, ...);
MSG_NODISCARD int msg_vpackf(msg_buf_t **bufp, const char *fmt, va_list ap);

/* msg_unpackf / msg_vunpackf - pvm_unpackf from b (NULL: -EBADF).  Errors:
 * those of msg_unpack*, -EINVAL for an unknown conversion. */
MSG_NODISCARD int msg_unpackf(msg_buf_t *b, const char *fmt, ...);
MSG_NODISCARD int msg_vunpackf(msg_buf_t *b, const char *fmt, va_list ap);

/* -------------------------------------------------- serialised form */

/*
 * A serialised message is one contiguous byte sequence, the same on every
 * architecture (all header fields big-endian):
 *
 *   offset size
 *     0     4   magic 0x5550564d ("UPVM")
 *     4     2   format version (1)
 *     6     2   header length (MSG_WIRE_HDR = 40)
 *     8     4   encoding as msg_buf_enc_sig()
 *    12     4   data length n
 *    16     4   tag
 *    20     4   ctx
 *    24     4   src
 *    28     4   dst
 *    32     4   wid
 *    36     4   reserved (0)
 *    40     n   data: exactly the bytes msg_unpack reads
 *
 * An in-place message is serialised as the raw message it becomes when
 * sent (its referenced bytes, read now).
 */
#define MSG_WIRE_HDR   40
#define MSG_WIRE_MAGIC 0x5550564du

/* Size of b's serialised form. */
size_t msg_buf_serial_size(const msg_buf_t *b);

/*
 * msg_buf_serialize - write b's serialised form to dst, which has room for
 * cap bytes; *len_out (if not NULL) gets its size.  b is not changed.
 * Errors: -EOVERFLOW (cap < msg_buf_serial_size(b)); nothing is written.
 */
MSG_NODISCARD int msg_buf_serialize(const msg_buf_t *b, void *dst, size_t cap,
                                    size_t *len_out);

/*
 * msg_buf_serial_iov - b's serialised form in pieces, for a gather send
 * that copies them straight to where they go (net_sendv: into the ring)
 * instead of into a buffer first: the MSG_WIRE_HDR-byte header is written
 * to hdr, and iov[0 .. n) describe the data, in order.  The pieces point
 * into b's data (an in-place message: into the user's memory) and stay
 * valid while b is held and unchanged.  Returns n (0: no data), or
 * -EOVERFLOW when the data takes more than max pieces (an in-place
 * message of many: use msg_buf_serialize).
 */
MSG_NODISCARD int msg_buf_serial_iov(const msg_buf_t *b, void *hdr,
                                     struct iovec *iov, int max);

/*
 * msg_buf_deserialize - a new buffer (one holder, cursor at the start)
 * from n bytes at src, which must be exactly one serialised message.
 * Errors: -EBADMSG (bad magic, version, header or lengths; unknown
 * encoding), -ENOMEM.
 */
MSG_NODISCARD int msg_buf_deserialize(const void *src, size_t n,
                                      msg_buf_t **out);

/* -------------------------------------------------- accounting, pools */

/* Handles and data blocks now alive (not in a pool), counted per thread
 * (allocations by this thread minus releases by it): a test that ends
 * with both equal to what it started with has leaked nothing. */
typedef struct msg_stats {
    long bufs;   /* live handles */
    long datas;  /* live data blocks */
    long copies; /* data copies made by copy-on-write, ever */
} msg_stats_t;
void msg_get_stats(msg_stats_t *st);

/* Give the memory cached in this thread's pools back to malloc (a thread
 * that exits without it leaves at most ~42 KiB behind). */
void msg_pool_trim(void);

#endif /* UPVM_MSG_H */
