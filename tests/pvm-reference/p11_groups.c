/* p11_groups: dynamic groups (libgpvm3 + pvmgs) */
#include "probe.h"
#include <stdarg.h>

#define NCH 3
static int me, parent;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char line[512]; va_list ap; int sb;
	va_start(ap, fmt); vsnprintf(line, sizeof line, fmt, ap); va_end(ap);
	sb = pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
	pvm_pkstr(line); pvm_send(parent, 1);
	pvm_freebuf(pvm_setsbuf(sb));
}

static void collect(int n, int ms)
{
	char s[512];
	while (n-- > 0) {
		if (pvm_trecv(-1, 1, &(struct timeval){ms / 1000, (ms % 1000) * 1000}) <= 0) { printf("   (report missing)\n"); return; }
		pvm_upkstr(s); printf("   %s\n", s);
	}
}

static void reduce_step(const char *opname, void (*op)(), int root, int inst, int tag)
{
	int iv[2] = {inst + 1, (inst + 1) * -10};
	double dv[2] = {inst + 1.5, -(inst + 1.5)};
	int r1, r2;
	r1 = pvm_reduce(op, iv, 2, PVM_INT, tag, "g", root);
	r2 = pvm_reduce(op, dv, 2, PVM_DOUBLE, tag + 1, "g", root);
	report("inst %d: reduce(%s, root=%d) int rc=%d -> {%d, %d}; double rc=%d -> {%g, %g}",
	       inst, opname, root, r1, iv[0], iv[1], r2, dv[0], dv[1]);
}

/* the collective script run by every member (parent included) */
static void script(int inst)
{
	int v = -1, r, b, len, tag, src;
	/* bcast from inst 0 */
	if (inst == 0) {
		pvm_initsend(PvmDataDefault); v = 4242; pvm_pkint(&v, 1, 1);
		r = pvm_bcast("g", 10);
		report("inst 0: pvm_bcast(\"g\", 10) = %d", r);
	}
	b = pvm_trecv(-1, 10, &(struct timeval){1, 0});
	v = -1;
	if (b > 0) { pvm_bufinfo(b, &len, &tag, &src); pvm_upkint(&v, 1, 1); }
	report("inst %d: bcast message received? %s (v=%d)", inst, b > 0 ? "yes" : "no", v);
	r = pvm_barrier("g", -1);
	report("inst %d: pvm_barrier(\"g\", -1) = %d", inst, r);
	reduce_step("PvmSum", PvmSum, 0, inst, 20);
	reduce_step("PvmMax", PvmMax, 0, inst, 22);
	reduce_step("PvmMin", PvmMin, 0, inst, 24);
	reduce_step("PvmProduct", PvmProduct, 2, inst, 26);
	pvm_barrier("g", -1);
	{ int mine = 100 * (inst + 1), all[8] = {0};
	r = pvm_gather(all, &mine, 1, PVM_INT, 30, "g", 1);
	report("inst %d: gather(root=1) rc=%d -> all = {%d, %d, %d, %d}", inst, r, all[0], all[1], all[2], all[3]); }
	{ int src4[4] = {1000, 1001, 1002, 1003}, got = -1;
	r = pvm_scatter(&got, src4, 1, PVM_INT, 31, "g", 0);
	report("inst %d: scatter(root=0) rc=%d -> got %d", inst, r, got); }
	pvm_barrier("g", -1);
}

