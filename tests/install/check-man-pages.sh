#!/bin/bash
# check-man-pages.sh SOURCE_DIR - the man pages (man/) cover the API:
# every function <upvm.h> and <upvm_svm.h> export (UPVM_API) and the UPVM_TASK macro has a
# page or a .so link in man/man3; every .so link names a page that exists;
# and, where man is installed, every page renders without a warning.
set -u
src=$(cd "${1:?usage: $0 SOURCE_DIR}" && pwd) || exit 2
fail() { echo "FAIL: $*"; exit 1; }
cd "$src/man" || fail "no man/ in $src"

mapfile -t calls < <(cat "$src/include/upvm.h" "$src/include/upvm_svm.h" | grep -E '^(UPVM_NORETURN )?UPVM_API' |
    grep -oE 'upvm_[a-z_0-9]+ *\(' | tr -d ' (' | sort -u)
[ ${#calls[@]} -ge 30 ] || fail "found only ${#calls[@]} calls in include/upvm.h: ${calls[*]}"
for c in "${calls[@]}" UPVM_TASK; do
    [ -f "man3/$c.3" ] || fail "$c (include/upvm.h) has no man page: add it to a page of man/man3 and a link man3/$c.3"
done
for f in man1/*.1 man3/*.3; do
    target=$(sed -n 's/^\.so //p' "$f")
    [ -z "$target" ] || [ -f "$target" ] || fail "$f links to $target, which does not exist"
done
echo "ok: ${#calls[@]} calls of <upvm.h> and UPVM_TASK have pages; the links hold"

if command -v man >/dev/null; then
    for f in man1/*.1 man3/*.3; do
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
        [ -z "$warnings" ] || fail "man -l $f: $warnings"
    done
    echo "ok: every page renders without a warning"
fi
echo PASS
