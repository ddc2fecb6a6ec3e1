#!/bin/sh
# make demo: a whole nodwyn session with the scripted model (no API key), on a
# copy of examples/demo/project in a temporary folder.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/nodwyn-demo-XXXXXX")
cp -R "$top/examples/demo/project/." "$work/"
echo "demo folder: $work"
echo "--- greet.sh before:"; cat "$work/greet.sh"
echo "--- nodwyn run:"
status=0
"$top/bin/nodwyn" run --script "$top/examples/demo/demo.script" -C "$work" \
  "The check (sh test.sh) fails: fix greet.sh." || status=$?
echo "--- greet.sh after:"; cat "$work/greet.sh"
echo "--- (the session's log: bin/nodwyn log ID; the folder is left at $work)"
exit $status
