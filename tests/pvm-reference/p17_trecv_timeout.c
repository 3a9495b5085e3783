/* p17_trecv_timeout: every form of pvm_trecv's timeout (NULL, {0,0},
 * usec only, usec >= 1000000, negative sec or usec or both, huge values):
 * (a) does it wait?  A child sends the awaited message 300 ms after it is
 *     asked: received (it waited) or 0 (it returned before);
 * (b) with no message at all: how long it takes, its return, pvm_errno and
 *     stderr (only for the forms that (a) found bounded). */
#include "probe.h"
#include <limits.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct form { const char *name; long sec, usec; int null, bounded; };
static const struct form forms[] = {
	{"NULL", 0, 0, 1, 0},
	{"{0,0}", 0, 0, 0, 1},
	{"{0,1}", 0, 1, 0, 1},
	{"{0,100000}", 0, 100000, 0, 1},
	{"{0,999999}", 0, 999999, 0, 1},
	{"{0,1000000}", 0, 1000000, 0, 1},
	{"{0,1500000}", 0, 1500000, 0, 1},
	{"{0,2500000}", 0, 2500000, 0, 1},
	{"{1,0}", 1, 0, 0, 1},
	{"{1,-5}", 1, -5, 0, 1},
	{"{1,-500000}", 1, -500000, 0, 1},
	{"{1,-999999}", 1, -999999, 0, 1},
	{"{1,-1000000}", 1, -1000000, 0, 1},
	{"{2,-1500000}", 2, -1500000, 0, 1},
	{"{3,-500000}", 3, -500000, 0, 1},
	{"{1,-2000000}", 1, -2000000, 0, 1},
	{"{2,-2000000}", 2, -2000000, 0, 1},
	{"{5,-3000000}", 5, -3000000, 0, 1},
	{"{0,-1}", 0, -1, 0, 1},
	{"{0,-5}", 0, -5, 0, 1},
	{"{0,-1000000}", 0, -1000000, 0, 1},
	{"{-1,0}", -1, 0, 0, 1},
	{"{-1,-5}", -1, -5, 0, 1},
	{"{-1,1500000}", -1, 1500000, 0, 1},
	{"{-1,2500000}", -1, 2500000, 0, 1},
	{"{-5,999999}", -5, 999999, 0, 1},
	{"{INT_MAX,0}", INT_MAX, 0, 0, 0},
	{"{LONG_MAX,0}", LONG_MAX, 0, 0, 0},
	{"{LONG_MAX,999999}", LONG_MAX, 999999, 0, 0},
	{"{0,LONG_MAX}", 0, LONG_MAX, 0, 0},
	{"{0,0x80000000}", 0, 0x80000000L, 0, 0},
	{"{LONG_MIN,0}", LONG_MIN, 0, 0, 1},
	{"{0,LONG_MIN}", 0, LONG_MIN, 0, 1},
};
#define NFORMS (int)(sizeof forms / sizeof forms[0])

static int child(void)
{
	int parent = pvm_parent(), tag;
	for (;;) {
		pvm_recv(parent, 1);
		pvm_upkint(&tag, 1, 1);
		if (tag < 0)
			break;
		usleep(300000);
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&tag, 1, 1);
		pvm_send(parent, tag);
	}
	pvm_exit();
	return 0;
}

int main(int argc, char **argv)
{
	int me, kid, i, tag, r;
	double t0;
	probe_init();
	me = pvm_mytid();
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	printf("mytid 0x%x\n", (unsigned)me);
	SHOW(pvm_spawn(self_path(), (char *[]){"child", NULL}, PvmTaskDefault, "", 1, &kid));

	SECTION("(a) a message comes 300 ms after the call: waited (received) or not?");
	for (i = 0; i < NFORMS; i++) {
		const struct form *f = &forms[i];
		struct timeval tv = {f->sec, f->usec};
		tag = 100 + i;
		pvm_initsend(PvmDataDefault);
		pvm_pkint(&tag, 1, 1);
		pvm_send(kid, 1);
		t0 = now();
		pvm_errno = SENTINEL;
		probe_capture_begin();
		r = pvm_trecv(kid, tag, f->null ? NULL : &tv);
		{
			const char *e = probe_capture_end();
			printf("trecv(%s) = %d %s | errno=%d %s | after %.3f s | %s", f->name, r,
			       r <= 0 ? pvmname(r) : "", pvm_errno, pvmname(pvm_errno), now() - t0,
			       r > 0 ? "RECEIVED (waited)" : "not received");
			probe_print_stderr(e);
		}
		if (r <= 0) /* drain the late one */
			pvm_recv(kid, tag);
	}

	SECTION("(b) no message at all (bounded forms only)");
	for (i = 0; i < NFORMS; i++) {
		const struct form *f = &forms[i];
		struct timeval tv = {f->sec, f->usec};
		int k;
		if (!f->bounded)
			continue;
		for (k = 0; k < 2; k++) {
			t0 = now();
			pvm_errno = SENTINEL;
			probe_capture_begin();
			r = pvm_trecv(-1, 9999, &tv);
			{
				const char *e = probe_capture_end();
				printf("trecv(%s) = %d %s | errno=%d %s | took %.3f s | tv after: {%ld,%ld}", f->name, r,
				       r <= 0 ? pvmname(r) : "", pvm_errno, pvmname(pvm_errno), now() - t0,
				       (long)tv.tv_sec, (long)tv.tv_usec);
				probe_print_stderr(e);
			}
			usleep(123457 * (k + 1)); /* another phase of the second */
		}
	}
	SECTION("(c) the receive buffer after a PvmSysErr");
	pvm_initsend(PvmDataDefault);
	pvm_send(me, 5);
	SHOW(pvm_recv(me, 5));
	SHOW(pvm_getrbuf());
	SHOW(pvm_trecv(-1, 9999, &(struct timeval){0, LONG_MAX}));
	SHOW(pvm_getrbuf());
	tag = -1;
	pvm_initsend(PvmDataDefault);
	pvm_pkint(&tag, 1, 1);
	pvm_send(kid, 1);
	pvm_exit();
	return 0;
}
