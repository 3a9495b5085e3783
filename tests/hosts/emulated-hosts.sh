#!/usr/bin/env bash
# emulated-hosts.sh - N emulated hosts on this machine, for running one
# UPVM job over several "hosts" with Open MPI's mpirun (tests, benchmarks,
# by hand).  Needs root.
#
#   emulated-hosts.sh up N            make hosts 1..N (removing any leftovers
#                                     first); prints their environment as
#                                     export lines: eval "$(... up 2)"
#   emulated-hosts.sh down            remove them (and kill what runs there)
#   emulated-hosts.sh run N -- CMD... up N, run CMD with the environment
#                                     below, down however CMD ends; exits
#                                     with CMD's status
#   emulated-hosts.sh env             print the environment of the hosts up
#   emulated-hosts.sh exec K CMD...   run CMD on host K (its namespaces)
#
# Host k (1..N) is:
#   - a network namespace PREFIX-k, whose eth0 (a veth pair; the outer end
#     PREFIX-vk joins the bridge PREFIX-br of the root namespace) has the
#     address NET.k/24, and lo up.  The bridge has NET.254, so mpirun in the
#     root namespace reaches every host, and the hosts reach each other
#     over the bridge (TCP really crosses veth + bridge);
#   - its own host name, upvmhostk (a UTS namespace), and its own empty
#     /dev/shm (a tmpfs in a mount namespace of its own).  Both namespaces
#     are made once by `up` and kept (bind-mounted under STATE/ns), and the
#     launch agent (netns-agent.sh) enters them with the network namespace
#     for every process it starts there: everything started on one host
#     shares its /dev/shm, as on a real host, and what a job leaves in a
#     host's /dev/shm stays there until `down` (emulated-hosts.sh exec K ls
#     /dev/shm shows it).  The rest of the file system (/tmp, the build
#     tree) is shared by every host (but for mounts made after `up`: the
#     hosts' mount namespaces are copies), and so are the pids (no pid
#     namespace) and the cores: each host believes it owns every core, so
#     mpirun must get --bind-to none (it is in UPVM_HOSTS_MPIRUN).
#   - unlike a real remote host, a process started there by mpirun gets
#     mpirun's whole environment (the agent runs locally), not only what
#     mpirun -x passes.
#
# The environment (exported to `run`'s CMD, printed by `up` and `env`):
#   UPVM_HOSTS_N        N
#   UPVM_HOSTS_ADDRS    "NET.1 NET.2 ..."            the hosts' addresses
#   UPVM_HOSTS_NAMES    "upvmhost1 upvmhost2 ..."    their host names
#   UPVM_HOSTS_NETNS    "PREFIX-1 PREFIX-2 ..."      their network namespaces
#   UPVM_HOSTS_LIST     "NET.1,NET.2,..."            for mpirun -H (add :slots)
#   UPVM_HOSTS_NET      NET.0/24
#   UPVM_HOSTS_STATE    the state directory
#   UPVM_HOSTS_AGENT    the launch agent (Open MPI's plm_rsh_agent)
#   UPVM_HOSTS_MPIRUN   mpirun and every flag a job over the hosts needs, but
#                       -H and -np: $UPVM_HOSTS_MPIRUN -H NET.1:2,NET.2:1 -np 3 ./prog
#
# Settings (environment): UPVM_HOSTS_PREFIX (upvmh; at most 10 characters),
# UPVM_HOSTS_NAME (upvmhost: host k is called upvmhostk),
# UPVM_HOSTS_NET (10.213.77: the first three numbers of a /24 that nothing
# else on the machine uses; `up` checks and fails if it is in use),
# UPVM_HOSTS_MPIEXEC (Open MPI's mpirun; default mpirun.openmpi, else mpirun).
# One set of hosts per PREFIX at a time: `up` removes whatever an earlier,
# killed run left with the same prefix (namespaces, links, state, and the
# processes in them), and refuses while a live `run` owns them.
#
# Exit status: 0; 77 (ctest: skipped) with a one-line reason when emulated
# hosts cannot be made here (not root, no ip/nsenter/unshare/mpirun, network
# or mount namespaces refused); 1 for another failure (the subnet in use, ...);
# 2 for a usage error; `run`: CMD's status.
set -u

PREFIX=${UPVM_HOSTS_PREFIX:-upvmh}
NET=${UPVM_HOSTS_NET:-10.213.77}
NET=${NET%.0/24}
STATE=/run/$PREFIX
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=${UPVM_HOSTS_NAME:-upvmhost}
BRIDGE=$PREFIX-br
MAXN=64

