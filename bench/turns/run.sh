#!/bin/sh
# run.sh NODWYN TASK: one nodwyn run as a harness starts it (the key in the
# environment, the server in main.go at 127.0.0.1:18778), in a home, folder
# and TMPDIR of its own under ${TURNS_DIR:-/tmp/nodwyn-turns}, made on first
# use and aged an hour (the kernel floor rebuilds its ruleset while the
# directories above the denied paths are newer than its trust window).
# TASK "twenty turns" asks for 20 fs-read turns, anything else for one.
#
#   cd bench/turns && go build -o /tmp/turns-server . && /tmp/turns-server &
#   farm-bench -n 25 --vs "./run.sh ../../bin/nodwyn 'say done'" -- ./run.sh ../../bin/nodwyn "twenty turns"
set -eu
d=${TURNS_DIR:-/tmp/nodwyn-turns}
if [ ! -d "$d/proj" ]; then
	mkdir -p "$d/proj" "$d/h/.config/nodwyn" "$d/h/.local/share/nodwyn" "$d/tmp"
	for i in $(seq 0 19); do echo a > "$d/proj/a$i.txt"; done
	touch -d '1 hour ago' "$d/h/.config/nodwyn" "$d/h/.config" "$d/h/.local/share/nodwyn" "$d/h/.local/share" "$d/h/.local" "$d/h"
fi
HOME=$d/h XDG_CONFIG_HOME=$d/h/.config XDG_DATA_HOME=$d/h/.local/share TMPDIR=$d/tmp \
	OPENAI_API_KEY=sk-bench-not-a-key OPENAI_BASE_URL=http://127.0.0.1:18778/v1 NODWYN_SOCKET= NODWYN_PROFILE= \
	exec "$1" run --provider openai --model m --unattended -q -C "$d/proj" "$2"
