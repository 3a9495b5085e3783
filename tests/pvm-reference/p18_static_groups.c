/* p18_static_groups: a static (frozen) group after a member leaves or exits.
 *
 * Group "g": A (this task, inst 0) and B (inst 1) freeze it with size 2.
 * O1, a non-member, asks about it before B leaves; O2 only after.  Then B
 * leaves, and everyone asks gsize / gettid / getinst, A broadcasts (does
 * the leaver still get it?), O2 and B try to join, A calls barrier.
 * Group "h": A2 (a second task of this program) and X freeze it; X exits
 * without leaving; A2 asks the same questions.
 * Every line names the task that made the call.  Barriers run last, under
 * an alarm (they may block for ever). */
#include "probe.h"
#include <signal.h>
#include <stdarg.h>

static int me, master;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char line[512]; va_list ap; int sb;
	va_start(ap, fmt); vsnprintf(line, sizeof line, fmt, ap); va_end(ap);
	if (me == master) { printf("   %s\n", line); return; }
	sb = pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
	pvm_pkstr(line); pvm_send(master, 1);
	pvm_freebuf(pvm_setsbuf(sb));
}

/* R(who, call): evaluate, report "who: call = rv Name | errno". */
#define R(who, expr) ({ int _r; pvm_errno = SENTINEL; _r = (expr); \
	report("%s: %s = %d %s | errno=%d %s", who, #expr, _r, _r < 0 ? pvmname(_r) : "", \
	       pvm_errno, pvmname(pvm_errno)); _r; })

static void collect_all(double secs)
{
	char s[512];
	struct timeval tv = {(long)secs, (long)((secs - (long)secs) * 1e6)};
	while (pvm_trecv(-1, 1, &tv) > 0) { pvm_upkstr(s); printf("   %s\n", s); }
}

/* wait for a go message (tag 2) from whoever; returns its int */
static int wait_go(void) { int v = 0; pvm_recv(-1, 2); pvm_upkint(&v, 1, 1); return v; }
static void go(int tid, int v) { pvm_initsend(PvmDataDefault); pvm_pkint(&v, 1, 1); pvm_send(tid, 2); }

/* report one call's result under a label */
static void RL(const char *who, const char *label, int r)
{
	report("%s: %s = %d %s | errno=%d %s", who, label, r, r < 0 ? pvmname(r) : "",
	       pvm_errno, pvmname(pvm_errno));
}

static void views(const char *who, const char *g, int a, int b)
{
	char l[64];
	int r;
#define V(call, fmt, ...) (snprintf(l, sizeof l, fmt, __VA_ARGS__), pvm_errno = SENTINEL, r = (call), RL(who, l, r))
	V(pvm_gsize((char *)g), "gsize(%s)", g);
	V(pvm_gettid((char *)g, 0), "gettid(%s,0)", g);
	V(pvm_gettid((char *)g, 1), "gettid(%s,1)", g);
	V(pvm_gettid((char *)g, 2), "gettid(%s,2)", g);
	V(pvm_getinst((char *)g, a), "getinst(%s,t%x)", g, (unsigned)a);
	V(pvm_getinst((char *)g, b), "getinst(%s,t%x)", g, (unsigned)b);
	V(pvm_getinst((char *)g, me), "getinst(%s,me=t%x)", g, (unsigned)me);
#undef V
}

static int A, B, X;

static void on_alarm(int sig)
{
	report("%s: still blocked after 3 s (alarm)", me == master ? "A" : "A2");
	if (me != master) { pvm_exit(); _exit(0); }
	collect_all(1.0);
	printf("(A ends here, blocked)\n");
	pvm_exit();
	_exit(0);
}

/* ---------------------------------------------------------- roles */

