/* p13_catchout_exit: pvm_catchout semantics; pvm_exit followed by more calls */
#include "probe.h"

static int child(char **argv)
{
	int t;
	pvm_mytid();
	if (!strcmp(argv[2], "print")) {
		printf("stdout line 1 from child\n");
		printf("stdout line 2 from child\n");
		printf("partial line without newline");
		fflush(stdout);
		fprintf(stderr, "stderr line from child\n");
	} else if (!strcmp(argv[2], "grand")) {
		printf("child before spawning grandchild\n"); fflush(stdout);
		pvm_spawn(self_path(), (char *[]){"-child", "print", NULL}, 0, NULL, 1, &t);
		sleep(1);
	} else if (!strcmp(argv[2], "noflush")) {
		printf("buffered output, exit without fflush via pvm_exit+exit\n");
		pvm_exit();
		exit(0);
	}
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int me, t, r;
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	me = pvm_mytid();

	SECTION("pvm_catchout(stdout)");
	SHOW(pvm_getopt(PvmOutputTid));
	SHOW(pvm_catchout(stdout));
	SHOW(pvm_getopt(PvmOutputTid));
	SHOW(pvm_getopt(PvmOutputCode));
	SHOW(pvm_getopt(PvmOutputContext));
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "print", NULL}, 0, NULL, 1, &t));
	NOTE("child 0x%x spawned; sleeping 1 s without PVM calls", t);
	sleep(1);
	NOTE("now pvm_trecv(-1, 12345, 1 s) (output is printed while inside libpvm):");
	SHOW(pvm_trecv(-1, 12345, &(struct timeval){1, 0}));
	NOTE("after trecv");

	SECTION("grandchild output (child spawns a grandchild)");
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "grand", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_trecv(-1, 12345, &(struct timeval){3, 0}));

	SECTION("PvmShowTids = 0");
	SHOW(pvm_setopt(PvmShowTids, 0));
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "print", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_trecv(-1, 12345, &(struct timeval){1, 0}));
	SHOW(pvm_setopt(PvmShowTids, 1));

	SECTION("child exits with unflushed stdio after pvm_exit");
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "noflush", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_trecv(-1, 12345, &(struct timeval){1, 0}));

	SECTION("pvm_catchout(NULL) turns it off (output goes to the pvmd log instead)");
	SHOW(pvm_catchout(NULL));
	SHOW(pvm_getopt(PvmOutputTid));
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "print", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_trecv(-1, 12345, &(struct timeval){1, 0}));

	SECTION("catchout then pvm_exit while the child is still printing");
	SHOW(pvm_catchout(stdout));
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", "grand", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_exit());
	NOTE("returned from pvm_exit");

	SECTION("calls after pvm_exit");
	SHOW(pvm_getsbuf());
	SHOW(pvm_getopt(PvmRoute));
	SHOWX(pvm_mytid());
	NOTE("old tid was 0x%x", me);
	SHOWX(pvm_parent());
	SHOW(pvm_exit());
	SHOW(pvm_exit());
	SHOW(pvm_initsend(PvmDataDefault));
	SHOW(pvm_exit());
	return 0;
}
