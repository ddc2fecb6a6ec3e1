#!/bin/sh
# setup.sh [INSTALL_DIR [PI_HOME [BASE_URL]]]
#
# Installs Pi (@mariozechner/pi-coding-agent, $PI_VERSION, default 0.73.1)
# into INSTALL_DIR (default /tmp/pi) with npm; its command is then
# INSTALL_DIR/node_modules/.bin/pi.
#
# With PI_HOME, also writes PI_HOME/.pi/agent/models.json: a provider "bench"
# speaking OpenAI Chat Completions at BASE_URL (default
# http://127.0.0.1:8080/v1) with one model "m", the key read from
# $OPENAI_API_KEY. That is for running Pi by hand; piboot (main.go) writes the
# same file itself into its own temporary HOME, since its server's port is
# only known once it listens.
#
# By hand, against a server at BASE_URL:
#   HOME=PI_HOME OPENAI_API_KEY=sk-... PI_OFFLINE=1 \
#     INSTALL_DIR/node_modules/.bin/pi -p --provider bench --model m "say done"
set -eu

dir=${1:-/tmp/pi}
pi_home=${2:-}
base_url=${3:-http://127.0.0.1:8080/v1}
version=${PI_VERSION:-0.73.1}

mkdir -p "$dir"
cd "$dir"
if [ ! -f package.json ]; then
	npm init -y >/dev/null
fi
installed=$(node -p "require('./node_modules/@mariozechner/pi-coding-agent/package.json').version" 2>/dev/null || true)
if [ "$installed" != "$version" ]; then
	npm install --no-audit --no-fund "@mariozechner/pi-coding-agent@$version"
fi
echo "pi $(node -p "require('./node_modules/@mariozechner/pi-coding-agent/package.json').version") at $dir/node_modules/.bin/pi"

if [ -n "$pi_home" ]; then
	mkdir -p "$pi_home/.pi/agent"
	cat >"$pi_home/.pi/agent/models.json" <<EOF
{
  "providers": {
    "bench": {
      "baseUrl": "$base_url",
      "api": "openai-completions",
      "apiKey": "OPENAI_API_KEY",
      "compat": {
        "supportsDeveloperRole": false,
        "supportsReasoningEffort": false
      },
      "models": [
        { "id": "m", "name": "m", "reasoning": false, "input": ["text"], "contextWindow": 128000, "maxTokens": 16384 }
      ]
    }
  }
}
EOF
	echo "wrote $pi_home/.pi/agent/models.json (baseUrl $base_url)"
fi
