/* p16_badtids.c - send, psend, mcast, sendsig, kill and notify given bad
 * tids: malformed ones (negative, 0, a pvmd's, bits 30 or 31 set) and well
 * formed ones of no task.  A child echoes every message it gets (one int,
 * same tag) so the probe sees whether pvm_mcast sent to it in spite of a
 * bad entry in the list; a control mcast shows the echo arriving.  Also
 * pvm_spawn of a file without execute permission (mode 0644).
 */
#include "probe.h"
#include <signal.h>
#include <sys/stat.h>

static const int bad[] = {-1, -5, 0, 0x40000, (int)0x80000000, 0x40000001, (int)0x80040001,
                          0x40040001, 0x40051, 0x7ffff, 0x7c0001};
#define NBAD (int)(sizeof bad / sizeof bad[0])

static int child_main(void)
{
	int p = pvm_parent(), b, tag, v;
	struct timeval tv = {60, 0};
	while ((b = pvm_trecv(p, -1, &tv)) > 0) {
		pvm_bufinfo(b, NULL, &tag, NULL);
		if (tag == 999)
			break;
		pvm_upkint(&v, 1, 1);
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&v, 1, 1);
		pvm_send(p, tag);
	}
	pvm_exit();
	return 0;
}

/* did the child echo tag within 1 s? */
static int echoed(int child, int tag)
{
	struct timeval tv = {1, 0};
	return pvm_trecv(child, tag, &tv) > 0;
}

static void pack1(void)
{
	int v = 7;
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&v, 1, 1);
}

static void drain(int tag)
{
	struct timeval tv = {0, 300000};
	int t;
	while (pvm_trecv(-1, tag, &tv) > 0) {
		pvm_upkint(&t, 1, 1);
		printf("   notify tag %d arrived for 0x%x\n", tag, (unsigned)t);
	}
}

static void one(int child, int t)
{
	int v = 7, one_t[1] = {t}, pair[2] = {child, t}, rpair[2] = {t, child}, r;
	printf("\n### tid 0x%x\n", (unsigned)t);
	pack1();
	SHOW(pvm_send(t, 1));
	SHOW(pvm_psend(t, 1, &v, 1, PVM_INT));
	SHOW(pvm_mcast(one_t, 1, 1));
	r = SHOW(pvm_mcast(pair, 2, 2));
	printf("   {child, tid}: child got it: %d\n", echoed(child, 2));
	r = SHOW(pvm_mcast(rpair, 2, 3));
	printf("   {tid, child}: child got it: %d\n", echoed(child, 3));
	(void)r;
	SHOW(pvm_sendsig(t, 0));
	SHOW(pvm_sendsig(t, SIGCONT));
	SHOW(pvm_kill(t));
	SHOW(pvm_notify(PvmTaskExit, 77, 1, one_t));
	drain(77);
	SHOW(pvm_notify(PvmTaskExit, 78, 2, pair));
	drain(78);
}

int main(int argc, char **argv)
{
	int child, i, t;
	char path[4200];
	probe_init();
	if (argc > 1 && strcmp(argv[1], "-child") == 0)
		return child_main();
	SHOWX(pvm_mytid());
	SHOW(pvm_spawn(self_path(), (char *[]){"-child", NULL}, 0, NULL, 1, &child));
	SECTION("control: pvm_mcast({child})");
	pack1();
	SHOW(pvm_mcast(&child, 1, 42));
	printf("   child got it: %d\n", echoed(child, 42));
	SECTION("bad tids");
	for (i = 0; i < NBAD; i++)
		one(child, bad[i]);
	pack1();
	pvm_send(child, 999);
	SECTION("pvm_spawn of a mode-0644 copy of this program");
	snprintf(path, sizeof path, "%s.noexec", self_path());
	{
		char cmd[8500];
		snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 644 '%s'", self_path(), path, path);
		if (system(cmd) != 0)
			return 1;
	}
	t = 0x5555;
	SHOW(pvm_spawn(path, (char *[]){"-child", NULL}, 0, NULL, 1, &t));
	printf("   tids[0] = %d %s\n", t, pvmname(t));
	unlink(path);
	pvm_exit();
	return 0;
}
