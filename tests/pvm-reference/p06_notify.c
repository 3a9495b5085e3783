/* p06_notify: pvm_notify kinds, timing, contents and cancellation */
#include "probe.h"

static int child(char **argv)
{
	pvm_mytid();
	if (!strcmp(argv[2], "sleep")) { usleep(atoi(argv[3]) * 1000); pvm_exit(); return 0; }
	if (!strcmp(argv[2], "noexit")) { usleep(atoi(argv[3]) * 1000); exit(3); }	/* no pvm_exit */
	if (!strcmp(argv[2], "segv")) { usleep(atoi(argv[3]) * 1000); *(volatile int *)0 = 1; }
	if (!strcmp(argv[2], "echo")) {	/* reply to every message; tag 99 = quit */
		int b, len, tag, src;
		pvm_setopt(PvmRoute, PvmRouteDirect);
		for (;;) {
			b = pvm_recv(-1, -1);
			pvm_bufinfo(b, &len, &tag, &src);
			if (tag == 99) break;
			pvm_initsend(PvmDataDefault); pvm_send(src, tag);
		}
		pvm_exit();
		return 0;
	}
	if (!strcmp(argv[2], "exitnotify")) { /* notify on itself, then exit */
		int me = pvm_mytid();
		pvm_notify(PvmTaskExit, 77, 1, &me);
		pvm_exit();
		return 0;
	}
	return 0;
}

static int spawn1(char *mode, char *ms)
{
	int tid = 0;
	pvm_spawn(self_path(), (char *[]){"-child", mode, ms, NULL}, 0, NULL, 1, &tid);
	return tid;
}

/* print every message with tag 'tag' that arrives within 'ms' milliseconds */
static void collect(int tag, int ms, const char *what)
{
	int b, len, t, src, n = 0, v[8], i, k;
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	while ((b = pvm_trecv(-1, tag, &tv)) > 0) {
		pvm_bufinfo(b, &len, &t, &src);
		/* unpack ints one by one until the end (len is 0 for messages
		 * generated inside libpvm, e.g. route notifications) */
		{ int ae = pvm_setopt(PvmAutoErr, 0);
		for (k = 0; k < 8 && pvm_upkint(&v[k], 1, 1) == 0; k++) ;
		pvm_setopt(PvmAutoErr, ae); }
		printf("   [%s] msg tag=%d from=0x%x len=%d ints:", what, t, (unsigned)src, len);
		for (i = 0; i < k; i++) printf(" 0x%x", v[i]);
		printf("\n");
		n++;
		tv.tv_sec = ms / 1000; tv.tv_usec = (ms % 1000) * 1000;
	}
	if (!n) printf("   [%s] no message with tag %d within %d ms\n", what, tag, ms);
}