static int role_B(void)
{
	int v, b;
	R("B", pvm_joingroup("g"));
	go(master, 0);
	R("B", pvm_freezegroup("g", 2));
	wait_go();                       /* O1 has asked */
	R("B", pvm_lvgroup("g"));
	views("B", "g", A, me);
	go(master, 0);
	wait_go();                       /* A has broadcast */
	b = pvm_trecv(A, 10, &(struct timeval){1, 0});
	v = -1; if (b > 0) pvm_upkint(&v, 1, 1);
	report("B: after leaving, A's bcast(g,10) received? %s (v=%d)", b > 0 ? "yes" : "no", v);
	R("B", pvm_joingroup("g"));
	views("B", "g", A, me);
	go(master, 0);
	wait_go();                       /* A left: g deleted */
	views("B", "g", A, me);
	go(master, 0);
	wait_go();                       /* A joined again: g dynamic */
	views("B", "g", A, me);
	go(master, 0);
	wait_go();
	pvm_exit();
	return 0;
}

static int role_O1(void)
{
	views("O1", "g", A, B);          /* before the leave */
	go(master, 0);
	wait_go();                       /* B has left */
	views("O1", "g", A, B);
	go(master, 0);
	wait_go();                       /* A left: g deleted */
	views("O1", "g", A, B);
	go(master, 0);
	wait_go();                       /* A joined again: g dynamic */
	views("O1", "g", A, B);
	go(master, 0);
	wait_go();
	pvm_exit();
	return 0;
}

static int role_O2(void)
{
	views("O2", "g", A, B);          /* first question after the leave */
	R("O2", pvm_joingroup("g"));
	views("O2", "g", A, B);
	go(master, 0);
	wait_go();                       /* A left: g deleted */
	views("O2", "g", A, B);
	go(master, 0);
	wait_go();                       /* A joined again: g dynamic */
	views("O2", "g", A, B);
	go(master, 0);
	wait_go();
	pvm_exit();
	return 0;
}

static int role_X(void)
{
	R("X", pvm_joingroup("h"));
	go(pvm_parent(), 0);
	R("X", pvm_freezegroup("h", 2));
	wait_go();
	report("X: exits without leaving h");
	pvm_exit();
	return 0;
}

static int role_A2(void)
{
	int kid, b, v, inst;
	signal(SIGALRM, on_alarm);
	R("A2", pvm_joingroup("h"));
	pvm_spawn(self_path(), (char *[]){"X", NULL}, PvmTaskDefault, "", 1, &kid);
	X = kid;
	wait_go();
	R("A2", pvm_freezegroup("h", 2));
	views("A2", "h", me, X);
	go(X, 0);
	sleep(2);                        /* X is gone, pvmgs told */
	R("A2", pvm_pstat(X));
	views("A2", "h", me, X);
	pvm_initsend(PvmDataDefault); v = 7; pvm_pkint(&v, 1, 1);
	R("A2", pvm_bcast("h", 11));
	b = pvm_trecv(-1, 11, &(struct timeval){0, 300000});
	report("A2: its own bcast back? %s", b > 0 ? "yes" : "no");
	/* a third task tries to join h */
	{
		char ms[16];
		snprintf(ms, sizeof ms, "%x", (unsigned)master);
		pvm_spawn(self_path(), (char *[]){"J", ms, ms, NULL}, PvmTaskDefault, "", 1, &kid);
	}
	wait_go();
	alarm(3);
	R("A2", pvm_barrier("h", -1));
	R("A2", pvm_barrier("h", 2));
	alarm(0);
	views("A2", "h", me, X);
	R("A2", pvm_lvgroup("h"));
	R("A2", pvm_gsize("h"));
	inst = R("A2", pvm_joingroup("h"));
	(void)inst;
	R("A2", pvm_lvgroup("h"));
	pvm_exit();
	return 0;
}

