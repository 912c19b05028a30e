#!/usr/bin/env bash
# Builds the parts of the single-node test cluster from the Go module proxy
# into the cache (lib.sh says where), each part once per version:
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubelet (k8s.io/kubernetes),
#   etcd (go.etcd.io/etcd/server/v3), containerd + ctr + its runc shim,
#   the CNI plugins bridge, host-local and loopback, and a static pause image.
# With --kubectl (or SANDTRAY_K8S_KUBECTL=1) it builds kubectl too, for debugging.
#
# A part is built into a temporary folder and renamed into place when done,
# so an interrupted build starts that part again. Builds run one package at a
# time (SANDTRAY_K8S_BUILD_JOBS raises it) under nice 10 (SANDTRAY_K8S_NICE):
# the machine is shared.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

kubectl=${SANDTRAY_K8S_KUBECTL:-}
for a in "$@"; do
	case $a in
	--kubectl) kubectl=1 ;;
	*) die "usage: build.sh [--kubectl]" ;;
	esac
done

mkdir -p "$K8S_CACHE"
exec 9>"$K8S_CACHE/.build.lock"
flock -n 9 || { say "another build.sh is running; waiting for it"; flock 9; }

# Their own Go build cache: it holds gigabytes of Kubernetes packages, and a
# version bump rebuilds from it; removing the whole cache starts cold.
export GOWORK=off GOTOOLCHAIN=local GOCACHE=$K8S_CACHE/go-build
JOBS=${SANDTRAY_K8S_BUILD_JOBS:-1}
NICE=(nice -n "${SANDTRAY_K8S_NICE:-10}")
start=$(now)
built=0

