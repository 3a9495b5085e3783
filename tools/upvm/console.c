/* console.c - upvm console (written next). */
#include "cmd.h"
int cmd_console(int argc, char **argv) { (void)argc; (void)argv; return 2; }
