package kubernetes

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

const testNS = "sandtray-test"

func newFake(t *testing.T) (*Client, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	return newClient(cs, nil, Options{Namespace: testNS, RuntimeClass: "gvisor"}, runtime.Endpoint{Host: "fake"}), cs
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// options is a sandbox as the engine asks for one in the strict profile.
func options() runtime.CreateOptions {
	return runtime.CreateOptions{
		Name: "sandtray-demo-abc123", Image: "sandtray/sandbox:latest", Workdir: "/workspace",
		Labels: map[string]string{
			sandbox.LabelManaged: "true", sandbox.LabelEngine: "e0123456789", sandbox.LabelName: "demo",
			sandbox.LabelCreated: "2026-11-29T01:02:03.456Z", sandbox.LabelImage: "sandtray/sandbox:latest",
			sandbox.LabelSpec: `{"image":"sandtray/sandbox:latest","memory_mb":512}`,
		},
		Env: []string{"LANG=C.UTF-8", "HOME=/workspace"}, Network: sandbox.NetworkNone,
		MemoryMB: 512, MilliCPUs: 1500, PidsLimit: 256, User: "1000:1000", Hostname: "demo",
		ReadOnlyRoot: true, Tmpfs: map[string]int64{"/workspace": 256, "/tmp": 64}, FileSizeMB: 1024,
		Agent: &runtime.Agent{Binary: []byte("agent"), Digest: strings.Repeat("ab", 32)},
	}
}

func TestPodCarriesTheHardening(t *testing.T) {
	c, cs := newFake(t)
	id, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the sandbox's Pod %s: %v", id, err)
	}
	spec := pod.Spec
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("the Pod lacks %s", what)
		}
	}
	check("automountServiceAccountToken: false", spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken)
	check("enableServiceLinks: false", spec.EnableServiceLinks != nil && !*spec.EnableServiceLinks)
	check("restartPolicy: Never", spec.RestartPolicy == corev1.RestartPolicyNever)
	check("runtimeClassName: gvisor", spec.RuntimeClassName != nil && *spec.RuntimeClassName == "gvisor")
	check("hostname demo", spec.Hostname == "demo")
	ps := spec.SecurityContext
	check("a pod securityContext", ps != nil)
	check("runAsNonRoot with uid and gid 1000", ps.RunAsNonRoot != nil && *ps.RunAsNonRoot && *ps.RunAsUser == 1000 && *ps.RunAsGroup == 1000)
	check("pod seccomp RuntimeDefault", ps.SeccompProfile != nil && ps.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault)
	if len(spec.Containers) != 2 || spec.Containers[0].Name != containerName || spec.Containers[1].Name != copierName {
		t.Fatalf("the Pod's containers are %v, want the sandbox's and the agent's copier", spec.Containers)
	}
	for _, ct := range spec.Containers {
		sc := ct.SecurityContext
		check(ct.Name+": a securityContext", sc != nil)
		check(ct.Name+": allowPrivilegeEscalation false", sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation)
		check(ct.Name+": privileged false", sc.Privileged != nil && !*sc.Privileged)
		check(ct.Name+": capabilities drop ALL", sc.Capabilities != nil && len(sc.Capabilities.Drop) == 1 && sc.Capabilities.Drop[0] == "ALL" && len(sc.Capabilities.Add) == 0)
		check(ct.Name+": seccomp RuntimeDefault", sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault)
		check(ct.Name+": readOnlyRootFilesystem (strict)", sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem)
		lim := ct.Resources.Limits
		if ct.Name == copierName {
			check(ct.Name+": a memory and a CPU limit", !lim.Memory().IsZero() && !lim.Cpu().IsZero())
			continue
		}
		check(ct.Name+": a 512Mi memory limit", lim.Memory().Equal(resource.MustParse("512Mi")))
		check(ct.Name+": a 1500m CPU limit", lim.Cpu().Equal(resource.MustParse("1500m")))
		check(ct.Name+": an ephemeral-storage limit of disk_mb and slack", lim.StorageEphemeral().Equal(resource.MustParse("1280Mi")))
		check(ct.Name+": requests below the limits", ct.Resources.Requests.Memory().Cmp(*lim.Memory()) < 0 && ct.Resources.Requests.Cpu().Cmp(*lim.Cpu()) < 0)
	}
	main := spec.Containers[0]
	check("the agent as PID 1 once it is in", strings.Join(main.Command, " ") == strings.Join(startAgent, " ") && strings.Contains(main.Command[2], `exec "$1" init`))
	for _, m := range spec.Containers[1].VolumeMounts {
		check("the copier's only mount the agent's folder, writable", m.MountPath == runtime.AgentDir && !m.ReadOnly)
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range main.VolumeMounts {
		mounts[m.MountPath] = m
	}
	check("the agent's folder read-only", mounts[runtime.AgentDir].ReadOnly)
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for path, mb := range map[string]string{"/workspace": "256Mi", "/tmp": "64Mi"} {
		v := vols[mounts[path].Name]
		check(path+" on a memory-backed emptyDir of "+mb, v.EmptyDir != nil && v.EmptyDir.Medium == corev1.StorageMediumMemory &&
			v.EmptyDir.SizeLimit != nil && v.EmptyDir.SizeLimit.Equal(resource.MustParse(mb)))
	}
	tmpfs, err := c.TmpfsMounts(ctx(t), id)
	if err != nil || strings.Join(tmpfs, " ") != "/tmp /workspace" {
		t.Errorf("TmpfsMounts = %q, %v; want /tmp /workspace", tmpfs, err)
	}
	env := map[string]string{}
	for _, e := range main.Env {
		env[e.Name] = e.Value
	}
	if env["HOME"] != "/workspace" || env["LANG"] != "C.UTF-8" {
		t.Errorf("the container's env is %v, want HOME and LANG as given", main.Env)
	}
}

