/* p10_mbox: message mailbox (pvm_putinfo / recvinfo / delinfo / getmboxinfo)
 * and the 3.3-compatible pvm_insert / pvm_lookup / pvm_delete */
#include "probe.h"
#include <time.h>
#include <stdarg.h>
#include <sys/wait.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static int me, parent;

static int putint(const char *name, int v, int flags)
{
	int b = pvm_mkbuf(PvmDataDefault), o = pvm_setsbuf(b), r;
	pvm_pkint(&v, 1, 1);
	pvm_setsbuf(o);
	r = pvm_putinfo((char *)name, b, flags);
	pvm_freebuf(b);
	return r;
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char line[256]; va_list ap;
	va_start(ap, fmt); vsnprintf(line, sizeof line, fmt, ap); va_end(ap);
	pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(parent, 1);
}

/* child: execute commands "put:NAME:FLAGS", "del:NAME:IDX", "get:NAME:IDX:FLAGS",
 * "sleep:MS", "wait" */
static int child(int argc, char **argv)
{
	int i, r;
	me = pvm_mytid(); parent = pvm_parent();
	for (i = 2; i < argc; i++) {
		char *c = argv[i], name[64]; int a = 0, b = 0;
		if (!strncmp(c, "put:", 4)) {
			sscanf(c + 4, "%63[^:]:%d", name, &a);
			pvm_errno = SENTINEL;
			r = putint(name, me, a);
			report("child 0x%x: putinfo(\"%s\", flags=%d) = %d %s errno=%s", me, name, a, r, r < 0 ? pvmname(r) : "", pvmname(pvm_errno));
		} else if (!strncmp(c, "del:", 4)) {
			sscanf(c + 4, "%63[^:]:%d", name, &a);
			pvm_errno = SENTINEL;
			r = pvm_delinfo(name, a, 0);
			report("child 0x%x: delinfo(\"%s\", %d, 0) = %d %s errno=%s", me, name, a, r, r < 0 ? pvmname(r) : "", pvmname(pvm_errno));
		} else if (!strncmp(c, "get:", 4)) {
			int v = -1;
			sscanf(c + 4, "%63[^:]:%d:%d", name, &a, &b);
			pvm_errno = SENTINEL;
			r = pvm_recvinfo(name, a, b);
			if (r > 0) pvm_upkint(&v, 1, 1);
			report("child 0x%x: recvinfo(\"%s\", %d, %d) = %d %s errno=%s value=0x%x", me, name, a, b, r, r < 0 ? pvmname(r) : "", pvmname(pvm_errno), v);
		} else if (!strncmp(c, "sleep:", 6)) {
			usleep(atoi(c + 6) * 1000);
		} else if (!strcmp(c, "wait")) {
			pvm_recv(parent, 99);
		}
	}
	report("child 0x%x: done", me);
	pvm_exit();
	return 0;
}

static int run_child(const char *a1, const char *a2, const char *a3, int nreports)
{
	int t = 0; char s[256];
	pvm_spawn(self_path(), (char *[]){"-child", (char *)a1, (char *)a2, (char *)a3, NULL}, 0, NULL, 1, &t);
	while (nreports-- > 0) {
		if (pvm_trecv(t, 1, &(struct timeval){5, 0}) <= 0) { printf("   (child report missing)\n"); break; }
		pvm_upkstr(s); printf("   %s\n", s);
	}
	return t;
}

static void getint(const char *name, int idx, int flags)
{
	int r, v = -1;
	char lbl[128];
	pvm_errno = SENTINEL;
	probe_capture_begin();
	r = pvm_recvinfo((char *)name, idx, flags);
	const char *e = probe_capture_end();
	if (r > 0) pvm_upkint(&v, 1, 1);
	snprintf(lbl, sizeof lbl, "pvm_recvinfo(\"%s\", %d, %d)", name, idx, flags);
	printf("%s = %d %s | errno=%d %s | value=0x%x", lbl, r, r <= 0 ? pvmname(r) : "", pvm_errno, pvmname(pvm_errno), v);
	probe_print_stderr(e);
}