# moddir downloads a module version and prints its folder in the module cache.
moddir() {
	go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

# published_modfile copies a module's go.mod and go.sum to $3 with every
# replacement whose target starts with $2 pointed at the published modules
# of version $4: the module proxy serves k8s.io/kubernetes without its
# ./staging tree and etcd's server without its ../ siblings.
published_modfile() {
	local src=$1 prefix=$2 out=$3 version=$4 m
	mkdir -p "$out"
	cp "$src/go.mod" "$src/go.sum" "$out/"
	chmod u+w "$out/go.mod" "$out/go.sum"
	for m in $(sed -n "s|^[[:space:]]*\([^[:space:]]*\) => $prefix.*|\1|p" "$out/go.mod"); do
		go mod edit -dropreplace="$m" -require="$m@$version" "$out/go.mod"
	done
}

# gobuild builds packages of the module in folder $1 into folder $2 with
# ldflags $3, one timed go build per package; GOMOD_FILE, when set, is the
# go.mod to use instead of the module's own (the module cache is read-only).
gobuild() {
	local dir=$1 out=$2 ldflags=$3 pkg t
	shift 3
	local flags=(-buildvcs=false -trimpath -p="$JOBS" -ldflags "-s -w $ldflags" -o "$out/")
	[ -n "${GOMOD_FILE:-}" ] && flags+=(-mod=mod -modfile="$GOMOD_FILE")
	for pkg in "$@"; do
		local TIMEFORMAT="k8s-node:   ${pkg##*/} built in %1Rs (CPU: %1Us user, %1Ss system)"
		time (cd "$dir" && "${NICE[@]}" go build "${flags[@]}" "$pkg")
	done
}

# part builds one part with function $3 into folder $2 unless it is there.
part() {
	local name=$1 dir=$2 fn=$3 t
	if [ -d "$dir" ]; then
		say "$name: cached in $dir"
		return
	fi
	command -v go >/dev/null || die "go is not installed"
	command -v gcc >/dev/null || die "gcc is not installed (apt-get install gcc libc6-dev): the pause image is C"
	say "$name: building into $dir"
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	local TIMEFORMAT="k8s-node: $name built in %1Rs (CPU: %1Us user, %1Ss system)"
	time "$fn" "$dir.tmp"
	mv "$dir.tmp" "$dir"
	built=1
}

kube_ldflags() {
	local v=${K8S_VERSION#v} pkg=k8s.io/component-base/version
	echo "-X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=${v%%.*} -X $pkg.gitMinor=$(echo "$v" | cut -d. -f2) -X $pkg.gitTreeState=clean"
}

build_kubernetes() {
	local src
	src=$(moddir "k8s.io/kubernetes@$K8S_VERSION")
	published_modfile "$src" ./staging/ "$K8S_CACHE/modfiles/kubernetes-$K8S_VERSION" "$K8S_STAGING_VERSION"
	GOMOD_FILE=$K8S_CACHE/modfiles/kubernetes-$K8S_VERSION/go.mod \
		gobuild "$src" "$1" "$(kube_ldflags)" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kubelet
}

build_kubectl() {
	local src
	src=$(moddir "k8s.io/kubernetes@$K8S_VERSION")
	published_modfile "$src" ./staging/ "$K8S_CACHE/modfiles/kubernetes-$K8S_VERSION" "$K8S_STAGING_VERSION"
	GOMOD_FILE=$K8S_CACHE/modfiles/kubernetes-$K8S_VERSION/go.mod gobuild "$src" "$1" "$(kube_ldflags)" ./cmd/kubectl
}

build_etcd() {
	local src
	src=$(moddir "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
	published_modfile "$src" ../ "$K8S_CACHE/modfiles/etcd-$ETCD_VERSION" "$ETCD_VERSION"
	GOMOD_FILE=$K8S_CACHE/modfiles/etcd-$ETCD_VERSION/go.mod gobuild "$src" "$1" "" .
	mv "$1/server" "$1/etcd" # go build names it after go.etcd.io/etcd/server/v3
}

build_containerd() {
	local src pkg=github.com/containerd/containerd/v2/version
	src=$(moddir "github.com/containerd/containerd/v2@$CONTAINERD_VERSION")
	gobuild "$src" "$1" "-X $pkg.Version=$CONTAINERD_VERSION -X $pkg.Revision=module-proxy" \
		./cmd/containerd ./cmd/ctr ./cmd/containerd-shim-runc-v2
}

build_cni() {
	local src
	src=$(moddir "github.com/containernetworking/plugins@$CNI_VERSION")
	gobuild "$src" "$1" "" ./plugins/main/bridge ./plugins/ipam/host-local ./plugins/main/loopback
}

# build_pause compiles pause.c statically and wraps it in an OCI image
# layout archive that ctr imports: one layer, built reproducibly.
build_pause() {
	local d=$1 layer config manifest
	gcc -Os -static -o "$d/pause" "$K8S_HERE/pause.c"
	strip "$d/pause"
	mkdir -p "$d/oci/blobs/sha256" "$d/rootfs"
	mv "$d/pause" "$d/rootfs/pause"
	tar -C "$d/rootfs" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/layer.tar" pause
	layer=$(blob "$d" "$d/layer.tar")
	printf '{"architecture":"%s","os":"linux","config":{"User":"65535:65535","Entrypoint":["/pause"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$(arch)" "${layer%% *}" >"$d/config.json"
	config=$(blob "$d" "$d/config.json")
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
		${config} ${layer} >"$d/manifest.json"
	manifest=$(blob "$d" "$d/manifest.json")
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		${manifest} "$PAUSE_IMAGE" "${PAUSE_IMAGE##*:}" >"$d/oci/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$d/oci/oci-layout"
	tar -C "$d/oci" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$d/pause-oci.tar" oci-layout index.json blobs
	rm -rf "$d/oci" "$d/rootfs" "$d/layer.tar" "$d/config.json" "$d/manifest.json"
}

# blob stores file $2 as a blob of the layout in $1 and prints "digest size".
blob() {
	local digest
	digest=$(sha256sum "$2" | cut -d' ' -f1)
	cp "$2" "$1/oci/blobs/sha256/$digest"
	echo "$digest $(stat -c %s "$2")"
}

say "the test cluster's parts, in $K8S_CACHE"
# The small parts first: they fail fast, and stay cached when the long
# Kubernetes build is interrupted.
part "pause image" "$PAUSE_DIR" build_pause
part "CNI plugins $CNI_VERSION" "$CNI_BIN" build_cni
part "containerd $CONTAINERD_VERSION" "$CONTAINERD_BIN" build_containerd
part "etcd $ETCD_VERSION" "$ETCD_BIN" build_etcd
part "kubernetes $K8S_VERSION" "$KUBE_BIN" build_kubernetes
[ -n "$kubectl" ] && part "kubectl $K8S_VERSION" "$KUBECTL_BIN" build_kubectl
if [ "$built" = 1 ]; then
	say "parts built in $(secs "$start")s; the cache holds $(du -sh "$K8S_CACHE" | cut -f1), $(du -sh "$GOCACHE" | cut -f1) of it Go's build cache"
else
	say "all parts cached ($(secs "$start")s)"
fi