func TestUserDecidesNonRoot(t *testing.T) {
	c, cs := newFake(t)
	o := options()
	o.User, o.ReadOnlyRoot, o.Tmpfs = "", false, nil // the standard profile, the image's user
	id, err := c.Create(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	pod, _ := cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	if sc := pod.Spec.SecurityContext; sc.RunAsNonRoot != nil || sc.RunAsUser != nil {
		t.Errorf("the image's own user got runAsNonRoot %v, runAsUser %v: the kubelet would refuse an image whose user is a name", sc.RunAsNonRoot, sc.RunAsUser)
	}
	if ro := pod.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem; ro == nil || *ro {
		t.Error("the standard profile's root is read-only")
	}

	o = options()
	o.Name, o.User, o.Tmpfs = "other", "1000", nil
	id, err = c.Create(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	pod, _ = cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	var onWorkdir bool
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		onWorkdir = onWorkdir || m.MountPath == "/workspace"
	}
	if !onWorkdir {
		t.Error("a non-root user's workdir is the image's (root's) folder: the user could not write in it")
	}

	o = options()
	o.Name, o.User = "named", "sandbox"
	if _, err := c.Create(ctx(t), o); !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "numeric") {
		t.Errorf("a named user: %v, want ErrInvalid saying a numeric user is needed", err)
	}
}