static void dumpmbox(const char *pat)
{
	int n = -1, i, j, r;
	struct pvmmboxinfo *mi = NULL;
	r = SHOW(pvm_getmboxinfo((char *)pat, &n, &mi));
	if (r < 0) return;
	printf("   %d classes:\n", n);
	for (i = 0; i < n; i++) {
		printf("     name=\"%s\" nentries=%d:", mi[i].mi_name, mi[i].mi_nentries);
		for (j = 0; j < mi[i].mi_nentries; j++)
			printf(" [idx=%d owner=0x%x flags=%d]", mi[i].mi_indices[j], mi[i].mi_owners[j], mi[i].mi_flags[j]);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	int r, b, data, i;
	double t0;
	probe_init();
	if (argc > 1 && !strcmp(argv[1], "-child")) return child(argc, argv);
	if (argc > 2 && !strcmp(argv[1], "-badmid")) {
		int mid = atoi(argv[2]);
		alarm(5);
		pvm_mytid();
		if (mid == 9999) SHOW(pvm_putinfo("bad", 9999, 0));
		else SHOW(pvm_putinfo("bad0", 0, 0));
		if (mid == 0) { getint("bad0", 0, 0); }
		pvm_exit();
		return 0;
	}
	me = pvm_mytid();
	NOTE("my tid 0x%x", me);

	SECTION("initial mailbox contents");
	dumpmbox("*");

	SECTION("PvmMboxDefault: put twice by the owner, then by another task");
	SHOW(putint("A", 1, PvmMboxDefault));
	SHOW(putint("A", 2, PvmMboxDefault));
	getint("A", 0, 0);
	run_child("put:A:0", "put:A:4", "del:A:0", 4);
	getint("A", 0, 0);

	SECTION("PvmMboxMultiInstance");
	SHOW(putint("M", 10, PvmMboxMultiInstance));
	SHOW(putint("M", 11, PvmMboxMultiInstance));
	SHOW(putint("M", 12, PvmMboxMultiInstance));
	SHOW(putint("M", 13, PvmMboxDefault));	/* default put on a multi-instance class */
	run_child("put:M:2", "put:M:0", "wait", 0);
	sleep(1);
	dumpmbox("M");
	getint("M", 0, 0);
	getint("M", 1, 0);
	getint("M", 3, 0);
	getint("M", 9, 0);
	SHOW(pvm_delinfo("M", 1, 0));
	getint("M", 1, 0);
	getint("M", 1, PvmMboxFirstAvail);
	getint("M", 2, PvmMboxReadAndDelete);
	getint("M", 2, 0);
	SHOW(putint("M", 14, PvmMboxMultiInstance));	/* reuses lowest free index? */
	dumpmbox("M");

	SECTION("PvmMboxDirectIndex");
	SHOW(putint("D", 50, PvmMboxDirectIndex(5)));
	SHOW(putint("D", 51, PvmMboxDirectIndex(5) | PvmMboxMultiInstance));
	getint("D", 5, 0);
	getint("D", 6, 0);

	SECTION("PvmMboxPersistent: entries of a task that exits");
	run_child("put:P:1", "put:NP:0", "put:PO:5", 4);
	sleep(1);
	getint("P", 0, 0);
	getint("NP", 0, 0);
	getint("PO", 0, 0);
	dumpmbox("*P*");
	NOTE("re-put P by me (owner has exited):");
	SHOW(putint("P", 3, PvmMboxDefault));
	SHOW(pvm_delinfo("P", 0, 0));
	SHOW(putint("P", 3, PvmMboxDefault));
	getint("P", 0, 0);

	SECTION("PvmMboxOverWritable");
	SHOW(putint("O", 20, PvmMboxOverWritable));
	run_child("put:O:0", "get:O:0:0", "wait", 2);
	NOTE("after another task overwrote it, who owns O?");
	dumpmbox("O");
	SHOW(putint("O", 21, PvmMboxDefault));
	SHOW(putint("O2", 22, PvmMboxOverWritable));
	run_child("del:O2:0", "put:O:0", NULL, 3);

	SECTION("pvm_delinfo by non-owner; bad arguments");
	SHOW(putint("X", 30, PvmMboxDefault));
	run_child("del:X:0", "get:X:0:16", NULL, 3);	/* 16 = ReadAndDelete */
	SHOW(pvm_delinfo("X", 0, 0));
	SHOW(pvm_delinfo("X", 0, 0));
	SHOW(pvm_delinfo("nosuch", 0, 0));
	SHOW(pvm_delinfo("X", -1, 0));
	SHOW(pvm_delinfo("", 0, 0));
	SHOW(pvm_delinfo(NULL, 0, 0));

	SECTION("pvm_recvinfo missing / bad");
	getint("nosuch", 0, 0);
	getint("A", -1, 0);
	getint("A", 1, 0);
	getint("", 0, 0);
	SHOW(pvm_recvinfo(NULL, 0, 0));
	NOTE("recvinfo result is the active receive buffer and is freed by the next recv:");
	b = SHOW(pvm_recvinfo("A", 0, 0));
	SHOW(pvm_getrbuf());
	pvm_initsend(PvmDataDefault); pvm_send(me, 5); pvm_recv(me, 5);
	SHOW(pvm_bufinfo(b, NULL, NULL, NULL));

	SECTION("pvm_putinfo bad arguments");
	SHOW(pvm_putinfo("", pvm_mkbuf(0), 0));
	SHOW(pvm_putinfo(NULL, pvm_mkbuf(0), 0));
	SHOW(pvm_putinfo("badflags", pvm_mkbuf(0), 0x40000000));
	NOTE("invalid message ids are tried in a separate process with a 5 s alarm (they may hang):");
	for (i = 0; i < 2; i++) {
		pid_t p = fork();
		if (p == 0) {
			execl(self_path(), self_path(), "-badmid", i ? "0" : "9999", (char *)NULL);
			_exit(127);
		}
		int st; waitpid(p, &st, 0);
		if (WIFSIGNALED(st)) printf("   -> helper killed by signal %d (%s)\n", WTERMSIG(st), strsignal(WTERMSIG(st)));
		else printf("   -> helper exited %d\n", WEXITSTATUS(st));
	}

	SECTION("PvmMboxWaitForInfo: blocking recvinfo until a child puts the entry");
	run_child("sleep:700", "put:W:0", "wait", 0);
	t0 = now();
	getint("W", 0, PvmMboxWaitForInfo);
	printf("   waited %.3f s\n", now() - t0);
	sleep(1);
	{ char s[256]; while (pvm_trecv(-1, 1, &(struct timeval){0, 200000}) > 0) { pvm_upkstr(s); printf("   %s\n", s); } }

	SECTION("pvm_getmboxinfo patterns");
	dumpmbox("*");
	dumpmbox("");
	dumpmbox(NULL);
	dumpmbox("A");
	dumpmbox("[AM]");
	dumpmbox("M*");
	dumpmbox("nomatch*");

	SECTION("3.3 compat: pvm_insert / pvm_lookup / pvm_delete");
	SHOW(pvm_insert("K", -1, 100));
	SHOW(pvm_insert("K", -1, 101));
	SHOW(pvm_insert("K", 0, 102));
	SHOW(pvm_insert("K", 5, 105));
	SHOW(pvm_insert("K", -2, 1));
	data = -1; SHOW(pvm_lookup("K", 0, &data)); printf("   data=%d\n", data);
	data = -1; SHOW(pvm_lookup("K", -1, &data)); printf("   data=%d\n", data);
	data = -1; SHOW(pvm_lookup("K", 3, &data)); printf("   data=%d\n", data);
	data = -1; SHOW(pvm_lookup("K", 5, &data)); printf("   data=%d\n", data);
	data = -1; SHOW(pvm_lookup("nosuch", -1, &data)); printf("   data=%d\n", data);
	SHOW(pvm_delete("K", 0));
	SHOW(pvm_delete("K", 0));
	SHOW(pvm_delete("K", -1));
	data = -1; SHOW(pvm_lookup("K", -1, &data)); printf("   data=%d\n", data);
	dumpmbox("K");

	for (i = 0; i < 3; i++) { pvm_initsend(PvmDataDefault); }
	{ int n, j; struct pvmtaskinfo *ti; pvm_tasks(0, &n, &ti);
	  for (j = 0; j < n; j++) if (ti[j].ti_tid != me) { pvm_initsend(PvmDataDefault); pvm_send(ti[j].ti_tid, 99); } }
	pvm_exit();
	return 0;
}