say() { echo "emulated-hosts: $*" >&2; }
skip() { say "SKIPPED: $*"; exit 77; }
die() { say "$*"; exit 1; }
usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

valid_settings() {
    [[ $PREFIX =~ ^[a-z][a-z0-9]{0,9}$ ]] ||
        { say "UPVM_HOSTS_PREFIX '$PREFIX': 1 to 10 lower-case letters and digits"; exit 2; }
    [[ $NAME =~ ^[a-z][a-z0-9-]{0,50}[a-z-]$ ]] ||
        { say "UPVM_HOSTS_NAME '$NAME': lower-case letters, digits and -, not ending with a digit"; exit 2; }
    [[ $NET =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] &&
        [ "${BASH_REMATCH[1]}" -le 255 ] && [ "${BASH_REMATCH[2]}" -le 255 ] &&
        [ "${BASH_REMATCH[3]}" -le 255 ] ||
        { say "UPVM_HOSTS_NET '$NET': the first three numbers of a /24, e.g. 10.213.77"; exit 2; }
}

mpiexec() {
    local m=${UPVM_HOSTS_MPIEXEC:-}
    [ -n "$m" ] || m=$(command -v mpirun.openmpi || command -v mpirun) || return 1
    echo "$m"
}

# What `up` needs; 77 when it is not here.
check_can() {
    [ "$(id -u)" = 0 ] || skip "emulated hosts need root (network and mount namespaces)"
    local c
    for c in ip nsenter unshare mount umount hostname; do
        command -v $c >/dev/null || skip "no '$c' command"
    done
    local m
    m=$(mpiexec) || skip "no mpirun (install openmpi-bin)"
    "$m" --version 2>/dev/null | grep -qE "Open MPI|OpenRTE" ||
        skip "$m is not Open MPI's (the launch agent is Open MPI's plm_rsh_agent)"
}

# ------------------------------------------------------------------ down

# Every process of ours: in a namespace of a host, or running with the
# agent in its arguments (mpirun, and orted when it outlives its namespace).
our_pids() {
    local ns
    for ns in $(our_netns); do ip netns pids "$ns" 2>/dev/null; done
    # (agen[t]: not grep itself)
    grep -lsE -- "$STATE/agen[t]" /proc/[0-9]*/cmdline | sed 's,^/proc/,,; s,/cmdline$,,' |
        grep -vx $$
}
our_netns() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$PREFIX-[0-9]+$"; }
our_links() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
              grep -E "^$PREFIX-(br|v[0-9]+)$"; }

kill_ours() {
    local pids i
    for i in $(seq 1 50); do
        pids=$(our_pids | sort -u | tr '\n' ' ')
        [ -n "${pids// /}" ] || return 0
        [ $i = 1 ] && say "killing what still runs on the hosts: $pids"
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null
        sleep 0.1
    done
    say "processes still there after SIGKILL for 5 s: $pids"
    return 1
}

