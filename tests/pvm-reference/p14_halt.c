/* p14_halt: pvm_halt from a task (run last: it stops the virtual machine) */
#include "probe.h"
#include <signal.h>

static void onterm(int s) { static const char m[] = "# caller received SIGTERM\n"; write(1, m, sizeof m - 1); }

static int child(void)
{
	pvm_mytid();
	pause();
	return 0;
}

int main(int argc, char **argv)
{
	int t, r;
	probe_init();
	if (argc > 1 && !strcmp(argv[1], "-child")) return child();
	signal(SIGTERM, onterm);
	pvm_mytid();
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", NULL}, 0, NULL, 1, &t));
	SHOW(pvm_notify(PvmTaskExit, 5, 1, &t));
	SHOW(pvm_notify(PvmHostDelete, 6, 1, (int[]){pvm_tidtohost(t)}));
	NOTE("calling pvm_halt() with a SIGTERM handler installed");
	r = SHOW(pvm_halt());
	NOTE("pvm_halt returned %d; process still alive", r);
	sleep(1);
	NOTE("messages still in queue / receivable after halt:");
	SHOW(pvm_nrecv(-1, -1));
	SHOWX(pvm_mytid());
	SHOW(pvm_halt());
	SHOW(pvm_exit());
	return 0;
}
