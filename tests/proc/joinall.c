/*
 * joinall.c - upvm_join_all in a program built with upvmcc (process mode)
 * waits for the ULPs of its own program copy, run by test-proc.sh
 * (join-all).
 *
 *   joinall            the README's first program: 1000 workers, then
 *                      upvm_join_all; exits 0 (it used to wait for the
 *                      runtime's own ULP: a false deadlock, exit 70)
 *   joinall pvm        also a PVM task: spawns a copy of itself ("child")
 *                      that waits for a message; its upvm_join_all does not
 *                      wait for that copy (another program), then it sends
 *                      the message; the child's own workers and join follow
 */
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
#include <upvm.h>

static int done;

static void worker(int ordinal, void *arg)
{
    (void)arg;
    printf("ULP %d is worker %d\n", upvm_self(), ordinal);
    upvm_yield();
    done++; /* the copy's own global: every worker of the copy counts here */
}

static int workers(int n)
{
    if (upvm_spawn_func(worker, NULL, n, NULL, NULL) < 0)
        return 1;
    if (upvm_join_all() != 0)
        return 1;
    printf("joined %d\n", done);
    return done == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return workers(1000);
    if (strcmp(argv[1], "child") == 0) {
        pvm_recv(pvm_parent(), 1);
        int rc = workers(10);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&rc, 1, 1);
        pvm_send(pvm_parent(), 2);
        pvm_exit();
        return rc;
    }
    int child;
    if (pvm_spawn(argv[0], (char *[]){"child", NULL}, PvmTaskDefault, "", 1, &child) != 1)
        return 3;
    if (workers(100) != 0) /* returns with the child still waiting */
        return 4;
    pvm_initsend(PvmDataDefault);
    pvm_send(child, 1);
    int rc = -1;
    pvm_recv(child, 2);
    pvm_upkint(&rc, 1, 1);
    printf("child %d\n", rc);
    pvm_exit();
    return rc == 0 ? 0 : 5;
}