down() {
    local bad=0 ns l m
    kill_ours || bad=1
    # the kept mount and UTS namespaces, then the directory's own mount
    if [ -d "$STATE" ]; then
        for m in $(awk -v d="$STATE/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
            umount -l "$m" 2>/dev/null || { say "cannot unmount $m"; bad=1; }
        done
        if awk -v d="$STATE" '$5 == d' /proc/self/mountinfo | grep -q .; then
            umount -l "$STATE" 2>/dev/null || { say "cannot unmount $STATE"; bad=1; }
        fi
    fi
    for ns in $(our_netns); do
        ip netns del "$ns" 2>/dev/null || { say "cannot remove the namespace $ns"; bad=1; }
    done
    for l in $(our_links); do   # (a veth goes with its namespace; the bridge stays)
        ip link del "$l" 2>/dev/null || ! ip link show "$l" >/dev/null 2>&1 ||
            { say "cannot remove the link $l"; bad=1; }
    done
    rm -rf "$STATE" 2>/dev/null || { say "cannot remove $STATE"; bad=1; }
    ompi_stale
    return $bad
}

# Open MPI's session directories of the hosts (/tmp is the machine's): an
# orted that was killed leaves its own, /tmp/ompi.HOST.UID/jf.JOBFAMILY.
# Only those whose orted is gone go (another set of hosts of this machine,
# with another prefix, may have the same host names): a jf directory with
# pmix_dstor_*_PID entries (PID: its orted) none of which runs.
ompi_stale() {
    local d jf s p live
    for d in /tmp/ompi."$NAME"[0-9]*."$(id -u)"; do
        [ -d "$d" ] || continue
        for jf in "$d"/jf.*; do
            [ -d "$jf" ] || continue
            live=
            for s in "$jf"/pmix_dstor_*_*; do
                p=${s##*_}
                [[ $p =~ ^[0-9]+$ ]] || continue
                [ -n "$live" ] || live=0
                ! kill -0 "$p" 2>/dev/null || live=1
            done
            [ "$live" != 0 ] || rm -rf "$jf"
        done
        rmdir "$d" 2>/dev/null
    done
}

# ------------------------------------------------------------------- up

ip2int() { local IFS=.; set -- $1; echo $(( ($1 << 24) | ($2 << 16) | ($3 << 8) | $4 )); }

# NET.0/24 overlaps an address or a route of the machine (other than the
# default route): the one it overlaps, else nothing.
net_in_use() {
    local base len a p w
    base=$(ip2int "$NET.0")
    while read -r w; do
        [ -n "$w" ] && [ "$w" != default ] || continue
        a=${w%/*}; len=32
        [ "$a" != "$w" ] && len=${w#*/}
        [[ $a =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || continue
        [ "$len" -gt 0 ] || continue
        p=$(( len < 24 ? len : 24 ))
        if (( ($(ip2int "$a") >> (32 - p)) == (base >> (32 - p)) )); then
            echo "$w"
            return 0
        fi
    done < <(ip -4 -o addr show 2>/dev/null | awk '{print $4}'
             ip -4 route show table all 2>/dev/null | awk '$1 != "local" && $1 != "broadcast" {print $1}
                                                        $1 == "local" || $1 == "broadcast" {print $2}')
    return 1
}

write_env() {
    local n=$1 k addrs="" names="" nss="" list="" m
    for k in $(seq 1 "$n"); do
        addrs+="${addrs:+ }$NET.$k"; names+="${names:+ }$NAME$k"; nss+="${nss:+ }$PREFIX-$k"
        list+="${list:+,}$NET.$k"
    done
    m=$(mpiexec)
    # --bind-to none: each host believes it owns every core, and Open MPI
    # would bind the ranks of every host to core 0.  plm_rsh_no_tree_spawn:
    # mpirun starts every orted itself (no orted starts another through
    # the agent).  oob/btl tcp on NET only: between hosts, never loopback
    # or shared memory.
    local run="$m --allow-run-as-root --oversubscribe --bind-to none -q"
    run+=" --mca plm_rsh_agent $STATE/agent --mca plm_rsh_no_tree_spawn 1"
    run+=" --mca oob_tcp_if_include $NET.0/24 --mca btl tcp,self --mca btl_tcp_if_include $NET.0/24"
    {
        printf 'export UPVM_HOSTS_N=%q\n' "$n"
        printf 'export UPVM_HOSTS_ADDRS=%q\n' "$addrs"
        printf 'export UPVM_HOSTS_NAMES=%q\n' "$names"
        printf 'export UPVM_HOSTS_NETNS=%q\n' "$nss"
        printf 'export UPVM_HOSTS_LIST=%q\n' "$list"
        printf 'export UPVM_HOSTS_NET=%q\n' "$NET.0/24"
        printf 'export UPVM_HOSTS_STATE=%q\n' "$STATE"
        printf 'export UPVM_HOSTS_AGENT=%q\n' "$STATE/agent"
        printf 'export UPVM_HOSTS_MPIRUN=%q\n' "$run"
    } >"$STATE/env"
}

up() {
    local n=$1 k ns veth why
    [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -le $MAXN ] || { say "N: 1 to $MAXN hosts"; exit 2; }
    check_can
    if [ -f "$STATE/owner" ]; then
        local o; o=$(cat "$STATE/owner")
        if [ -n "$o" ] && kill -0 "$o" 2>/dev/null &&
           tr '\0' ' ' <"/proc/$o/cmdline" 2>/dev/null | grep -q "emulated-hosts.sh run"; then
            die "the hosts $PREFIX-* are in use by 'emulated-hosts.sh run' (pid $o)"
        fi
    fi
    down || die "cannot remove the leftovers of an earlier run (above)"
    why=$(net_in_use) && die "$NET.0/24 is in use on this machine ($why): set UPVM_HOSTS_NET to a free /24"

    trap 'down; exit 1' INT TERM
    mkdir -p "$STATE/ns" && chmod 700 "$STATE" || die "cannot create $STATE"
    # where the mount and UTS namespaces are kept: a private mount, as
    # unshare --mount=FILE requires
    if ! why=$(mount --bind "$STATE/ns" "$STATE/ns" 2>&1 && mount --make-private "$STATE/ns" 2>&1); then
        down; skip "cannot mount in $STATE: $(echo $why)"
    fi
    if ! why=$(ip link add "$BRIDGE" type bridge 2>&1); then
        down; skip "cannot create a bridge: $why"
    fi
    ip addr add "$NET.254/24" dev "$BRIDGE" && ip link set "$BRIDGE" up ||
        { down; die "cannot set up the bridge $BRIDGE"; }
    : >"$STATE/hosts"
    for k in $(seq 1 "$n"); do
        ns=$PREFIX-$k veth=$PREFIX-v$k
        if ! why=$(ip netns add "$ns" 2>&1); then
            down; [ "$k" = 1 ] && skip "ip netns add refused: $why"; die "ip netns add $ns: $why"
        fi
        if ! why=$(ip link add "$veth" type veth peer name eth0 netns "$ns" 2>&1); then
            down; [ "$k" = 1 ] && skip "cannot create a veth pair: $why"; die "veth $veth: $why"
        fi
        { ip link set "$veth" master "$BRIDGE" up &&
          ip -n "$ns" addr add "$NET.$k/24" dev eth0 &&
          ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up; } ||
            { down; die "cannot set up the network of $ns"; }
        # The host's own mount and UTS namespaces, kept: its host name, its
        # /dev/shm, and a /sys that shows its own network devices (as ip
        # netns exec does).
        touch "$STATE/ns/$k.mnt" "$STATE/ns/$k.uts"
        if ! why=$(unshare --mount="$STATE/ns/$k.mnt" --uts="$STATE/ns/$k.uts" --propagation private \
                   nsenter --net="/run/netns/$ns" sh -c \
                   "umount -l /sys && mount -t sysfs sysfs /sys && hostname $NAME$k &&
                    mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm" 2>&1); then
            down; [ "$k" = 1 ] && skip "cannot make a mount and UTS namespace: $why"
            die "the namespaces of host $k: $why"
        fi
        echo "$k $NET.$k $NAME$k $ns" >>"$STATE/hosts"
    done
    # the agent Open MPI calls (plm_rsh_agent takes a program, no arguments)
    printf '#!/bin/sh\nUPVM_HOSTS_STATE=%s exec %s "$@"\n' "$STATE" "$HERE/netns-agent.sh" >"$STATE/agent"
    chmod 755 "$STATE/agent"
    write_env "$n"
    trap - INT TERM
    say "$n host(s) up: $(awk '{printf "%s%s=%s", (NR > 1 ? ", " : ""), $3, $2}' "$STATE/hosts")" \
        "(bridge $BRIDGE $NET.254); environment: . $STATE/env"
}

# ------------------------------------------------------------- commands

valid_settings
cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    up)
        [ $# = 1 ] || usage
        up "$1"
        cat "$STATE/env"
        ;;
    down)
        [ $# = 0 ] || usage
        [ "$(id -u)" = 0 ] || skip "emulated hosts need root"
        down
        ;;
    env)
        [ -f "$STATE/env" ] || die "no hosts up ($STATE/env)"
        cat "$STATE/env"
        ;;
    exec)
        [ $# -ge 2 ] && [[ $1 =~ ^[0-9]+$ ]] || usage
        k=$1; shift
        [ -f "$STATE/ns/$k.mnt" ] || die "no host $k up"
        exec nsenter --net="/run/netns/$PREFIX-$k" --mount="$STATE/ns/$k.mnt" \
             --uts="$STATE/ns/$k.uts" --wd="$PWD" -- "$@"
        ;;
    run)
        [ $# -ge 3 ] && [ "$2" = -- ] || usage
        n=$1; shift 2
        up "$n" >/dev/null
        echo $$ >"$STATE/owner"
        # shellcheck disable=SC1091
        . "$STATE/env"
        child=
        # CMD runs in the background so that a signal to this script is
        # acted on at once (bash runs a trap only after a foreground
        # command ends); its stdin stays ours.
        finish() {
            local st=$1
            trap - EXIT INT TERM
            if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
                kill -TERM "$child" 2>/dev/null
                wait "$child" 2>/dev/null
            fi
            down || [ "$st" != 0 ] || st=1
            exit "$st"
        }
        trap 'finish $?' EXIT
        trap 'finish 130' INT
        trap 'finish 143' TERM
        exec 3<&0
        "$@" <&3 3<&- &
        child=$!
        exec 3<&-
        wait "$child"
        st=$?
        child=
        finish "$st"
        ;;
    -h|--help|help) usage ;;
    *) usage ;;
esac