static int role_J(void)
{
	R("J", pvm_gsize("h"));
	R("J", pvm_gettid("h", 1));
	R("J", pvm_joingroup("h"));
	R("J", pvm_gsize("h"));
	go(pvm_parent(), 0);
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int kid, v, b;
	probe_init();
	me = pvm_mytid();
	master = pvm_parent() > 0 ? pvm_parent() : me;
	if (argc > 1) {
		/* role tasks get A's and B's tids as argv[2], argv[3] */
		if (argc > 3) { A = (int)strtol(argv[2], NULL, 16); B = (int)strtol(argv[3], NULL, 16); }
		if (!strcmp(argv[1], "B")) return role_B();
		if (!strcmp(argv[1], "O1")) return role_O1();
		if (!strcmp(argv[1], "O2")) return role_O2();
		if (!strcmp(argv[1], "A2")) { master = pvm_parent(); return role_A2(); }
		if (!strcmp(argv[1], "X")) { master = pvm_parent(); return role_X(); }
		if (!strcmp(argv[1], "J")) { master = A; return role_J(); }
		return 1;
	}
	A = me;
	printf("A = t%x\n", (unsigned)A);
	SECTION("g: A and B freeze it (size 2), O1 asks, B leaves");
	R("A", pvm_joingroup("g"));
	{
		char as[16], bs[16];
		snprintf(as, sizeof as, "%x", (unsigned)A);
		pvm_spawn(self_path(), (char *[]){"B", as, "0", NULL}, PvmTaskDefault, "", 1, &kid);
		B = kid;
		printf("B = t%x\n", (unsigned)B);
		wait_go();                   /* B joined */
		R("A", pvm_freezegroup("g", 2));
		collect_all(0.5);
		snprintf(bs, sizeof bs, "%x", (unsigned)B);
		pvm_spawn(self_path(), (char *[]){"O1", as, bs, NULL}, PvmTaskDefault, "", 1, &kid);
		int O1 = kid;
		printf("O1 = t%x\n", (unsigned)O1);
		wait_go();                   /* O1 asked */
		collect_all(0.3);
		go(B, 0);                    /* B leaves */
		wait_go();
		collect_all(0.3);
		SECTION("g after B left: A, O1 (asked before), O2 (first asks now)");
		views("A", "g", A, B);
		R("A", pvm_getinst("g", O1));
		go(O1, 0);
		wait_go();
		collect_all(0.3);
		pvm_spawn(self_path(), (char *[]){"O2", as, bs, NULL}, PvmTaskDefault, "", 1, &kid);
		int O2 = kid;
		printf("O2 = t%x\n", (unsigned)O2);
		wait_go();
		collect_all(0.3);
		SECTION("A broadcasts on g; B (the leaver) listens, then tries to join again");
		pvm_initsend(PvmDataDefault); v = 4242; pvm_pkint(&v, 1, 1);
		R("A", pvm_bcast("g", 10));
		b = pvm_trecv(-1, 10, &(struct timeval){0, 300000});
		report("A: its own bcast back? %s", b > 0 ? "yes" : "no");
		go(B, 0);
		wait_go();
		collect_all(0.5);
		views("A", "g", A, B);
		SECTION("h: A2 and X freeze it (size 2), X exits without leaving; J asks and joins");
		pvm_spawn(self_path(), (char *[]){"A2", NULL}, PvmTaskDefault, "", 1, &kid);
		printf("A2 = t%x\n", (unsigned)kid);
		collect_all(6.0);
		SECTION("g: A's barriers (they may block), then A leaves (g deleted), joins again");
		signal(SIGALRM, on_alarm);
		alarm(3);
		R("A", pvm_barrier("g", -1));
		R("A", pvm_barrier("g", 2));
		alarm(0);
		views("A", "g", A, B);
		R("A", pvm_lvgroup("g"));
		views("A", "g", A, B);
		go(B, 0); wait_go(); go(O1, 0); wait_go(); go(O2, 0); wait_go();
		collect_all(0.5);
		SECTION("g: A joins again (a new dynamic g: A alone)");
		R("A", pvm_joingroup("g"));
		views("A", "g", A, B);
		go(B, 0); wait_go(); go(O1, 0); wait_go(); go(O2, 0); wait_go();
		collect_all(0.5);
		go(B, 0); go(O1, 0); go(O2, 0);
		R("A", pvm_lvgroup("g"));
		collect_all(0.5);
	}
	pvm_exit();
	return 0;
}
