# Sourced by build.sh, up.sh and down.sh: the versions of the parts, where
# they are cached, where the cluster lives, and small helpers.
# shellcheck shell=bash

K8S_VERSION=v1.37.2            # k8s.io/kubernetes: apiserver, controller-manager, scheduler, kubelet
K8S_STAGING_VERSION=v0.37.2    # the published k8s.io/* modules its ./staging replacements point at
ETCD_VERSION=v3.6.16           # go.etcd.io/etcd/server/v3
CONTAINERD_VERSION=v2.4.2      # github.com/containerd/containerd/v2
CNI_VERSION=v1.10.0            # github.com/containernetworking/plugins

K8S_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# The build cache: one folder per part and version, so a version bump
# builds that part again and leaves the others alone.
K8S_CACHE=${SANDTRAY_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandtray/k8s}
KUBE_BIN=$K8S_CACHE/kubernetes-$K8S_VERSION
KUBECTL_BIN=$K8S_CACHE/kubectl-$K8S_VERSION
ETCD_BIN=$K8S_CACHE/etcd-$ETCD_VERSION
CONTAINERD_BIN=$K8S_CACHE/containerd-$CONTAINERD_VERSION
CNI_BIN=$K8S_CACHE/cni-plugins-$CNI_VERSION
# The pause image is versioned by its source.
PAUSE_DIR=$K8S_CACHE/pause-$(sha256sum "$K8S_HERE/pause.c" | cut -c1-12)
PAUSE_IMAGE=sandtray.local/pause:static

# The cluster: everything up.sh makes at run time lives in this folder
# (PKI, configs, logs, etcd's data, containerd's and the kubelet's state),
# except what the programs put at fixed paths (see down.sh).
K8S_DIR=${SANDTRAY_K8S_DIR:-/var/tmp/sandtray-k8s}
K8S_KUBECONFIG=$K8S_DIR/kubeconfig
K8S_LOCK=$K8S_CACHE/cluster.lock  # up.sh and down.sh take turns
K8S_MARK=.sandtray-k8s          # a file in K8S_DIR: down.sh removes only a folder that has it
K8S_NODE=localhost              # the node's name (the kubelet refuses a loopback node IP)
K8S_CGROUP=sandtray-k8s         # every process up.sh starts, and the pods, live under this cgroup
K8S_BRIDGE=sandtrayk8s0
K8S_CNI_NET=sandtray-k8s-pods
K8S_POD_CIDR=10.244.0.0/24
K8S_SERVICE_CIDR=10.96.0.0/24

# Ports, all on 127.0.0.1.
ETCD_PORT=26379 ETCD_PEER_PORT=26380 ETCD_METRICS_PORT=26381
APISERVER_PORT=26443 CM_PORT=26257 SCHEDULER_PORT=26259
KUBELET_PORT=26250 KUBELET_HEALTHZ_PORT=26248

# The runc that containerd's shim runs: Debian's, which Docker uses too.
RUNC=${SANDTRAY_K8S_RUNC:-$(command -v runc || echo /usr/sbin/runc)}

# arch prints the machine's architecture as Go and OCI images name it.
arch() { case $(uname -m) in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) uname -m ;; esac; }

# now prints the time in milliseconds.
now() { echo $(( $(date +%s%N) / 1000000 )); }

# secs prints the seconds since a time from now, with one decimal.
secs() { local ms=$(( $(now) - $1 )); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }

say() { echo "k8s-node: $*"; }
die() { echo "k8s-node: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "$1 runs as root (it starts a kubelet and containerd)"; }

# cgroup_dirs prints the folder of K8S_CGROUP in every cgroup hierarchy:
# each v1 controller's, or the one v2 tree.
cgroup_dirs() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup/$K8S_CGROUP"
		return
	fi
	local d
	for d in /sys/fs/cgroup/*/; do
		[ -f "${d}cgroup.procs" ] && [ ! -L "${d%/}" ] && echo "${d}$K8S_CGROUP"
	done
}

# track_cgroup is the one folder whose processes down.sh kills: the pids
# controller's on cgroup v1, the tree on v2.
track_cgroup() {
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup/$K8S_CGROUP"
	else
		echo "/sys/fs/cgroup/pids/$K8S_CGROUP"
	fi
}

# cgroup_pids prints every process under K8S_CGROUP.
cgroup_pids() {
	local root
	root=$(track_cgroup)
	[ -d "$root" ] || return 0
	find "$root" -name cgroup.procs -exec cat {} + 2>/dev/null
}

# wait_for NAME SECONDS WHAT COMMAND...: waits for COMMAND to succeed while
# daemon NAME (its PID in $K8S_DIR/NAME.pid) runs; shows NAME's log and
# fails when it exits or time is up. The seconds are kept before the shift:
# under set -u, $2 after it is an unbound variable, not the limit.
wait_for() {
	local name=$1 secs=$2 what=$3
	local limit=$(($(now) + secs * 1000))
	shift 3
	until "$@" >/dev/null 2>&1; do
		if ! kill -0 "$(cat "$K8S_DIR/$name.pid")" 2>/dev/null || [ "$(now)" -gt "$limit" ]; then
			tail -n 30 "$K8S_DIR/logs/$name.log" >&2
			die "$what: not after ${secs}s ($name's log: $K8S_DIR/logs/$name.log; make k8s-down cleans up)"
		fi
		sleep 0.1
	done
}

# node_ready succeeds when the API server (api, up.sh's curl) says node
# K8S_NODE is Ready. The API server pretty-prints its answers to curl, so
# the blanks go before the match: the condition's type comes before its
# status in every encoding it writes.
node_ready() { api "/api/v1/nodes/$K8S_NODE" | tr -d ' \t\n' | grep -q '"type":"Ready","status":"True"'; }
