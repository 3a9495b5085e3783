/* p05_spawn: pvm_spawn edge cases: what is returned and what ends up in tids[] */
#include "probe.h"

static int child(char **argv)
{
	char line[256];
	int p = pvm_parent();
	snprintf(line, sizeof line, "child(%s): pvm_parent()=%d (0x%x) errno=%d", argv[2], p, p, pvm_errno);
	if (p > 0) { pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(p, 1); }
	else fprintf(stderr, "%s\n", line);
	pvm_exit();
	return 0;
}

static int tids[8];
static void show_tids(int n)
{
	int i;
	printf("   tids[]:");
	for (i = 0; i < n; i++)
		printf(" %d(0x%x%s%s)", tids[i], (unsigned)tids[i], tids[i] < 0 ? " " : "", tids[i] < 0 ? pvmname(tids[i]) : "");
	printf("\n");
}
#define FILL() do { int _i; for (_i = 0; _i < 8; _i++) tids[_i] = 0x5555; } while (0)

int main(int argc, char **argv)
{
	int me, r, nhost, narch;
	struct pvmhostinfo *hi;
	char *self;
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	me = pvm_mytid();
	self = self_path();
	pvm_config(&nhost, &narch, &hi);

	SECTION("nonexistent program");
	FILL(); SHOW(pvm_spawn("no_such_program_xyz", NULL, 0, NULL, 3, tids)); show_tids(4);
	FILL(); SHOW(pvm_spawn("/nonexistent/dir/prog", NULL, 0, NULL, 2, tids)); show_tids(3);
	FILL(); SHOW(pvm_spawn("/etc/passwd", NULL, 0, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn("/tmp", NULL, 0, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn("", NULL, 0, NULL, 1, tids)); show_tids(2);

	SECTION("ntask 0 / negative");
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "x", NULL}, 0, NULL, 0, tids)); show_tids(1);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "x", NULL}, 0, NULL, -1, tids)); show_tids(1);

	SECTION("flags / where");
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "f1000", NULL}, 0x1000, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "f-1", NULL}, -1, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "h", NULL}, PvmTaskHost, "nosuchhost.invalid", 2, tids)); show_tids(3);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "h", NULL}, PvmTaskHost, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "h", NULL}, PvmTaskHost, "", 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "hostok", NULL}, PvmTaskHost, hi[0].hi_name, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "hostdot", NULL}, PvmTaskHost, ".", 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "a", NULL}, PvmTaskArch, "NOSUCHARCH", 2, tids)); show_tids(3);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "archok", NULL}, PvmTaskArch, "LINUX64", 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "a", NULL}, PvmTaskArch, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "compl", NULL}, PvmTaskHost | PvmHostCompl, hi[0].hi_name, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "whereignored", NULL}, 0, "nosuchhost.invalid", 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "mpp", NULL}, PvmMppFront, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "nospawnparent", NULL}, PvmNoSpawnParent, NULL, 1, tids)); show_tids(2);

	NOTE("PvmTaskDebug: the pvmd execs $PVM_ROOT/lib/debugger, which Debian does not ship");
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "debug", NULL}, PvmTaskDebug, NULL, 1, tids)); show_tids(2);
	usleep(500000);
	SHOW(pvm_pstat(tids[0]));
	NOTE("PvmTaskTrace alone:");
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "trace", NULL}, PvmTaskTrace, NULL, 1, tids)); show_tids(2);

	SECTION("other");
	FILL(); SHOW(pvm_spawn(self, (char *[]){"-child", "tidsnull", NULL}, 0, NULL, 2, NULL));
	FILL(); SHOW(pvm_spawn("/bin/sleep", (char *[]){"3", NULL}, 0, NULL, 1, tids)); show_tids(2);
	{ int nt, i; struct pvmtaskinfo *ti;
	SHOW(pvm_pstat(tids[0]));
	pvm_tasks(0, &nt, &ti);
	for (i = 0; i < nt; i++)
		printf("   task: tid=0x%x ptid=0x%x flag=0x%x name='%s'\n", ti[i].ti_tid, ti[i].ti_ptid, ti[i].ti_flag, ti[i].ti_a_out);
	}
	FILL(); SHOW(pvm_spawn("/bin/false", NULL, 0, NULL, 1, tids)); show_tids(2);
	FILL(); SHOW(pvm_spawn("sh", (char *[]){"-c", "echo hello from sh; exit 3", NULL}, 0, NULL, 1, tids)); show_tids(2);

	sleep(2);
	NOTE("reports from spawned children:");
	{ char buf[256]; while (pvm_trecv(-1, 1, &(struct timeval){1, 0}) > 0) { pvm_upkstr(buf); printf("   %s\n", buf); } }
	pvm_exit();
	return 0;
}
