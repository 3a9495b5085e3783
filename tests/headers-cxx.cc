// Both public headers must compile as C++ (and in either order).
#include <upvm.h>
#include <pvm3.h>
#include <upvm.h>
int main() { return 0; }
