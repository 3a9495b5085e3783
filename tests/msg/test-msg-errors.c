/*
 * test-msg-errors.c - misuse gives the code PVM 3.4.6 gives, stores
 * nothing, and never reads outside the message.
 *
 * The expected codes and values are what libpvm3 3.4.6 returned for the
 * same calls (see pack.c).  Under ASan any read past the data fails here.
 */
#include "msgtest.h"

#include <stdint.h>

static msg_buf_t *new_buf(int enc)
{
    msg_buf_t *b = NULL;
    ASSERT_OK(msg_buf_new(enc, &b));
    return b;
}

/* A message of exactly n data bytes (no XDR padding) with encoding
 * signature sig, made by deserialising a hand-patched wire form. */
static msg_buf_t *exact_buf(int sig, const void *data, size_t n)
{
    unsigned char *w = malloc(MSG_WIRE_HDR + n + 4);
    msg_buf_t *b, *tmp;
    size_t len;

    ASSERT(w);
    ASSERT_OK(msg_buf_new(PvmDataDefault, &tmp));
    ASSERT_OK(msg_pack(tmp, PVM_BYTE, data, (int)n, 1));
    ASSERT_OK(msg_buf_serialize(tmp, w, MSG_WIRE_HDR + n + 4, &len));
    msg_buf_unref(tmp);
    /* patch length and encoding: the data is the n bytes, unpadded */
    w[8] = (unsigned char)(sig >> 24);
    w[9] = (unsigned char)(sig >> 16);
    w[10] = (unsigned char)(sig >> 8);
    w[11] = (unsigned char)sig;
    w[12] = w[13] = 0;
    w[14] = (unsigned char)(n >> 8);
    w[15] = (unsigned char)n;
    ASSERT_OK(msg_buf_deserialize(w, MSG_WIRE_HDR + n, &b));
    free(w);
    return b;
}

TEST(bad_encoding_is_bad_param_trace_not_implemented)
{
    msg_buf_t *b = (msg_buf_t *)&b; /* must stay untouched */
    ASSERT_EQ(msg_buf_new(3, &b), -EINVAL);
    ASSERT_EQ(msg_buf_new(99, &b), -EINVAL);
    ASSERT_EQ(msg_buf_new(-1, &b), -EINVAL);
    ASSERT_EQ(msg_buf_new(PvmDataTrace, &b), -ENOSYS);
    ASSERT(b == (msg_buf_t *)&b);
}

TEST(negative_count_is_bad_param)
{
    int v[2] = {1, 2};
    for (int enc = 0; enc <= 2; enc++) {
        msg_buf_t *b = new_buf(enc);
        ASSERT_EQ(msg_pack(b, PVM_INT, v, -1, 1), -EINVAL);
        ASSERT_EQ(msg_unpack(b, PVM_INT, v, -1, 1), -EINVAL);
        ASSERT_EQ(msg_buf_len(b), 0);
        msg_buf_unref(b);
    }
}

TEST(count_zero_is_ok_even_when_empty)
{
    msg_buf_t *b = new_buf(PvmDataDefault);
    ASSERT_OK(msg_pack(b, PVM_INT, NULL, 0, 1));
    ASSERT_OK(msg_unpack(b, PVM_INT, NULL, 0, 1));
    ASSERT_EQ(msg_buf_len(b), 0);
    msg_buf_unref(b);
}

TEST(null_pointer_unknown_type_and_huge_span_are_bad_param)
{
    msg_buf_t *b = new_buf(PvmDataDefault);
    int v = 1;
    ASSERT_EQ(msg_pack(b, PVM_INT, NULL, 1, 1), -EINVAL);
    ASSERT_EQ(msg_pack(b, 12, &v, 1, 1), -EINVAL);
    ASSERT_EQ(msg_pack(b, -1, &v, 1, 1), -EINVAL);
    ASSERT_EQ(msg_pack_str(b, NULL), -EINVAL);
    /* count * stride * 16 bytes is beyond any address space */
    ASSERT_EQ(msg_pack(b, PVM_DCPLX, &v, INT32_MAX, INT32_MAX), -EINVAL);
    ASSERT_EQ(msg_pack(b, PVM_DCPLX, &v, INT32_MAX, INT32_MIN), -EINVAL);
    ASSERT_OK(msg_pack(b, PVM_INT, &v, 1, 1));
    ASSERT_EQ(msg_unpack(b, PVM_INT, NULL, 1, 1), -EINVAL);
    ASSERT_EQ(msg_unpack(b, 0x7fffffff, &v, 1, 1), -EINVAL);
    ASSERT_EQ(msg_buf_len(b), 4);
    msg_buf_unref(b);
}

