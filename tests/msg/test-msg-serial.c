/*
 * test-msg-serial.c - a buffer to a contiguous byte sequence and back.
 */
#include "msgtest.h"

#include "util/copy.h"

static msg_buf_t *new_buf(int enc)
{
    msg_buf_t *b = NULL;
    ASSERT_OK(msg_buf_new(enc, &b));
    return b;
}

static msg_buf_t *through_wire(msg_buf_t *b)
{
    size_t n = msg_buf_serial_size(b), got = 0;
    unsigned char *w = malloc(n);
    msg_buf_t *r;
    ASSERT(w);
    ASSERT_OK(msg_buf_serialize(b, w, n, &got));
    ASSERT_EQ(got, n);
    ASSERT_OK(msg_buf_deserialize(w, n, &r));
    free(w);
    return r;
}

TEST(serialise_keeps_data_header_and_encoding)
{
    for (int enc = 0; enc <= 1; enc++) {
        msg_buf_t *b = new_buf(enc), *r;
        int v[3] = {1, -2, 3}, w[3];
        char s[8];
        ASSERT_OK(msg_pack(b, PVM_INT, v, 3, 1));
        ASSERT_OK(msg_pack_str(b, "abc"));
        *msg_buf_hdr(b) = (msg_hdr_t){.tag = 7, .ctx = -3, .src = 0x40001,
                                      .dst = 0x80002, .wid = 11};
        ASSERT_OK(msg_unpack(b, PVM_INT, w, 1, 1)); /* cursor not sent */
        r = through_wire(b);
        ASSERT_EQ(msg_buf_enc(r), enc);
        ASSERT_EQ(msg_buf_enc_sig(r), msg_buf_enc_sig(b));
        ASSERT_EQ(msg_buf_len(r), msg_buf_len(b));
        ASSERT_EQ(msg_buf_hdr(r)->tag, 7);
        ASSERT_EQ(msg_buf_hdr(r)->ctx, -3);
        ASSERT_EQ(msg_buf_hdr(r)->src, 0x40001);
        ASSERT_EQ(msg_buf_hdr(r)->dst, 0x80002);
        ASSERT_EQ(msg_buf_hdr(r)->wid, 11);
        ASSERT_EQ(msg_buf_refs(r), 1);
        ASSERT_OK(msg_unpack(r, PVM_INT, w, 3, 1));
        ASSERT_MEM_EQ(w, v, sizeof(v));
        ASSERT_OK(msg_unpack_str(r, s, sizeof(s)));
        ASSERT(!strcmp(s, "abc"));
        msg_buf_unref(r);
        msg_buf_unref(b);
    }
}

TEST(in_place_serialises_as_raw_read_now)
{
    msg_buf_t *b = new_buf(PvmDataInPlace), *r;
    short sh[2] = {1, 2}, out[2];
    ASSERT_OK(msg_pack(b, PVM_SHORT, sh, 2, 1));
    sh[1] = 22;
    r = through_wire(b);
    ASSERT_EQ(msg_buf_enc(r), PvmDataRaw);
    ASSERT_EQ(msg_buf_enc_sig(r), msg_native_dsig());
    ASSERT_EQ(msg_buf_len(r), 4);
    ASSERT_OK(msg_unpack(r, PVM_SHORT, out, 2, 1));
    ASSERT(out[0] == 1 && out[1] == 22);
    msg_buf_unref(r);
    msg_buf_unref(b);
}

TEST(serialise_needs_room)
{
    msg_buf_t *b = new_buf(PvmDataDefault);
    unsigned char w[MSG_WIRE_HDR + 4];
    int v = 1;
    size_t got = 12345;
    ASSERT_OK(msg_pack(b, PVM_INT, &v, 1, 1));
    memset(w, 0xaa, sizeof(w));
    ASSERT_EQ(msg_buf_serialize(b, w, sizeof(w) - 1, &got), -EOVERFLOW);
    ASSERT_EQ(got, 12345);
    ASSERT_EQ(w[0], 0xaa);
    ASSERT_OK(msg_buf_serialize(b, w, sizeof(w), NULL));
    msg_buf_unref(b);
}

TEST(bad_wire_forms_are_bad_msg)
{
    msg_buf_t *b = new_buf(PvmDataDefault), *r = NULL;
    unsigned char w[MSG_WIRE_HDR + 8], bad[sizeof(w)];
    int v[2] = {1, 2};
    ASSERT_OK(msg_pack(b, PVM_INT, v, 2, 1));
    ASSERT_OK(msg_buf_serialize(b, w, sizeof(w), NULL));
    msg_buf_unref(b);

    for (size_t n = 0; n < sizeof(w); n++) /* truncated */
        ASSERT_EQ(msg_buf_deserialize(w, n, &r), -EBADMSG);
    static const size_t fields[] = {0, 3, 4, 5, 6, 7, 12, 15};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        memcpy(bad, w, sizeof(w));
        bad[fields[i]] ^= 1; /* magic, version, header length, length */
        ASSERT_EQ(msg_buf_deserialize(bad, sizeof(bad), &r), -EBADMSG);
    }
    memcpy(bad, w, sizeof(w));
    bad[8] = 0x20; /* in-place encoding never travels */
    ASSERT_EQ(msg_buf_deserialize(bad, sizeof(bad), &r), -EBADMSG);
    ASSERT(r == NULL);
    ASSERT_OK(msg_buf_deserialize(w, sizeof(w), &r));
    msg_buf_unref(r);
}

