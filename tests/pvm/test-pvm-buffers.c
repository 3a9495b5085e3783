/*
 * test-pvm-buffers.c - buffer ids and packing through the PVM API: mkbuf,
 * freebuf, initsend, set/get of active buffers, bufinfo, getminfo/setminfo,
 * every pk/upk type in every encoding with strides, XDR byte order, strings,
 * packf/unpackf, pkmesg/upkmesg, and the errors of each.
 */
#include <complex.h>
#include <stdint.h>
#include <sys/mman.h>

#include "pvmtest.h"

static int me;

/* Send the active send buffer to ourselves and make it the rbuf. */
static void loop_back(int tag)
{
    CHECK_EQ(pvm_send(me, tag), 0);
    CHECK(pvm_recv(me, tag) > 0);
}

TEST(buffer_ids)
{
    CHECK_EQ(pvm_getsbuf(), 0);
    CHECK_EQ(pvm_getrbuf(), 0);
    int a = pvm_mkbuf(PvmDataDefault), b = pvm_mkbuf(PvmDataRaw);
    CHECK(a > 0 && b > 0 && a != b);
    CHECK_EQ(pvm_freebuf(a), 0);
    CHECK_EQ(pvm_mkbuf(PvmDataInPlace), a); /* ref §2: lowest freed id again */
    CHECK(pvm_mkbuf(PvmDataTrace) > 0);     /* accepted */
    capture_begin();
    int e1 = pvm_mkbuf(3), e2 = pvm_freebuf(9999), e3 = pvm_freebuf(-1);
    int e4 = pvm_setsbuf(9999), e5 = pvm_setrbuf(-1), e6 = pvm_bufinfo(0, NULL, NULL, NULL);
    const char *err = capture_end();
    CHECK_EQ(e1, PvmBadParam);
    CHECK_EQ(e2, PvmNoSuchBuf);
    CHECK_EQ(e3, PvmBadParam);
    CHECK_EQ(e4, PvmNoSuchBuf);
    CHECK_EQ(e5, PvmBadParam);
    CHECK_EQ(e6, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_mkbuf", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_freebuf", "No such buffer"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_setsbuf", "No such buffer"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_bufinfo", "Bad parameter"));
    CHECK_EQ(pvm_freebuf(0), 0); /* a no-op */

    /* setsbuf returns the previous id and keeps it */
    CHECK_EQ(pvm_setsbuf(a), 0);
    CHECK_EQ(pvm_setsbuf(b), a);
    CHECK_EQ(pvm_bufinfo(a, NULL, NULL, NULL), 0);
    /* initsend frees the current send buffer (ref §2) */
    int c = pvm_initsend(PvmDataDefault);
    CHECK_EQ(c, b); /* b was freed, and its id is the lowest free one */
    int len, tag, tid;
    CHECK_EQ(pvm_bufinfo(c, &len, &tag, &tid), 0);
    CHECK_EQ(len, 0);
    CHECK_EQ(tag, 0);
    CHECK_EQ(tid, me);
    /* a bad encoding still frees the old buffer, and reports twice */
    capture_begin();
    int r = pvm_initsend(99);
    err = capture_end();
    CHECK_EQ(r, PvmBadParam);
    CHECK_EQ(pvm_getsbuf(), 0);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_mkbuf", "Bad parameter"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_initsend", "Bad parameter"));
    /* no buffer: packing and unpacking report PvmNoBuf under their names */
    int x = 1;
    CHECK_EQ(pvm_setrbuf(0) >= 0, 1);
    capture_begin();
    int p1 = pvm_pkint(&x, 1, 1), p2 = pvm_upkdouble(NULL, 1, 1);
    err = capture_end();
    CHECK_EQ(p1, PvmNoBuf);
    CHECK_EQ(p2, PvmNoBuf);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_pkint", "No current buffer"));
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_upkdouble", "No current buffer"));
    CHECK_EQ(pvm_freebuf(a), 0);
}

