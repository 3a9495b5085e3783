/*
 * test-msg-packf.c - pvm_packf / pvm_unpackf formats.
 */
#include "msgtest.h"

TEST(packf_matches_pvm_bytes)
{
    /* libpvm3 3.4.6: pvm_packf("%+ %d %*d %2lf %hd %c %s %f %ld %3.2c",
     * PvmDataDefault, 3, 3, arr, d2, 7, 'Q', "hi", 0.5, 9L, by) */
    static const unsigned char want[] = {
        0, 0, 0, 3,                                     /* %d 3 */
        0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3,             /* %*d arr */
        0x3f, 0xf8, 0, 0, 0, 0, 0, 0,                   /* %2lf 1.5 */
        0x40, 0x04, 0, 0, 0, 0, 0, 0,                   /*      2.5 */
        0, 0, 0, 7,                                     /* %hd 7 */
        'Q', 0, 0, 0,                                   /* %c */
        0, 0, 0, 3, 'h', 'i', 0, 0,                     /* %s */
        0x3f, 0, 0, 0,                                  /* %f 0.5 */
        0, 0, 0, 9,                                     /* %ld 9 */
        1, 3, 5, 0,                                     /* %3.2c */
    };
    int cnt = 3, arr[3] = {1, 2, 3};
    double d2[2] = {1.5, 2.5};
    char by[5] = {1, 2, 3, 4, 5};
    msg_buf_t *b = NULL;

    ASSERT_OK(msg_packf(&b, "%+ %d %*d %2lf %hd %c %s %f %ld %3.2c",
                        PvmDataDefault, cnt, cnt, arr, d2, 7, 'Q', "hi",
                        0.5, 9L, by));
    ASSERT(b != NULL);
    ASSERT_DATA(b, want, sizeof(want));

    /* and back */
    int n, a2[3];
    double e2[2];
    short h;
    char c, s[8], cb[5] = {0};
    float f;
    long l;
    ASSERT_OK(msg_unpackf(b, "%d %*d %2lf %hd %c %s %f %ld %3.2c", &n, 3, a2,
                          e2, &h, &c, s, &f, &l, cb));
    ASSERT_EQ(n, 3);
    ASSERT(a2[0] == 1 && a2[1] == 2 && a2[2] == 3);
    ASSERT(e2[0] == 1.5 && e2[1] == 2.5);
    ASSERT_EQ(h, 7);
    ASSERT_EQ(c, 'Q');
    ASSERT(!strcmp(s, "hi"));
    ASSERT(f == 0.5f);
    ASSERT_EQ(l, 9);
    ASSERT(cb[0] == 1 && cb[1] == 0 && cb[2] == 3 && cb[3] == 0 &&
           cb[4] == 5);
    ASSERT_EQ(msg_buf_remaining(b), 0);
    msg_buf_unref(b);
}

TEST(packf_plus_replaces_the_buffer)
{
    msg_buf_t *old, *b;
    int v;
    ASSERT_OK(msg_buf_new(PvmDataDefault, &old));
    b = old;
    ASSERT_OK(msg_packf(&b, "%+%d", PvmDataRaw, 0x01020304));
    ASSERT(b != old);
    ASSERT_EQ(msg_buf_enc(b), PvmDataRaw);
    ASSERT_EQ(msg_buf_len(old), 0);
    ASSERT_OK(msg_unpackf(b, "%d", &v));
    ASSERT_EQ(v, 0x01020304);
    msg_buf_unref(old);
    msg_buf_unref(b);
}

TEST(packf_value_forms_truncate_like_c)
{
    /* PVM: "%hd %c" with 65535, 300 packs (short)-1 and (char)44 */
    msg_buf_t *b = NULL;
    short h;
    char c;
    float x[2] = {1.0f, 2.0f}, y[2];
    ASSERT_OK(msg_packf(&b, "%+ %hd %c %x", PvmDataDefault, 65535, 300, x));
    ASSERT_EQ(msg_buf_len(b), 16);
    ASSERT_OK(msg_unpackf(b, "%hd %c %x", &h, &c, y));
    ASSERT_EQ(h, -1);
    ASSERT_EQ(c, 44);
    ASSERT(y[0] == 1.0f && y[1] == 2.0f);
    msg_buf_unref(b);
}

