/*
 * mcast.c - pvm_mcast() from a master to N tasks, for genuine PVM 3.4.6.
 *
 *   mcast -n N [-r daemon|direct|dontroute] [-e raw|inplace|default]
 *         [-b blocks] [-T block_ms] [size ...]        (default 1024 102400)
 *
 * Started from the shell it is the master: it enrolls, pvm_spawn()s N
 * copies of itself with "-child route enc" and times multicasts until every
 * copy has acknowledged (the exchange is in mcast_proto.h, shared with the
 * UPVM side in ../bench_pvm.c).  Plain PVM API only; bench/pvm-compare.sh
 * builds it with
 *
 *   gcc -O2 -I bench/pvm -o DIR/mcast bench/pvm/mcast.c -lpvm3
 *
 * and runs it against a private pvmd with PVMBENCH_SPAWN_DIR=DIR.
 * Output, one line per size:
 *
 *   RESULT mcast route=direct deliver=- enc=raw n=8 size=1024 iters=70
 *          blocks=5 mcast_us=310.2 min_us=301.0 per_task_us=38.8 spawn_us=26000
 */
#include "mcast_proto.h"

int main(int argc, char **argv)
{
    struct pb_opts o = {.route = "daemon", .encname = "raw", .deliver = "-",
                        .blocks = 5, .block_ms = 20, .ntask = 4};

    if (pvm_mytid() < 0) {
        pvm_perror("mcast: pvm_mytid (is pvmd running?)");
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "-child"))
        return mcast_child(argc, argv);
    pb_parse(argc, argv, 1, &o);
    if (o.nsizes == 0) {
        o.sizes[o.nsizes++] = 1024;
        o.sizes[o.nsizes++] = 100 * 1024;
    }
    pb_apply_route(o.route);
    int rc = mcast_master(&o, o.route);
    pvm_exit();
    return rc;
}
