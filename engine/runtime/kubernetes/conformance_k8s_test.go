//go:build k8s

package kubernetes_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/runtime/kubernetes"
	"github.com/sandtray/sandtray/engine/runtime/runtimetest"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestConformance runs engine/runtime's conformance suite against the
// cluster, in a namespace of its own that the test removes. Pause and
// Commit are skipped (not offered); a Pod cannot stop and start again, so
// Stop is refused as unsupported and the suite ends the container with
// Kill; a node fetches a missing image at the start, which fails then.
func TestConformance(t *testing.T) {
	kc := kubeconfig(t)
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
