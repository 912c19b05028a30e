package kubernetes

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// What a sandbox's Pod is made of.
const (
	containerName = "sandbox"    // the sandbox's container
	copierName    = "agent-copy" // the container the agent is copied in through
	agentVolume   = "sandtray-agent"
	// labelID is the Pod's id as a label: its NetworkPolicy selects it.
	labelID = "io.sandtray.id"
	// Annotations of what the runtime itself keeps on a Pod.
	annoName    = "sandtray.io/name"    // the container name (Rename changes it)
	annoUser    = "sandtray.io/user"    // the user every process runs as ("" the image's)
	annoNetwork = "sandtray.io/network" // none or bridge
	annoAgent   = "sandtray.io/agent"   // the digest of the agent copied in
	// agentReady is the file Start writes once the agent is in place: the
	// copier and the sandbox's shell wait for it.
	agentReady = runtime.AgentDir + "/.ready"
	// grace is how long a deleted Pod's processes get after SIGTERM.
	grace = 2
	// Requests are a tenth of the CPU limit and a quarter of the memory
	// limit (at most 256 MiB), so a node the size of a laptop holds many
	// idle sandboxes; the limits are what holds a busy one.
	cpuRequestShare = 10
	memRequestMaxMB = 256
	// storageSlackMB is ephemeral storage beyond limits.disk_mb: the agent's
	// copy and the container's logs.
	storageSlackMB = 256
)

// waitAgent is the copier's command: it waits for Start's copy, and ends.
var waitAgent = []string{"/bin/sh", "-c", `until [ -e "$0" ]; do sleep 0.05; done`, agentReady}

// startAgent is the sandbox container's command: it waits for the agent's
// copy, then is the agent (PID 1, exec'd).
var startAgent = []string{"/bin/sh", "-c", `until [ -e "$0" ]; do sleep 0.05; done; exec "$1" init`, agentReady, runtime.AgentPath}

// copierResources are the copier's: it runs a shell and cat for a moment.
var copierResources = corev1.ResourceRequirements{
	Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi"), corev1.ResourceCPU: resource.MustParse("100m")},
	Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Mi"), corev1.ResourceCPU: resource.MustParse("10m")},
}

// newID is a new sandbox's id: its Pod's name.
func newID() string { return sandbox.RandomHex(16) }

// user is a sandbox's user as Kubernetes can run it: numeric ids only,
// since the kubelet cannot look a name up in the image.
type user struct {
	set      bool
	uid, gid int64
}

// parseUser reads CreateOptions.User: "", "uid" or "uid:gid".
func parseUser(u string) (user, error) {
	if u == "" {
		return user{}, nil
	}
	us, gs, hasGID := strings.Cut(u, ":")
	uid, err := strconv.ParseInt(us, 10, 32)
	gid := uid
	if err == nil && hasGID {
		gid, err = strconv.ParseInt(gs, 10, 32)
	}
	if err != nil || uid < 0 || gid < 0 {
		return user{}, fmt.Errorf("kubernetes runs a sandbox as a numeric user only, and %q is not one: set sandbox.user to \"uid\" or \"uid:gid\" (e.g. \"1000:1000\"): %w", u, sandbox.ErrInvalid)
	}
	return user{set: true, uid: uid, gid: gid}, nil
}

