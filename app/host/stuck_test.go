//go:build cgo

package host

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/control"
	"github.com/sandtray/sandtray/serve/socket"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestAStuckWindowDoesNotHoldTheEngine replays a window frozen for good
// (its thread laying out one giant label) when the app is told to stop,
// as SIGTERM does: the stop cannot reach the window's loop, so the engine
// stops without it, removing the assistant's ephemeral sandbox, and the
// process ends. Before, the app waited for the loop forever and SIGTERM
// no longer ended it.
func TestAStuckWindowDoesNotHoldTheEngine(t *testing.T) {
	opts := testOptions(t)
	exited := make(chan int, 1)
	stuckQuitAfter, exitProcess = time.Second, func(code int) { exited <- code }
	t.Cleanup(func() { stuckQuitAfter, exitProcess = 5*time.Second, nil })
	var apps atomic.Int32
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- RunApp(ctx, newBlockingApp(t, &apps), opts) }()
	testwait.Eventually(t, 60*time.Second, "the app's engine to serve with its window", func() bool {
		mcpPath, _ := socket.Path()
		conn, err := socket.DialPrivate(context.Background(), control.Path(mcpPath))
		if err != nil {
			return false
		}
		c := control.NewClient(conn)
		defer c.Close()
		st, err := c.Status(context.Background())
		return err == nil && st.Window == control.WindowOwn
	})
	assistant := mcpSession(t)
	made := callTool(t, assistant, "create_sandbox", map[string]any{"name": "ephemeral"})
	id := made["sandbox_id"].(string)

	unstick := make(chan struct{})
	fyne.Do(func() { <-unstick }) // the window's thread, stuck
	stop()                        // SIGTERM
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit status %d", code)
		}
	case err := <-ran:
		t.Fatalf("the app returned with its window stuck: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the engine waits for a stuck window: the process never ends")
	}
	if _, err := dockertest.Client(t).Inspect(context.Background(), id); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("the ephemeral sandbox outlived the stop: %v", err)
	}
	close(unstick)
	if err := <-ran; err != nil {
		t.Errorf("the app, once its window came back: %v", err)
	}
}