/* Pack n items of every type with the given stride and check them back. */
static void round_trip(int enc, int stride)
{
    enum { N = 5 };
    char by[N * 2];
    short sh[N * 2];
    unsigned short us[N * 2];
    int in[N * 2];
    unsigned int ui[N * 2];
    long lo[N * 2];
    unsigned long ul[N * 2];
    float fl[N * 2];
    double db[N * 2];
    float cx[N * 4];
    double dc[N * 4];
    for (int i = 0; i < N * 2; i++) {
        by[i] = (char)(i * 37);
        sh[i] = (short)(-1000 * i);
        us[i] = (unsigned short)(60000 - i);
        in[i] = -123456 * i;
        ui[i] = 4000000000u - (unsigned)i;
        lo[i] = enc == PvmDataDefault ? -7L * i : -7000000000L * i; /* XDR long: 32 bits */
        ul[i] = enc == PvmDataDefault ? 4000000000ul - (unsigned)i : 0xfedcba9876543210ul - (unsigned)i;
        fl[i] = 1.5f * (float)i;
        db[i] = -2.25 * i;
    }
    for (int i = 0; i < N * 4; i++) {
        cx[i] = 0.5f * (float)i;
        dc[i] = 0.25 * i;
    }
    int n = stride == 1 ? N : N / 2;
    CHECK(pvm_initsend(enc) > 0);
    CHECK_EQ(pvm_pkbyte(by, n, stride), 0);
    CHECK_EQ(pvm_pkshort(sh, n, stride), 0);
    CHECK_EQ(pvm_pkushort(us, n, stride), 0);
    CHECK_EQ(pvm_pkint(in, n, stride), 0);
    CHECK_EQ(pvm_pkuint(ui, n, stride), 0);
    CHECK_EQ(pvm_pklong(lo, n, stride), 0);
    CHECK_EQ(pvm_pkulong(ul, n, stride), 0);
    CHECK_EQ(pvm_pkfloat(fl, n, stride), 0);
    CHECK_EQ(pvm_pkdouble(db, n, stride), 0);
    CHECK_EQ(pvm_pkcplx(cx, n, stride), 0);
    CHECK_EQ(pvm_pkdcplx(dc, n, stride), 0);
    if (enc != PvmDataInPlace)
        CHECK_EQ(pvm_pkstr("a string"), 0);
    loop_back(11);

    char by2[N];
    short sh2[N];
    unsigned short us2[N];
    int in2[N];
    unsigned int ui2[N];
    long lo2[N];
    unsigned long ul2[N];
    float fl2[N], cx2[N * 2];
    double db2[N], dc2[N * 2];
    char s[32];
    CHECK_EQ(pvm_upkbyte(by2, n, 1), 0);
    CHECK_EQ(pvm_upkshort(sh2, n, 1), 0);
    CHECK_EQ(pvm_upkushort(us2, n, 1), 0);
    CHECK_EQ(pvm_upkint(in2, n, 1), 0);
    CHECK_EQ(pvm_upkuint(ui2, n, 1), 0);
    CHECK_EQ(pvm_upklong(lo2, n, 1), 0);
    CHECK_EQ(pvm_upkulong(ul2, n, 1), 0);
    CHECK_EQ(pvm_upkfloat(fl2, n, 1), 0);
    CHECK_EQ(pvm_upkdouble(db2, n, 1), 0);
    CHECK_EQ(pvm_upkcplx(cx2, n, 1), 0);
    CHECK_EQ(pvm_upkdcplx(dc2, n, 1), 0);
    for (int i = 0; i < n; i++) {
        int k = i * stride;
        CHECK_EQ(by2[i], by[k]);
        CHECK_EQ(sh2[i], sh[k]);
        CHECK_EQ(us2[i], us[k]);
        CHECK_EQ(in2[i], in[k]);
        CHECK_EQ(ui2[i], ui[k]);
        CHECK_EQ(lo2[i], lo[k]);
        CHECK_EQ(ul2[i], ul[k]);
        CHECK(fl2[i] == fl[k]);
        CHECK(db2[i] == db[k]);
        CHECK(cx2[2 * i] == cx[2 * k] && cx2[2 * i + 1] == cx[2 * k + 1]);
        CHECK(dc2[2 * i] == dc[2 * k] && dc2[2 * i + 1] == dc[2 * k + 1]);
    }
    if (enc != PvmDataInPlace) {
        CHECK_EQ(pvm_upkstr(s), 0);
        CHECK_EQ(strcmp(s, "a string"), 0);
    }
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_upkbyte(by2, 1, 1), PvmNoData); /* all consumed */
    pvm_setopt(PvmAutoErr, 1);
}

TEST(every_type_round_trips)
{
    int encs[] = {PvmDataDefault, PvmDataRaw, PvmDataInPlace};
    for (int e = 0; e < 3; e++) {
        round_trip(encs[e], 1);
        if (encs[e] != PvmDataInPlace)
            round_trip(encs[e], 2);
    }
}