// podSpec is the hardened Pod of a sandbox (see the package comment), and
// the NetworkPolicy that isolates it (nil for a "bridge" sandbox).
func (c *Client) podSpec(id string, o runtime.CreateOptions) (*corev1.Pod, *networkingv1.NetworkPolicy, error) {
	if o.Image == "" {
		return nil, nil, fmt.Errorf("kubernetes: a sandbox needs an image: %w", sandbox.ErrInvalid)
	}
	if o.MemoryMB <= 0 || o.MilliCPUs < 10 {
		return nil, nil, fmt.Errorf("kubernetes: a sandbox needs a memory limit and at least 0.01 CPUs (got %d MB, %d millicores): %w", o.MemoryMB, o.MilliCPUs, sandbox.ErrInvalid)
	}
	if o.GPUs != 0 {
		return nil, nil, unsupported("give a sandbox GPUs", "Sandtray requests no GPUs from a cluster; ask for none")
	}
	u, err := parseUser(o.User)
	if err != nil {
		return nil, nil, err
	}
	no, yes := false, true
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	podSec := &corev1.PodSecurityContext{SeccompProfile: seccomp}
	if u.set && u.uid != 0 {
		podSec.RunAsNonRoot, podSec.RunAsUser, podSec.RunAsGroup, podSec.FSGroup = &yes, &u.uid, &u.gid, &u.gid
	} else if u.set {
		podSec.RunAsUser, podSec.RunAsGroup = &u.uid, &u.gid
	}
	caps := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	for _, ca := range o.CapAdd {
		caps.Add = append(caps.Add, corev1.Capability(strings.TrimPrefix(strings.ToUpper(ca), "CAP_")))
	}
	sec := &corev1.SecurityContext{
		Privileged: &no, AllowPrivilegeEscalation: &no, Capabilities: caps,
		ReadOnlyRootFilesystem: &o.ReadOnlyRoot, SeccompProfile: seccomp,
	}
	memLimit := resource.MustParse(strconv.FormatInt(o.MemoryMB, 10) + "Mi")
	memReq := resource.MustParse(strconv.FormatInt(min(max(o.MemoryMB/4, 1), memRequestMaxMB), 10) + "Mi")
	milli := o.MilliCPUs
	cpuLimit := *resource.NewMilliQuantity(milli, resource.DecimalSI)
	cpuReq := *resource.NewMilliQuantity(max(milli/cpuRequestShare, 10), resource.DecimalSI)
	res := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceMemory: memLimit, corev1.ResourceCPU: cpuLimit},
		Requests: corev1.ResourceList{corev1.ResourceMemory: memReq, corev1.ResourceCPU: cpuReq},
	}
	if o.FileSizeMB > 0 {
		res.Limits[corev1.ResourceEphemeralStorage] = resource.MustParse(strconv.FormatInt(o.FileSizeMB+storageSlackMB, 10) + "Mi")
	}

	mounts := []corev1.VolumeMount{{Name: agentVolume, MountPath: runtime.AgentDir, ReadOnly: true}}
	volumes := []corev1.Volume{{Name: agentVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		SizeLimit: resource.NewQuantity(64<<20, resource.BinarySI)}}}}
	for i, p := range slices.Sorted(maps.Keys(o.Tmpfs)) {
		name := "tmpfs-" + strconv.Itoa(i)
		size := resource.MustParse(strconv.FormatInt(max(o.Tmpfs[p], 1), 10) + "Mi")
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: &size}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path.Clean(p)})
	}
	if _, onTmpfs := o.Tmpfs[o.Workdir]; u.set && u.uid != 0 && o.Workdir != "" && o.Workdir != "/" && !onTmpfs {
		// The image's workdir is root's: a user that is not gets an
		// emptyDir there (Docker's runtime makes the folder the user's).
		ed := &corev1.EmptyDirVolumeSource{}
		if o.FileSizeMB > 0 {
			ed.SizeLimit = resource.NewQuantity(o.FileSizeMB<<20, resource.BinarySI)
		}
		volumes = append(volumes, corev1.Volume{Name: "workdir", VolumeSource: corev1.VolumeSource{EmptyDir: ed}})
		mounts = append(mounts, corev1.VolumeMount{Name: "workdir", MountPath: path.Clean(o.Workdir)})
	}

	var env []corev1.EnvVar
	for _, kv := range o.Env {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	main := corev1.Container{
		Name: containerName, Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: o.Cmd, Env: env, WorkingDir: o.Workdir, Resources: res, SecurityContext: sec, VolumeMounts: mounts,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	if o.Agent == nil && len(o.Cmd) > 0 {
		// PID 1 ignores the signals it has no handler for, so Kill (which
		// can only signal from inside) could not end a main command of the
		// image's: a shell that ends on SIGTERM runs it.
		main.Command = append([]string{"/bin/sh", "-c", `trap 'exit 143' TERM; "$@" & wait $!`, "sh"}, o.Cmd...)
	}
	containers := []corev1.Container{main}
	if o.Agent != nil {
		// The copier starts beside the sandbox's container (not before it,
		// as an init container would: the kubelet sees a container end only
		// at its next relist, a second later) and ends once the agent is in.
		containers[0].Command = startAgent
		containers = append(containers, corev1.Container{
			Name: copierName, Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent, Command: waitAgent,
			Resources: copierResources, SecurityContext: sec,
			VolumeMounts: []corev1.VolumeMount{{Name: agentVolume, MountPath: runtime.AgentDir}},
		})
	}
	if len(containers[0].Command) == 0 {
		return nil, nil, fmt.Errorf("kubernetes: a sandbox needs a main command or the agent: %w", sandbox.ErrInvalid)
	}
	network := o.Network
	if network == "" {
		network = sandbox.NetworkNone
	}
	labels, annotations := splitLabels(o.Labels)
	labels[labelID] = id
	annotations[annoName] = o.Name
	annotations[annoUser] = o.User
	annotations[annoNetwork] = network
	if o.Agent != nil {
		annotations[annoAgent] = o.Agent.Digest
	}
	gracePeriod := int64(grace)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: c.ns, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			Containers: containers, Volumes: volumes,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &gracePeriod,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			SecurityContext:               podSec,
		},
	}
	if errs := validation.IsDNS1123Label(o.Hostname); o.Hostname != "" && len(errs) == 0 {
		pod.Spec.Hostname = o.Hostname
	}
	if rc := cmpOr(o.Runtime, c.opts.RuntimeClass); rc != "" {
		pod.Spec.RuntimeClassName = &rc
	}
	if network == sandbox.NetworkBridge {
		return pod, nil, nil
	}
	return pod, c.denyAll(id, labels), nil
}

// denyAll is the NetworkPolicy that takes every connection from and to Pod
// id: no rule in either direction.
func (c *Client) denyAll(id string, podLabels map[string]string) *networkingv1.NetworkPolicy {
	labels := map[string]string{labelID: id}
	for _, k := range []string{sandbox.LabelManaged, sandbox.LabelEngine, sandbox.LabelTest} {
		if v, ok := podLabels[k]; ok {
			labels[k] = v
		}
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: c.ns, Labels: labels},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{labelID: id}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
}

// splitLabels is Sandtray's labels as a Pod carries them: every one as an
// annotation, and those Kubernetes takes as a label also as one.
func splitLabels(in map[string]string) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	for k, v := range in {
		annotations[k] = v
		if validLabel(k, v) {
			labels[k] = v
		}
	}
	return labels, annotations
}

func validLabel(k, v string) bool {
	return len(validation.IsQualifiedName(k)) == 0 && len(validation.IsValidLabelValue(v)) == 0
}

// sandtrayLabels is a Pod's labels as Sandtray gave them: its annotations
// less the runtime's own, and its labels less the id.
func sandtrayLabels(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	for k, v := range p.Labels {
		if k != labelID {
			out[k] = v
		}
	}
	for k, v := range p.Annotations {
		if !strings.HasPrefix(k, "sandtray.io/") {
			out[k] = v
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
