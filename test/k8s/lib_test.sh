#!/usr/bin/env bash
# Checks up.sh's two waits against what the real cluster does: node_ready
# against a node as the API server returns it to curl (pretty-printed), and
# wait_for's failure message under set -u. Takes the functions from lib.sh,
# or, when given, from the file $1 sourced after it (scripttest/testdata/old-waits.sh
# holds the versions that failed on the first real node, and must fail here).
# Needs no root and no cluster: run by scripttest/scripts_test.go.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -eq 0 ] || . "$1"

K8S_DIR=$(mktemp -d)
trap 'rm -rf "$K8S_DIR"' EXIT
mkdir -p "$K8S_DIR/logs"
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }

# The node as kube-apiserver v1.37 answers `curl /api/v1/nodes/localhost`.
node_json() {
	cat <<JSON
{
  "kind": "Node",
  "apiVersion": "v1",
  "metadata": {
    "name": "localhost"
  },
  "status": {
    "conditions": [
      {
        "type": "MemoryPressure",
        "status": "False",
        "reason": "KubeletHasSufficientMemory"
      },
      {
        "type": "Ready",
        "status": "$1",
        "reason": "KubeletReady"
      }
    ]
  }
}
JSON
}

api() { node_json True; }
( node_ready ) || fail "node_ready: a Ready node (pretty-printed, as the API server answers curl) does not count as Ready"
api() { node_json False; }
if ( node_ready ); then fail "node_ready: a node whose Ready condition is False counts as Ready"; fi
api() { node_json True | tr -d ' \n'; }
( node_ready ) || fail "node_ready: a Ready node in compact JSON does not count as Ready"

# wait_for on a daemon that is gone must say what it waited for and how long.
sleep 0.1 & echo $! >"$K8S_DIR/gone.pid"
wait
echo "the daemon's last words" >"$K8S_DIR/logs/gone.log"
out=$( (wait_for gone 1 "thing ready" false) 2>&1) && fail "wait_for succeeded on a command that fails"
case $out in
*"thing ready: not after 1s"*) ;;
*) fail "wait_for's failure says $(printf '%q' "$out"), want \"thing ready: not after 1s\"" ;;
esac
case $out in *"unbound variable"*) fail "wait_for's failure is a shell error: $out" ;; esac
case $out in *"the daemon's last words"*) ;; *) fail "wait_for's failure does not show the daemon's log" ;; esac
# ... and return at once when the command succeeds.
sleep 30 & echo $! >"$K8S_DIR/alive.pid"
alive=$!
( wait_for alive 5 "true" true ) || fail "wait_for failed on a command that succeeds"
kill "$alive"

[ "$failed" = 0 ] && echo "ok"
exit "$failed"
