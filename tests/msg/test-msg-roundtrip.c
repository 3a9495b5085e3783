/*
 * test-msg-roundtrip.c - every type x encoding x stride comes back as it
 * was packed, and unpacking with a stride leaves the gaps alone.
 */
#include "msgtest.h"

#include <stdint.h>

#define NTYPES 11 /* PVM_BYTE .. PVM_ULONG */

static size_t native_size(int type)
{
    switch (type) {
    case PVM_BYTE:
        return 1;
    case PVM_SHORT:
    case PVM_USHORT:
        return sizeof(short);
    case PVM_INT:
    case PVM_UINT:
        return sizeof(int);
    case PVM_FLOAT:
        return sizeof(float);
    case PVM_LONG:
    case PVM_ULONG:
        return sizeof(long);
    case PVM_DOUBLE:
    case PVM_CPLX:
        return 8;
    case PVM_DCPLX:
        return 16;
    }
    FAIL("bad type %d", type);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Fill item i of type at p with a value every encoding can carry (XDR
 * longs must fit in 32 bits). */
static void fill_item(int type, unsigned char *p, int enc)
{
    uint64_t r = next_rand();
    switch (type) {
    case PVM_LONG: {
        long v = enc == PvmDataDefault ? (long)(int32_t)r : (long)r;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case PVM_ULONG: {
        unsigned long v =
            enc == PvmDataDefault ? (unsigned long)(uint32_t)r : r;
        memcpy(p, &v, sizeof(v));
        break;
    }
    case PVM_FLOAT:
    case PVM_CPLX: {
        float f[2] = {(float)(int32_t)r / 7.0f, (float)(r >> 40) * 0.5f};
        memcpy(p, f, native_size(type));
        break;
    }
    case PVM_DOUBLE:
    case PVM_DCPLX: {
        double d[2] = {(double)(int64_t)r / 3.0, -(double)(r >> 11)};
        memcpy(p, d, native_size(type));
        break;
    }
    default:
        memcpy(p, &r, native_size(type));
    }
}

static const int encs[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};

/* Pack count items (stride) of each type into one message, one array per
 * type, then unpack them all in order and compare. */
static void roundtrip(int enc, int count, int stride)
{
    size_t span = (size_t)(count ? count : 1) * (size_t)stride;
    unsigned char *src[NTYPES], *dst[NTYPES];
    msg_buf_t *b, *r;

    ASSERT_OK(msg_buf_new(enc, &b));
    for (int t = 0; t < NTYPES; t++) {
        int type = PVM_BYTE + t;
        size_t ns = native_size(type);
        src[t] = calloc(span, ns);
        dst[t] = calloc(span, ns);
        ASSERT(src[t] && dst[t]);
        for (int i = 0; i < count; i++)
            fill_item(type, src[t] + (size_t)i * stride * ns, enc);
        ASSERT_OK(msg_pack(b, type, src[t], count, stride));
    }

    /* in-place messages are read when they leave: a local send */
    if (enc == PvmDataInPlace) {
        ASSERT_OK(msg_buf_ref(b, &r));
        ASSERT_EQ(msg_buf_enc(r), PvmDataRaw);
        ASSERT_EQ(msg_unpack(b, PVM_INT, dst[0], 1, 1), -EBADMSG);
    } else {
        ASSERT_OK(msg_buf_ref(b, &r));
    }
    ASSERT_EQ(msg_buf_len(r), msg_buf_len(b));

    for (int t = 0; t < NTYPES; t++) {
        int type = PVM_BYTE + t;
        size_t ns = native_size(type);
        ASSERT_OK(msg_unpack(r, type, dst[t], count, stride));
        /* items where they were, gaps still zero (as in src) */
        ASSERT_MEM_EQ(dst[t], src[t], span * ns);
        free(src[t]);
        free(dst[t]);
    }
    ASSERT_EQ(msg_buf_remaining(r), 0);
    msg_buf_unref(r);
    msg_buf_unref(b);
}

TEST(every_type_every_encoding_stride_1)
{
    for (size_t e = 0; e < sizeof(encs) / sizeof(encs[0]); e++)
        for (int count = 0; count <= 9; count++)
            roundtrip(encs[e], count, 1);
}

TEST(every_type_xdr_and_raw_strides_2_3_5)
{
    static const int strides[] = {2, 3, 5};
    for (size_t e = 0; e < 2; e++)
        for (size_t s = 0; s < 3; s++)
            for (int count = 0; count <= 9; count++)
                roundtrip(encs[e], count, strides[s]);
}

TEST(large_arrays_grow_the_message)
{
    enum { N = 100000 };
    for (size_t e = 0; e < 2; e++) {
        msg_buf_t *b;
        double *a = malloc(N * sizeof(double)), *c = calloc(N, sizeof(double));
        ASSERT(a && c);
        for (int i = 0; i < N; i++)
            a[i] = i * 0.25 - 7;
        ASSERT_OK(msg_buf_new(encs[e], &b));
        for (int k = 0; k < 3; k++)
            ASSERT_OK(msg_pack(b, PVM_DOUBLE, a, N, 1));
        ASSERT_EQ(msg_buf_len(b), 3 * N * sizeof(double));
        for (int k = 0; k < 3; k++) {
            memset(c, 0, N * sizeof(double));
            ASSERT_OK(msg_unpack(b, PVM_DOUBLE, c, N, 1));
            ASSERT_MEM_EQ(a, c, N * sizeof(double));
        }
        msg_buf_unref(b);
        free(a);
        free(c);
    }
}

TEST(strings_roundtrip_in_xdr_and_raw)
{
    static const char *strs[] = {"", "a", "ab", "abc", "abcd", "hello, world"};
    for (size_t e = 0; e < 2; e++) {
        msg_buf_t *b;
        char out[64];
        int one = 1;
        ASSERT_OK(msg_buf_new(encs[e], &b));
        for (size_t i = 0; i < 6; i++) {
            ASSERT_OK(msg_pack_str(b, strs[i]));
            ASSERT_OK(msg_pack(b, PVM_INT, &one, 1, 1)); /* stays aligned */
        }
        for (size_t i = 0; i < 6; i++) {
            int v = 0;
            memset(out, 'x', sizeof(out));
            ASSERT_OK(msg_unpack_str(b, out, sizeof(out)));
            ASSERT(!strcmp(out, strs[i]));
            ASSERT_OK(msg_unpack(b, PVM_INT, &v, 1, 1));
            ASSERT_EQ(v, 1);
        }
        ASSERT_EQ(msg_buf_remaining(b), 0);
        /* PVM_STR through the generic calls */
        msg_buf_rewind(b);
        ASSERT_OK(msg_unpack(b, PVM_STR, out, 1, 1));
        ASSERT(!strcmp(out, ""));
        ASSERT_OK(msg_pack(b, PVM_STR, "via msg_pack", 1, 1));
        msg_buf_unref(b);
    }
}

TEST(stride_zero_repeats_and_negative_walks_back)
{
    /* PVM checks no stride: 0 packs one item count times, a negative
     * stride goes backwards from the pointer (pmsg.c: np += std). */
    int a[3] = {1, 2, 3}, out[3] = {0};
    msg_buf_t *b;

    ASSERT_OK(msg_buf_new(PvmDataDefault, &b));
    ASSERT_OK(msg_pack(b, PVM_INT, a, 3, 0));
    ASSERT_OK(msg_pack(b, PVM_INT, a + 2, 3, -1));
    ASSERT_OK(msg_unpack(b, PVM_INT, out, 3, 1));
    ASSERT(out[0] == 1 && out[1] == 1 && out[2] == 1);
    ASSERT_OK(msg_unpack(b, PVM_INT, out + 2, 3, -1));
    ASSERT(out[0] == 1 && out[1] == 2 && out[2] == 3);
    msg_buf_unref(b);
}

MSGTEST_MAIN()