static int child(char **argv)
{
	int inst, r;
	me = pvm_mytid(); parent = pvm_parent();
	if (!strcmp(argv[2], "member")) {
		inst = pvm_joingroup("g");
		report("child 0x%x: joingroup(\"g\") = %d", me, inst);
		pvm_barrier("g", NCH + 1);
		script(inst);
		/* mismatch step: inst 1 calls barrier with count 3, inst 2 with 2 */
		if (inst >= 1 && inst <= 3) {
			int cnt = inst == 2 ? 2 : 3;
			alarm(10);
			pvm_recv(parent, 50);		/* order: parent tells inst1, inst2, inst3 */
			r = pvm_barrier("g", cnt);
			report("inst %d: pvm_barrier(\"g\", %d) = %d %s (errno %d)", inst, cnt, r, pvmname(r), pvm_errno);
			alarm(0);
		}
		pvm_recv(parent, 98);		/* leave when told */
		r = pvm_lvgroup("g");
		report("child 0x%x (inst %d): lvgroup = %d", me, inst, r);
		pvm_recv(parent, 99);
	} else if (!strcmp(argv[2], "joiner")) {
		inst = pvm_joingroup("g");
		report("joiner 0x%x: joingroup(\"g\") = %d %s", me, inst, inst < 0 ? pvmname(inst) : "");
		pvm_recv(parent, 99);
	} else if (!strcmp(argv[2], "frozenjoin")) {
		inst = pvm_joingroup("fz");
		report("frozenjoin 0x%x: joingroup(\"fz\") = %d %s", me, inst, inst < 0 ? pvmname(inst) : "");
		pvm_recv(parent, 99);
	}
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int r, tids[NCH], i, t2, inst_of[8];
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	me = pvm_mytid(); parent = me;

	SECTION("errors before any group exists (starts pvmgs)");
	SHOW(pvm_gsize("nogroup"));
	SHOW(pvm_getinst("nogroup", me));
	SHOW(pvm_gettid("nogroup", 0));
	SHOW(pvm_lvgroup("nogroup"));
	SHOW(pvm_barrier("nogroup", 1));
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_bcast("nogroup", 1));
	SHOW(pvm_joingroup(""));
	SHOW(pvm_joingroup(NULL));
	SHOW(pvm_gsize(""));
	SHOW(pvm_lvgroup(""));

	SECTION("join / dup / info");
	SHOW(pvm_joingroup("g"));
	SHOW(pvm_joingroup("g"));
	SHOW(pvm_getinst("g", me));
	SHOW(pvm_getinst("g", me + 0x1000));
	SHOW(pvm_getinst("g", -1));
	SHOW(pvm_gettid("g", 0));
	SHOW(pvm_gettid("g", 1));
	SHOW(pvm_gettid("g", -1));
	SHOW(pvm_gsize("g"));
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_bcast("g", 1));	/* only member is me */
	SHOW(pvm_barrier("g", 1));
	SHOW(pvm_barrier("g", -1));
	SHOW(pvm_joingroup("h"));
	SHOW(pvm_lvgroup("h"));
	SHOW(pvm_lvgroup("h"));
	SHOW(pvm_gsize("h"));
	NOTE("pvmgs task:");
	{ int n; struct pvmtaskinfo *ti; pvm_tasks(0, &n, &ti);
	for (i = 0; i < n; i++) printf("   task tid=0x%x ptid=0x%x name='%s'\n", ti[i].ti_tid, ti[i].ti_ptid, ti[i].ti_a_out); }

	SECTION("collectives with 4 members (me = inst 0, 3 children)");
	r = pvm_spawn(self_path(), (char *[]){"-child", "member", NULL}, 0, NULL, NCH, tids);
	printf("   spawned %d\n", r);
	collect(NCH, 5000);
	SHOW(pvm_barrier("g", NCH + 1));
	SHOW(pvm_gsize("g"));
	for (i = 0; i < 4; i++) { inst_of[i] = pvm_gettid("g", i); printf("   gettid(g,%d) = 0x%x\n", i, inst_of[i]); }
	script(0);
	collect(4 * 8 + 1, 5000);

	SECTION("barrier count mismatch: inst 1 enters with count 3, inst 2 with count 2, inst 3 and me with 3");
	pvm_initsend(PvmDataDefault); pvm_send(inst_of[1], 50);
	usleep(300000);
	pvm_initsend(PvmDataDefault); pvm_send(inst_of[2], 50);
	collect(1, 3000);
	pvm_initsend(PvmDataDefault); pvm_send(inst_of[3], 50);
	usleep(300000);
	SHOW(pvm_barrier("g", 3));
	collect(2, 3000);

	SECTION("leave and instance reuse");
	NOTE("inst 2 leaves (it is not in the barrier)");
	pvm_initsend(PvmDataDefault); pvm_send(inst_of[2], 98);
	collect(1, 3000);
	SHOW(pvm_gsize("g"));
	SHOW(pvm_gettid("g", 2));
	SHOW(pvm_getinst("g", inst_of[2]));
	r = pvm_spawn(self_path(), (char *[]){"-child", "joiner", NULL}, 0, NULL, 1, &t2);
	collect(1, 3000);
	SHOW(pvm_gsize("g"));
	NOTE("I leave (inst 0) and re-join:");
	SHOW(pvm_lvgroup("g"));
	SHOW(pvm_getinst("g", me));
	SHOW(pvm_lvgroup("g"));
	SHOW(pvm_joingroup("g"));
	SHOW(pvm_gsize("g"));

	SECTION("pvm_barrier count 0 (on a scratch group z): poisons the group's barrier");
	SHOW(pvm_joingroup("z"));
	SHOW(pvm_barrier("z", 0));
	SHOW(pvm_barrier("z", 1));
	SHOW(pvm_barrier("z", -1));
	SHOW(pvm_barrier("z", 0));
	SHOW(pvm_lvgroup("z"));
	SHOW(pvm_joingroup("z"));
	SHOW(pvm_barrier("z", 1));

	SECTION("pvm_freezegroup");
	SHOW(pvm_freezegroup("nofz", -1));
	SHOW(pvm_joingroup("fz"));
	SHOW(pvm_freezegroup("fz", -1));	/* 1 member, size = 1: completes */
	SHOW(pvm_freezegroup("fz", -1));
	SHOW(pvm_gsize("fz"));
	r = pvm_spawn(self_path(), (char *[]){"-child", "frozenjoin", NULL}, 0, NULL, 1, &t2);
	collect(1, 3000);
	SHOW(pvm_barrier("fz", -1));
	SHOW(pvm_lvgroup("fz"));
	SHOW(pvm_gsize("fz"));
	SHOW(pvm_joingroup("fz"));
	SHOW(pvm_getinst("fz", me));

	/* let everyone go */
	{ int n; struct pvmtaskinfo *ti; pvm_tasks(0, &n, &ti);
	for (i = 0; i < n; i++) if (ti[i].ti_ptid == me) {
		pvm_initsend(PvmDataDefault); pvm_send(ti[i].ti_tid, 98);
		pvm_initsend(PvmDataDefault); pvm_send(ti[i].ti_tid, 99); } }
	sleep(1);
	{ char s[512]; while (pvm_trecv(-1, 1, &(struct timeval){0, 300000}) > 0) { pvm_upkstr(s); printf("   %s\n", s); } }
	pvm_exit();
	return 0;
}
