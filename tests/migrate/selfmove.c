#include <pvm3.h>
#include <upvm.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
struct node { struct node *next; int v; };
static struct node *head; static int glob = 42;
int main(int argc, char **argv)
{
    pvm_mytid();
    if (pvm_parent() == PvmNoParent) {
        /* the job's first task moves too, and its exit status still
         * reaches the shell */
        int rc = upvm_migrate(0, 1);
        printf("master: rc %d: on node %d\n", rc, upvm_node_of(0));
        int tid; pvm_spawn(argv[0], NULL, 0, "", 1, &tid);
        pvm_notify(PvmTaskExit, 9, 1, &tid);
        pvm_recv(-1, 9);
        return 7;
    }
    for (int i = 0; i < 100; i++) { struct node *n = malloc(sizeof *n); n->v = i; n->next = head; head = n; }
    char *big = malloc(8 << 20); for (int i = 0; i < (8 << 20); i++) big[i] = (char)i;
    int nodes = upvm_nodes();
    for (int k = 0; k < 20; k++) {
        errno = 1234 + k;
        int to = (upvm_node_of(0) + 1) % nodes;
        int rc = upvm_migrate(0, to);
        int e = errno;
        if (rc || upvm_node_of(0) != to) { printf("rc %d %s node %d\n", rc, upvm_migrate_error(), upvm_node_of(0)); return 1; }
        if (e != 1234 + k) { printf("errno %d\n", e); return 1; }
        int s = 0; for (struct node *n = head; n; n = n->next) s += n->v;
        long b = 0; for (int i = 0; i < (8 << 20); i += 4096) b += big[i] == (char)i;
        if (s != 4950 || glob != 42 || b != 2048) { printf("bad state %d %ld\n", s, b); return 1; }
        usleep(1000);
    }
    struct upvm_migrate_stats st; upvm_migrate_stats(&st);
    printf("OK self on node %d; last %.1f us, %lu bytes\n", upvm_node_of(0), st.total_ns / 1e3, (unsigned long)st.bytes);
    FILE *f = fopen("/dev/null", "r");
    int rc = upvm_migrate(0, (upvm_node_of(0) + 1) % nodes);
    printf("with a file: rc %d: %s\n", rc, upvm_migrate_error());
    fclose(f);
    rc = upvm_migrate(0, 99);
    printf("bad node: rc %d: %s\n", rc, upvm_migrate_error());
    return 0;
}