TEST(empty_message_serialises_to_the_header)
{
    msg_buf_t *b = new_buf(PvmDataRaw), *r;
    ASSERT_EQ(msg_buf_serial_size(b), MSG_WIRE_HDR);
    r = through_wire(b);
    ASSERT_EQ(msg_buf_len(r), 0);
    ASSERT_EQ(msg_buf_remaining(r), 0);
    msg_buf_unref(r);
    msg_buf_unref(b);
}

/* The pieces of msg_buf_serial_iov, put together: msg_buf_serialize's bytes. */
static void check_iov_matches_serialize(msg_buf_t *b, int max)
{
    size_t n = msg_buf_serial_size(b), off = MSG_WIRE_HDR;
    unsigned char *w = malloc(n), *g = malloc(n);
    struct iovec v[8];
    ASSERT(w && g && max <= 8);
    ASSERT_OK(msg_buf_serialize(b, w, n, NULL));
    int k = msg_buf_serial_iov(b, g, v, max);
    ASSERT(k >= 0);
    for (int i = 0; i < k; i++) {
        ASSERT(v[i].iov_len > 0); /* no empty pieces */
        memcpy(g + off, v[i].iov_base, v[i].iov_len);
        off += v[i].iov_len;
    }
    ASSERT_EQ(off, n);
    ASSERT_MEM_EQ(g, w, n);
    free(w);
    free(g);
}

TEST(serial_iov_pieces_are_the_serialised_form)
{
    static char big[10000];
    short sh[3] = {1, 2, 3};
    for (int enc = 0; enc <= 1; enc++) { /* XDR, raw: the data in one piece */
        msg_buf_t *b = new_buf(enc);
        check_iov_matches_serialize(b, 1); /* empty: the header alone */
        ASSERT_OK(msg_pack(b, PVM_BYTE, big, sizeof(big), 1));
        ASSERT_OK(msg_pack(b, PVM_SHORT, sh, 3, 1));
        *msg_buf_hdr(b) = (msg_hdr_t){.tag = 5, .ctx = 1, .src = 0x40001, .dst = 0x80001};
        check_iov_matches_serialize(b, 1);
        unsigned char hdr[MSG_WIRE_HDR];
        struct iovec v[1];
        ASSERT_EQ(msg_buf_serial_iov(b, hdr, v, 0), -EOVERFLOW);
        msg_buf_unref(b);
    }
    /* in place: one piece per packed item, read where the user has it */
    msg_buf_t *b = new_buf(PvmDataInPlace);
    ASSERT_OK(msg_pack(b, PVM_SHORT, sh, 3, 1));
    ASSERT_OK(msg_pack(b, PVM_BYTE, big, sizeof(big), 1));
    ASSERT_OK(msg_pack(b, PVM_SHORT, sh + 1, 2, 1));
    check_iov_matches_serialize(b, 3);
    unsigned char hdr[MSG_WIRE_HDR];
    struct iovec v[2];
    ASSERT_EQ(msg_buf_serial_iov(b, hdr, v, 2), -EOVERFLOW); /* more than max */
    msg_buf_unref(b);
}

/* util_copy (the copy of message bodies): memcpy's result whatever the
 * distance between the regions modulo 4 KiB, its vector loop included. */
#define SPAN (8 * 4096) /* aligned_alloc wants a multiple of the alignment */

TEST(bulk_copy_copies_at_every_distance)
{
    static const size_t lens[] = {0, 1, 63, 64, 65, 1023, 1024, 1025, 4099, 20000};
    unsigned char *src = aligned_alloc(4096, SPAN);
    unsigned char *dst = aligned_alloc(4096, SPAN);
    ASSERT(src && dst);
    for (size_t i = 0; i < SPAN; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    for (int d = -70; d <= 70; d++) {
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
            size_t n = lens[l], at = (size_t)(4096 + d);
            memset(dst, 0xee, SPAN);
            util_copy(dst + at, src + 4096 + 8, n);
            ASSERT_MEM_EQ(dst + at, src + 4096 + 8, n);
            ASSERT_EQ(dst[at - 1], 0xee);
            ASSERT_EQ(dst[at + n], 0xee);
        }
    }
    free(src);
    free(dst);
}

MSGTEST_MAIN()
