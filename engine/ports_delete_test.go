package engine

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// deafEvents is the runtime with an event stream that never says anything,
// as when Docker's events lag behind under load.
type deafEvents struct{ runtime.Full }

func (deafEvents) Events(ctx context.Context, _ map[string]string) (<-chan runtime.Event, <-chan error) {
	out, errs := make(chan runtime.Event), make(chan error)
	go func() { <-ctx.Done(); close(out); close(errs) }()
	return out, errs
}

// TestDeleteClosesTheForwardsAtOnce: once delete_sandbox has answered, the
// sandbox's host ports refuse connections, whether or not Docker's event of
// the container's end has reached the engine yet.
func TestDeleteClosesTheForwardsAtOnce(t *testing.T) {
	te := newTestEngineOn(t, func(d runtime.Full) runtime.Full { return deafEvents{d} })
	ctx := context.Background()
	id := te.create(t, sandbox.CreateRequest{}).ID
	fw, err := te.ExposePort(ctx, te.owner, id, 8000, 0)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(fw.HostPort)
	// With no server in the sandbox the forward closes what it accepts, at
	// times before the dial returns: only a refused dial means no listener.
	listens := func() bool {
		c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		return !errors.Is(err, syscall.ECONNREFUSED)
	}
	if !listens() {
		t.Fatal("the forward does not listen")
	}
	if err := te.Delete(ctx, te.owner, id); err != nil {
		t.Fatal(err)
	}
	if listens() {
		t.Errorf("host port %d still accepts connections after delete_sandbox answered", fw.HostPort)
	}
}
