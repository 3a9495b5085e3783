/* needs-upvm.c - needs libupvm.so.0: must bind to the node's own copy. */
#include <upvm.h>

void *get_upvm_self(void) { return (void *)upvm_self; }

int main(void) { return 0; }
