#!/bin/sh
# The project's check: greet.sh must greet properly.
out=$(sh greet.sh nodwyn)
if [ "$out" = "Hello, nodwyn!" ]; then
  echo "ok: $out"
else
  echo "FAIL: got '$out', want 'Hello, nodwyn!'"
  exit 1
fi
