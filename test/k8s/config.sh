# Sourced by up.sh: writes the cluster's PKI, kubeconfigs and the config
# files of containerd, the CNI bridge and the kubelet into K8S_DIR.
# shellcheck shell=bash

# pki makes a CA for this one cluster and, signed by it, every certificate
# the cluster uses; P-256 keys, so it takes a fraction of a second.
pki() {
	local p=$K8S_DIR/pki
	mkdir -p "$p"
	chmod 700 "$p"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
		-subj /CN=sandtray-k8s-ca -keyout "$p/ca.key" -out "$p/ca.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	local san="subjectAltName=DNS:localhost,IP:127.0.0.1"
	cert apiserver /CN=kube-apiserver serverAuth "$san,IP:${K8S_SERVICE_CIDR%.*}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
	cert kubelet-serving "/CN=$K8S_NODE" serverAuth "$san"
	cert apiserver-kubelet-client /CN=kube-apiserver-kubelet-client clientAuth
	cert admin /O=system:masters/CN=sandtray-k8s-admin clientAuth
	cert kubelet "/O=system:nodes/CN=system:node:$K8S_NODE" clientAuth
	cert controller-manager /CN=system:kube-controller-manager clientAuth
	cert scheduler /CN=system:kube-scheduler clientAuth
	openssl ecparam -name prime256v1 -genkey -noout -out "$p/sa.key"
	openssl ec -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
	rm -f "$p/ca.srl"
}

# cert NAME SUBJECT USAGE [EXTENSION]: NAME.key and NAME.crt, signed by the CA.
cert() {
	local p=$K8S_DIR/pki
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$2" -keyout "$p/$1.key" 2>/dev/null |
		openssl x509 -req -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 30 -out "$p/$1.crt" \
			-extfile <(printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' "$3" "${4:-}") 2>/dev/null
}

# kubeconfig FILE CERT: a kubeconfig for the API server with the client
# certificate CERT, the certificates inside it so the file stands alone.
kubeconfig() {
	local p=$K8S_DIR/pki
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sandtray-k8s
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 "$p/ca.crt")
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 "$p/$2.crt")
    client-key-data: $(base64 -w0 "$p/$2.key")
contexts:
- name: sandtray-k8s
  context: {cluster: sandtray-k8s, user: $2, namespace: default}
current-context: sandtray-k8s
EOF
	chmod 600 "$1"
}

# containerd_config: containerd with every path, socket and the runc state
# inside K8S_DIR (Docker's containerd is left alone). Config version 4
# takes the socket addresses from the grpc/ttrpc server plugins only.
containerd_config() {
	local c=$K8S_DIR/containerd
	mkdir -p "$c"
	cat >"$c/config.toml" <<EOF
version = 4
root = '$c/root'
state = '$c/state'
disabled_plugins = ['io.containerd.nri.v1.nri', 'io.containerd.snapshotter.v1.btrfs', 'io.containerd.snapshotter.v1.zfs',
  'io.containerd.snapshotter.v1.devmapper', 'io.containerd.snapshotter.v1.blockfile', 'io.containerd.snapshotter.v1.erofs',
  'io.containerd.differ.v1.erofs', 'io.containerd.mount-handler.v1.erofs', 'io.containerd.image-verifier.v1.bindir']

[plugins.'io.containerd.server.v1.grpc']
  address = '$c/containerd.sock'
[plugins.'io.containerd.server.v1.ttrpc']
  address = '$c/containerd.sock.ttrpc'
[plugins.'io.containerd.server.v1.debug']
  address = ''
[plugins.'io.containerd.shim.v1.manager']
  socket_dir = '$c/s'
[plugins.'io.containerd.internal.v1.opt']
  path = '$c/opt'

[plugins.'io.containerd.cri.v1.images']
  snapshotter = '$SNAPSHOTTER'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'

[plugins.'io.containerd.cri.v1.runtime']
  netns_mounts_under_state_dir = true
  # The kubelet asks for oom_score_adj -998 for sandboxes; root here lacks
  # CAP_SYS_RESOURCE, so runc cannot lower the score and every pod fails.
  # This clamps it to containerd's own score.
  restrict_oom_score_adj = true
  cdi_spec_dirs = []
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$CNI_BIN']
    conf_dir = '$K8S_DIR/cni'
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$RUNC'
        Root = '$c/runc'
        SystemdCgroup = false

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'
  stream_server_port = '0'
EOF
}

# cni_config: one bridge for the pods. No default route and no masquerade:
# a pod reaches the host on the bridge's address and nothing beyond it.
cni_config() {
	mkdir -p "$K8S_DIR/cni"
	cat >"$K8S_DIR/cni/10-$K8S_CNI_NET.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$K8S_CNI_NET",
  "plugins": [{
    "type": "bridge",
    "bridge": "$K8S_BRIDGE",
    "isGateway": true,
    "ipMasq": false,
    "ipam": {"type": "host-local", "dataDir": "$K8S_DIR/cni-ipam", "ranges": [[{"subnet": "$K8S_POD_CIDR"}]]}
  }]
}
EOF
}

# kubelet_config: cgroup v1 allowed, the cgroupfs driver with the pods under
# our own cgroup, no iptables chains of its own on the host, images never
# collected (they are imported, not pulled), no host DNS for the pods, and
# a pids limit per Pod (Sandtray's default limits.pids: a Pod cannot ask for
# one of its own; SANDTRAY_K8S_POD_PIDS changes it).
kubelet_config() {
	local p=$K8S_DIR/pki
	cat >"$K8S_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $p/kubelet-serving.crt
tlsPrivateKeyFile: $p/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$K8S_DIR/containerd/containerd.sock
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$K8S_CGROUP
failSwapOn: false
makeIPTablesUtilChains: false
resolvConf: ""
podLogsDir: $K8S_DIR/pod-logs
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
podPidsLimit: ${SANDTRAY_K8S_POD_PIDS:-512}
EOF
}
