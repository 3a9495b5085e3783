# lib.sh - helpers shared by scripts/demo.sh and scripts/test.sh (sourced).

# run_quiet WHAT COMMAND... - run COMMAND with its output kept in a log
# instead of on the terminal; when it fails, print the log and say WHAT
# failed, with its exit status (which run_quiet returns).
run_quiet() {
    local what=$1 log rc
    shift
    log=$(mktemp "${TMPDIR:-/tmp}/upvm-log.XXXXXX") || return 1
    "$@" >"$log" 2>&1 && { rm -f "$log"; return 0; }
    rc=$?
    cat "$log" >&2
    rm -f "$log"
    echo "== FAILED ($what, exit status $rc): $*" >&2
    return $rc
}
