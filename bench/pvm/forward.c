/*
 * forward.c - the "forward" ping-pong (forward_proto.h) for genuine PVM 3.4.6.
 *
 *   forward [-r daemon|direct|dontroute] [-e raw|inplace|default]
 *           [-b blocks] [-T block_ms] [size ...]     (default 0 1000 100000)
 *
 * Started from the shell it is the master and spawns one copy of itself
 * ("-child route enc").  Built and run by bench/pvm-compare.sh:
 *
 *   gcc -O2 -I bench/pvm -o DIR/forward bench/pvm/forward.c -lpvm3
 */
#include "forward_proto.h"

int main(int argc, char **argv)
{
    struct pb_opts o = {.route = "daemon", .encname = "raw", .deliver = "-",
                        .blocks = 5, .block_ms = 20, .ntask = 1};

    if (pvm_mytid() < 0) {
        pvm_perror("forward: pvm_mytid (is pvmd running?)");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "-child"))
        return forward_child(argc, argv);
    pb_parse(argc, argv, 1, &o);
    if (o.nsizes == 0) {
        o.sizes[o.nsizes++] = 0;
        o.sizes[o.nsizes++] = 1000;
        o.sizes[o.nsizes++] = 100000;
    }
    pb_apply_route(o.route);
    int rc = forward_master(&o, o.route);
    pvm_exit();
    return rc;
}
