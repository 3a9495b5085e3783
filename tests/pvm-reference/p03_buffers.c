/* p03_buffers: message buffer management and pack/unpack edge cases. */
#include "probe.h"
#include <sys/wait.h>
#include <float.h>

static int me;

/* run a possibly-crashing call in a forked copy (pack routines are local,
 * they do not touch the pvmd socket) */
#define RISKY(expr) do { \
	pid_t _p = fork(); \
	if (_p == 0) { SHOW(expr); _exit(0); } \
	int _st; waitpid(_p, &_st, 0); \
	if (WIFSIGNALED(_st)) printf("%s -> process killed by signal %d (%s)\n", #expr, WTERMSIG(_st), strsignal(WTERMSIG(_st))); \
} while (0)

/* send current sbuf to self and receive it as the active rbuf */
static int loop(int tag)
{
	pvm_send(me, tag);
	return pvm_recv(me, tag);
}

int main(int argc, char **argv)
{
	int r, b1, b2, b3, i;
	int iv[8] = {1, 2, 3, 4, 5, 6, 7, 8}, io[8];
	double dv[4] = {1.5, -2.25, 3e100, 0}, dout[4];
	float fo[4];
	short so[8];
	char str[64], *sp;
	long lo[4];
	probe_init();
	me = pvm_mytid();

	SECTION("state at start");
	SHOW(pvm_getsbuf());
	SHOW(pvm_getrbuf());

	SECTION("packing with no send buffer");
	SHOW(pvm_pkint(iv, 1, 1));
	SHOW(pvm_pkstr("x"));
	SHOW(pvm_pkbyte("x", 1, 1));
	SHOW(pvm_pkdouble(dv, 1, 1));
	SHOW(pvm_send(me, 1));
	SHOW(pvm_mcast(&me, 1, 1));
	SHOW(pvm_upkint(io, 1, 1));
	SHOW(pvm_upkstr(str));

	SECTION("bad buffer ids");
	SHOW(pvm_freebuf(9999));
	SHOW(pvm_freebuf(0));
	SHOW(pvm_freebuf(-1));
	SHOW(pvm_setsbuf(9999));
	SHOW(pvm_setsbuf(-1));
	SHOW(pvm_setsbuf(0));
	SHOW(pvm_setrbuf(9999));
	SHOW(pvm_setrbuf(-1));
	SHOW(pvm_setrbuf(0));
	int len = 77, tag = 77, tid = 77;
	SHOW(pvm_bufinfo(9999, &len, &tag, &tid));
	SHOW(pvm_bufinfo(0, &len, &tag, &tid));
	SHOW(pvm_bufinfo(-1, &len, &tag, &tid));
	printf("   out params after failed bufinfo: len=%d tag=%d tid=%d\n", len, tag, tid);

	SECTION("mkbuf / initsend encodings");
	SHOW(pvm_mkbuf(PvmDataDefault));
	SHOW(pvm_mkbuf(PvmDataRaw));
	SHOW(pvm_mkbuf(PvmDataInPlace));
	SHOW(pvm_mkbuf(3));
	SHOW(pvm_mkbuf(PvmDataTrace));
	SHOW(pvm_mkbuf(5));
	SHOW(pvm_mkbuf(99));
	SHOW(pvm_mkbuf(-1));
	SHOW(pvm_getsbuf());
	SHOW(pvm_initsend(99));
	SHOW(pvm_initsend(-1));
	SHOW(pvm_initsend(3));
	SHOW(pvm_getsbuf());
	b1 = SHOW(pvm_initsend(PvmDataDefault));
	SHOW(pvm_getsbuf());
	b2 = SHOW(pvm_initsend(PvmDataRaw));
	NOTE("initsend frees the previous send buffer: old id %d -> bufinfo:", b1);
	SHOW(pvm_bufinfo(b1, &len, &tag, &tid));
	SHOW(pvm_bufinfo(b2, &len, &tag, &tid));
	printf("   fresh send buffer: len=%d tag=%d tid=0x%x\n", len, tag, tid);

	SECTION("setsbuf / setrbuf return previous id; freeing the active buffer");
	b3 = SHOW(pvm_mkbuf(PvmDataDefault));
	SHOW(pvm_setsbuf(b3));
	SHOW(pvm_getsbuf());
	SHOW(pvm_setsbuf(b2));
	SHOW(pvm_setrbuf(b3));		/* a never-sent buffer as receive buffer */
	SHOW(pvm_getrbuf());
	SHOW(pvm_setrbuf(0));
	SHOW(pvm_getrbuf());
	SHOW(pvm_freebuf(b2));		/* free the active send buffer */
	SHOW(pvm_getsbuf());
	SHOW(pvm_pkint(iv, 1, 1));
	SHOW(pvm_freebuf(b3));
	SHOW(pvm_freebuf(b3));		/* double free */

	SECTION("unpack past the end (XDR)");
	pvm_initsend(PvmDataDefault);
	pvm_pkint(iv, 2, 1);
	r = loop(10);
	bufinfo_print("rbuf", r);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 3, 1));
	printf("   io[] after partial unpack: %d %d %d\n", io[0], io[1], io[2]);
	SHOW(pvm_upkint(io, 1, 1));
	SHOW(pvm_upkint(io, 0, 1));
	SHOW(pvm_upkbyte(str, 0, 1));
	SHOW(pvm_upkstr(str));

	SECTION("unpack past the end (Raw)");
	pvm_initsend(PvmDataRaw);
	pvm_pkint(iv, 2, 1);
	r = loop(11);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 3, 1));
	printf("   io[] after partial unpack: %d %d %d\n", io[0], io[1], io[2]);
	SHOW(pvm_upkint(io, 1, 1));

	SECTION("type mismatch: pack int, unpack other types (XDR)");
	pvm_initsend(PvmDataDefault);
	pvm_pkint(iv, 4, 1);
	pvm_pkdouble(dv, 1, 1);
	pvm_pkstr("hello");
	pvm_pkshort((short[]){-1, 2, 3}, 3, 1);
	pvm_pkbyte("abc", 3, 1);
	r = loop(12);
	bufinfo_print("rbuf", r);
	SHOW(pvm_upkfloat(fo, 1, 1));		/* int 1 read as float */
	printf("   float from int 1: %g\n", fo[0]);
	SHOW(pvm_upkdouble(dout, 1, 1));	/* ints 2,3 read as double */
	printf("   double from ints 2,3: %g\n", dout[0]);
	SHOW(pvm_upkbyte(str, 4, 1));		/* int 4 read as 4 bytes */
	printf("   bytes from int 4: %02x %02x %02x %02x\n", (unsigned char)str[0], (unsigned char)str[1], (unsigned char)str[2], (unsigned char)str[3]);
	SHOW(pvm_upkint(io, 2, 1));		/* double 1.5 read as 2 ints */
	printf("   ints from double 1.5: 0x%x 0x%x\n", io[0], io[1]);
	SHOW(pvm_upkint(io, 1, 1));		/* string length */
	printf("   int from string 'hello' (its length prefix incl. NUL): %d\n", io[0]);
	SHOW(pvm_upkbyte(str, 6, 1));
	printf("   then 6 bytes: '%.6s'\n", str);
	memset(so, 0, sizeof so);
	SHOW(pvm_upkint(io, 3, 1));		/* 3 shorts read as ints */
	printf("   ints from shorts -1,2,3: %d %d %d\n", io[0], io[1], io[2]);
	SHOW(pvm_upkbyte(str, 3, 1));
	SHOW(pvm_upkbyte(str, 1, 1));		/* past end after padding? */

	SECTION("XDR: pack 3 bytes then unpack 1 int (byte padding)");
	pvm_initsend(PvmDataDefault);
	pvm_pkbyte("abc", 3, 1);
	r = loop(13);
	bufinfo_print("rbuf", r);
	SHOW(pvm_upkint(io, 1, 1));
	printf("   int from bytes 'abc': 0x%x\n", io[0]);

	SECTION("XDR: pack short/long/uint/ulong sizes on the wire");
	{ int k; const char *nm[] = {"short x1", "long x1", "byte x1", "byte x5", "float x1", "double x1", "cplx x1", "dcplx x1", "str 'ab'", "int x0"};
	for (k = 0; k < 10; k++) {
		long lv = -2; float fv = 1; double d2[2] = {1, 2}; float f2[2] = {1, 2};
		pvm_initsend(PvmDataDefault);
		switch (k) {
		case 0: pvm_pkshort((short[]){-2}, 1, 1); break;
		case 1: pvm_pklong(&lv, 1, 1); break;
		case 2: pvm_pkbyte("a", 1, 1); break;
		case 3: pvm_pkbyte("abcde", 5, 1); break;
		case 4: pvm_pkfloat(&fv, 1, 1); break;
		case 5: pvm_pkdouble(d2, 1, 1); break;
		case 6: pvm_pkcplx(f2, 1, 1); break;
		case 7: pvm_pkdcplx(d2, 1, 1); break;
		case 8: pvm_pkstr("ab"); break;
		case 9: pvm_pkint(iv, 0, 1); break;
		}
		pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
		printf("   XDR %-10s -> sbuf len %d", nm[k], len);
		pvm_initsend(PvmDataRaw);
		switch (k) {
		case 0: pvm_pkshort((short[]){-2}, 1, 1); break;
		case 1: pvm_pklong(&lv, 1, 1); break;
		case 2: pvm_pkbyte("a", 1, 1); break;
		case 3: pvm_pkbyte("abcde", 5, 1); break;
		case 4: pvm_pkfloat(&fv, 1, 1); break;
		case 5: pvm_pkdouble(d2, 1, 1); break;
		case 6: pvm_pkcplx(f2, 1, 1); break;
		case 7: pvm_pkdcplx(d2, 1, 1); break;
		case 8: pvm_pkstr("ab"); break;
		case 9: pvm_pkint(iv, 0, 1); break;
		}
		pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
		printf(";  Raw -> %d\n", len);
	} }

	SECTION("XDR: long values that do not fit in 32 bits");
	pvm_initsend(PvmDataDefault);
	lo[0] = 0x100000000L; lo[1] = -1; lo[2] = 0x7fffffffL; lo[3] = -0x80000000L;
	SHOW(pvm_pklong(lo, 1, 1));
	SHOW(pvm_pklong(lo + 1, 3, 1));
	pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
	printf("   sbuf len after 4 longs: %d\n", len);
	r = loop(14);
	memset(lo, 0, sizeof lo);
	SHOW(pvm_upklong(lo, 3, 1));
	printf("   longs back: %ld %ld %ld\n", lo[0], lo[1], lo[2]);
	NOTE("pklong(-5) in XDR, upklong into a long pre-filled with 0x7777777777777777:");
	pvm_initsend(PvmDataDefault);
	lo[0] = -5;
	pvm_pklong(lo, 1, 1);
	loop(141);
	lo[0] = 0x7777777777777777L;
	SHOW(pvm_upklong(lo, 1, 1));
	printf("   got 0x%lx = %ld  (only the low 4 bytes are written)\n", lo[0], lo[0]);
	NOTE("same in Raw:");
	pvm_initsend(PvmDataRaw);
	lo[0] = -5; lo[1] = 0x100000000L;
	pvm_pklong(lo, 2, 1);
	loop(142);
	lo[0] = lo[1] = 0x7777777777777777L;
	SHOW(pvm_upklong(lo, 2, 1));
	printf("   got %ld 0x%lx\n", lo[0], lo[1]);
	{ unsigned long ul[2] = {0xffffffffUL, 0x1ffffffffUL};
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_pkulong(ul, 1, 1));
	SHOW(pvm_pkulong(ul + 1, 1, 1)); }

	SECTION("type mismatch in Raw");
	pvm_initsend(PvmDataRaw);
	pvm_pkint(iv, 4, 1);
	pvm_pkstr("hello");
	r = loop(15);
	bufinfo_print("rbuf", r);
	SHOW(pvm_upkdouble(dout, 1, 1));
	SHOW(pvm_upkshort(so, 2, 1));
	printf("   shorts from int 3: %d %d\n", so[0], so[1]);
	SHOW(pvm_upkbyte(str, 2, 1));
	SHOW(pvm_upkstr(str));
	printf("   upkstr after misaligned reads: '%s'\n", str);
	SHOW(pvm_upkbyte(str, 1, 1));

	SECTION("count 0 / negative count / stride 0 / negative stride");
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_pkint(iv, 0, 1));
	SHOW(pvm_pkint(iv, -1, 1));
	SHOW(pvm_pkbyte("abc", -3, 1));
	SHOW(pvm_pkdouble(dv, -1, 1));
	SHOW(pvm_pkint(iv, 3, 0));		/* stride 0 */
	pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
	printf("   sbuf len after count0 + stride0 x3: %d\n", len);
	SHOW(pvm_pkint(iv + 7, 3, -1));	/* negative stride */
	SHOW(pvm_pkint(iv, 2, 3));		/* stride 3: iv[0], iv[3] */
	SHOW(pvm_pkbyte("abcdef", 3, 2));
	pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
	printf("   sbuf len: %d\n", len);
	r = loop(16);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 3, 1));
	printf("   stride-0 pack gave: %d %d %d\n", io[0], io[1], io[2]);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 3, 1));
	printf("   stride -1 pack from iv+7 gave: %d %d %d\n", io[0], io[1], io[2]);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 3, 2));		/* unpack 3 with stride 2: io[0],io[2],io[4]? stream has 2 left */
	printf("   io: %d %d %d %d %d\n", io[0], io[1], io[2], io[3], io[4]);
	SHOW(pvm_upkint(io, -1, 1));
	SHOW(pvm_upkint(io, 1, 0));

	SECTION("count/stride edge cases in Raw");
	pvm_initsend(PvmDataRaw);
	SHOW(pvm_pkint(iv, 0, 1));
	SHOW(pvm_pkint(iv, -1, 1));
	SHOW(pvm_pkint(iv, 3, 0));
	SHOW(pvm_pkint(iv + 7, 3, -1));
	pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
	printf("   sbuf len: %d\n", len);
	r = loop(17);
	memset(io, 0, sizeof io);
	SHOW(pvm_upkint(io, 6, 1));
	printf("   raw gave: %d %d %d %d %d %d\n", io[0], io[1], io[2], io[3], io[4], io[5]);

	SECTION("strings");
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_pkstr(""));
	SHOW(pvm_pkstr("a string"));
	pvm_bufinfo(pvm_getsbuf(), &len, 0, 0);
	printf("   sbuf len: %d\n", len);
	RISKY(pvm_pkstr(NULL));
	r = loop(18);
	strcpy(str, "XXXXXXXXXXXXXXXXXXXXXXXXX");
	SHOW(pvm_upkstr(str));
	printf("   empty string unpacked: '%s' (byte1='%c')\n", str, str[1]);
	SHOW(pvm_upkstr(str));
	printf("   '%s'\n", str);
	SHOW(pvm_upkstr(str));		/* past end */
	RISKY(pvm_upkstr(NULL));

	SECTION("pvm_packf / pvm_unpackf");
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_packf("%d %s %3lf", 42, "xyz", dv));
	SHOW(pvm_packf("%q"));
	r = loop(19);
	{ int x; char s[16]; double d3[3];
	SHOW(pvm_unpackf("%d %s %3lf", &x, s, d3));
	printf("   unpackf: %d '%s' %g %g %g\n", x, s, d3[0], d3[1], d3[2]); }

	SECTION("pvm_pkmesg / pvm_upkmesg");
	b1 = pvm_mkbuf(PvmDataDefault);
	pvm_setsbuf(b1);
	pvm_pkint(iv, 3, 1);
	b2 = pvm_initsend(PvmDataDefault);
	NOTE("initsend freed b1? bufinfo(b1):");
	SHOW(pvm_bufinfo(b1, &len, &tag, &tid));
	b1 = pvm_mkbuf(PvmDataDefault);
	pvm_setsbuf(b1); pvm_pkint(iv, 3, 1);
	b2 = pvm_mkbuf(PvmDataDefault);
	pvm_setsbuf(b2);
	SHOW(pvm_pkmesg(b1));
	SHOW(pvm_pkmesg(9999));
	SHOW(pvm_pkmesg(b2));		/* self */
	r = loop(20);
	b3 = SHOW(pvm_upkmesg());
	if (b3 > 0) { bufinfo_print("inner", b3); pvm_setrbuf(b3); memset(io, 0, sizeof io); SHOW(pvm_upkint(io, 3, 1)); printf("   inner ints %d %d %d\n", io[0], io[1], io[2]); }
	SHOW(pvm_upkmesg());

	SECTION("InPlace: data is read at send time, not pack time");
	pvm_initsend(PvmDataInPlace);
	{ int v[2] = {1, 2};
	SHOW(pvm_pkint(v, 2, 1));
	v[0] = 100; v[1] = 200;
	pvm_send(me, 21);
	v[0] = 300;
	pvm_recv(me, 21);
	SHOW(pvm_upkint(io, 2, 1));
	printf("   received %d %d (packed 1 2, changed to 100 200 before send)\n", io[0], io[1]); }
	SHOW(pvm_pkstr("inplace string"));
	SHOW(pvm_pkint(iv, 3, 2));

	SECTION("buffer ids: reused after free?");
	b1 = pvm_mkbuf(PvmDataDefault); b2 = pvm_mkbuf(PvmDataDefault);
	printf("   mkbuf -> %d, %d\n", b1, b2);
	pvm_freebuf(b1);
	b3 = pvm_mkbuf(PvmDataDefault);
	printf("   after freeing %d, mkbuf -> %d\n", b1, b3);

	pvm_exit();
	return 0;
}
