/* placeholder demo, replaced below */
#include <upvm.h>
#include <stdio.h>
static void hello(int ord, void *arg) { printf("ULP %d (ordinal %d) says hello\n", upvm_self(), ord); }
int main(void) { int rc = upvm_spawn_func(hello, NULL, 4, NULL, NULL); if (rc < 0) return 1; upvm_join_all(); return 0; }
