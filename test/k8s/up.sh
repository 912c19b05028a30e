#!/usr/bin/env bash
# Starts a single-node Kubernetes cluster for the tests, from nothing to a
# Ready node with the sandbox image imported, and writes its kubeconfig to
# $K8S_KUBECONFIG (lib.sh; /var/tmp/sandtray-k8s/kubeconfig unless
# SANDTRAY_K8S_DIR moves the cluster). Builds the parts first if they are not
# cached. Runs as root; down.sh removes everything it starts.
#
# SANDTRAY_K8S_IMAGES: Docker images to import (default sandtray/sandbox:latest).
# SANDTRAY_K8S_SNAPSHOTTER: overlayfs or native (default: overlayfs where it mounts).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$K8S_HERE/config.sh"
need_root up.sh
for c in openssl curl ip docker unshare flock ss; do
	command -v $c >/dev/null || die "$c is not installed"
done

"$K8S_HERE/build.sh"

mkdir -p "$K8S_CACHE"
exec 8>"$K8S_LOCK"
flock -n 8 || die "another up.sh or down.sh is running on $K8S_DIR"
[ -z "$(cgroup_pids)" ] || die "a test cluster is already running in $K8S_DIR: stop it with make k8s-down (test/k8s/down.sh)"
if [ -e "$K8S_DIR" ] || [ -d "$(track_cgroup)" ] || ip link show "$K8S_BRIDGE" >/dev/null 2>&1; then
	say "cleaning up what an earlier run left"
	K8S_LOCKED=1 "$K8S_HERE/down.sh"
	[ ! -e "$K8S_DIR" ] || die "$K8S_DIR is still there: down.sh says why"
fi
for port in $ETCD_PORT $ETCD_PEER_PORT $ETCD_METRICS_PORT $APISERVER_PORT $CM_PORT $SCHEDULER_PORT $KUBELET_PORT $KUBELET_HEALTHZ_PORT; do
	[ -z "$(ss -Hltn "sport = :$port")" ] || die "port $port is taken: the test cluster needs it (lib.sh)"
