/* copyreloc.c - built -fPIE (not -fPIC): reading libc's optind directly
 * makes the linker copy it into the program (R_X86_64_COPY). */
#include <unistd.h>

int main(void) { return optind; }
