/* probe.h - tiny harness for PVM 3.4.6 ground-truth probes.
 *
 * SHOW(expr): sets pvm_errno to a sentinel (4242), evaluates expr with fd 2
 * redirected to a temp file, and prints one line:
 *   expr = <rv> <PvmName> | errno=<pvm_errno> <PvmName>|unchanged | stderr: "<text>"
 * so the PvmAutoErr output of each call is attributed to that call, verbatim.
 */
#ifndef PROBE_H
#define PROBE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/time.h>
#include <pvm3.h>

/* NB: pvm3.h does NOT declare pvm_errno / pvm_errlist / pvm_nerr, although
 * libpvm3.so exports them (int pvm_errno; char *pvm_errlist[]; int pvm_nerr) */
extern int pvm_errno;
extern char *pvm_errlist[];
extern int pvm_nerr;

#define SENTINEL 4242

static const char *pvmname(int c)
{
	static const char *n[] = { "PvmOk", "(-1)", "PvmBadParam", "PvmMismatch",
		"PvmOverflow", "PvmNoData", "PvmNoHost", "PvmNoFile", "PvmDenied",
		"(-9)", "PvmNoMem", "(-11)", "PvmBadMsg", "(-13)", "PvmSysErr",
		"PvmNoBuf", "PvmNoSuchBuf", "PvmNullGroup", "PvmDupGroup",
		"PvmNoGroup", "PvmNotInGroup", "PvmNoInst", "PvmHostFail",
		"PvmNoParent", "PvmNotImpl", "PvmDSysErr", "PvmBadVersion",
		"PvmOutOfRes", "PvmDupHost", "PvmCantStart", "PvmAlready",
		"PvmNoTask", "PvmNotFound", "PvmExists", "PvmHostrNMstr",
		"PvmParentNotSet", "PvmIPLoopback" };
	static char buf[32];
	if (c == SENTINEL) return "unchanged";
	if (c <= 0 && c > -37) return n[-c];
	snprintf(buf, sizeof buf, "(%d)", c);
	return buf;
}

static int probe_errfd = -1, probe_savefd = -1;
static char probe_errbuf[4096];

static void probe_capture_begin(void)
{
	fflush(stderr);
	if (probe_errfd < 0) {
		char tmpl[] = "/tmp/probe-stderr.XXXXXX";
		probe_errfd = mkstemp(tmpl);
		unlink(tmpl);
	}
	ftruncate(probe_errfd, 0);
	lseek(probe_errfd, 0, SEEK_SET);
	probe_savefd = dup(2);
	dup2(probe_errfd, 2);
}

static const char *probe_capture_end(void)
{
	ssize_t n;
	char *p;
	fflush(stderr);
	dup2(probe_savefd, 2);
	close(probe_savefd);
	lseek(probe_errfd, 0, SEEK_SET);
	n = read(probe_errfd, probe_errbuf, sizeof probe_errbuf - 1);
	if (n < 0) n = 0;
	probe_errbuf[n] = 0;
	/* make it one line: newline -> '\n' literal */
	for (p = probe_errbuf; *p; p++) ;
	while (p > probe_errbuf && p[-1] == '\n') *--p = 0;
	return probe_errbuf;
}

static void probe_print_stderr(const char *s)
{
	const char *p;
	if (!*s) { printf("\n"); return; }
	printf(" | stderr: \"");
	for (p = s; *p; p++) {
		if (*p == '\n') printf("\\n");
		else putchar(*p);
	}
	printf("\"\n");
}

/* evaluate an int expression, print return value, pvm_errno, stderr */
#define SHOW(expr) ({ \
	int _r; const char *_e; \
	pvm_errno = SENTINEL; \
	probe_capture_begin(); \
	_r = (expr); \
	_e = probe_capture_end(); \
	printf("%s = %d %s | errno=%d %s", #expr, _r, \
	       (_r <= 0 ? pvmname(_r) : ""), pvm_errno, pvmname(pvm_errno)); \
	probe_print_stderr(_e); \
	_r; })

/* same, for a tid-like value: print also in hex */
#define SHOWX(expr) ({ \
	int _r; const char *_e; \
	pvm_errno = SENTINEL; \
	probe_capture_begin(); \
	_r = (expr); \
	_e = probe_capture_end(); \
	printf("%s = %d (0x%x) %s | errno=%d %s", #expr, _r, (unsigned)_r, \
	       (_r <= 0 ? pvmname(_r) : ""), pvm_errno, pvmname(pvm_errno)); \
	probe_print_stderr(_e); \
	_r; })

#define SECTION(s) printf("\n## %s\n", s)
#define NOTE(...) (printf("# "), printf(__VA_ARGS__), printf("\n"))

static void probe_init(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
}

/* absolute path of this executable, for pvm_spawn of ourselves */
static char *self_path(void)
{
	static char p[4096];
	ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
	if (n < 0) return NULL;
	p[n] = 0;
	return p;
}

static void bufinfo_print(const char *what, int bufid)
{
	int len = -1, tag = -1, tid = -1, r;
	if (bufid <= 0) { printf("   bufinfo(%s=%d): (no buffer)\n", what, bufid); return; }
	r = pvm_bufinfo(bufid, &len, &tag, &tid);
	printf("   bufinfo(%s=%d) rc=%d %s len=%d tag=%d tid=0x%x\n", what, bufid,
	       r, pvmname(r), len, tag, (unsigned)tid);
}
#endif
