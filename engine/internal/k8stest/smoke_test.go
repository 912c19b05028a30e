//go:build k8s

package k8stest

import (
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testImage is the sandbox image, imported into the cluster by up.sh.
func testImage() string {
	if img := os.Getenv("SANDTRAY_TEST_IMAGE"); img != "" {
		return img
	}
	return "sandtray/sandbox:latest"
}

// hardenedPod is a sandbox pod with the hardening Kubernetes can express:
// a user that is not root, no capabilities, no privilege escalation,
// seccomp's runtime default, a read-only root with a small tmpfs for /tmp,
// resource limits, and no service-account token.
func hardenedPod(name string) *corev1.Pod {
	no, yes := false, true
	uid, grace := int64(1000), int64(1)
	seccomp := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	tmpSize := resource.MustParse("16Mi")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelTest: name}},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid, SeccompProfile: seccomp,
			},
			Containers: []corev1.Container{{
				Name:            "sandbox",
				Image:           testImage(),
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"sleep", "infinity"},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					ReadOnlyRootFilesystem:   &yes,
					SeccompProfile:           seccomp,
				},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
			}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &tmpSize},
			}}},
		},
	}
}

// TestHardenedPodRunsPythonOverExec is the cluster's smoke test: a hardened
// sandbox pod from the local image runs, takes exec over both transports,
// holds its hardening from the inside, and is deleted without a trace.
func TestHardenedPodRunsPythonOverExec(t *testing.T) {
	c := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := testName("k8stest-smoke")

	start := time.Now()
	c.createPod(ctx, t, hardenedPod(name))
	t.Logf("pod %s running after %v", name, time.Since(start).Round(time.Millisecond))

	run := func(t *testing.T, tr transport, stdin string, cmd ...string) result {
		t.Helper()
		var in io.Reader // nil: no stdin stream
		if stdin != "" {
			in = strings.NewReader(stdin)
		}
		start := time.Now()
		r, err := c.exec(ctx, name, "sandbox", tr, in, cmd...)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("exec %q over %s: %v", cmd, tr, time.Since(start).Round(time.Millisecond))
		return r
	}

	t.Run("python", func(t *testing.T) {
		r := run(t, fallback, "", "python3", "-c", "print(1+1)")
		if r.stdout != "2\n" || r.stderr != "" || r.code != 0 {
			t.Errorf("python3 -c 'print(1+1)' gave stdout %q, stderr %q, exit %d; want \"2\\n\", nothing, 0", r.stdout, r.stderr, r.code)
		}
	})

	for _, tr := range []transport{webSocket, spdy} {
		t.Run("stdin over "+string(tr), func(t *testing.T) {
			want := "hello over " + string(tr)
			if r := run(t, tr, want, "cat"); r.stdout != want || r.code != 0 {
				t.Errorf("cat echoed %q (exit %d, stderr %q), want %q", r.stdout, r.code, r.stderr, want)
			}
		})
	}

	t.Run("a failing command runs once", func(t *testing.T) {
		// A fallback on any error would run it again over SPDY.
		if r := run(t, fallback, "", "sh", "-c", "echo ran >>/tmp/runs; exit 3"); r.code != 3 {
			t.Fatalf("exit code %d, want 3 (stderr %q)", r.code, r.stderr)
		}
		if r := run(t, fallback, "", "cat", "/tmp/runs"); r.stdout != "ran\n" {
			t.Errorf("/tmp/runs holds %q: the command ran %d times, want once", r.stdout, strings.Count(r.stdout, "ran"))
		}
	})

	t.Run("hardening holds inside", func(t *testing.T) {
		r := run(t, fallback, "", "sh", "-c", "id -u; id -g; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status")
		for _, want := range []string{`(?m)^1000\n1000\n`, `(?m)^CapEff:\s+0+$`, `(?m)^CapBnd:\s+0+$`, `(?m)^NoNewPrivs:\s+1$`, `(?m)^Seccomp:\s+2$`} {
			if !regexp.MustCompile(want).MatchString(r.stdout) {
				t.Errorf("no line matching %s in:\n%s", want, r.stdout)
			}
		}
		if r := run(t, fallback, "", "sh", "-c", "touch /probe"); r.code == 0 {
			t.Error("wrote /probe: the root filesystem is not read-only")
		}
		if r := run(t, fallback, "", "sh", "-c", "touch /tmp/probe"); r.code != 0 {
			t.Errorf("cannot write /tmp (exit %d): %s", r.code, r.stderr)
		}
		if r := run(t, fallback, "", "test", "-e", "/var/run/secrets/kubernetes.io/serviceaccount"); r.code == 0 {
			t.Error("a service-account token is mounted")
		}
		r = run(t, fallback, "", "sh", "-c", "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes")
		if got := strings.TrimSpace(r.stdout); got != "268435456" {
			t.Errorf("memory limit inside the pod is %q, want 268435456 (256Mi)", got)
		}
	})

	start = time.Now()
	if err := c.deletePod(ctx, name); err != nil {
		t.Fatal(err)
	}
	t.Logf("pod deleted after %v", time.Since(start).Round(time.Millisecond))
	left, err := c.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: labelTest + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) != 0 {
		t.Errorf("%d pods labelled %s=%s remain after delete", len(left.Items), labelTest, name)
	}
	if _, err := c.cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want not found", err)
	}
}
