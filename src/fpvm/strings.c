/*
 * strings.c - Fortran CHARACTER arguments to C strings and back (PVM's
 * ftocstr and ctofstr), and the per-task state of the binding.
 */
#include <string.h>

#include "fpvm/fpvm.h"
#include "pvm/pvm.h"

int fpvm_cstr(char *buf, size_t cap, const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    /* A NUL inside ends the string, as strncat ends PVM's copy. */
    const char *nul = memchr(s, '\0', len);
    if (nul)
        len = (size_t)(nul - s);
    if (len + 1 > cap) {
        buf[0] = '\0';
        return -1;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return 0;
}

void fpvm_fstr(char *s, size_t len, const char *c)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(s, c, n);
    memset(s + n, ' ', len - n);
}

struct fpvm_state *fpvm_state(void)
{
    return pvm_task_binding(sizeof(struct fpvm_state));
}
