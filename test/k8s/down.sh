#!/usr/bin/env bash
# Stops the test cluster and removes everything up.sh made: its processes
# and pods (all in one cgroup), the mounts under its folder, its cgroups,
# the pods' bridge, the files the kubelet and the CNI plugins put at fixed
# paths, and the folder itself. Nothing else: Docker, its containerd and
# anything not under the cluster's cgroup or folder are left alone.
# Safe to run twice, after a crash, and when no cluster was ever started.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
need_root down.sh

if [ -z "${K8S_LOCKED:-}" ]; then
	mkdir -p "$K8S_CACHE"
	exec 8>"$K8S_LOCK"
	flock -w 120 8 || die "another up.sh or down.sh holds $K8S_LOCK"
fi
t0=$(now)
[ -e "$K8S_DIR" ] && K8S_DIR=$(realpath "$K8S_DIR")

# Every process up.sh started, the pods' and the shims' included, is in the
# cgroup; none is needed past this point (etcd's data is removed below), so
# all are killed, again until none is left.
for _ in $(seq 100); do
	pids=$(cgroup_pids)
	[ -z "$pids" ] && break
	kill -KILL $pids 2>/dev/null
	sleep 0.1
done
[ -n "$(cgroup_pids)" ] && echo "k8s-node: processes still in the cgroup: $(cgroup_pids | tr '\n' ' ')" >&2

# Mounts: the containers' root filesystems, the pods' network namespaces
# and volumes, the kubelet's own bind mount; deepest first.
mounts() { awk -v d="$K8S_DIR" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -ru; }
for _ in $(seq 10); do
	m=$(mounts)
	[ -z "$m" ] && break
	for t in $m; do umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null; done
done

for d in $(cgroup_dirs); do
	[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
done

if ip link show "$K8S_BRIDGE" >/dev/null 2>&1; then
	for v in $(ip -o link show master "$K8S_BRIDGE" | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
		ip link del "$v" 2>/dev/null
	done
	ip link del "$K8S_BRIDGE"
fi

# Fixed paths: the kubelet's device-plugin socket and checkpoint, its links
# to our containers' logs, and the CNI results cache for our network; each
# folder goes too when that leaves it empty.
rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/kubelet_internal_checkpoint
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null
for l in /var/log/containers/*.log; do
	[ -L "$l" ] && case $(readlink "$l") in "$K8S_DIR"/*) rm -f "$l" ;; esac
done
rmdir /var/log/containers 2>/dev/null
rm -f /var/lib/cni/results/"$K8S_CNI_NET"-*
rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null

if [ -e "$K8S_DIR" ]; then
	if [ ! -e "$K8S_DIR/$K8S_MARK" ]; then
		echo "k8s-node: $K8S_DIR has no $K8S_MARK: not a folder up.sh made, so it stays" >&2
	elif [ -n "$(mounts)" ]; then
		echo "k8s-node: mounts remain under $K8S_DIR, so it stays: $(mounts | tr '\n' ' ')" >&2
	else
		rm -rf --one-file-system "$K8S_DIR"
	fi
fi
say "down in $(secs "$t0")s"
