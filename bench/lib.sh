# bench/lib.sh - what the bench/*-compare.sh scripts share (sourced).

# kill_cwd_under DIR: SIGKILL every process (but this shell) whose current
# directory is DIR or below it: what a benchmark's jobs leave when it is
# interrupted (they all run in its work directory).
kill_cwd_under() {
    local dir=$1 p cwd
    for p in /proc/[0-9]*; do
        [ "${p#/proc/}" = $$ ] && continue
        cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
        case "$cwd" in "$dir" | "$dir"/*) kill -KILL "${p#/proc/}" 2>/dev/null ;; esac
    done
}
