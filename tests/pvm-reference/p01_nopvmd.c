/* p01_nopvmd: calls made when no pvmd is running (run with PVM_TMP pointing
 * to an empty directory so no daemon can be found). */
#include "probe.h"
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(void)
{
	double t0;
	int tids[4];
	probe_init();
	SECTION("no pvmd: before any enrolment");
	SHOW(pvm_getopt(PvmAutoErr));
	SHOW(pvm_getsbuf());
	pvm_errno = PvmNoParent;
	probe_capture_begin(); pvm_perror("perror-before-enrol"); printf("pvm_perror(\"perror-before-enrol\") with pvm_errno=PvmNoParent"); probe_print_stderr(probe_capture_end());
	t0 = now();
	SHOWX(pvm_mytid());
	NOTE("pvm_mytid took %.3f s", now() - t0);
	SHOWX(pvm_mytid());
	SHOWX(pvm_parent());
	SHOW(pvm_initsend(PvmDataDefault));
	SHOW(pvm_pkint(tids, 1, 1));
	SHOW(pvm_send(0x40001, 1));
	SHOW(pvm_nrecv(-1, -1));
	SHOW(pvm_spawn("/bin/true", NULL, 0, NULL, 1, tids));
	SHOW(pvm_config(NULL, NULL, NULL));
	SHOW(pvm_newcontext());
	SHOW(pvm_joingroup("g"));
	SHOW(pvm_exit());
	SHOWX(pvm_mytid());
	SECTION("same with PvmAutoErr = 0");
	SHOW(pvm_setopt(PvmAutoErr, 0));
	SHOWX(pvm_mytid());
	SHOW(pvm_send(0x40001, 1));
	SECTION("pvm_start_pvmd is not tried here (it would start a real daemon)");
	return 0;
}
