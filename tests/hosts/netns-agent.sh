#!/usr/bin/env bash
# netns-agent.sh - the "remote shell" of the emulated hosts
# (emulated-hosts.sh): Open MPI's mpirun calls it, as it would call ssh,
# to start its daemon (orted) on a host (--mca plm_rsh_agent; emulated-hosts.sh
# up writes STATE/agent, which sets UPVM_HOSTS_STATE and runs this).
#
#   netns-agent.sh [ssh/rsh options] HOST [COMMAND...]
#
# HOST: an emulated host's address (10.213.77.2), name (upvmhost2) or
# network namespace (upvmh-2), with or without user@.  Options before HOST
# are skipped (Open MPI 4.1.4 passes none to an agent that is not ssh or
# rsh; its argv is `HOST orted -mca ess "env" ... -mca orte_hnp_uri
# "...;tcp://..."`).
#
# Like ssh, COMMAND's words are joined with spaces and run by sh -c (Open
# MPI quotes its arguments for that remote shell: the quotes in "env" above
# are the shell's), in the host's network, mount (its /dev/shm) and UTS
# (its host name) namespaces, in the caller's working directory.  No
# COMMAND: an interactive shell there.  Exit status: COMMAND's, or 255 (as
# ssh) when HOST is not an emulated host.
set -u
state=${UPVM_HOSTS_STATE:-/run/${UPVM_HOSTS_PREFIX:-upvmh}}

while [ $# -gt 0 ]; do
    case $1 in
        --) shift; break ;;
        -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;   # ssh's options that take a value
        -?*) shift ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: netns-agent.sh [options] HOST [COMMAND...]" >&2; exit 255; }
host=${1#*@}
shift

# STATE/hosts: "k address name namespace" per host
k= ns=
if [ -f "$state/hosts" ]; then
    while read -r hk haddr hname hns; do
        if [ "$host" = "$haddr" ] || [ "$host" = "$hname" ] || [ "$host" = "$hns" ]; then
            k=$hk ns=$hns
            break
        fi
    done <"$state/hosts"
fi
if [ -z "$k" ]; then
    echo "netns-agent: $host: not an emulated host ($state/hosts:" \
         "$(awk '{printf " %s", $2}' "$state/hosts" 2>/dev/null))" >&2
    exit 255
fi

[ $# -gt 0 ] || set -- "${SHELL:-/bin/sh}" -i
exec nsenter --net="/run/netns/$ns" --mount="$state/ns/$k.mnt" --uts="$state/ns/$k.uts" \
     --wd="$PWD" -- sh -c "$*"