done
[ -z "$(ip -4 route show match "${K8S_POD_CIDR%/*}" | grep -v '^default')" ] || die "$K8S_POD_CIDR is routed on this host already; the pods need it"

t0=$(now)
phase() { say "[$(secs "$t0")s] $*"; }
mkdir -p "$K8S_DIR"/{logs,pod-logs,kubelet,etcd}
touch "$K8S_DIR/$K8S_MARK"

# The snapshotter: overlayfs where the kernel mounts it on this filesystem,
# else native (a full copy of the image per container: slower, more disk).
SNAPSHOTTER=${SANDTRAY_K8S_SNAPSHOTTER:-}
if [ -z "$SNAPSHOTTER" ]; then
	o=$K8S_DIR/overlay-probe
	mkdir -p "$o"/{l,u,w,m}
	SNAPSHOTTER=native
	if mount -t overlay overlay -o "lowerdir=$o/l,upperdir=$o/u,workdir=$o/w" "$o/m" 2>/dev/null; then
		umount "$o/m"
		SNAPSHOTTER=overlayfs
	fi
	rm -rf "$o"
fi

pki
kubeconfig "$K8S_KUBECONFIG" admin
[ -n "${SUDO_UID:-}" ] && chown "$SUDO_UID:${SUDO_GID:-}" "$K8S_KUBECONFIG" # for the tests run by who ran sudo
for c in kubelet controller-manager scheduler; do kubeconfig "$K8S_DIR/$c.kubeconfig" $c; done
containerd_config
cni_config
kubelet_config
phase "PKI and configs written (snapshotter $SNAPSHOTTER)"

# Every process started here, and the pods, go under one cgroup, so that
# down.sh finds them all even after a crash. The kubelet wants its
# cgroupRoot to exist in every hierarchy.
for d in $(cgroup_dirs); do
	mkdir -p "$d"
	if [ -f "$d/../cpuset.cpus" ]; then
		cat "$d/../cpuset.cpus" >"$d/cpuset.cpus"
		cat "$d/../cpuset.mems" >"$d/cpuset.mems"
	fi
done
mkdir -p "$(track_cgroup)/daemons"

# launch NAME COMMAND...: starts a daemon in its own session, inside our
# cgroup, its output in logs/NAME.log and its PID in NAME.pid.
launch() {
	local name=$1
	shift
	(
		echo "$BASHPID" >"$(track_cgroup)/daemons/cgroup.procs"
		exec 8>&- # the daemons must not hold up.sh's lock
		exec setsid "$@" </dev/null
	) >"$K8S_DIR/logs/$name.log" 2>&1 &
	echo $! >"$K8S_DIR/$name.pid"
}

PLATFORM=linux/$(arch)
P=$K8S_DIR/pki
api() { curl -sf --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "https://127.0.0.1:$APISERVER_PORT$1"; }
ctr() { "$CONTAINERD_BIN/ctr" -a "$K8S_DIR/containerd/containerd.sock" -n k8s.io "$@"; }

launch etcd "$ETCD_BIN/etcd" --name sandtray-k8s --data-dir "$K8S_DIR/etcd" --unsafe-no-fsync \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "sandtray-k8s=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT"
launch containerd env PATH="$CONTAINERD_BIN:$PATH" "$CONTAINERD_BIN/containerd" --config "$K8S_DIR/containerd/config.toml"
wait_for etcd 60 "etcd healthy" curl -sf "http://127.0.0.1:$ETCD_PORT/health"
phase "etcd up"

# The API server advertises the host's own address: it refuses a loopback
# one, and nothing dials it (there is no kube-proxy). It listens on 127.0.0.1.
launch kube-apiserver "$KUBE_BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
	--bind-address 127.0.0.1 --secure-port "$APISERVER_PORT" --cert-dir "$K8S_DIR/apiserver" \
	--tls-cert-file "$P/apiserver.crt" --tls-private-key-file "$P/apiserver.key" --client-ca-file "$P/ca.crt" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--service-cluster-ip-range "$K8S_SERVICE_CIDR" --service-account-issuer https://kubernetes.default.svc \
	--service-account-key-file "$P/sa.pub" --service-account-signing-key-file "$P/sa.key" \
	--kubelet-client-certificate "$P/apiserver-kubelet-client.crt" --kubelet-client-key "$P/apiserver-kubelet-client.key" \
	--kubelet-certificate-authority "$P/ca.crt" --kubelet-preferred-address-types Hostname --profiling=false

wait_for containerd 60 "containerd answering" ctr version
ctr images import --platform "$PLATFORM" --snapshotter "$SNAPSHOTTER" "$PAUSE_DIR/pause-oci.tar" >/dev/null
phase "containerd up, pause image imported"

# The sandbox image comes from Docker; importing it is the longest step, so
# it runs while the control plane and the kubelet start.
images=${SANDTRAY_K8S_IMAGES-sandtray/sandbox:latest}
(
	for i in $images; do
		docker save "$i" | ctr images import --platform "$PLATFORM" --snapshotter "$SNAPSHOTTER" - >/dev/null ||
			{ echo "import of $i failed" >&2; exit 1; }
	done
) >"$K8S_DIR/logs/import.log" 2>&1 &
import=$!

# The kubelet sets six kernel sysctls to the values it wants, host-wide
# (vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1, ...).
# It runs in a mount namespace of its own where those files are covered by
# files that already hold its values, so the host keeps its settings. Its
# root folder is a shared mount made before, so the volumes it mounts there
# reach containerd and runc in the host's namespace.
mount --bind "$K8S_DIR/kubelet" "$K8S_DIR/kubelet"
mount --make-rshared "$K8S_DIR/kubelet"
mkdir -p "$K8S_DIR/sysctl"
kubelet_ns='
	set -e
	mount --make-rprivate /proc
	for s in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
		kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
		f=$1/sysctl/$(echo "${s%=*}" | tr / .)
		echo "${s#*=}" >"$f"
		mount --bind "$f" "/proc/sys/${s%=*}"
	done
	shift
	exec "$@"'
launch kubelet unshare -m --propagation unchanged bash -c "$kubelet_ns" kubelet-ns "$K8S_DIR" \
	"$KUBE_BIN/kubelet" --config "$K8S_DIR/kubelet.yaml" \
	--kubeconfig "$K8S_DIR/kubelet.kubeconfig" --root-dir "$K8S_DIR/kubelet" --hostname-override "$K8S_NODE"

wait_for kube-apiserver 180 "API server ready" api /readyz
phase "API server ready"
for c in controller-manager scheduler; do
	port=$CM_PORT
	[ $c = scheduler ] && port=$SCHEDULER_PORT
	extra=()
	[ $c = controller-manager ] && extra=(--service-account-private-key-file "$P/sa.key" --root-ca-file "$P/ca.crt"
		--use-service-account-credentials --service-cluster-ip-range "$K8S_SERVICE_CIDR" --controllers '*,-nodeipam')
	launch kube-$c "$KUBE_BIN/kube-$c" --kubeconfig "$K8S_DIR/$c.kubeconfig" \
		--authentication-kubeconfig "$K8S_DIR/$c.kubeconfig" --authorization-kubeconfig "$K8S_DIR/$c.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$port" --cert-dir "$K8S_DIR/$c" --leader-elect=false --profiling=false "${extra[@]}"
done

wait_for kubelet 180 "node $K8S_NODE Ready" node_ready
phase "node $K8S_NODE Ready"
# A pod in "default" needs its ServiceAccount (and the CA configmap when it
# mounts a token): the controller-manager makes both.
wait_for kube-controller-manager 120 "default ServiceAccount" api /api/v1/namespaces/default/serviceaccounts/default
wait_for kube-controller-manager 120 "kube-root-ca.crt" api /api/v1/namespaces/default/configmaps/kube-root-ca.crt
wait "$import" || { cat "$K8S_DIR/logs/import.log" >&2; die "importing $images into containerd failed"; }
[ -z "$images" ] || phase "imported $images"
say "cluster up in $(secs "$t0")s: KUBECONFIG=$K8S_KUBECONFIG"
