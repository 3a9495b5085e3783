/*
 * hostname.h - the names a host answers to, for a job of several hosts:
 * PVM calls hosts by their short name (pvm_config), users by whatever
 * they wrote in a hostfile or --hosts (a full name, an address), so a node
 * knows its host by all of them.
 */
#ifndef UPVM_NODE_HOSTNAME_H
#define UPVM_NODE_HOSTNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "util/compiler.h"

/* Room for one host's names. */
#define NODE_ALIASES_MAX 1024

/* This host's names into buf, each NUL-terminated, the short name first
 * (gethostname up to its first dot; "localhost" if it has none), then the
 * full name if longer, then every address of its network interfaces but
 * loopback (as inet_ntop writes them), as many as fit.  Returns the bytes
 * used (> 0). */
size_t node_host_names(char *buf, size_t len) HIDDEN;

/* Is this host a standby host: one of the names in buf (node_host_names)
 * listed in UPVM_STANDBY_HOSTS (comma-separated; `upvm run` sets it for
 * the hostfile's "&" hosts)? */
bool node_host_standby(const char *names, size_t len) HIDDEN;

/* The search path a hostfile's ep= gave this host, or NULL: from
 * UPVM_HOST_EPATHS ("host=path;host=path...", set by `upvm run
 * --hostfile`), the first entry whose host is one of this host's names
 * (node_host_names) or "localhost".  Looked up once per process. */
const char *node_host_epath(void) HIDDEN;

#endif /* UPVM_NODE_HOSTNAME_H */