TEST(packf_unsigned_long_complex_and_strides)
{
    msg_buf_t *b = NULL;
    unsigned long ul = 0xffffffffUL, ul2 = 0;
    unsigned short us[4] = {1, 0xffff, 3, 0xfffe}, us2[4] = {0};
    unsigned int ui[3] = {7, 8, 9}, ui2[3] = {0};
    double z[4] = {1, 2, 3, 4}, z2[4] = {0};
    long lv[2] = {-5, 6}, lv2[2];

    ASSERT_OK(msg_packf(&b, "%+ %lud %2.2hud %*.*ud %lx %2ld", PvmDataDefault,
                        ul, us, 2, 1, ui, z, lv));
    ASSERT_OK(msg_unpackf(b, "%lud %2.2hud %*.*ud %lx %2ld", &ul2, us2, 2, 1,
                          ui2, z2, lv2));
    ASSERT_EQ(ul2, 0xffffffffUL);
    ASSERT(us2[0] == 1 && us2[1] == 0 && us2[2] == 3 && us2[3] == 0);
    ASSERT(ui2[0] == 7 && ui2[1] == 8 && ui2[2] == 0);
    ASSERT(z2[0] == 1 && z2[1] == 2 && z2[2] == 0);
    ASSERT(lv2[0] == -5 && lv2[1] == 6);
    ASSERT_EQ(msg_buf_remaining(b), 0);
    msg_buf_unref(b);
}

TEST(packf_negative_count_packs_nothing)
{
    /* PVM 3.4.6: pvm_packf("%*d", -1, a) returns 0 and packs nothing */
    msg_buf_t *b = NULL;
    int a[2] = {1, 2};
    ASSERT_OK(msg_packf(&b, "%+ %*d", PvmDataDefault, -1, a));
    ASSERT_EQ(msg_buf_len(b), 0);
    ASSERT_OK(msg_unpackf(b, "%*d", -3, a));
    msg_buf_unref(b);
}

TEST(packf_ignores_text_between_conversions)
{
    msg_buf_t *b = NULL;
    int x, y;
    ASSERT_OK(msg_packf(&b, "%+x=%d, y=%d;", PvmDataDefault, 4, 5));
    ASSERT_EQ(msg_buf_len(b), 8);
    ASSERT_OK(msg_unpackf(b, "[%d][%d]", &x, &y));
    ASSERT(x == 4 && y == 5);
    msg_buf_unref(b);
}

TEST(packf_string_in_place_is_not_implemented)
{
    msg_buf_t *b = NULL;
    ASSERT_EQ(msg_packf(&b, "%+ %s", PvmDataInPlace, "x"), -ENOSYS);
    ASSERT(b != NULL); /* the new buffer exists, as after pvm_initsend */
    msg_buf_unref(b);
}

TEST(packf_stops_at_the_first_error_keeping_what_was_packed)
{
    msg_buf_t *b = NULL;
    long big = 0x100000000L;
    ASSERT_EQ(msg_packf(&b, "%+ %d %ld %d", PvmDataDefault, 1, big, 2),
              -EOVERFLOW);
    ASSERT_EQ(msg_buf_len(b), 4);
    msg_buf_unref(b);
}

static int vpack_helper(msg_buf_t **b, const char *fmt, ...)
{
    va_list ap;
    int cc;
    va_start(ap, fmt);
    cc = msg_vpackf(b, fmt, ap);
    va_end(ap);
    return cc;
}

static int vunpack_helper(msg_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int cc;
    va_start(ap, fmt);
    cc = msg_vunpackf(b, fmt, ap);
    va_end(ap);
    return cc;
}

TEST(vpackf_and_vunpackf_take_a_va_list)
{
    msg_buf_t *b = NULL;
    double d;
    char s[8];
    ASSERT_OK(vpack_helper(&b, "%+ %lf %s", PvmDataRaw, 2.25, "va"));
    ASSERT_OK(vunpack_helper(b, "%lf %s", &d, s));
    ASSERT(d == 2.25);
    ASSERT(!strcmp(s, "va"));
    msg_buf_unref(b);
}

MSGTEST_MAIN()
