/* p12_errors: pvm_strerror / pvm_perror text for every error code */
#include "probe.h"

int main(void)
{
	int c, r;
	probe_init();
	SECTION("before enrolment");
	pvm_errno = PvmNoParent;
	probe_capture_begin(); pvm_perror("before-enrol"); printf("pvm_perror(\"before-enrol\") with pvm_errno=-23"); probe_print_stderr(probe_capture_end());
	printf("pvm_version() = \"%s\"\n", pvm_version());
	printf("pvm_nerr = %d\n", pvm_nerr);
	pvm_mytid();

	SECTION("table: code | Pvm name | pvm_strerror() | pvm_errlist[-code] | pvm_perror(\"msg\") stderr");
	for (c = 1; c >= -40; c--) {
		const char *s;
		pvm_errno = c;
		s = pvm_strerror();
		printf("%4d | %-16s | %-40s | ", c, (c <= 0 && c > -37) ? pvmname(c) : "-", s);
		if (c <= 0 && -c < pvm_nerr) printf("%s | ", pvm_errlist[-c]); else printf("(out of table) | ");
		probe_capture_begin(); pvm_perror("msg"); 
		{ const char *e = probe_capture_end(); printf("%s\n", e); }
	}
	SECTION("pvm_perror special arguments");
	pvm_errno = PvmBadParam;
	probe_capture_begin(); r = pvm_perror(NULL); printf("pvm_errno=-2; pvm_perror(NULL) = %d", r); probe_print_stderr(probe_capture_end());
	probe_capture_begin(); r = pvm_perror(""); printf("pvm_errno=-2; pvm_perror(\"\") = %d", r); probe_print_stderr(probe_capture_end());
	printf("pvm_errno after pvm_perror: %d\n", pvm_errno);
	SECTION("pvm_errno after a successful call (is it reset?)");
	pvm_errno = PvmBadParam;
	SHOW(pvm_getopt(PvmRoute));
	pvm_errno = -99;
	r = pvm_initsend(PvmDataDefault);
	printf("pvm_initsend ok (%d); pvm_errno now %d\n", r, pvm_errno);
	pvm_errno = -99;
	r = pvm_send(pvm_mytid(), 1);
	printf("pvm_send ok (%d); pvm_errno now %d\n", r, pvm_errno);
	pvm_errno = -99;
	r = pvm_recv(-1, 1);
	printf("pvm_recv ok (%d); pvm_errno now %d\n", r, pvm_errno);
	pvm_errno = -99;
	r = pvm_mytid();
	printf("pvm_mytid ok (0x%x); pvm_errno now %d\n", r, pvm_errno);
	SECTION("which successful calls leave pvm_errno != its previous value (sentinel 4242)");
	SHOWX(pvm_mytid());
	SHOW(pvm_tasks(0, NULL, NULL));
	SHOW(pvm_config(NULL, NULL, NULL));
	pvm_exit();
	return 0;
}
