/* p04_sendrecv: send / recv / nrecv / trecv / probe / precv / psend / mcast /
 * recvf edge cases. */
#include "probe.h"
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static int child(void)
{
	int parent = pvm_parent(), i;
	int tags[] = {5, 3, 1, 4, 2};
	int iv[10]; double dv[3] = {1.5, 2.5, 3.5};
	for (i = 0; i < 10; i++) iv[i] = 100 + i;
	for (i = 0; i < 5; i++) {
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&i, 1, 1);
		pvm_send(parent, tags[i]);
	}
	pvm_psend(parent, 60, iv, 10, PVM_INT);
	pvm_psend(parent, 61, iv, 10, PVM_INT);
	pvm_psend(parent, 62, dv, 3, PVM_DOUBLE);
	pvm_psend(parent, 63, "hello", 5, PVM_BYTE);
	pvm_initsend(PvmDataDefault);	/* XDR message received with precv */
	pvm_pkint(iv, 3, 1);
	pvm_send(parent, 64);
	pvm_recv(parent, 99);
	pvm_exit();
	return 0;
}

static int matchcalls;
static int myfilter(int bufid, int tid, int tag)
{
	int len, t, src;
	matchcalls++;
	pvm_bufinfo(bufid, &len, &t, &src);
	/* queue holds tags 3,1,2,60.. : rank tag1 -> 2, tag2 -> 3, others 0 */
	printf("      filter(bufid=%d, tid=0x%x, tag=%d) sees msg tag %d\n", bufid, tid, tag, t);
	if (t == 1) return 2;
	if (t == 2) return 3;
	return 0;
}

static int negfilter(int bufid, int tid, int tag) { return -7; }

