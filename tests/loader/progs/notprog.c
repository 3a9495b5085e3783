/* notprog.c - a shared library, not a program. */
int notprog_value(void) { return 1; }
