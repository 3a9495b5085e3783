/*
 * test-msg-cow.c - several holders share one message (UPVM's LBID ->
 * GBID); a writer gets a private copy; nobody sees another's writes.
 */
#include "msgtest.h"

static msg_buf_t *new_buf(int enc)
{
    msg_buf_t *b = NULL;
    ASSERT_OK(msg_buf_new(enc, &b));
    return b;
}

TEST(ref_shares_data_without_copying)
{
    msg_buf_t *a = new_buf(PvmDataDefault), *b, *c;
    msg_stats_t s0, s1;
    int v = 42, w = 0;

    ASSERT_OK(msg_pack(a, PVM_INT, &v, 1, 1));
    msg_get_stats(&s0);
    ASSERT_OK(msg_buf_ref(a, &b));
    ASSERT_OK(msg_buf_ref(a, &c));
    msg_get_stats(&s1);
    ASSERT_EQ(s1.datas, s0.datas); /* no new data block */
    ASSERT_EQ(s1.copies, s0.copies);
    ASSERT_EQ(msg_buf_refs(a), 3);
    ASSERT_EQ(msg_buf_refs(c), 3);
    ASSERT_OK(msg_unpack(c, PVM_INT, &w, 1, 1));
    ASSERT_EQ(w, 42);
    msg_buf_unref(b);
    ASSERT_EQ(msg_buf_refs(a), 2);
    msg_buf_unref(a); /* the first holder may go first */
    ASSERT_EQ(msg_buf_refs(c), 1);
    msg_buf_rewind(c);
    ASSERT_OK(msg_unpack(c, PVM_INT, &w, 1, 1));
    ASSERT_EQ(w, 42);
    msg_buf_unref(c);
}

TEST(second_holder_never_sees_later_writes)
{
    msg_buf_t *snd = new_buf(PvmDataDefault), *rcv;
    int v = 1, w = 0;
    msg_stats_t s0, s1;

    ASSERT_OK(msg_pack(snd, PVM_INT, &v, 1, 1));
    ASSERT_OK(msg_buf_ref(snd, &rcv)); /* "send" */
    msg_get_stats(&s0);
    v = 2;
    ASSERT_OK(msg_pack(snd, PVM_INT, &v, 1, 1)); /* copy-on-write */
    msg_get_stats(&s1);
    ASSERT_EQ(s1.copies, s0.copies + 1);
    ASSERT_EQ(msg_buf_refs(snd), 1);
    ASSERT_EQ(msg_buf_refs(rcv), 1);
    ASSERT_EQ(msg_buf_len(snd), 8);
    ASSERT_EQ(msg_buf_len(rcv), 4);
    ASSERT_OK(msg_unpack(rcv, PVM_INT, &w, 1, 1));
    ASSERT_EQ(w, 1);
    ASSERT_EQ(msg_unpack(rcv, PVM_INT, &w, 1, 1), -ENODATA);
    /* the sender's copy has both */
    ASSERT_OK(msg_unpack(snd, PVM_INT, &w, 1, 1));
    ASSERT_EQ(w, 1);
    ASSERT_OK(msg_unpack(snd, PVM_INT, &w, 1, 1));
    ASSERT_EQ(w, 2);
    /* a private writer writes in place: no more copies */
    ASSERT_OK(msg_pack(snd, PVM_INT, &v, 1, 1));
    msg_get_stats(&s0);
    ASSERT_EQ(s0.copies, s1.copies);
    msg_buf_unref(snd);
    msg_buf_unref(rcv);
}

TEST(receiver_writes_do_not_reach_the_sender)
{
    msg_buf_t *snd = new_buf(PvmDataRaw), *rcv;
    char s[8];
    ASSERT_OK(msg_pack_str(snd, "abc"));
    ASSERT_OK(msg_buf_ref(snd, &rcv));
    ASSERT_OK(msg_pack_str(rcv, "def")); /* e.g. pvm_setsbuf(received) */
    ASSERT_EQ(msg_buf_len(snd), 4 + 4);
    ASSERT_EQ(msg_buf_len(rcv), 2 * (4 + 4));
    ASSERT_OK(msg_unpack_str(snd, s, sizeof(s)));
    ASSERT(!strcmp(s, "abc"));
    ASSERT_EQ(msg_buf_remaining(snd), 0);
    msg_buf_unref(snd);
    msg_buf_unref(rcv);
}

TEST(each_holder_has_its_own_cursor_and_header)
{
    msg_buf_t *a = new_buf(PvmDataDefault), *b;
    int v[3] = {10, 20, 30}, x = 0, y = 0;

    ASSERT_OK(msg_pack(a, PVM_INT, v, 3, 1));
    msg_buf_hdr(a)->tag = 5;
    ASSERT_OK(msg_buf_ref(a, &b));
    ASSERT_EQ(msg_buf_hdr(b)->tag, 5); /* copied at ref */
    msg_buf_hdr(b)->tag = 6;           /* not shared */
    msg_buf_hdr(b)->src = 0x40002;
    ASSERT_EQ(msg_buf_hdr(a)->tag, 5);
    ASSERT_EQ(msg_buf_hdr(a)->src, 0);
    ASSERT_EQ(msg_buf_refs(a), 2); /* a header change copies nothing */

    ASSERT_OK(msg_unpack(a, PVM_INT, &x, 1, 1));
    ASSERT_OK(msg_unpack(a, PVM_INT, &x, 1, 1));
    ASSERT_OK(msg_unpack(b, PVM_INT, &y, 1, 1));
    ASSERT_EQ(x, 20);
    ASSERT_EQ(y, 10);
    ASSERT_EQ(msg_buf_remaining(a), 4);
    ASSERT_EQ(msg_buf_remaining(b), 8);
    msg_buf_unref(a);
    msg_buf_unref(b);
}

