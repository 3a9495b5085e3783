/*
 * control.c - the launcher's part of the control socket (control.h): the
 * socket's name, and its removal when the job is over.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node/control.h"

struct node_ctl_where node_ctl_where;

void node_ctl_prepare(pid_t launcher)
{
    struct node_ctl_where *w = &node_ctl_where;
    w->pid = (long)launcher;
    w->path[0] = w->tmp[0] = '\0';
    if (ctl_dir_name(w->dir, sizeof w->dir) != 0 ||
        !ctl_sock_path(w->path, sizeof w->path, w->dir, w->pid) ||
        (size_t)snprintf(w->tmp, sizeof w->tmp, "%s/.job-%ld.new", w->dir, w->pid) >=
            sizeof w->tmp)
        w->path[0] = '\0'; /* node 0 says why */
}

/* Remove path if it is a socket (the name is ours, so it is our job's; the
 * check only keeps a stray file of another kind). */
static void unlink_socket(const char *path)
{
    struct stat st;
    if (path[0] && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
        (void)unlink(path);
}

void node_ctl_cleanup(void)
{
    struct node_ctl_where *w = &node_ctl_where;
    char why[CTL_REPLY_MAX];
    /* Only in a directory node 0 would use: never someone else's, or one
     * the user set up otherwise (node 0 refused it). */
    if (!w->path[0] || ctl_dir_check(w->dir, why, sizeof why) != 0)
        return;
    unlink_socket(w->path);
    unlink_socket(w->tmp); /* node 0 died between bind and rename */
    /* Nothing of ours is left in /tmp once the last job ends; a job that
     * starts meanwhile recreates the directory (control_server.c). */
    (void)rmdir(w->dir);
    w->path[0] = '\0';
}

/* The signal ends node 0: its socket goes first (unlink is safe in a
 * handler; the name is ours), then the signal does what it does. */
static void remove_and_die(int sig)
{
    static const char said[] =
        "upvm: node 0 is ended by a signal from outside: mpirun ends a job so when one of its "
        "ranks dies or a host is unreachable (mpirun's lines say which), or when it is "
        "interrupted\n";
    if (sig == SIGTERM)
        (void)!write(2, said, sizeof said - 1);
    if (node_ctl_where.path[0])
        (void)unlink(node_ctl_where.path);
    (void)raise(sig); /* SA_RESETHAND: the default action now */
}

void node_ctl_remove_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_and_die;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a handler of the program's own stays */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            (void)sigaction(sigs[i], &sa, NULL);
    }
}
