package kubernetes

import (
	"context"
	goruntime "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/remotecommand"
)

// floodExec is a process in a sandbox that answers with far more than any
// answer needs, on stdout and stderr: the sandbox's own sh (or anything in
// its place) can.
type floodExec struct{ mb int }

func (f floodExec) Stream(o remotecommand.StreamOptions) error {
	return f.StreamWithContext(context.Background(), o)
}

func (f floodExec) StreamWithContext(ctx context.Context, o remotecommand.StreamOptions) error {
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = '7'
	}
	for range f.mb {
		for _, w := range []interface{ Write([]byte) (int, error) }{o.Stdout, o.Stderr} {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestAnswersFromTheSandboxAreBounded: what the engine reads whole from a
// sandbox's process (a stat, a user's ids, a cgroup's figures, stderr) is
// capped, so a sandbox that floods it costs the engine no more memory than
// the cap.
func TestAnswersFromTheSandboxAreBounded(t *testing.T) {
	c, cs := newFake(t)
	c.execs = func(id, ctr string, cmd []string) remotecommand.Executor { return floodExec{mb: 128} }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "flood", Namespace: testNS}}
	if _, err := cs.CoreV1().Pods(testNS).Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"stat":   func() error { _, err := c.StatPath(ctx(t), "flood", "/x"); return err },
		"ids":    func() error { _, _, err := c.UserIDs(ctx(t), "flood", "1000"); return err },
		"cgroup": func() error { _, err := c.cgroupStats(ctx(t), "flood"); return err },
	} {
		var before, after goruntime.MemStats
		goruntime.GC()
		goruntime.ReadMemStats(&before)
		err := call()
		goruntime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
			t.Errorf("%s: reading 256 MB of a sandbox's answer allocated %d MB; it must be capped", name, grew>>20)
		}
		if err == nil {
			t.Errorf("%s: a flooded answer was taken for a good one", name)
		}
	}
}