int main(int argc, char **argv)
{
	int me, c1, c2, c3, host, v[4];
	probe_init();
	if (argc > 3 && !strcmp(argv[1], "-child")) return child(argv);
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	me = pvm_mytid();
	host = pvm_tidtohost(me);

	SECTION("bad arguments");
	c1 = spawn1("sleep", "3000");
	SHOW(pvm_notify(0, 10, 1, &c1));
	SHOW(pvm_notify(6, 10, 1, &c1));
	SHOW(pvm_notify(99, 10, 1, &c1));
	SHOW(pvm_notify(-1, 10, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit, 10, 0, &c1));
	SHOW(pvm_notify(PvmTaskExit, 10, -1, &c1));
	SHOW(pvm_notify(PvmTaskExit, -5, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit, 10, 1, (int[]){0}));
	SHOW(pvm_notify(PvmTaskExit, 10, 1, (int[]){-1}));
	SHOW(pvm_notify(PvmTaskExit, 10, 1, &host));
	SHOW(pvm_notify(PvmTaskExit, 10, 2, (int[]){c1, 0}));
	SHOW(pvm_notify(PvmHostDelete, 10, 0, &host));
	SHOW(pvm_notify(PvmRouteDelete, 10, 0, &c1));
	SHOW(pvm_notify(PvmRouteDelete, 10, 1, (int[]){0}));
	collect(10, 300, "after bad args");

	SECTION("PvmTaskExit on a task that exits (pvm_exit) after ~300 ms");
	c1 = spawn1("sleep", "300");
	SHOW(pvm_notify(PvmTaskExit, 11, 1, &c1));
	collect(11, 2000, "exit");
	NOTE("child tid was 0x%x, my host (pvmd) tid 0x%x", c1, host);

	SECTION("PvmTaskExit on exit() without pvm_exit, and on SIGSEGV");
	c1 = spawn1("noexit", "200");
	c2 = spawn1("segv", "200");
	SHOW(pvm_notify(PvmTaskExit, 12, 2, (int[]){c1, c2}));
	collect(12, 2000, "noexit/segv");
	NOTE("children were 0x%x (noexit), 0x%x (segv)", c1, c2);

	SECTION("PvmTaskExit on a tid that is already dead / never existed / on no host");
	SHOW(pvm_notify(PvmTaskExit, 13, 1, &c1));
	collect(13, 500, "already dead");
	SHOW(pvm_notify(PvmTaskExit, 14, 1, (int[]){me + 0x100}));
	collect(14, 500, "never existed");
	SHOW(pvm_notify(PvmTaskExit, 15, 1, (int[]){0x7c0001}));
	collect(15, 500, "nonexistent host");

	SECTION("same task registered twice, and on two tags");
	c1 = spawn1("sleep", "300");
	SHOW(pvm_notify(PvmTaskExit, 16, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit, 16, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit, 17, 1, &c1));
	collect(16, 1500, "dup tag16");
	collect(17, 500, "dup tag17");

	SECTION("cancellation with PvmNotifyCancel");
	c1 = spawn1("sleep", "800");
	SHOW(pvm_notify(PvmTaskExit, 18, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit | PvmNotifyCancel, 18, 1, &c1));
	collect(18, 300, "right after cancel");
	collect(18, 1500, "after the task exited");
	NOTE("cancel with a different tag than registered:");
	c1 = spawn1("sleep", "800");
	SHOW(pvm_notify(PvmTaskExit, 19, 1, &c1));
	SHOW(pvm_notify(PvmTaskExit | PvmNotifyCancel, 20, 1, &c1));
	collect(19, 1500, "tag19 after exit");
	collect(20, 100, "tag20");
	NOTE("cancel of something never registered:");
	SHOW(pvm_notify(PvmTaskExit | PvmNotifyCancel, 21, 1, &me));
	SHOW(pvm_notify(PvmHostDelete | PvmNotifyCancel, 21, 1, &host));
	SHOW(pvm_notify(PvmHostAdd | PvmNotifyCancel, 21, 0, NULL));
	collect(21, 300, "cancel unregistered");

	SECTION("PvmHostDelete / PvmHostAdd");
	SHOW(pvm_notify(PvmHostDelete, 22, 1, &host));
	SHOW(pvm_notify(PvmHostDelete, 23, 1, (int[]){0x7c0000}));
	SHOW(pvm_notify(PvmHostDelete, 24, 1, &me));	/* a task tid, not a host tid */
	collect(23, 500, "HostDelete on nonexistent host");
	collect(24, 300, "HostDelete on a task tid");
	SHOW(pvm_notify(PvmHostAdd, 25, 1, NULL));
	SHOW(pvm_notify(PvmHostAdd, 26, -1, NULL));
	SHOW(pvm_notify(PvmHostAdd, 27, 0, NULL));
	SHOW(pvm_notify(PvmHostAdd | PvmNotifyCancel, 25, 0, NULL));
	{ int nh = 0; int infos[2];
	char *hosts[] = {"nosuchhost.invalid"};
	SHOW(pvm_addhosts(hosts, 1, infos));
	printf("   infos[0]=%d %s\n", infos[0], pvmname(infos[0]));
	SHOW(pvm_addhosts(hosts, 0, infos));
	SHOW(pvm_addhosts(hosts, -1, infos));
	SHOW(pvm_delhosts(hosts, 1, infos));
	printf("   infos[0]=%d %s\n", infos[0], pvmname(infos[0])); }
	collect(25, 300, "HostAdd");
	collect(26, 100, "HostAdd");
	collect(22, 100, "HostDelete own host (not deleted)");

	SECTION("PvmRouteAdd / PvmRouteDelete");
	SHOW(pvm_notify(PvmRouteAdd, 30, -1, NULL));
	c1 = spawn1("echo", "0");
	SHOW(pvm_setopt(PvmRoute, PvmRouteDirect));
	pvm_initsend(PvmDataDefault); pvm_send(c1, 1);
	pvm_recv(c1, 1);
	collect(30, 500, "RouteAdd");
	SHOW(pvm_notify(PvmRouteDelete, 31, 1, &c1));
	pvm_initsend(PvmDataDefault); pvm_send(c1, 99);
	collect(31, 1000, "RouteDelete");
	SHOW(pvm_setopt(PvmRoute, PvmDontRoute));
	SHOW(pvm_notify(PvmRouteAdd | PvmNotifyCancel, 30, 0, NULL));

	SECTION("task asks notify on itself then pvm_exit (does anyone get it?)");
	c1 = spawn1("exitnotify", "0");
	collect(77, 1000, "exitnotify (we are not the requester)");

	SECTION("notify about myself, then pvm_exit and re-enrol: is the message queued?");
	SHOW(pvm_notify(PvmTaskExit, 40, 1, &me));
	SHOW(pvm_probe(-1, 40));
	pvm_exit();
	return 0;
}
