/*
 * fuzz_ctl.c - libFuzzer target: what a client writes to a job's control
 * socket (upvm jobs / tasks / migrate / top / vacate / restore, or
 * anyone who can connect), cut into lines as the server cuts them and
 * parsed as it parses them
 * (ctl_parse_request, control_path.c).  Any line may be refused, with a
 * reply; none may crash the parser or make it read past the line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "node/control_path.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n')
            continue;
        size_t n = i - start;
        if (n >= CTL_REQUEST_MAX) /* the server's buffer for a line (control_server.c) */
            n = CTL_REQUEST_MAX - 1;
        char *line = malloc(n + 1); /* exactly the line: ASan sees any overread */
        if (!line)
            return 0;
        memcpy(line, data + start, n);
        line[n] = '\0';
        struct ctl_request req = {.node = 0};
        char err[128];
        const char *why = ctl_parse_request(line, &req, err, sizeof err);
        if (!why && req.kind == CTL_REQ_MIGRATE && (req.tid <= 0 || req.node < 0 || req.node > 63))
            abort(); /* accepted what it should have refused */
        if (!why && (req.kind == CTL_REQ_VACATE || req.kind == CTL_REQ_RESTORE) &&
            (req.host ? req.node != -1 || !*req.host || strlen(req.host) > CTL_HOST_MAX
                      : req.node < 0 || req.node > 63))
            abort();
        free(line);
        start = i + 1;
    }
    return 0;
}
