/*
 * test-msg-random.c - random sequences of packs, shared and serialised,
 * unpacked again; and random bytes fed to the unpacker.
 *
 * The seed is printed; rerun one with MSGTEST_SEED=<n>.
 */
#include "msgtest.h"

#include <stdint.h>

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t seed_from_env(uint64_t dflt)
{
    const char *s = getenv("MSGTEST_SEED");
    return s ? strtoull(s, NULL, 0) : dflt;
}

static size_t nsize(int type)
{
    static const size_t sz[] = {0, 1, 2, 4, 4, 8, 8, 16, sizeof(long), 2, 4,
                                sizeof(long)};
    return sz[type];
}

/* One packed item group, to check on unpack. */
struct op {
    int type; /* PVM_STR .. PVM_ULONG */
    int count, stride;
    unsigned char *data; /* count*stride items (the packed ones set) */
    char *str;
};

static void fill(struct op *o, int enc)
{
    size_t ns = nsize(o->type), n = (size_t)o->count * o->stride;
    o->data = calloc(n ? n : 1, ns ? ns : 1);
    ASSERT(o->data);
    for (int i = 0; i < o->count; i++) {
        unsigned char *p = o->data + (size_t)i * o->stride * ns;
        uint64_t r[2] = {rnd(), rnd()};
        if (enc == PvmDataDefault && o->type == PVM_LONG) {
            long v = (int32_t)r[0];
            memcpy(p, &v, sizeof(v));
        } else if (enc == PvmDataDefault && o->type == PVM_ULONG) {
            unsigned long v = (uint32_t)r[0];
            memcpy(p, &v, sizeof(v));
        } else {
            memcpy(p, r, ns);
        }
    }
}

static void one_round(int round)
{
    static const int encs[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
    int enc = encs[rnd() % 3];
    int nops = (int)(rnd() % 20);
    struct op ops[20];
    msg_buf_t *b, *r;

    ASSERT_OK(msg_buf_new(enc, &b));
    for (int i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        memset(o, 0, sizeof(*o));
        o->type = (int)(rnd() % 12);
        if (o->type == PVM_STR && enc == PvmDataInPlace)
            o->type = PVM_INT;
        o->count = (int)(rnd() % 40);
        o->stride = enc == PvmDataInPlace ? 1 : 1 + (int)(rnd() % 4);
        if (o->type == PVM_STR) {
            size_t l = rnd() % 50;
            o->str = malloc(l + 1);
            ASSERT(o->str);
            for (size_t k = 0; k < l; k++)
                o->str[k] = (char)(1 + rnd() % 255);
            o->str[l] = 0;
            ASSERT_OK(msg_pack_str(b, o->str));
        } else {
            fill(o, enc);
            ASSERT_OK(msg_pack(b, o->type, o->data, o->count, o->stride));
        }
    }

    /* deliver: locally (shared) or through the serialised form */
    if (rnd() & 1) {
        ASSERT_OK(msg_buf_ref(b, &r));
    } else {
        size_t n = msg_buf_serial_size(b), got;
        unsigned char *w = malloc(n);
        ASSERT(w);
        ASSERT_OK(msg_buf_serialize(b, w, n, &got));
        ASSERT_EQ(got, n);
        ASSERT_OK(msg_buf_deserialize(w, n, &r));
        free(w);
    }
    /* the sender may write on: the receiver must not see it */
    if (enc != PvmDataInPlace && (rnd() & 1)) {
        int junk[4] = {1, 2, 3, 4};
        ASSERT_OK(msg_pack(b, PVM_INT, junk, 4, 1));
    }

    for (int i = 0; i < nops; i++) {
        struct op *o = &ops[i];
        if (o->type == PVM_STR) {
            char *s = malloc(strlen(o->str) + 1);
            ASSERT(s);
            ASSERT_OK(msg_unpack_str(r, s, strlen(o->str) + 1));
            ASSERT(!strcmp(s, o->str));
            free(s);
            free(o->str);
            continue;
        }
        size_t ns = nsize(o->type), n = (size_t)o->count * o->stride;
        unsigned char *out = calloc(n ? n : 1, ns);
        ASSERT(out);
        if (msg_unpack(r, o->type, out, o->count, o->stride) != PvmOk)
            FAIL("round %d op %d: unpack type %d count %d stride %d failed",
                 round, i, o->type, o->count, o->stride);
        ASSERT_MEM_EQ(out, o->data, n * ns);
        free(out);
        free(o->data);
    }
    ASSERT_EQ(msg_buf_remaining(r), 0);
    msg_buf_unref(r);
    msg_buf_unref(b);
}

TEST(random_pack_sequences_roundtrip)
{
    uint64_t seed = seed_from_env(0x5eed0001);
    rng = seed;
    fprintf(stderr, "seed %#llx\n", (unsigned long long)seed);
    for (int round = 0; round < 3000; round++)
        one_round(round);
}

TEST(random_bytes_never_crash_the_unpacker)
{
    uint64_t seed = seed_from_env(0x5eed0002);
    rng = seed;
    fprintf(stderr, "seed %#llx\n", (unsigned long long)seed);
    for (int round = 0; round < 3000; round++) {
        size_t n = rnd() % 64;
        unsigned char *w = malloc(MSG_WIRE_HDR + n), out[1024];
        msg_buf_t *b, *tmp;
        ASSERT(w);
        /* a valid header, random data, random encoding */
        ASSERT_OK(msg_buf_new(rnd() & 1 ? PvmDataRaw : PvmDataDefault, &tmp));
        ASSERT_OK(msg_buf_serialize(tmp, w, MSG_WIRE_HDR, NULL));
        msg_buf_unref(tmp);
        w[12] = w[13] = w[14] = 0;
        w[15] = (unsigned char)n;
        for (size_t k = 0; k < n; k++)
            w[MSG_WIRE_HDR + k] = (unsigned char)rnd();
        if ((rnd() & 3) == 0) /* sometimes alien */
            w[11] ^= 0x40;
        ASSERT_OK(msg_buf_deserialize(w, MSG_WIRE_HDR + n, &b));
        free(w);
        for (int k = 0; k < 20; k++) {
            int type = (int)(rnd() % 12), count = (int)(rnd() % 10);
            int cc = type == PVM_STR
                         ? msg_unpack_str(b, (char *)out, sizeof(out))
                         : msg_unpack(b, type, out, count, 1);
            ASSERT(cc == PvmOk || cc == -ENODATA || cc == -EBADMSG ||
                   cc == -EOVERFLOW);
            ASSERT(msg_buf_remaining(b) <= n);
        }
        msg_buf_unref(b);
    }
}

MSGTEST_MAIN()
