/* p17_catchout_lines: the exact shape of caught output (pvm_catchout):
 * a last line without newline, stderr only, empty lines, output after
 * pvm_exit, a FILE other than stdout, pvm_catchout(0) to stop. */
#include "probe.h"

static int child(char **argv)
{
	pvm_mytid();
	if (!strcmp(argv[2], "last")) {
		printf("one\n");
		printf("last without newline");
		fflush(stdout);
	} else if (!strcmp(argv[2], "err")) {
		fprintf(stderr, "only stderr\n");
	} else if (!strcmp(argv[2], "empty")) {
		printf("a\n\nb\n");
		fflush(stdout);
	} else if (!strcmp(argv[2], "slow")) {
		sleep(1);
		printf("slow line, after the catcher's pvm_catchout(0)\n");
		fflush(stdout);
	} else if (!strcmp(argv[2], "after")) {
		printf("before exit\n");
		fflush(stdout);
		pvm_exit();
		printf("after exit\n");
		printf("after exit, no newline");
		fflush(stdout);
		return 0;
	}
	pvm_exit();
	return 0;
}

static void run(const char *what)
{
	int t;
	pvm_spawn(self_path(), (char *[]){"-child", (char *)what, NULL}, 0, NULL, 1, &t);
	pvm_trecv(-1, 12345, &(struct timeval){1, 0});
	NOTE("(%s done)", what);
}

int main(int argc, char **argv)
{
	probe_init();
	if (argc > 2 && !strcmp(argv[1], "-child")) return child(argv);
	pvm_mytid();

	SECTION("caught to stdout");
	SHOW(pvm_catchout(stdout));
	run("last");
	run("err");
	run("empty");
	run("after");

	SECTION("caught to a file (its content shown after)");
	FILE *f = tmpfile();
	SHOW(pvm_catchout(f));
	run("last");
	run("after");
	fflush(f);
	rewind(f);
	{ char buf[4096]; size_t n = fread(buf, 1, sizeof buf - 1, f); buf[n] = 0;
	  NOTE("file content follows between the lines of dashes"); printf("-----\n%s-----\n", buf); }

	SECTION("pvm_catchout(0) while a caught child still runs");
	SHOW(pvm_catchout(stdout));
	{ int t; pvm_spawn(self_path(), (char *[]){"-child", "slow", NULL}, 0, NULL, 1, &t); }
	SHOW(pvm_catchout(0));
	pvm_trecv(-1, 12345, &(struct timeval){2, 0});
	NOTE("(slow done)");

	SECTION("pvm_catchout(0) stops (output to the pvmd log)");
	SHOW(pvm_catchout(0));
	run("last");
	pvm_exit();
	return 0;
}
