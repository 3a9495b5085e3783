#!/usr/bin/env bash
# format.sh - format C files with clang-format and the repository's
# .clang-format, in place.  A developer's helper: CI does not run it, and the
# tree as a whole is not formatted with it (see .clang-format for what it
# would still change); format what you write or change.
#
#   tools/format.sh FILE...            # these .c/.h files
#   tools/format.sh --changed          # the .c/.h files changed against main
#                                      # (committed since the branch left it,
#                                      # staged, unstaged or new, untracked)
#   tools/format.sh --changed=REF      # ... against REF instead of main
#   tools/format.sh --check ...        # change nothing: show the diff, and
#                                      # exit 1 when a file would change
#
# clang-format: scripts/install-deps.sh --dev (Debian 12's clang-format 14).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CHECK=0
BASE=""
files=()
for arg in "$@"; do
    case "$arg" in
        --changed) BASE=main ;;
        --changed=*) BASE=${arg#--changed=} ;;
        --check) CHECK=1 ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "format: unknown option '$arg' (--changed[=REF], --check, -h)" >&2; exit 2 ;;
        *) files+=("$arg") ;;
    esac
done

command -v clang-format >/dev/null 2>&1 || {
    echo "format: clang-format is not installed (scripts/install-deps.sh --dev)" >&2; exit 2; }

if [ -n "$BASE" ]; then
    [ ${#files[@]} -eq 0 ] || { echo "format: --changed takes no files" >&2; exit 2; }
    cd "$ROOT"
    fork=$(git merge-base "$BASE" HEAD) || { echo "format: no common history with '$BASE'" >&2; exit 2; }
    while IFS= read -r f; do
        [ -f "$f" ] && files+=("$f")
    done < <({ git diff --name-only --diff-filter=d "$fork" -- '*.c' '*.h'
               git ls-files --others --exclude-standard -- '*.c' '*.h'; } | sort -u)
    [ ${#files[@]} -gt 0 ] || exit 0
elif [ ${#files[@]} -eq 0 ]; then
    echo "format: which files? (FILE..., or --changed; -h for help)" >&2; exit 2
fi

status=0
for f in "${files[@]}"; do
    case "$f" in
        *.c|*.h) ;;
        *) echo "format: $f: not a .c or .h file, left as it is" >&2; continue ;;
    esac
    [ -f "$f" ] || { echo "format: $f: no such file" >&2; status=2; continue; }
    if [ "$CHECK" = 1 ]; then
        clang-format --style="file:$ROOT/.clang-format" "$f" \
            | diff -u --label "$f" --label "$f (formatted)" "$f" - || { [ $status = 2 ] || status=1; }
    else
        clang-format --style="file:$ROOT/.clang-format" -i "$f"
    fi
done
exit $status