static void drain_print(const char *what)
{
	int b, len, tag, tid, v;
	printf("   %s:", what);
	while ((b = pvm_nrecv(-1, -1)) > 0) {
		pvm_bufinfo(b, &len, &tag, &tid);
		v = -1;
		if (len == 4) pvm_upkint(&v, 1, 1);
		printf(" tag%d(v%d)", tag, v);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	int me, r, ctid, b, b2, len, tag, tid, i, v;
	int iv[16], rtid, rtag, rlen;
	double dv[8], t0;
	probe_init();
	if (argc > 1 && !strcmp(argv[1], "-child")) return child();
	me = pvm_mytid();

	SECTION("pvm_send to bad destinations");
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&me, 1, 1);
	SHOW(pvm_send(-1, 1));
	SHOW(pvm_send(-5, 1));
	SHOW(pvm_send(0, 1));
	SHOW(pvm_send(me + 0x50, 1));		/* nonexistent task on this host */
	SHOW(pvm_send(0x7c0001, 1));		/* nonexistent host */
	SHOW(pvm_send(pvm_tidtohost(me), 1));	/* the pvmd itself */
	SHOW(pvm_send(0x80000000, 1));
	SHOW(pvm_send(0x40000001, 1));	/* TIDPVMD-ish / reserved bits */
	SECTION("negative / huge msgtag");
	SHOW(pvm_send(me, -1));
	SHOW(pvm_send(me, -2));
	SHOW(pvm_send(me, 0x7fffffff));
	SHOW(pvm_send(me, 0));
	SHOW(pvm_nrecv(me, 0x7fffffff));
	SHOW(pvm_nrecv(me, 0));
	SHOW(pvm_mcast(&me, 1, -3));
	SHOW(pvm_psend(me, -3, iv, 1, PVM_INT));
	SHOW(pvm_nrecv(-1, -1));
	drain_print("left in queue");

	SECTION("receive calls with bad tid / tag");
	SHOW(pvm_nrecv(0, -1));
	SHOW(pvm_nrecv(-2, -1));
	SHOW(pvm_nrecv(-1, -2));
	SHOW(pvm_probe(-1, -2));
	SHOW(pvm_trecv(-1, -2, &(struct timeval){0, 0}));

	SECTION("nothing to receive");
	SHOW(pvm_nrecv(-1, -1));
	SHOW(pvm_probe(-1, -1));
	t0 = now();
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 0}));
	printf("   took %.6f s\n", now() - t0);
	t0 = now();
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 100000}));
	printf("   took %.6f s\n", now() - t0);
	t0 = now();
	SHOW(pvm_trecv(-1, -1, &(struct timeval){1, 0}));
	printf("   took %.6f s\n", now() - t0);
	t0 = now();
	SHOW(pvm_trecv(-1, -1, &(struct timeval){-1, 0}));
	printf("   took %.6f s\n", now() - t0);
	t0 = now();
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, -5}));
	printf("   took %.6f s\n", now() - t0);
	SHOW(pvm_getrbuf());
	NOTE("does an unsuccessful nrecv / trecv / probe drop the current receive buffer?");
	pvm_initsend(PvmDataDefault); pvm_send(me, 3);
	b = pvm_recv(me, 3);
	SHOW(pvm_probe(-1, -1));
	SHOW(pvm_getrbuf());
	SHOW(pvm_nrecv(-1, -1));
	SHOW(pvm_getrbuf());
	SHOW(pvm_bufinfo(b, &len, &tag, &tid));
	pvm_send(me, 3);
	b = pvm_recv(me, 3);
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 1000}));
	SHOW(pvm_getrbuf());

	SECTION("send to self");
	pvm_initsend(PvmDataDefault);
	v = 7; pvm_pkint(&v, 1, 1);
	SHOW(pvm_send(me, 7));
	b = SHOW(pvm_probe(me, 7));
	bufinfo_print("probed", b);
	SHOW(pvm_getrbuf());
	b2 = SHOW(pvm_recv(me, 7));
	printf("   probe id == recv id? %s\n", b == b2 ? "yes" : "no");
	bufinfo_print("rbuf", b2);
	v = 0; SHOW(pvm_upkint(&v, 1, 1)); printf("   v=%d\n", v);
	NOTE("sending the same send buffer twice (is it still valid after send?)");
	SHOW(pvm_send(me, 8));
	SHOW(pvm_send(me, 8));
	SHOW(pvm_pkint(&v, 1, 1));
	SHOW(pvm_send(me, 9));
	b = SHOW(pvm_recv(me, 8)); bufinfo_print("1st", b);
	SHOW(pvm_recv(me, 8)); 
	NOTE("previous receive buffer %d after the next recv:", b);
	SHOW(pvm_bufinfo(b, &len, &tag, &tid));
	b = SHOW(pvm_recv(me, 9)); bufinfo_print("tag9", b);
	NOTE("keep a receive buffer with setrbuf(0), then recv again");
	pvm_send(me, 10);
	b = pvm_recv(me, 10);
	SHOW(pvm_setrbuf(0));
	pvm_send(me, 11);
	SHOW(pvm_recv(me, 11));
	SHOW(pvm_bufinfo(b, &len, &tag, &tid));
	SHOW(pvm_freebuf(b));
	NOTE("freeing the current receive buffer then recv again");
	pvm_send(me, 12);
	b = pvm_recv(me, 12);
	SHOW(pvm_freebuf(b));
	SHOW(pvm_getrbuf());
	pvm_send(me, 13);
	SHOW(pvm_recv(me, 13));

	SECTION("messages from a child: order, wildcards, probe, recvf");
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", NULL}, 0, NULL, 1, &ctid));
	sleep(1);		/* let everything arrive */
	b = SHOW(pvm_probe(-1, -1));
	bufinfo_print("probe(-1,-1)", b);
	b = SHOW(pvm_probe(ctid, 4));
	bufinfo_print("probe(child,4)", b);
	b = SHOW(pvm_recv(ctid, 4));
	bufinfo_print("recv(child,4)", b);
	SHOW(pvm_recv(-1, -1)); pvm_upkint(&v, 1, 1); bufinfo_print("recv(-1,-1)", pvm_getrbuf());
	NOTE("install recvf filter: rank tag1 -> 2, tag2 -> 3, others 0; then nrecv(-1,-1) twice");
	int (*old)(int, int, int) = pvm_recvf(myfilter);
	printf("   pvm_recvf returned old=%p (NULL? %s)\n", (void *)old, old ? "no" : "yes");
	matchcalls = 0;
	b = SHOW(pvm_nrecv(-1, -1));
	if (b > 0) bufinfo_print("recvf nrecv", b);
	printf("   filter called %d times\n", matchcalls);
	b = SHOW(pvm_nrecv(-1, -1));
	printf("   filter called %d times\n", matchcalls);
	old = pvm_recvf(NULL);
	printf("   pvm_recvf(NULL) returned my filter? %s\n", old == myfilter ? "yes" : "no");
	SHOW(pvm_recv(-1, -1)); bufinfo_print("next", pvm_getrbuf());
	NOTE("a filter returning -7 (negative = return immediately?)");
	pvm_recvf(negfilter);
	SHOW(pvm_nrecv(-1, -1));
	SHOW(pvm_probe(-1, -1));
	pvm_recvf(NULL);

	SECTION("precv / psend");
	memset(iv, 0, sizeof iv); rtid = rtag = rlen = -9;
	SHOW(pvm_precv(ctid, 60, iv, 10, PVM_INT, &rtid, &rtag, &rlen));
	printf("   rtid=0x%x rtag=%d rlen=%d iv[0]=%d iv[9]=%d\n", rtid, rtag, rlen, iv[0], iv[9]);
	memset(iv, 0, sizeof iv); rtid = rtag = rlen = -9;
	NOTE("buffer too small: room for 5 ints, message has 10");
	SHOW(pvm_precv(ctid, 61, iv, 5, PVM_INT, &rtid, &rtag, &rlen));
	printf("   rtid=0x%x rtag=%d rlen=%d iv[4]=%d iv[5]=%d (iv[5] untouched if 0)\n", rtid, rtag, rlen, iv[4], iv[5]);
	SHOW(pvm_getrbuf());
	NOTE("type mismatch: 3 doubles sent, precv as PVM_INT x 8");
	memset(iv, 0, sizeof iv); rtid = rtag = rlen = -9;
	SHOW(pvm_precv(ctid, 62, iv, 8, PVM_INT, &rtid, &rtag, &rlen));
	printf("   rtid=0x%x rtag=%d rlen=%d iv[0]=0x%x iv[1]=0x%x\n", rtid, rtag, rlen, iv[0], iv[1]);
	NOTE("bytes as PVM_STR");
	char cbuf[16] = {0};
	SHOW(pvm_precv(ctid, 63, cbuf, 16, PVM_STR, &rtid, &rtag, &rlen));
	SHOW(pvm_precv(ctid, 63, cbuf, 16, 99, &rtid, &rtag, &rlen));
	SHOW(pvm_precv(ctid, 63, cbuf, 16, PVM_BYTE, &rtid, &rtag, &rlen));
	printf("   '%s' rlen=%d\n", cbuf, rlen);
	NOTE("XDR-packed message (3 ints, pvm_send) received with precv PVM_INT");
	memset(iv, 0, sizeof iv);
	SHOW(pvm_precv(ctid, 64, iv, 3, PVM_INT, &rtid, &rtag, &rlen));
	printf("   rlen=%d iv = 0x%x 0x%x 0x%x\n", rlen, iv[0], iv[1], iv[2]);
	SHOW(pvm_psend(me, 70, iv, 3, PVM_STR));
	SHOW(pvm_psend(me, 70, iv, 3, 99));
	SHOW(pvm_psend(me, 70, iv, -1, PVM_INT));
	SHOW(pvm_psend(me, 70, iv, 0, PVM_INT));
	SHOW(pvm_precv(me, 70, iv, 3, PVM_INT, &rtid, &rtag, &rlen));
	printf("   0-length psend: rtid=0x%x rtag=%d rlen=%d\n", rtid, rtag, rlen);
	SHOW(pvm_precv(me, 70, iv, 3, PVM_INT, NULL, NULL, NULL));
	drain_print("left in queue");

	SECTION("pvm_mcast edge cases");
	pvm_initsend(PvmDataDefault); v = 1; pvm_pkint(&v, 1, 1);
	SHOW(pvm_mcast(&me, 0, 20));
	SHOW(pvm_mcast(&me, -1, 20));
	SHOW(pvm_mcast((int[]){me, me}, 2, 20));
	SHOW(pvm_mcast((int[]){me, 0x7c0001}, 2, 21));
	SHOW(pvm_mcast((int[]){me, -1}, 2, 22));
	SHOW(pvm_mcast((int[]){ctid, me + 0x50}, 2, 23));
	sleep(1);
	drain_print("self got from mcast");

	SECTION("message order: 100 messages from self under wildcard");
	for (i = 0; i < 100; i++) { pvm_initsend(PvmDataRaw); pvm_pkint(&i, 1, 1); pvm_send(me, 1000 + (i % 7)); }
	{ int ok = 1; for (i = 0; i < 100; i++) { pvm_recv(-1, -1); pvm_upkint(&v, 1, 1); if (v != i) ok = 0; }
	printf("   FIFO under recv(-1,-1): %s\n", ok ? "yes" : "no"); }

	pvm_initsend(PvmDataDefault);
	pvm_send(ctid, 99);
	pvm_exit();
	return 0;
}