TEST(xdr_layout)
{
    /* ref §2.1: big-endian, 4-byte items; bytes padded to 4 */
    int four = 4;
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(&four, 1, 1), 0);
    short s3[3] = {-1, 2, 3};
    CHECK_EQ(pvm_pkshort(s3, 3, 1), 0);
    CHECK_EQ(pvm_pkbyte("abc", 3, 1), 0);
    double d = 1.5;
    CHECK_EQ(pvm_pkdouble(&d, 1, 1), 0);
    loop_back(12);
    int len;
    CHECK_EQ(pvm_bufinfo(pvm_getrbuf(), &len, NULL, NULL), 0);
    CHECK_EQ(len, 4 + 12 + 4 + 8);
    unsigned char raw[4];
    CHECK_EQ(pvm_upkbyte((char *)raw, 4, 1), 0);
    CHECK(raw[0] == 0 && raw[1] == 0 && raw[2] == 0 && raw[3] == 4);
    int as_ints[3];
    CHECK_EQ(pvm_upkint(as_ints, 3, 1), 0); /* shorts travel as ints */
    CHECK(as_ints[0] == -1 && as_ints[1] == 2 && as_ints[2] == 3);
    char abc[4];
    CHECK_EQ(pvm_upkbyte(abc, 3, 1), 0);
    CHECK_EQ(memcmp(abc, "abc", 3), 0);
    int halves[2];
    CHECK_EQ(pvm_upkint(halves, 2, 1), 0);
    CHECK_EQ((unsigned)halves[0], 0x3ff80000u);
    CHECK_EQ(halves[1], 0);

    /* strides: 0 repeats one item, negative walks backwards */
    int iv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[3];
    CHECK(pvm_initsend(PvmDataRaw) > 0);
    CHECK_EQ(pvm_pkint(iv, 3, 0), 0);
    CHECK_EQ(pvm_pkint(iv + 7, 3, -1), 0);
    loop_back(13);
    CHECK_EQ(pvm_upkint(out, 3, 1), 0);
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 1);
    CHECK_EQ(pvm_upkint(out, 3, 1), 0);
    CHECK(out[0] == 8 && out[1] == 7 && out[2] == 6);
}

TEST(pack_errors)
{
    int iv[4] = {1, 2, 3, 4}, out[4];
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkint(iv, 2, 1), 0);
    CHECK_EQ(pvm_pkint(iv, 0, 1), 0); /* count 0 packs nothing */
    capture_begin();
    int a = pvm_pkint(iv, -1, 1);
    const char *err = capture_end();
    CHECK_EQ(a, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_pkint", "Bad parameter"));
    loop_back(14);
    capture_begin();
    int b = pvm_upkint(out, 3, 1); /* past the end: an error, no crash */
    err = capture_end();
    CHECK_EQ(b, PvmNoData);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_upkint", "End of buffer"));
    CHECK_EQ(pvm_upkint(out, 0, 1), 0);
    CHECK_EQ(pvm_upkint(out, 2, 1), 0);
    CHECK(out[0] == 1 && out[1] == 2);
    capture_begin();
    int c = pvm_upkstr(NULL), d = pvm_pkstr(NULL);
    err = capture_end();
    CHECK_EQ(c, PvmNoData);
    CHECK(d == PvmBadParam || d == PvmNoBuf); /* PVM crashes; we refuse */
    /* in place: no strides, no strings */
    CHECK(pvm_initsend(PvmDataInPlace) > 0);
    capture_begin();
    int e = pvm_pkint(iv, 2, 2), f = pvm_pkstr("x");
    err = capture_end();
    CHECK_EQ(e, PvmNotImpl);
    CHECK_EQ(f, PvmNotImpl);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_pkstr", "Not implemented"));
    /* XDR longs beyond 32 bits: PVM packs garbage, we say PvmOverflow */
    long big = 1L << 40;
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    pvm_setopt(PvmAutoErr, 0);
    CHECK_EQ(pvm_pklong(&big, 1, 1), PvmOverflow);
    pvm_setopt(PvmAutoErr, 1);
}

/* A message past its largest size (2 GiB - 1: PVM counts bytes in an int)
 * fails with PvmNoMem, as in PVM, and says which limit it is, once.  In
 * place, over memory that is only reserved: nothing is copied. */
TEST(message_past_its_largest_size)
{
    size_t span = (size_t)1 << 31;
    char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(p != MAP_FAILED);
    CHECK(pvm_initsend(PvmDataInPlace) > 0);
    CHECK_EQ(pvm_pkbyte(p, INT32_MAX, 1), 0);
    capture_begin();
    int a = pvm_pkbyte(p, 1, 1), b = pvm_pkbyte(p, 1, 1);
    const char *err = capture_end();
    CHECK_EQ(a, PvmNoMem);
    CHECK_EQ(b, PvmNoMem);
    const char *line = "upvm: pvm_pkbyte(): a message holds at most 2147483647 bytes (PVM "
                       "counts them in an int), and this one would hold about 2147483648: "
                       "PvmNoMem, as PVM says it; send the data in several messages (said "
                       "once per node)\n";
    const char *at = strstr(err, line);
    CHECK(at != NULL);
    CHECK(strstr(at + strlen(line), "a message holds at most") == NULL);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_pkbyte", "Malloc failed"));
    CHECK(pvm_initsend(PvmDataDefault) > 0); /* drops the references */
    munmap(p, span);
}

