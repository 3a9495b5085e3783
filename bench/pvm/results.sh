# bench/pvm/results.sh - RESULT lines to markdown cells, for the benchmark
# scripts (sourced by bench/pvm-compare.sh, bench/proc-compare.sh and
# bench/nodes-compare.sh; bash).
#
# A RESULT line is "RESULT <bench> key=value key=value ...".
#
#   results_extract FILE BENCH VALUEFIELD KEYFIELD...
#       one "k1/k2/... median runs" line per distinct key over the RESULT
#       lines of BENCH in FILE (a key field a line lacks reads "-")
#   medians            stdin "key value" -> stdout "key median runs"
#   cell FILE KEY      the median of KEY (in µs) with its unit, "-" if none
#   cell_cs FILE KEY   the same for values printed to 0.01 µs: no digit
#                      below 10 ns ("130 ns", not "130.0 ns")
#   cell_kib FILE KEY  the median of KEY (in KiB) with its unit
#   cell_num FILE KEY  the median of KEY, as it is
#   ratio FILE A B     A / B ("12×", "1.5×"), "-" if either is missing

medians() {
    sort -k1,1 -k2,2g | awk '
        function out() { if (n) printf "%s %.6f %d\n", k, (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, n }
        $1 != k { out(); k = $1; n = 0 }
        { v[++n] = $2 }
        END { out() }'
}

results_extract() {
    local file=$1 bench=$2 val=$3; shift 3
    awk -v b="$bench" -v val="$val" -v keys="$*" '
        $1 == "RESULT" && $2 == b {
            delete f
            for (i = 3; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
            if (!(val in f)) next
            nk = split(keys, kk, " ")
            key = (kk[1] in f) ? f[kk[1]] : "-"
            for (i = 2; i <= nk; i++) key = key "/" ((kk[i] in f) ? f[kk[i]] : "-")
            print key, f[val] }' "$file" | medians
}

cell() {
    awk -v k="$2" '$1 == k { v = $2 } END {
        if (v == "") printf "-"
        else if (v < 1) printf "%.1f ns", v * 1000
        else if (v < 100) printf "%.2f µs", v
        else if (v < 1000) printf "%.0f µs", v
        else printf "%.2f ms", v / 1000 }' "$1"
}

cell_cs() {
    awk -v k="$2" '$1 == k { v = $2 } END {
        if (v == "") printf "-"
        else if (v < 1) printf "%.0f ns", v * 1000
        else if (v < 100) printf "%.2f µs", v
        else if (v < 1000) printf "%.0f µs", v
        else printf "%.2f ms", v / 1000 }' "$1"
}

cell_kib() {
    awk -v k="$2" '$1 == k { v = $2 } END {
        if (v == "") printf "-"
        else if (v < 10 && v > -10) printf "%.2f KiB", v
        else if (v < 10240) printf "%.1f KiB", v
        else printf "%.1f MiB", v / 1024 }' "$1"
}

cell_num() {
    awk -v k="$2" '$1 == k { v = $2 } END {
        if (v == "") printf "-"; else printf "%.4g", v }' "$1"
}

ratio() {
    awk -v a="$2" -v b="$3" '$1 == a { x = $2 } $1 == b { y = $2 } END {
        if (x == "" || y == "" || y == 0) printf "-"
        else if (x / y >= 10) printf "%.0f×", x / y
        else printf "%.1f×", x / y }' "$1"
}
