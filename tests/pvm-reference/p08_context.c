/* p08_context: message contexts */
#include "probe.h"

static int child(void)
{
	char line[128];
	int p = pvm_parent();
	snprintf(line, sizeof line, "child: pvm_getcontext()=%d", pvm_getcontext());
	/* reply in whatever context we are in (inherited) */
	pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(p, 1);
	pvm_exit();
	return 0;
}

static void minfo(int b)
{
	struct pvmminfo mi;
	if (b <= 0) { printf("   (no buffer)\n"); return; }
	if (pvm_getminfo(b, &mi) == 0)
		printf("   minfo: len=%d ctx=%d tag=%d wid=%d enc=%d crc=%d src=0x%x dst=0x%x\n",
		       mi.len, mi.ctx, mi.tag, mi.wid, mi.enc, mi.crc, mi.src, mi.dst);
}

int main(int argc, char **argv)
{
	int me, c1, c2, b, t;
	probe_init();
	if (argc > 1 && !strcmp(argv[1], "-child")) return child();
	me = pvm_mytid();

	SECTION("basic");
	SHOW(pvm_getcontext());
	c1 = SHOW(pvm_newcontext());
	c2 = SHOW(pvm_newcontext());
	SHOW(pvm_getcontext());
	SHOW(pvm_setcontext(c1));
	SHOW(pvm_getcontext());
	SHOW(pvm_setcontext(0));

	SECTION("does recv in one context see messages sent in another?");
	pvm_setcontext(c1);
	pvm_initsend(PvmDataDefault); pvm_send(me, 5);
	pvm_setcontext(c2);
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 300000}));
	pvm_setcontext(0);
	SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 300000}));
	pvm_setcontext(c1);
	b = SHOW(pvm_trecv(-1, -1, &(struct timeval){0, 300000}));
	minfo(b);
	NOTE("message sent in base context, received in base context:");
	pvm_setcontext(0);
	pvm_initsend(PvmDataDefault); pvm_send(me, 6);
	b = SHOW(pvm_recv(-1, -1));
	minfo(b);
	NOTE("context of a message is taken at send time (setcontext after pack, before send):");
	pvm_initsend(PvmDataDefault);
	pvm_setcontext(c2);
	pvm_send(me, 7);
	pvm_setcontext(0);
	SHOW(pvm_trecv(-1, 7, &(struct timeval){0, 300000}));
	pvm_setcontext(c2);
	b = SHOW(pvm_trecv(-1, 7, &(struct timeval){0, 300000}));
	minfo(b);
	pvm_setcontext(0);

	SECTION("pvm_setminfo to change context of a message before sending");
	{ struct pvmminfo mi; int sb = pvm_initsend(PvmDataDefault);
	pvm_getminfo(sb, &mi);
	printf("   fresh sbuf minfo: ctx=%d tag=%d src=0x%x dst=0x%x\n", mi.ctx, mi.tag, mi.src, mi.dst);
	mi.ctx = c1;
	SHOW(pvm_setminfo(sb, &mi));
	pvm_send(me, 8);
	SHOW(pvm_trecv(-1, 8, &(struct timeval){0, 300000}));
	SHOW(pvm_getminfo(0, &mi));
	SHOW(pvm_getminfo(9999, &mi));
	SHOW(pvm_setminfo(-1, &mi)); }

	SECTION("spawned child inherits the current context");
	pvm_setcontext(c1);
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", NULL}, 0, NULL, 1, &t));
	pvm_setcontext(0);
	SHOW(pvm_trecv(-1, 1, &(struct timeval){2, 0}));
	pvm_setcontext(c1);
	b = SHOW(pvm_trecv(-1, 1, &(struct timeval){2, 0}));
	if (b > 0) { char s[128]; pvm_upkstr(s); printf("   %s\n", s); }
	pvm_setcontext(0);

	SECTION("notify messages carry the context current at pvm_notify time");
	pvm_setcontext(c2);
	SHOW(pvm_notify(PvmTaskExit, 9, 1, (int[]){me + 0x100}));
	pvm_setcontext(0);
	SHOW(pvm_trecv(-1, 9, &(struct timeval){0, 500000}));
	pvm_setcontext(c2);
	b = SHOW(pvm_trecv(-1, 9, &(struct timeval){0, 500000}));
	minfo(b);
	pvm_setcontext(0);

	SECTION("setcontext / freecontext with bad values");
	SHOW(pvm_setcontext(-5));
	SHOW(pvm_getcontext());
	SHOW(pvm_setcontext(123456));
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_send(me, 10));
	SHOW(pvm_trecv(-1, 10, &(struct timeval){0, 300000}));
	SHOW(pvm_setcontext(0));
	SHOW(pvm_freecontext(123456));
	SHOW(pvm_freecontext(-1));
	SHOW(pvm_freecontext(0));	/* base context */
	SHOW(pvm_freecontext(c2));
	SHOW(pvm_freecontext(c2));	/* twice */
	NOTE("free the current context");
	pvm_setcontext(c1);
	SHOW(pvm_freecontext(c1));
	SHOW(pvm_getcontext());
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_send(me, 11));
	SHOW(pvm_trecv(-1, 11, &(struct timeval){0, 300000}));
	pvm_setcontext(0);
	SHOW(pvm_newcontext());
	SHOW(pvm_newcontext());
	pvm_exit();
	return 0;
}
