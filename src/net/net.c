/*
 * net.c - the transport-independent part of net.h: configuration from the
 * environment, and the entry points, which check their arguments once and
 * call the running transport through its ops table (one indirect call: the
 * price of adding MPI later without touching callers).
 */
#include "net/net_impl.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/env.h"

HIDDEN struct net_running net_cur = {.ops = NULL, .node = -1, .nnodes = 0};

/* Each setting through util/env.h, which ends the process on a bad one
 * (-EINVAL: only in tests, after env_test_keep_going). */
int net_config_from_env(net_config_t *c)
{
    static const char *const idles[] = {"adaptive", "spin", "block", NULL};
    static const char *const locals[] = {"shm", "mpi", NULL};
    static const net_idle_t idle_of[] = {NET_IDLE_ADAPTIVE, NET_IDLE_SPIN, NET_IDLE_BLOCK};
    static const struct env_num ring = {.min = NET_RING_MIN, .max = NET_RING_MAX,
                                        .dflt = NET_RING_DEFAULT};
    static const struct env_num spin = {.max = 10000000000ull, .dflt = NET_SPIN_NS_DEFAULT,
                                        .unit = "nanoseconds"};
    static const struct env_num spin_max = {.max = 10000000000ull,
                                            .dflt = NET_SPIN_MAX_NS_DEFAULT,
                                            .unit = "nanoseconds"};
    uint64_t v;
    int idle, bad = 0;
    bad |= env_size("UPVM_NET_RING", &ring, &v) < 0;
    c->ring_bytes = (size_t)v;
    bad |= env_choice("UPVM_NET_IDLE", idles, 0, 0, &idle) < 0;
    c->idle = idle_of[idle];
    bad |= env_size("UPVM_NET_SPIN_NS", &spin, &c->spin_ns) < 0;
    bad |= env_size("UPVM_NET_SPIN_MAX_NS", &spin_max, &c->spin_max_ns) < 0;
    int local;
    (void)env_choice("UPVM_NET_LOCAL", locals, 0, 0, &local);
    c->local = local == 1 ? NET_LOCAL_MPI : NET_LOCAL_SHM;
    return bad ? -EINVAL : 0;
}

int net_node(void) { return net_cur.node; }
int net_nnodes(void) { return net_cur.nnodes; }

int net_sendv(int dst, const struct iovec *iov, int iovcnt)
{
    if (unlikely(!net_cur.ops))
        return -ENOTCONN;
    if (unlikely(dst < 0 || dst >= net_cur.nnodes || dst == net_cur.node ||
                 iovcnt < 1 || iovcnt > NET_IOV_MAX))
        return -EINVAL;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (unlikely(iov[i].iov_len > NET_FRAME_MAX - len))
            return -EMSGSIZE;
        len += iov[i].iov_len;
    }
    return net_cur.ops->sendv(dst, iov, iovcnt, len);
}

int net_send(int dst, const void *data, size_t len)
{
    struct iovec v = {(void *)data, len}; /* read only */
    return net_sendv(dst, &v, 1);
}

int net_poll(net_handler_fn fn, void *ctx, int max)
{
    if (unlikely(!net_cur.ops))
        return -ENOTCONN;
    return net_cur.ops->poll(fn, ctx, max > 0 ? max : 0x7fffffff);
}

int net_wait(int64_t timeout_ns)
{
    if (unlikely(!net_cur.ops))
        return -ENOTCONN;
    return net_cur.ops->wait(timeout_ns);
}

void net_wake(int node)
{
    if (net_cur.ops && node >= 0 && node < net_cur.nnodes)
        net_cur.ops->wake(node);
}

int net_flush(void)
{
    if (unlikely(!net_cur.ops))
        return -ENOTCONN;
    return net_cur.ops->flush();
}

int net_path(int dst)
{
    if (!net_cur.ops)
        return -ENOTCONN;
    if (dst < 0 || dst >= net_cur.nnodes || dst == net_cur.node)
        return -EINVAL;
    return net_cur.ops->path(dst);
}

size_t net_path_budget(int dst)
{
    int path = net_path(dst);
    if (path < 0)
        return 0;
    return net_cur.cfg.ring_bytes * (path == NET_PATH_MPI ? NET_MPI_BUDGET_FACTOR : 1);
}

void net_fini(void)
{
    if (!net_cur.ops)
        return;
    net_cur.ops->fini();
    net_cur.ops = NULL;
    net_cur.node = -1;
    net_cur.nnodes = 0;
    net_cur.events = NULL;
    net_cur.once = NULL;
}

/* ------------------------------------------------------------ membership */

static bool in_job(int node)
{
    return net_cur.ops && node >= 0 && node < net_cur.nnodes;
}

enum net_peer_state net_peer_state(int node)
{
    if (!in_job(node))
        return NET_PEER_ABSENT;
    return net_cur.ops->peer_state ? net_cur.ops->peer_state(node) : NET_PEER_UP;
}

int net_peer_status(int node)
{
    if (!in_job(node) || !net_cur.ops->peer_status)
        return 0;
    return net_cur.ops->peer_status(node);
}

int net_request_start(int node)
{
    if (!in_job(node))
        return -EINVAL;
    return net_cur.ops->request_start ? net_cur.ops->request_start(node) : -EBUSY;
}

void net_peer_forget(int node)
{
    if (in_job(node) && node != net_cur.node && net_cur.ops->forget)
        net_cur.ops->forget(node);
}

int net_request_recycle(int node)
{
    if (!in_job(node) || node == net_cur.node)
        return -EINVAL;
    return net_cur.ops->request_recycle ? net_cur.ops->request_recycle(node) : -EOPNOTSUPP;
}

void net_peer_reset(int node)
{
    if (in_job(node) && node != net_cur.node && net_cur.ops->reset)
        net_cur.ops->reset(node);
}

void *net_board(int node)
{
    if (!in_job(node) || !net_cur.ops->board)
        return NULL;
    return net_cur.ops->board(node);
}

bool net_job_once(enum net_once what)
{
    static _Atomic uint32_t here; /* without a shared word: this process's */
    _Atomic uint32_t *w = net_cur.ops && net_cur.once ? net_cur.once : &here;
    uint32_t bit = 1u << what;
    return !(atomic_fetch_or(w, bit) & bit);
}

uint32_t net_events(void)
{
    const _Atomic uint32_t *e = net_cur.events;
    return e ? atomic_load_explicit(e, memory_order_acquire) : 0;
}

#ifndef UPVM_HAVE_MPI
/* This build has no MPI transport (src/net/CMakeLists.txt). */
int net_init_mpi(const net_config_t *cfg)
{
    (void)cfg;
    return -ENOSYS;
}

int net_start_mpi(const net_config_t *cfg)
{
    (void)cfg;
    return -ENOSYS;
}

void net_mpi_set_block(size_t bytes)
{
    (void)bytes;
}

int net_mpi_test_host(int rank)
{
    (void)rank;
    return 0;
}

bool net_mpi_loaded_object(const char *path)
{
    (void)path;
    return false;
}
#endif

void net_spin_until(uint64_t deadline_ns)
{
    if (deadline_ns > net_cur.spin_until)
        net_cur.spin_until = deadline_ns;
}
