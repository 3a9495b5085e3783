/* p15_misc: sendsig, hostsync, getfds, export/unexport, mstat, reg_* */
#include "probe.h"
#include <signal.h>

static int child(char **argv)
{
	pvm_mytid();
	if (!strcmp(argv[2], "env")) {
		char line[256], *v = getenv("PROBE_EXPORTED"), *w = getenv("PROBE_NOTEXPORTED"), *px = getenv("PVM_EXPORT");
		snprintf(line, sizeof line, "child env: PROBE_EXPORTED=%s PROBE_NOTEXPORTED=%s PVM_EXPORT=%s",
			 v ? v : "(unset)", w ? w : "(unset)", px ? px : "(unset)");
		pvm_initsend(PvmDataDefault); pvm_pkstr(line); pvm_send(pvm_parent(), 1);
	} else pause();
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int me, t, host, *fds, r;
	struct timeval clk, delta;
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	me = pvm_mytid();
	host = pvm_tidtohost(me);

	SECTION("pvm_sendsig");
	pvm_spawn(self_path(), (char *[]){"-child", "wait", NULL}, 0, NULL, 1, &t);
	pvm_notify(PvmTaskExit, 5, 1, &t);
	SHOW(pvm_sendsig(t, 0));
	SHOW(pvm_sendsig(t, 999));
	SHOW(pvm_sendsig(t, -1));
	SHOW(pvm_sendsig(0, SIGTERM));
	SHOW(pvm_sendsig(-1, SIGTERM));
	SHOW(pvm_sendsig(host, SIGTERM));
	SHOW(pvm_sendsig(me + 0x100, SIGTERM));
	SHOW(pvm_sendsig(t, SIGTERM));
	SHOW(pvm_trecv(-1, 5, &(struct timeval){2, 0}));
	SHOW(pvm_pstat(t));

	SECTION("pvm_hostsync / pvm_getfds / pvm_mstat");
	r = SHOW(pvm_hostsync(host, &clk, &delta));
	printf("   clk=%ld.%06ld delta=%ld.%06ld\n", (long)clk.tv_sec, (long)clk.tv_usec, (long)delta.tv_sec, (long)delta.tv_usec);
	SHOW(pvm_hostsync(me, &clk, &delta));
	SHOW(pvm_hostsync(0x7c0000, &clk, &delta));
	SHOW(pvm_hostsync(0, &clk, &delta));
	r = SHOW(pvm_getfds(&fds));
	if (r > 0) { int i; printf("   fds:"); for (i = 0; i < r; i++) printf(" %d", fds[i]); printf("\n"); }

	SECTION("pvm_export / pvm_unexport");
	setenv("PROBE_EXPORTED", "yes", 1);
	setenv("PROBE_NOTEXPORTED", "yes", 1);
	SHOW(pvm_export("PROBE_EXPORTED"));
	SHOW(pvm_export("PROBE_EXPORTED"));
	printf("   PVM_EXPORT=%s\n", getenv("PVM_EXPORT"));
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "env", NULL}, 0, NULL, 1, &t));
	{ char s[256]; if (pvm_trecv(t, 1, &(struct timeval){3, 0}) > 0) { pvm_upkstr(s); printf("   %s\n", s); } }
	SHOW(pvm_unexport("PROBE_EXPORTED"));
	SHOW(pvm_unexport("PROBE_EXPORTED"));
	SHOW(pvm_unexport("NEVER"));
	SHOW(pvm_export(""));
	printf("   PVM_EXPORT=%s\n", getenv("PVM_EXPORT") ? getenv("PVM_EXPORT") : "(unset)");

	SECTION("resource manager / hoster / tasker registration by an ordinary task");
	SHOW(pvm_reg_tasker());
	SHOW(pvm_reg_tasker());
	SHOW(pvm_reg_hoster());
	SHOW(pvm_reg_rm(NULL));

	SECTION("pvm_tidtohost / pvm_config with NULL out params");
	SHOW(pvm_config(NULL, NULL, NULL));
	SHOW(pvm_tasks(0, NULL, NULL));
	pvm_exit();
	return 0;
}
