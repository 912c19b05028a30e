//go:build k8s

package k8stest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	watchtools "k8s.io/client-go/tools/watch"
	utilexec "k8s.io/client-go/util/exec"
)

// namespace is where the tests make their pods: one that every cluster has.
const namespace = "default"

// labelTest marks what a test made, with the test's own value.
const labelTest = "sandtray.test"

// cluster is the cluster under test and a client for it.
type cluster struct {
	cfg *rest.Config
	cs  kubernetes.Interface
}

// connect reads SANDTRAY_K8S_KUBECONFIG; without it the test is skipped,
// or fails when SANDTRAY_REQUIRE_K8S is set (make test-k8s sets both).
func connect(t *testing.T) *cluster {
	t.Helper()
	path := os.Getenv("SANDTRAY_K8S_KUBECONFIG")
	if path == "" {
		if os.Getenv("SANDTRAY_REQUIRE_K8S") != "" {
			t.Fatal("SANDTRAY_REQUIRE_K8S is set but SANDTRAY_K8S_KUBECONFIG is not: give the cluster's kubeconfig")
		}
		t.Skip("no cluster: SANDTRAY_K8S_KUBECONFIG is not set (make test-k8s starts one)")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client for %s: %v", cfg.Host, err)
	}
	return &cluster{cfg: cfg, cs: cs}
}

// testName is a pod name no other run uses.
func testName(prefix string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// createPod creates pod, deletes it when the test ends, and waits for it to
// run; it fails the test with the pod's last status when it does not.
func (c *cluster) createPod(ctx context.Context, t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	pods := c.cs.CoreV1().Pods(namespace)
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.deletePod(ctx, pod.Name); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	running, err := c.waitPod(ctx, created, func(p *corev1.Pod) (bool, error) {
		switch p.Status.Phase {
		case corev1.PodRunning:
			return true, nil
		case corev1.PodFailed, corev1.PodSucceeded:
			return false, fmt.Errorf("pod ended: %s", p.Status.Phase)
		}
		return false, nil
	})
	if err != nil {
		status := "unknown"
		if last, gerr := pods.Get(context.Background(), pod.Name, metav1.GetOptions{}); gerr == nil {
			status = fmt.Sprintf("%+v", last.Status)
		}
		t.Fatalf("pod %s did not run: %v; its status: %s", pod.Name, err, status)
	}
	return running
}

// waitPod watches pod from the version given until cond holds or fails.
func (c *cluster) waitPod(ctx context.Context, pod *corev1.Pod, cond func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	w, err := c.cs.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector:   "metadata.name=" + pod.Name,
		ResourceVersion: pod.ResourceVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("watch pod %s: %w", pod.Name, err)
	}
	ev, err := watchtools.UntilWithoutRetry(ctx, w, func(ev watch.Event) (bool, error) {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return false, fmt.Errorf("watch of pod %s: %v event %T", pod.Name, ev.Type, ev.Object)
		}
		if ev.Type == watch.Deleted {
			return false, fmt.Errorf("pod %s was deleted", pod.Name)
		}
		return cond(p)
	})
	if err != nil {
		return nil, err
	}
	return ev.Object.(*corev1.Pod), nil
}

// deletePod deletes a pod at once and waits until the API server no longer
// has it (the kubelet has stopped its containers).
func (c *cluster) deletePod(ctx context.Context, name string) error {
	pods := c.cs.CoreV1().Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", name, err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: pod.ResourceVersion})
	if err != nil {
		return fmt.Errorf("watch pod %s: %w", name, err)
	}
	defer w.Stop()
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", name, err)
	}
	_, err = watchtools.UntilWithoutRetry(ctx, w, func(ev watch.Event) (bool, error) { return ev.Type == watch.Deleted, nil })
	if err != nil {
		return fmt.Errorf("pod %s not gone: %w", name, err)
	}
	return nil
}

// transport is how exec reaches the pod: WebSocket, SPDY, or WebSocket
// falling back to SPDY when the upgrade itself is refused.
type transport string

const (
	webSocket transport = "websocket"
	spdy      transport = "spdy"
	fallback  transport = "websocket, else spdy"
)

// result is what one exec gave back.
type result struct {
	stdout, stderr string
	code           int
}

// exec runs cmd in the pod's container over the API server's exec. A
// command that exits non-zero is a result with its code, not an error.
func (c *cluster) exec(ctx context.Context, pod, container string, tr transport, stdin io.Reader, cmd ...string) (result, error) {
	req := c.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(c.cfg, "GET", req.URL().String())
	if err != nil {
		return result{}, fmt.Errorf("websocket executor: %w", err)
	}
	sp, err := remotecommand.NewSPDYExecutor(c.cfg, "POST", req.URL())
	if err != nil {
		return result{}, fmt.Errorf("spdy executor: %w", err)
	}
	ex := map[transport]remotecommand.Executor{webSocket: ws, spdy: sp}[tr]
	if tr == fallback {
		// Only a refused upgrade falls back, as kubectl does: a command's
		// non-zero exit is an error too, and falling back on any error
		// would run the command a second time.
		ex, err = remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool {
			return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		})
		if err != nil {
			return result{}, fmt.Errorf("fallback executor: %w", err)
		}
	}
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit utilexec.ExitError
	if errors.As(err, &exit) {
		r.code, err = exit.ExitStatus(), nil
	}
	if err != nil {
		return r, fmt.Errorf("exec %q over %s: %w", cmd, tr, err)
	}
	return r, nil
}