TEST(make_private_copies_only_when_shared)
{
    msg_buf_t *a = new_buf(PvmDataDefault), *b;
    msg_stats_t s0, s1;
    int v = 3, w;

    ASSERT_OK(msg_pack(a, PVM_INT, &v, 1, 1));
    msg_get_stats(&s0);
    ASSERT_OK(msg_buf_make_private(a));
    msg_get_stats(&s1);
    ASSERT_EQ(s1.copies, s0.copies);
    ASSERT_OK(msg_buf_ref(a, &b));
    ASSERT_OK(msg_unpack(b, PVM_INT, &w, 1, 1));
    ASSERT_OK(msg_buf_make_private(b)); /* keeps b's cursor */
    ASSERT_EQ(msg_buf_refs(a), 1);
    ASSERT_EQ(msg_buf_refs(b), 1);
    ASSERT_EQ(msg_buf_remaining(b), 0);
    msg_get_stats(&s0);
    ASSERT_EQ(s0.copies, s1.copies + 1);
    msg_buf_unref(b);
    msg_buf_unref(a);
}

TEST(big_shared_message_copies_on_write)
{
    enum { N = 5000 };
    msg_buf_t *a = new_buf(PvmDataRaw), *b;
    static int arr[N], out[N];

    for (int i = 0; i < N; i++)
        arr[i] = i;
    ASSERT_OK(msg_pack(a, PVM_INT, arr, N, 1));
    ASSERT_OK(msg_buf_ref(a, &b));
    arr[0] = -1;
    ASSERT_OK(msg_pack(a, PVM_INT, arr, 1, 1)); /* grows the private copy */
    ASSERT_EQ(msg_buf_len(a), (N + 1) * sizeof(int));
    ASSERT_EQ(msg_buf_len(b), N * sizeof(int));
    ASSERT_OK(msg_unpack(b, PVM_INT, out, N, 1));
    ASSERT_EQ(out[0], 0);
    ASSERT_EQ(out[N - 1], N - 1);
    msg_buf_unref(a);
    msg_buf_unref(b);
}

TEST(in_place_data_is_read_when_the_message_leaves)
{
    msg_buf_t *a = new_buf(PvmDataInPlace), *r1, *r2;
    int arr[3] = {1, 2, 3}, out[3];
    double d = 0.5, e;

    ASSERT_OK(msg_pack(a, PVM_INT, arr, 3, 1));
    ASSERT_OK(msg_pack(a, PVM_DOUBLE, &d, 1, 1));
    arr[1] = 20; /* after the pack, before the send: the receiver sees it */
    ASSERT_OK(msg_buf_ref(a, &r1));
    arr[2] = 30; /* after the send: r1 does not see it, a later send does */
    ASSERT_OK(msg_buf_ref(a, &r2));

    ASSERT_EQ(msg_buf_enc(r1), PvmDataRaw);
    ASSERT_EQ(msg_buf_enc_sig(r1), msg_native_dsig());
    ASSERT_EQ(msg_buf_refs(a), 1); /* each receiver got its own copy */
    ASSERT_OK(msg_unpack(r1, PVM_INT, out, 3, 1));
    ASSERT(out[0] == 1 && out[1] == 20 && out[2] == 3);
    ASSERT_OK(msg_unpack(r1, PVM_DOUBLE, &e, 1, 1));
    ASSERT(e == 0.5);
    ASSERT_OK(msg_unpack(r2, PVM_INT, out, 3, 1));
    ASSERT(out[0] == 1 && out[1] == 20 && out[2] == 30);
    msg_buf_unref(r1);
    msg_buf_unref(r2);
    msg_buf_unref(a);
}

TEST(handles_and_data_are_released)
{
    msg_stats_t s0, s1;
    msg_get_stats(&s0);
    for (int round = 0; round < 1000; round++) {
        msg_buf_t *a = new_buf(round % 3), *b, *c;
        int v = round;
        ASSERT_OK(msg_pack(a, PVM_INT, &v, 1, 1));
        ASSERT_OK(msg_buf_ref(a, &b));
        ASSERT_OK(msg_buf_ref(b, &c));
        msg_buf_unref(round & 1 ? a : c);
        msg_buf_unref(b);
        msg_buf_unref(round & 1 ? c : a);
    }
    msg_buf_unref(NULL);
    msg_get_stats(&s1);
    ASSERT_EQ(s1.bufs, s0.bufs);
    ASSERT_EQ(s1.datas, s0.datas);
    msg_pool_trim();
}

MSGTEST_MAIN()
