/* p09_mhf: message handler functions pvm_addmhf / pvm_delmhf */
#include "probe.h"

static int calls;
static int handler(int mid)
{
	int len, tag, src, v = -1;
	calls++;
	pvm_bufinfo(mid, &len, &tag, &src);
	pvm_upkint(&v, 1, 1);
	printf("      handler(mid=%d): len=%d tag=%d src=0x%x v=%d getrbuf=%d getsbuf=%d ctx=%d\n",
	       mid, len, tag, src, v, pvm_getrbuf(), pvm_getsbuf(), pvm_getcontext());
	return 0;
}

static void sendself(int me, int tag, int v)
{
	pvm_initsend(PvmDataDefault); pvm_pkint(&v, 1, 1); pvm_send(me, tag);
}

int main(int argc, char **argv)
{
	int me, h1, h2, h3, b;
	probe_init();
	me = pvm_mytid();

	SECTION("add / duplicate / overlap");
	h1 = SHOW(pvm_addmhf(-1, 5, -1, handler));
	SHOW(pvm_addmhf(-1, 5, -1, handler));		/* identical */
	SHOW(pvm_addmhf(me, 5, 0, handler));		/* covered by wildcard */
	SHOW(pvm_addmhf(-1, -1, -1, handler));	/* covers existing */
	h2 = SHOW(pvm_addmhf(me, 6, 0, handler));
	h3 = SHOW(pvm_addmhf(-1, 7, 12345, handler));
	SHOW(pvm_addmhf(-5, 8, 0, handler));		/* odd src: accepted? */
	SHOW(pvm_addmhf(me, -7, 0, handler));

	SECTION("when is a handler run?");
	sendself(me, 5, 55);
	NOTE("sent tag 5 to self; now pvm_probe(-1,5):");
	calls = 0;
	SHOW(pvm_probe(-1, 5));
	printf("   handler calls so far: %d\n", calls);
	sendself(me, 6, 66);
	sendself(me, 9, 99);
	NOTE("sent tag 6 (handled) and 9 (not); pvm_recv(-1,-1):");
	b = SHOW(pvm_recv(-1, -1));
	bufinfo_print("recv", b);
	printf("   handler calls so far: %d\n", calls);
	sendself(me, 7, 77);
	NOTE("tag 7 in base context: handler registered for ctx 12345 only");
	b = SHOW(pvm_trecv(-1, 7, &(struct timeval){0, 300000}));

	SECTION("delete");
	SHOW(pvm_delmhf(h1));
	SHOW(pvm_delmhf(h1));
	SHOW(pvm_delmhf(-1));
	SHOW(pvm_delmhf(999));
	SHOW(pvm_addmhf(-1, 5, -1, handler));	/* reuse freed id? */
	SHOW(pvm_delmhf(h2));
	SHOW(pvm_delmhf(h3));
	pvm_exit();
	return 0;
}
