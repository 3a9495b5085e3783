/*
 * cpus.h - how many CPUs this process may really use: what a job sizes
 * itself by (one node per usable CPU, architecture decision 9).
 *
 * Not the machine's online cores: under `taskset`, Slurm or a container a
 * job gets fewer, and a node per online core would put several nodes on
 * one core, where every exchange between them costs a kernel round trip
 * (a 0-byte ping-pong: 12.5 µs instead of 0.09 µs on one node).
 */
#ifndef UPVM_UTIL_CPUS_H
#define UPVM_UTIL_CPUS_H

#include "util/compiler.h"

/*
 * util_cpus_usable - the CPUs of this process's affinity mask
 * (sched_getaffinity: taskset, numactl, Slurm's binding, a cpuset), lowered
 * to a CPU quota that a cgroup sets on it (cgroup v2 cpu.max, v1
 * cpu.cfs_quota_us / cpu.cfs_period_us; the smallest along the cgroup's
 * path, rounded up: 1.5 CPUs give 2).  At least 1.
 */
int util_cpus_usable(void) HIDDEN;

/* The quota part alone, for tests and reports: the CPUs the cgroup quota
 * allows (rounded up), or 0 when there is no quota. */
int util_cpus_quota(void) HIDDEN;

#endif /* UPVM_UTIL_CPUS_H */