TEST(past_the_end_is_no_data_and_stores_nothing)
{
    int one = -2, v[2];
    for (int enc = 0; enc <= 1; enc++) {
        msg_buf_t *b = new_buf(enc);
        v[0] = v[1] = 7;
        ASSERT_OK(msg_pack(b, PVM_INT, &one, 1, 1));
        /* PVM: PvmNoData, and it has stored v[0] = -2; we store nothing */
        ASSERT_EQ(msg_unpack(b, PVM_INT, v, 2, 1), -ENODATA);
        ASSERT(v[0] == 7 && v[1] == 7);
        /* the cursor did not move: the one int is still there */
        ASSERT_OK(msg_unpack(b, PVM_INT, v, 1, 1));
        ASSERT_EQ(v[0], -2);
        ASSERT_EQ(msg_unpack(b, PVM_INT, v, 1, 1), -ENODATA);
        ASSERT_EQ(msg_unpack(b, PVM_BYTE, v, 1, 1), -ENODATA);
        ASSERT_EQ(msg_unpack_str(b, (char *)v, sizeof(v)), -ENODATA);
        msg_buf_unref(b);
    }
}

TEST(past_the_end_of_an_exact_block_every_type)
{
    static const unsigned char data[7] = {1, 2, 3, 4, 5, 6, 7};
    unsigned char out[64];
    for (int sig = 0; sig < 2; sig++) {
        int s = sig ? msg_native_dsig() : 0x10000000;
        for (int type = PVM_BYTE; type <= PVM_ULONG; type++) {
            msg_buf_t *b = exact_buf(s, data, sizeof(data));
            memset(out, 0xee, sizeof(out));
            ASSERT_EQ(msg_unpack(b, type, out, 8, 1), -ENODATA);
            for (size_t i = 0; i < sizeof(out); i++)
                ASSERT_EQ(out[i], 0xee);
            msg_buf_unref(b);
        }
    }
}

TEST(xdr_bytes_can_read_their_own_padding)
{
    /* PVM: pack 3 bytes, unpack 4 -> PvmOk (the pad byte); 5 -> PvmNoData */
    msg_buf_t *b = new_buf(PvmDataDefault);
    char by[3] = {1, 2, 3}, out[5] = {9, 9, 9, 9, 9};
    ASSERT_OK(msg_pack(b, PVM_BYTE, by, 3, 1));
    ASSERT_EQ(msg_unpack(b, PVM_BYTE, out, 5, 1), -ENODATA);
    ASSERT_OK(msg_unpack(b, PVM_BYTE, out, 4, 1));
    ASSERT(out[0] == 1 && out[1] == 2 && out[2] == 3 && out[3] == 0);
    msg_buf_unref(b);
}

TEST(wrong_type_reinterprets_like_pvm)
{
    msg_buf_t *b = new_buf(PvmDataDefault);
    int i70000 = 70000, two[2] = {0x3ff00000, 0}, fbits = 0x3f800000;
    short s;
    double d = 9;
    float f;
    int len;

    /* an int unpacked as a short: truncated (PVM: 70000 -> 4464) */
    ASSERT_OK(msg_pack(b, PVM_INT, &i70000, 1, 1));
    ASSERT_OK(msg_unpack(b, PVM_SHORT, &s, 1, 1));
    ASSERT_EQ(s, 4464);
    /* one int unpacked as a double: not enough bytes */
    msg_buf_rewind(b);
    ASSERT_EQ(msg_unpack(b, PVM_DOUBLE, &d, 1, 1), -ENODATA);
    ASSERT(d == 9);
    msg_buf_unref(b);

    /* two ints unpacked as a double are its halves */
    b = new_buf(PvmDataDefault);
    ASSERT_OK(msg_pack(b, PVM_INT, two, 2, 1));
    ASSERT_OK(msg_unpack(b, PVM_DOUBLE, &d, 1, 1));
    ASSERT(d == 1.0);
    msg_buf_unref(b);

    /* an int's bits unpacked as a float (PVM: 0x3f800000 -> 1.0) */
    b = new_buf(PvmDataDefault);
    ASSERT_OK(msg_pack(b, PVM_INT, &fbits, 1, 1));
    ASSERT_OK(msg_unpack(b, PVM_FLOAT, &f, 1, 1));
    ASSERT(f == 1.0f);
    msg_buf_unref(b);

    /* a string unpacked as an int gives strlen + 1; the rest, read as a
     * string, is a huge length: PvmNoData */
    b = new_buf(PvmDataDefault);
    char str[16] = "untouched";
    ASSERT_OK(msg_pack_str(b, "hello"));
    ASSERT_OK(msg_unpack(b, PVM_INT, &len, 1, 1));
    ASSERT_EQ(len, 6);
    ASSERT_EQ(msg_unpack_str(b, str, sizeof(str)), -ENODATA);
    ASSERT(!strcmp(str, "untouched"));
    msg_buf_unref(b);
}