func TestNetworkPolicyDeniesAll(t *testing.T) {
	c, cs := newFake(t)
	id, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	np, err := cs.NetworkingV1().NetworkPolicies(testNS).Get(ctx(t), id, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no NetworkPolicy for sandbox %s: %v", id, err)
	}
	if got := np.Spec.PodSelector.MatchLabels; len(got) != 1 || got[labelID] != id {
		t.Errorf("the policy selects %v, want only the sandbox's Pod (%s=%s)", got, labelID, id)
	}
	pod, _ := cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	if pod.Labels[labelID] != id {
		t.Errorf("the Pod's labels %v do not carry its id: the policy selects nothing", pod.Labels)
	}
	if len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != 0 {
		t.Errorf("policy types %v, %d ingress and %d egress rules: want Ingress and Egress with no rule (deny all)", np.Spec.PolicyTypes, len(np.Spec.Ingress), len(np.Spec.Egress))
	}
	if own := np.OwnerReferences; len(own) != 1 || own[0].Kind != "Pod" || own[0].Name != id {
		t.Errorf("the policy's owners are %v, want the Pod (so the cluster removes it with it)", own)
	}

	// Going online (an install) removes it; offline brings it back.
	if err := c.ConnectNetwork(ctx(t), id, sandbox.NetworkBridge); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(testNS).Get(ctx(t), id, metav1.GetOptions{}); err == nil {
		t.Error("the policy is still there after ConnectNetwork")
	}
	if err := c.DisconnectNetwork(ctx(t), id, sandbox.NetworkBridge); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(testNS).Get(ctx(t), id, metav1.GetOptions{}); err != nil {
		t.Errorf("the policy did not come back after DisconnectNetwork: %v", err)
	}

	o := options()
	o.Name, o.Network = "bridged", sandbox.NetworkBridge
	bridged, err := c.Create(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(testNS).Get(ctx(t), bridged, metav1.GetOptions{}); err == nil {
		t.Error("a bridge sandbox got a deny-all policy")
	}

	if err := c.Remove(ctx(t), id); err != nil {
		t.Fatal(err)
	}
	pods, _ := cs.CoreV1().Pods(testNS).List(ctx(t), metav1.ListOptions{LabelSelector: labelID + "=" + id})
	nps, _ := cs.NetworkingV1().NetworkPolicies(testNS).List(ctx(t), metav1.ListOptions{})
	if len(pods.Items) != 0 || len(nps.Items) != 0 {
		t.Errorf("after Remove: %d Pods and %d policies left, want none", len(pods.Items), len(nps.Items))
	}
	if err := c.Remove(ctx(t), id); err != nil {
		t.Errorf("removing a removed sandbox: %v, want nil", err)
	}
}

func TestLabelsAndListing(t *testing.T) {
	c, cs := newFake(t)
	o := options()
	id, err := c.Create(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	pod, _ := cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	for _, k := range []string{sandbox.LabelManaged, sandbox.LabelEngine, sandbox.LabelName} {
		if pod.Labels[k] != o.Labels[k] {
			t.Errorf("label %s is %q on the Pod, want %q (the engine selects by it)", k, pod.Labels[k], o.Labels[k])
		}
	}
	for _, k := range []string{sandbox.LabelSpec, sandbox.LabelCreated, sandbox.LabelImage} {
		if _, ok := pod.Labels[k]; ok {
			t.Errorf("%s is a label: Kubernetes refuses its value %q", k, o.Labels[k])
		}
	}
	got, err := c.Inspect(ctx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range o.Labels {
		if got.Labels[k] != v {
			t.Errorf("Inspect: label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	if len(got.Labels) != len(o.Labels) {
		t.Errorf("Inspect gives labels %v, want exactly the engine's %v", got.Labels, o.Labels)
	}
	if got.ID != id || got.Name != o.Name || got.Image != o.Image || got.State != "created" || !got.Agent || !got.ReadOnlyRoot {
		t.Errorf("Inspect = %+v; want id %s, name %s, image %s, state created, agent, read-only root", got, id, o.Name, o.Image)
	}

	// Another engine's sandbox in the same namespace is not this one's.
	other := options()
	other.Name = "sandtray-demo-def456"
	other.Labels = map[string]string{sandbox.LabelManaged: "true", sandbox.LabelEngine: "e9999999999", sandbox.LabelSpec: `{"x":1}`}
	if _, err := c.Create(ctx(t), other); err != nil {
		t.Fatal(err)
	}
	mine := map[string]string{sandbox.LabelManaged: "true", sandbox.LabelEngine: "e0123456789"}
	list, err := c.List(ctx(t), mine, true)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Errorf("List(this engine's) = %v, %v; want only %s", list, err, id)
	}
	// A label only an annotation holds selects too.
	list, _ = c.List(ctx(t), map[string]string{sandbox.LabelSpec: `{"x":1}`}, true)
	if len(list) != 1 || list[0].ID == id {
		t.Errorf("List by an annotation-held label = %v, want the other engine's sandbox alone", list)
	}
	if list, _ := c.List(ctx(t), mine, false); len(list) != 0 {
		t.Errorf("List(running only) = %v before the Pod runs, want none", list)
	}

	// Running, then killed for memory.
	started := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName, ImageID: "sha256:abc",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}
	if pod, err = cs.CoreV1().Pods(testNS).UpdateStatus(ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.Inspect(ctx(t), id)
	if got.State != "running" || !got.StartedAt.Equal(started.Time) || got.ImageID != "sha256:abc" {
		t.Errorf("a running Pod inspects as %s, started %v, image %s; want running, %v, sha256:abc", got.State, got.StartedAt, got.ImageID, started)
	}
	if list, _ := c.List(ctx(t), mine, false); len(list) != 1 {
		t.Errorf("List(running only) = %v, want the running sandbox", list)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", StartedAt: started}}}}}
	if _, err = cs.CoreV1().Pods(testNS).UpdateStatus(ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ = c.Inspect(ctx(t), id)
	if got.State != "exited" || got.ExitCode != 137 || !got.OOMKilled {
		t.Errorf("an OOM-killed Pod inspects as %s, exit %d, OOMKilled %v; want exited, 137, true", got.State, got.ExitCode, got.OOMKilled)
	}
	if err := c.Start(ctx(t), id); !errors.Is(err, sandbox.ErrUnsupported) {
		t.Errorf("Start of an ended Pod: %v, want ErrUnsupported (a Pod never restarts)", err)
	}
	if _, err := c.Inspect(ctx(t), "0123"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Inspect of no Pod: %v, want ErrNotFound", err)
	}
}

func TestNamesAreUnique(t *testing.T) {
	c, _ := newFake(t)
	a, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx(t), options()); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("a second sandbox of the same name: %v, want ErrConflict", err)
	}
	o := options()
	o.Name = "pool-spare"
	b, err := c.Create(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(ctx(t), b, options().Name); !errors.Is(err, sandbox.ErrConflict) {
		t.Errorf("rename onto a taken name: %v, want ErrConflict", err)
	}
	if err := c.Rename(ctx(t), b, "sandtray-taken-from-pool"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.Inspect(ctx(t), b); got.Name != "sandtray-taken-from-pool" {
		t.Errorf("after Rename the name is %q", got.Name)
	}
	if got, _ := c.Inspect(ctx(t), a); got.Name != options().Name {
		t.Errorf("the other sandbox's name changed to %q", got.Name)
	}
}

func TestEventsInDockersWords(t *testing.T) {
	c, cs := newFake(t)
	wctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	events, _ := c.Events(wctx, map[string]string{sandbox.LabelManaged: "true", sandbox.LabelEngine: "e0123456789"})
	time.Sleep(100 * time.Millisecond) // the fake's watch sees what comes after it
	id, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	pod, _ := cs.CoreV1().Pods(testNS).Get(ctx(t), id, metav1.GetOptions{})
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	pod, _ = cs.CoreV1().Pods(testNS).UpdateStatus(ctx(t), pod, metav1.UpdateOptions{})
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}
	_, _ = cs.CoreV1().Pods(testNS).UpdateStatus(ctx(t), pod, metav1.UpdateOptions{})
	if err := c.Remove(ctx(t), id); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 5 {
		select {
		case ev := <-events:
			if ev.ContainerID != id {
				t.Errorf("an event of %s, want only %s's", ev.ContainerID, id)
			}
			got = append(got, ev.Action)
		case <-time.After(5 * time.Second):
			t.Fatalf("events %q, then nothing; want create start oom die destroy", got)
		}
	}
	if strings.Join(got, " ") != "create start oom die destroy" {
		t.Errorf("events %q, want create start oom die destroy", got)
	}
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: containerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	if a := actions(watch.Modified, "running", running); len(a) != 0 {
		t.Errorf("a Pod that still runs gave %q", a)
	}
}

func TestWhatKubernetesCannotDo(t *testing.T) {
	c, _ := newFake(t)
	id, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"Stop":   c.Stop(ctx(t), id, time.Second),
		"Signal": c.Signal(ctx(t), id, "SIGSTOP"),
	} {
		if !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "kubernetes cannot") {
			t.Errorf("%s: %v, want ErrUnsupported saying what kubernetes cannot do", name, err)
		}
	}
	// What needs a part it lacks is not offered at all.
	caps := runtime.CapabilitiesOf(c)
	has := map[string]bool{"images": caps.Images, "networks": caps.Networks, "rename": caps.Rename, "update limits": caps.UpdateLimits}
	lacks := map[string]bool{"build": caps.Build, "commit": caps.Commit, "pause": caps.Pause, "layer disk": caps.LayerDisk,
		"gpu": caps.GPU, "attach": caps.Attach, "export": caps.Export}
	for k, v := range has {
		if !v {
			t.Errorf("the runtime lacks %s, which it has", k)
		}
	}
	for k, v := range lacks {
		if v {
			t.Errorf("the runtime offers %s, which Kubernetes cannot do", k)
		}
	}
	if caps.Runtime != "kubernetes" {
		t.Errorf("the capabilities name runtime %q", caps.Runtime)
	}
}

func TestImagesAreTheNodes(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "localhost"}, Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		NodeInfo:   corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "arm64"},
		Images:     []corev1.ContainerImage{{Names: []string{"docker.io/sandtray/sandbox@sha256:0123", "docker.io/sandtray/sandbox:latest"}, SizeBytes: 459 << 20}},
	}}
	cs := fake.NewClientset(node)
	c := newClient(cs, nil, Options{Namespace: testNS}, runtime.Endpoint{})
	if ok, err := c.ImageExists(ctx(t), "sandtray/sandbox:latest"); !ok || err != nil {
		t.Errorf("ImageExists(the node's image) = %v, %v", ok, err)
	}
	if ok, _ := c.ImageExists(ctx(t), "python:3.12"); ok {
		t.Error("ImageExists(an image no node has) = true")
	}
	if img, _ := c.InspectImage(ctx(t), "sandtray/sandbox"); img.ID != "sha256:0123" {
		t.Errorf("InspectImage's id = %q, want the node's digest", img.ID)
	}
	if size, _ := c.ImageSize(ctx(t), "sandtray/sandbox:latest"); size != 459<<20 {
		t.Errorf("ImageSize = %d", size)
	}
	if os, arch, err := c.Platform(ctx(t)); os != "linux" || arch != "arm64" || err != nil {
		t.Errorf("Platform = %s/%s, %v; want the Ready node's linux/arm64", os, arch, err)
	}
}

func TestHostFromConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Runtime.Name = config.RuntimeKubernetes
	cfg.Kubernetes = config.Kubernetes{Kubeconfig: "/etc/k8s/admin conf", Context: "kind-sandtray", Namespace: "sandboxes", RuntimeClass: "gvisor"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	o, err := ParseHost(cfg.RuntimeHost())
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Kubeconfig: "/etc/k8s/admin conf", Context: "kind-sandtray", Namespace: "sandboxes", RuntimeClass: "gvisor"}
	if o != want {
		t.Errorf("the config's host %q reads as %+v, want %+v", cfg.RuntimeHost(), o, want)
	}
	if back, _ := ParseHost(want.Host()); back != want {
		t.Errorf("Host and ParseHost disagree: %+v", back)
	}
	if _, err := ParseHost("kubernetes:?namespace=a&colour=blue"); !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown setting: %v, want ErrInvalid naming it", err)
	}
	cfg.Kubernetes.Namespace = "Not_A_Namespace"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "kubernetes.namespace") {
		t.Errorf("a bad namespace: %v, want an error naming kubernetes.namespace", err)
	}
}

// TestExecCommand: the API's exec has no user, env or folder of its own,
// so they are the command's; another user than the Pod's is refused.
func TestExecCommand(t *testing.T) {
	c, _ := newFake(t)
	id, err := c.Create(ctx(t), options())
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := c.command(ctx(t), id, runtime.ExecOptions{Cmd: []string{"python3", "x.py"}, Env: []string{"A=1"}, Workdir: "/workspace/p", Marker: "m1", User: "1000:1000"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/bin/sh", "-c", enterWorkdir, "/workspace/p", "env", "A=1", "SANDTRAY_EXEC=m1", "python3", "x.py"}
	if strings.Join(cmd, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("command = %q, want %q", cmd, want)
	}
	if cmd, _ := c.command(ctx(t), id, runtime.ExecOptions{Cmd: []string{runtime.AgentPath, "serve"}}); len(cmd) != 2 {
		t.Errorf("a bare command is wrapped: %q", cmd)
	}
	if _, err := c.command(ctx(t), id, runtime.ExecOptions{Cmd: []string{"id"}, User: "root"}); !errors.Is(err, sandbox.ErrUnsupported) || !strings.Contains(err.Error(), "1000:1000") {
		t.Errorf("exec as root in a Pod of uid 1000: %v, want ErrUnsupported naming the Pod's user", err)
	}
}

// TestShStat reads stat(1)'s size, raw mode and mtime as the agent's stat
// reports them (Go's file mode bits), for a container without the agent.
func TestShStat(t *testing.T) {
	for _, c := range []struct {
		out  string
		mode fs.FileMode
		link string
	}{
		{"5 81a4 1700000000\n", 0o644, ""},
		{"4096 41ed 1700000000\n", fs.ModeDir | 0o755, ""},
		{"4096 43ff 1700000000\n", fs.ModeDir | fs.ModeSticky | 0o777, ""},
		{"7 a1ff 1700000000\n/target\n", fs.ModeSymlink | 0o777, "/target"},
	} {
		size, mode, mtime, link, err := parseShStat(c.out)
		if err != nil || fs.FileMode(mode) != c.mode || link != c.link || mtime != 1700000000 || size == 0 {
			t.Errorf("parseShStat(%q) = %d, %v, %d, %q, %v; want mode %v, link %q", c.out, size, fs.FileMode(mode), mtime, link, err, c.mode, c.link)
		}
	}
}
