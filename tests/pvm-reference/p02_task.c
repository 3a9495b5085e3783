/* p02_task: identity and task-information calls:
 * mytid/parent/siblings (shell task and spawned tasks), tidtohost, config,
 * tasks, pstat, mstat, archcode, kill. */
#include "probe.h"

static int child(int argc, char **argv)
{
	int *sib = NULL, n, i, me = pvm_mytid();
	int parent = pvm_parent();
	n = pvm_siblings(&sib);
	/* report to parent as text */
	char line[512]; int k = 0;
	k += snprintf(line + k, sizeof line - k, "child %s: mytid=0x%x parent=0x%x siblings=%d [", argv[2], me, parent, n);
	for (i = 0; i < n && i < 8; i++) k += snprintf(line + k, sizeof line - k, "%s0x%x", i ? " " : "", sib[i]);
	k += snprintf(line + k, sizeof line - k, "] parent()-again=%d", pvm_parent());
	pvm_initsend(PvmDataDefault);
	pvm_pkstr(line);
	pvm_send(parent, 1);
	if (!strcmp(argv[2], "killself")) {
		int r = pvm_kill(me);
		/* if we get here, kill of self returned */
		snprintf(line, sizeof line, "child killself: pvm_kill(self) returned %d errno=%d", r, pvm_errno);
		pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(parent, 1);
		sleep(2);
		snprintf(line, sizeof line, "child killself: still alive 2s after pvm_kill(self)");
		pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(parent, 1);
	} else if (!strcmp(argv[2], "wait")) {
		pvm_recv(parent, 99);	/* until told to exit */
	}
	pvm_exit();
	return 0;
}

static void collect(int n)
{
	char buf[512];
	while (n-- > 0) {
		int b = pvm_trecv(-1, 1, &(struct timeval){5, 0});
		if (b <= 0) { printf("   (no report: %d)\n", b); continue; }
		pvm_upkstr(buf);
		printf("   %s\n", buf);
	}
}

int main(int argc, char **argv)
{
	int me, tids[8], *sib, nhost, narch, ntask, i, r;
	struct pvmhostinfo *hi;
	struct pvmtaskinfo *ti;
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argc, argv);

	SECTION("identity of a task started from the shell");
	me = SHOWX(pvm_mytid());
	SHOWX(pvm_mytid());
	SHOWX(pvm_parent());
	sib = (int *)0x1;
	r = SHOW(pvm_siblings(&sib));
	if (r > 0) printf("   sib[0]=0x%x (== mytid? %s)\n", sib[0], sib[0] == me ? "yes" : "no");

	SECTION("pvm_config / pvm_tidtohost / pvm_mstat / pvm_archcode");
	r = SHOW(pvm_config(&nhost, &narch, &hi));
	if (r == 0)
		for (i = 0; i < nhost; i++)
			printf("   host[%d]: tid=0x%x name=%s arch=%s speed=%d dsig=0x%x\n", i,
			       hi[i].hi_tid, hi[i].hi_name, hi[i].hi_arch, hi[i].hi_speed, hi[i].hi_dsig);
	printf("   nhost=%d narch=%d\n", nhost, narch);
	int host = SHOWX(pvm_tidtohost(me));
	SHOWX(pvm_tidtohost(host));
	SHOWX(pvm_tidtohost(0));
	SHOWX(pvm_tidtohost(-1));
	SHOWX(pvm_tidtohost(0x7c0001));	/* a host number that doesn't exist */
	SHOW(pvm_mstat(hi[0].hi_name));
	SHOW(pvm_mstat("nosuchhost.invalid"));
	SHOW(pvm_mstat(""));
	SHOW(pvm_archcode("LINUX64"));
	SHOW(pvm_archcode("LINUX"));
	SHOW(pvm_archcode("SUN4"));
	SHOW(pvm_archcode("RS6K"));
	SHOW(pvm_archcode("CRAY"));
	SHOW(pvm_archcode("NOSUCHARCH"));
	SHOW(pvm_archcode(""));

	SECTION("pvm_tasks");
	r = SHOW(pvm_tasks(0, &ntask, &ti));
	if (r == 0) for (i = 0; i < ntask; i++)
		printf("   task[%d]: tid=0x%x ptid=0x%x host=0x%x flag=0x%x name='%s' pid=%d\n", i,
		       ti[i].ti_tid, ti[i].ti_ptid, ti[i].ti_host, ti[i].ti_flag, ti[i].ti_a_out, ti[i].ti_pid);
	r = SHOW(pvm_tasks(host, &ntask, &ti));
	printf("   ntask=%d\n", ntask);
	r = SHOW(pvm_tasks(me, &ntask, &ti));
	if (r == 0) for (i = 0; i < ntask; i++)
		printf("   task[%d]: tid=0x%x ptid=0x%x host=0x%x flag=0x%x name='%s' pid=%d\n", i,
		       ti[i].ti_tid, ti[i].ti_ptid, ti[i].ti_host, ti[i].ti_flag, ti[i].ti_a_out, ti[i].ti_pid);
	ntask = 777;
	SHOW(pvm_tasks(me + 100, &ntask, &ti));
	printf("   ntask=%d\n", ntask);
	ntask = 777;
	SHOW(pvm_tasks(0x7c0000, &ntask, &ti));
	printf("   ntask=%d\n", ntask);
	ntask = 777;
	SHOW(pvm_tasks(-5, &ntask, &ti));
	printf("   ntask=%d\n", ntask);

	SECTION("spawned children: parent, siblings");
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", "a", NULL}, 0, "", 3, tids));
	for (i = 0; i < r; i++) printf("   tids[%d]=0x%x\n", i, tids[i]);
	collect(3);
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", "b", NULL}, PvmTaskDefault, NULL, 1, tids));
	printf("   tids[0]=0x%x\n", tids[0]);
	collect(1);

	SECTION("pvm_pstat on live / dead / bad tid");
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", "wait", NULL}, 0, NULL, 1, tids));
	collect(1);
	SHOW(pvm_pstat(me));
	SHOW(pvm_pstat(tids[0]));
	SHOW(pvm_pstat(host));		/* the pvmd's tid */
	pvm_initsend(PvmDataDefault); pvm_send(tids[0], 99);
	sleep(1);
	SHOW(pvm_pstat(tids[0]));	/* exited */
	SHOW(pvm_pstat(0));
	SHOW(pvm_pstat(-1));
	SHOW(pvm_pstat(0x7c0001));

	SECTION("pvm_kill");
	SHOW(pvm_kill(0));
	SHOW(pvm_kill(-1));
	SHOW(pvm_kill(tids[0]));	/* already exited */
	SHOW(pvm_kill(me + 1000));	/* never existed */
	SHOW(pvm_kill(0x7c0001));
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", "wait", NULL}, 0, NULL, 1, tids));
	collect(1);
	SHOW(pvm_kill(tids[0]));
	sleep(1);
	SHOW(pvm_pstat(tids[0]));
	SHOW(pvm_kill(host));	/* kill the pvmd tid?? -> expect error */
	SHOW(pvm_pstat(host));

	SECTION("pvm_kill(self) in a spawned child");
	r = SHOW(pvm_spawn(self_path(), (char *[]){"-child", "killself", NULL}, 0, NULL, 1, tids));
	collect(3);
	sleep(1);
	SHOW(pvm_pstat(tids[0]));

	SECTION("pvm_exit");
	SHOW(pvm_exit());
	SHOW(pvm_exit());
	return 0;
}