TEST(int_unpacked_as_string_is_a_length)
{
    int l1000 = 1000, lneg = -5, zero = 0, words[2] = {-2, 0x01020304};
    char s[16] = "untouched";

    for (int enc = 0; enc <= 1; enc++) {
        msg_buf_t *b = new_buf(enc);
        /* a length past the end: PvmNoData (PVM copies what is there into
         * s first; we copy nothing) */
        ASSERT_OK(msg_pack(b, PVM_INT, &l1000, 1, 1));
        ASSERT_OK(msg_pack(b, PVM_INT, words, 2, 1));
        ASSERT_EQ(msg_unpack_str(b, s, SIZE_MAX), -ENODATA);
        ASSERT(!strcmp(s, "untouched"));
        msg_buf_unref(b);

        /* a length <= 0: PVM stores nothing and returns PvmOk */
        b = new_buf(enc);
        ASSERT_OK(msg_pack(b, PVM_INT, &lneg, 1, 1));
        ASSERT_OK(msg_pack(b, PVM_INT, &zero, 1, 1));
        ASSERT_OK(msg_unpack_str(b, s, SIZE_MAX));
        ASSERT_OK(msg_unpack_str(b, s, SIZE_MAX));
        ASSERT(!strcmp(s, "untouched"));
        ASSERT_EQ(msg_buf_remaining(b), 0);
        msg_buf_unref(b);
    }
}

TEST(string_longer_than_the_room_is_overflow)
{
    msg_buf_t *b = new_buf(PvmDataDefault);
    char s[4] = "abc";
    ASSERT_OK(msg_pack_str(b, "hello"));
    ASSERT_EQ(msg_unpack_str(b, s, sizeof(s)), -EOVERFLOW);
    ASSERT(!strcmp(s, "abc"));
    char big[6];
    ASSERT_OK(msg_unpack_str(b, big, sizeof(big))); /* exactly fits */
    ASSERT(!strcmp(big, "hello"));
    msg_buf_unref(b);
}

TEST(in_place_rules)
{
    msg_buf_t *b = new_buf(PvmDataInPlace);
    int v[4] = {1, 2, 3, 4};

    ASSERT_EQ(msg_pack(b, PVM_INT, v, 2, 2), -ENOSYS); /* stride != 1 */
    ASSERT_EQ(msg_pack(b, PVM_INT, NULL, 2, 2), -ENOSYS);
    ASSERT_EQ(msg_pack_str(b, "x"), -ENOSYS);
    ASSERT_EQ(msg_pack(b, PVM_STR, "x", 1, 1), -ENOSYS);
    /* NULL or nothing: nothing referenced, PvmOk (enc_inp_any) */
    ASSERT_OK(msg_pack(b, PVM_INT, NULL, 2, 1));
    ASSERT_OK(msg_pack(b, PVM_INT, v, 0, 1));
    ASSERT_EQ(msg_buf_len(b), 0);
    ASSERT_OK(msg_pack(b, PVM_INT, v, 4, 1));
    ASSERT_EQ(msg_buf_len(b), 16);
    /* the sender cannot unpack it (dec = enc_alien: PvmBadMsg) */
    ASSERT_EQ(msg_unpack(b, PVM_INT, v, 1, 1), -EBADMSG);
    ASSERT_EQ(msg_unpack(b, PVM_BYTE, v, 1, 1), -EBADMSG);
    ASSERT_EQ(msg_unpack_str(b, (char *)v, sizeof(v)), -EBADMSG);
    ASSERT_EQ(msg_buf_remaining(b), 0);
    msg_buf_unref(b);
}

TEST(alien_raw_unpacks_bytes_only)
{
    static const unsigned char data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    unsigned char out[8] = {0};
    int v;
    /* raw from a big-endian 64-bit machine (a different data signature) */
    msg_buf_t *b = exact_buf(0x408c41 ^ 0x18c63, data, sizeof(data));

    ASSERT_EQ(msg_buf_enc(b), PvmDataRaw);
    ASSERT_EQ(msg_unpack(b, PVM_INT, &v, 1, 1), -EBADMSG);
    ASSERT_EQ(msg_unpack_str(b, (char *)out, sizeof(out)), -EBADMSG);
    ASSERT_EQ(msg_pack(b, PVM_INT, &v, 1, 1), -EBADMSG);
    ASSERT_EQ(msg_pack_str(b, "x"), -EBADMSG);
    ASSERT_OK(msg_unpack(b, PVM_BYTE, out, 8, 1));
    ASSERT_MEM_EQ(out, data, 8);
    msg_buf_unref(b);
}

TEST(packf_errors)
{
    msg_buf_t *b = NULL;
    int v = 1;
    ASSERT_EQ(msg_packf(&b, "%d", 1), -EBADF);
    ASSERT_EQ(msg_unpackf(NULL, "%d", &v), -EBADF);
    ASSERT_EQ(msg_packf(&b, "%+ %d", 77, 1), -EINVAL);
    ASSERT(b == NULL);
    ASSERT_OK(msg_packf(&b, "%+ %d", PvmDataDefault, 5));
    ASSERT(b != NULL);
    ASSERT_EQ(msg_packf(&b, "%q", 1), -EINVAL); /* unknown conversion */
    ASSERT_EQ(msg_packf(&b, "%"), -EINVAL);     /* format ends */
    ASSERT_EQ(msg_unpackf(b, "%d %d", &v, &v), -ENODATA);
    ASSERT_EQ(v, 5);
    msg_buf_unref(b);
}

MSGTEST_MAIN()