TEST(getminfo_setminfo)
{
    CHECK(pvm_initsend(PvmDataRaw) > 0);
    int v = 9;
    CHECK_EQ(pvm_pkint(&v, 1, 1), 0);
    struct pvmminfo mi;
    CHECK_EQ(pvm_getminfo(pvm_getsbuf(), &mi), 0);
    CHECK_EQ(mi.enc, 0x408c41); /* raw: the data signature */
    CHECK_EQ(mi.src, me);
    /* a context set on the buffer is the one it is sent in (ref §2) */
    int c = pvm_newcontext();
    mi.ctx = c;
    CHECK_EQ(pvm_setminfo(pvm_getsbuf(), &mi), 0);
    CHECK_EQ(pvm_send(me, 15), 0);
    CHECK_EQ(pvm_nrecv(me, 15), 0);
    pvm_setcontext(c);
    CHECK(pvm_recv(me, 15) > 0);
    CHECK_EQ(pvm_getminfo(pvm_getrbuf(), &mi), 0);
    CHECK_EQ(mi.ctx, c);
    CHECK_EQ(mi.tag, 15);
    CHECK_EQ(mi.len, 4);
    CHECK_EQ(mi.dst, me);
    pvm_setcontext(0);
    CHECK_EQ(pvm_freecontext(c), 0);
    capture_begin();
    int a = pvm_getminfo(0, &mi), b = pvm_getminfo(9999, &mi);
    const char *err = capture_end();
    CHECK_EQ(a, PvmBadParam);
    CHECK_EQ(b, PvmNoSuchBuf);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_getminfo", "No such buffer"));
}

TEST(packf)
{
    CHECK_EQ(pvm_packf("%+ %d %s %3lf", PvmDataDefault, 42, "hi", (double[]){1, 2, 3}), 0);
    loop_back(16);
    int i;
    char s[8];
    double d[3];
    CHECK_EQ(pvm_unpackf("%d %s %3lf", &i, s, d), 0);
    CHECK_EQ(i, 42);
    CHECK_EQ(strcmp(s, "hi"), 0);
    CHECK(d[2] == 3.0);
    capture_begin();
    int r = pvm_packf("%q");
    const char *err = capture_end();
    CHECK_EQ(r, PvmBadParam);
    CHECK_STR_CONTAINS(err, autoerr_line("pvm_packf", "Bad parameter"));
}

TEST(pkmesg)
{
    /* a whole message inside another, and back */
    int inner = pvm_mkbuf(PvmDataDefault);
    int old = pvm_setsbuf(inner);
    int v[3] = {7, 8, 9};
    CHECK_EQ(pvm_pkint(v, 3, 1), 0);
    struct pvmminfo mi;
    CHECK_EQ(pvm_getminfo(inner, &mi), 0);
    mi.tag = 77;
    CHECK_EQ(pvm_setminfo(inner, &mi), 0);
    CHECK_EQ(pvm_setsbuf(old), inner); /* keep inner: initsend frees the sbuf */
    CHECK(pvm_initsend(PvmDataDefault) > 0);
    CHECK_EQ(pvm_pkmesg(inner), 0);
    pvm_errno = 4242;
    CHECK_EQ(pvm_pkmesg(9999), PvmNoSuchBuf); /* silent (ref §2) */
    CHECK_EQ(pvm_pkmesg(pvm_getsbuf()), PvmBadParam);
    CHECK_EQ(pvm_errno, 4242); /* ref §2: silent, errno unchanged */
    loop_back(17);
    int id = pvm_upkmesg();
    CHECK(id > 0);
    int tag;
    CHECK_EQ(pvm_bufinfo(id, NULL, &tag, NULL), 0);
    CHECK_EQ(tag, 77);
    CHECK_EQ(pvm_setrbuf(id) > 0, 1);
    int w[3];
    CHECK_EQ(pvm_upkint(w, 3, 1), 0);
    CHECK(w[0] == 7 && w[2] == 9);
    CHECK_EQ(pvm_upkmesg(), PvmNoData); /* silent at the end */
    CHECK_EQ(pvm_freebuf(inner), 0);
}

/* Every case starts enrolled (me: its tid) and ends by leaving PVM. */
static void enrol(void) { me = pvm_mytid(); }
HARNESS_BEFORE(enrol)
static void leave_pvm(void) { CHECK_EQ(pvm_exit(), 0); }
HARNESS_AFTER(leave_pvm)

HARNESS_MAIN()
