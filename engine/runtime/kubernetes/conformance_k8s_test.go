//go:build k8s

package kubernetes_test

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/kubernetes"
	"github.com/sandtray/sandtray/engine/runtime/runtimetest"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestConformance runs engine/runtime's conformance suite against the
// cluster, in a namespace of its own that the test removes. It is not yet
// green, so it runs only when SANDTRAY_K8S_CONFORMANCE is set: on the test
// node Exec, ExecStream, Copy, Stats and Rename pass, Pause and Commit are
// skipped (not offered), and these fail: Lifecycle and Events (they stop a
// container, which a Pod cannot: Stop fails with ErrUnsupported by design)
// and Errors (a create from an image no node has succeeds: the kubelet
// would pull it at the start).
func TestConformance(t *testing.T) {
	kc := kubeconfig(t)
	if os.Getenv("SANDTRAY_K8S_CONFORMANCE") == "" {
		t.Skip("not yet green on Kubernetes (see the comment): set SANDTRAY_K8S_CONFORMANCE=1 to run it")
	}
	ns := "sandtray-conf-" + sandbox.RandomHex(4)
	cs := clientset(t, kc)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	runtimetest.Run(t, func(t *testing.T) runtime.Runtime {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := kubernetes.Connect(ctx, kubernetes.Options{Kubeconfig: kc, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, runtimetest.Options{Image: testImage(), Labels: map[string]string{sandbox.LabelTest: ns}, Timeout: time.Minute})
}
