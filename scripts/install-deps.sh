#!/usr/bin/env bash
# install-deps.sh - install what UPVM needs to build, test and benchmark on
# Debian 12, and only what is missing.  Called by scripts/demo.sh,
# scripts/test.sh and .ci/run; safe to run again.
#
#   scripts/install-deps.sh           # build and test (what CI needs; Open
#                                     # MPI for the MPI transport and its
#                                     # tests, MPICH for the check that it
#                                     # builds with MPICH too)
#   scripts/install-deps.sh --bench   # also the peers of the comparison
#                                     # benchmarks: genuine PVM's pvmd (pvm;
#                                     # bench/nodes-compare.sh,
#                                     # bench/hosts-compare.sh), libaio and
#                                     # liburing (bench/blt-compare.sh's AIO
#                                     # and io_uring peers)
#   scripts/install-deps.sh --dev     # also the developer's tools: clang-format
#                                     # (tools/format.sh, .clang-format)
set -euo pipefail

BENCH=0
DEV=0
for arg in "$@"; do
    case "$arg" in
        --bench) BENCH=1 ;;
        --dev) DEV=1 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-deps: unknown option '$arg' (--bench, --dev)" >&2; exit 2 ;;
    esac
done

# command-or-file -> Debian package
need=()
want() { # $1: how to test (a command name or an absolute path), $2: package
    case "$1" in
        /*) [ -e "$1" ] || need+=("$2") ;;
        *)  command -v "$1" >/dev/null 2>&1 || need+=("$2") ;;
    esac
}
want gcc gcc
want g++ g++            # upvmc++ (tests/install), headers-compile-as-cxx
want gfortran gfortran  # upvmfort (tests/install)
want pkg-config pkgconf # tests/install: programs built with upvm.pc
want dpkg-shlibdeps dpkg-dev # cpack -G DEB (tests/install): the .deb's library dependencies
want man man-db         # tests/install: the man pages render, man finds them installed
want cmake cmake
want ninja ninja-build
want make make
want python3 python3
want taskset util-linux
want nsenter util-linux  # tests/hosts: emulated hosts (with unshare, mount)
want ip iproute2         # tests/hosts: network namespaces, veth, bridge
want gdb gdb          # tests/tools, tests/debug: the gdb extension, upvm run --gdb, upvm attach
want addr2line binutils  # crash reports' file:line (src/core/srcline.c)
want clang clang      # scripts/fuzz.sh: the libFuzzer targets (fuzz/), run by scripts/test.sh
want /usr/include/x86_64-linux-gnu/sys/mman.h libc6-dev
want /usr/include/pvm3.h pvm-dev   # the reference header tests/msg compares pvm3.h with
want /usr/share/doc/pvm-examples/examples.tar.gz pvm-examples  # the examples tests/examples builds (never downloaded at test time)
want /usr/include/otf2/otf2.h libopen-trace-format2-dev  # upvm trace convert: OTF2 archives (docs/tracing.md)
want otf2-print otf2-tools  # tests/trace: the OTF2 archives read back with otf2-print
want /usr/lib/python3/dist-packages/matplotlib/__init__.py python3-matplotlib  # upvm trace summary --plot (optional for users)
want gfortran gfortran  # tests/fortran: Fortran PVM programs (the Fortran binding, pvm-examples' Fortran examples)
# MPI, by the explicit names: with both installed, mpicc and mpirun are
# alternatives that may name either (cmake/mpi.cmake).  Debian keeps them
# on Open MPI (priority 50 against MPICH's 40), whatever the order.
want mpicc.openmpi libopenmpi-dev  # the MPI transport (src/net/mpi.c), bench/nodes-compare.sh
want mpirun.openmpi openmpi-bin    # test-net-mpi-*, bench_net_mpi, nodes-compare
want mpicc.mpich libmpich-dev      # net-mpi-builds-with-mpich
want mpiexec.mpich mpich           # net-mpi-builds-with-mpich runs test-net-mpi under MPICH
if [ "$BENCH" = 1 ]; then # opt-in: never needed to build or test
    want pvmd pvm                        # genuine PVM 3.4.6's daemon (pvm-compare, proc-compare, nodes-compare, hosts-compare, blt-compare)
    want /usr/include/libaio.h libaio-dev     # blt-compare: the Linux AIO peer of the overlap benchmark
    want /usr/include/liburing.h liburing-dev # blt-compare: the io_uring peers
fi
if [ "$DEV" = 1 ]; then # opt-in: a developer's tools, never run by CI
    want clang-format clang-format       # tools/format.sh with the root's .clang-format
fi
for extra in ${UPVM_EXTRA_PACKAGES:-}; do need+=("$extra"); done

[ ${#need[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${need[*]}" >&2; exit 1; }
    SUDO=sudo
fi
echo "install-deps: installing ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
