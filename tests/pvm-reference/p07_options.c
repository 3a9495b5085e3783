/* p07_options: pvm_getopt / pvm_setopt for every option */
#include "probe.h"
#include <sys/wait.h>

static const char *optname[] = { "0?", "PvmRoute", "PvmDebugMask", "PvmAutoErr",
	"PvmOutputTid", "PvmOutputCode", "PvmTraceTid", "PvmTraceCode",
	"PvmTraceBuffer", "PvmTraceOptions", "PvmFragSize", "PvmResvTids",
	"PvmSelfOutputTid", "PvmSelfOutputCode", "PvmSelfTraceTid",
	"PvmSelfTraceCode", "PvmSelfTraceBuffer", "PvmSelfTraceOptions",
	"PvmShowTids", "PvmPollType", "PvmPollTime", "PvmOutputContext",
	"PvmTraceContext", "PvmSelfOutputContext", "PvmSelfTraceContext",
	"PvmNoReset", "26?", "27?" };

/* run in a fresh process: PvmAutoErr 2 / 3 behaviour on an error */
static int autoerr_child(int level)
{
	pvm_mytid();
	pvm_setopt(PvmAutoErr, level);
	printf("   [autoerr=%d] calling pvm_freebuf(9999)\n", level);
	int r = pvm_freebuf(9999);
	printf("   [autoerr=%d] returned %d (process still alive)\n", level, r);
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int i, me, v;
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-autoerr")) return autoerr_child(atoi(argv[2]));

	SECTION("getopt before enrolment (no pvm call yet)");
	for (i = 1; i <= 25; i++) {
		pvm_errno = SENTINEL;
		v = pvm_getopt(i);
		printf("getopt(%2d %-20s) = %d (0x%x) errno=%s\n", i, optname[i], v, v, pvmname(pvm_errno));
	}
	me = pvm_mytid();
	SECTION("getopt after enrolment: defaults");
	for (i = -1; i <= 27; i++) {
		const char *nm = i < 0 ? "-1?" : optname[i];
		char lbl[64];
		pvm_errno = SENTINEL;
		probe_capture_begin();
		v = pvm_getopt(i);
		const char *e = probe_capture_end();
		snprintf(lbl, sizeof lbl, "getopt(%2d %s)", i, nm);
		printf("%-36s = %d (0x%x) %s | errno=%s", lbl, v, (unsigned)v, v < 0 ? pvmname(v) : "", pvmname(pvm_errno));
		probe_print_stderr(e);
	}
	NOTE("my tid 0x%x", me);

	SECTION("setopt returns the old value; invalid values");
	SHOW(pvm_setopt(PvmRoute, PvmRouteDirect));
	SHOW(pvm_setopt(PvmRoute, PvmAllowDirect));
	SHOW(pvm_setopt(PvmRoute, 0));
	SHOW(pvm_setopt(PvmRoute, 4));
	SHOW(pvm_getopt(PvmRoute));
	SHOW(pvm_setopt(PvmDebugMask, 0x12345));
	SHOW(pvm_setopt(PvmDebugMask, 0));
	SHOW(pvm_setopt(PvmAutoErr, 5));
	SHOW(pvm_setopt(PvmAutoErr, -1));
	SHOW(pvm_setopt(PvmAutoErr, 1));
	SHOW(pvm_setopt(PvmFragSize, 8192));
	SHOW(pvm_setopt(PvmFragSize, 1048576));
	SHOW(pvm_setopt(PvmFragSize, 1048577));
	SHOW(pvm_setopt(PvmFragSize, 0));
	SHOW(pvm_setopt(PvmFragSize, 100));
	SHOW(pvm_setopt(PvmFragSize, 4));
	SHOW(pvm_setopt(PvmFragSize, 4080));
	pvm_initsend(PvmDataDefault);
	SHOW(pvm_send(me, -5));
	SHOW(pvm_setopt(PvmResvTids, 1));
	SHOW(pvm_send(me, -5));		/* allowed now? */
	SHOW(pvm_trecv(me, -5, &(struct timeval){1, 0}));
	SHOW(pvm_trecv(me, -1, &(struct timeval){0, 200000}));
	SHOW(pvm_send(0x80000000, 5));	/* TIDPVMD: allowed with PvmResvTids? (tag 5 is harmless?) */
	SHOW(pvm_setopt(PvmResvTids, 0));
	SHOW(pvm_setopt(PvmOutputTid, me));
	SHOW(pvm_setopt(PvmOutputTid, 0x40099));
	SHOW(pvm_setopt(PvmOutputTid, 0));
	SHOW(pvm_setopt(PvmOutputCode, 55));
	SHOW(pvm_setopt(PvmOutputContext, 3));
	SHOW(pvm_setopt(PvmTraceTid, me));
	SHOW(pvm_setopt(PvmTraceTid, 0));
	SHOW(pvm_setopt(PvmTraceCode, 66));
	SHOW(pvm_setopt(PvmTraceContext, 4));
	SHOW(pvm_setopt(PvmTraceBuffer, 1000));
	SHOW(pvm_setopt(PvmTraceOptions, PvmTraceTime));
	SHOW(pvm_setopt(PvmTraceOptions, 7));
	SHOW(pvm_setopt(PvmSelfOutputTid, 0));
	SHOW(pvm_setopt(PvmSelfOutputCode, 5));
	SHOW(pvm_setopt(PvmSelfOutputContext, 5));
	SHOW(pvm_setopt(PvmSelfTraceTid, 0));
	SHOW(pvm_setopt(PvmSelfTraceCode, 5));
	SHOW(pvm_setopt(PvmSelfTraceBuffer, 5));
	SHOW(pvm_setopt(PvmSelfTraceOptions, PvmTraceCount));
	SHOW(pvm_setopt(PvmSelfTraceContext, 5));
	SHOW(pvm_setopt(PvmShowTids, 0));
	SHOW(pvm_setopt(PvmShowTids, 1));
	SHOW(pvm_setopt(PvmPollType, PvmPollSleep));
	SHOW(pvm_setopt(PvmPollType, 99));
	SHOW(pvm_setopt(PvmPollTime, 1000));
	SHOW(pvm_setopt(PvmNoReset, 1));
	SHOW(pvm_setopt(PvmNoReset, 0));
	SHOW(pvm_setopt(0, 1));
	SHOW(pvm_setopt(26, 1));
	SHOW(pvm_setopt(-1, 1));
	{ int *tids = 0, n = 0;
	SHOW(pvm_getnoresets(&tids, &n));
	printf("   noresets n=%d\n", n); }

	/* NB: pvm_advise() and pvm_serror() have man pages but are NOT exported by
	 * libpvm3.so.3 (link error), so they cannot be probed. */

	SECTION("PvmAutoErr 2 and 3 (in a fresh process)");
	fflush(stdout);
	for (i = 2; i <= 3; i++) {
		pid_t p = fork();
		if (p == 0) {
			char lv[4]; snprintf(lv, sizeof lv, "%d", i);
			execl(self_path(), self_path(), "-autoerr", lv, (char *)NULL);
			_exit(127);
		}
		int st; waitpid(p, &st, 0);
		if (WIFEXITED(st)) printf("   [autoerr=%d] process exited with status %d\n", i, WEXITSTATUS(st));
		else printf("   [autoerr=%d] process killed by signal %d (%s)\n", i, WTERMSIG(st), strsignal(WTERMSIG(st)));
	}
	pvm_exit();
	return 0;
}
