package probe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Daemon is the Docker client asked whether the daemon answers.
type Daemon interface {
	ServerVersion(ctx context.Context) (string, error)
	Endpoint() runtime.Endpoint
}

// versionTimeout bounds one Check's call.
const versionTimeout = 5 * time.Second

// Watch keeps whether the daemon answered at the last Check. It is safe for
// concurrent use; its lock is a leaf (nothing else is taken while it is
// held), so Status may be called under the engine's lock.
type Watch struct {
	d       Daemon
	notify  func(title, body string) // a desktop notice
	changed func()                   // the status changed without a notice

	mu sync.Mutex
	st sandbox.DockerStatus
}

// NewWatch returns a watch of d that has not checked yet. Check calls
// notify when the daemon goes away or comes back after the first Check,
// and changed after any other Check; neither is called under its lock.
func NewWatch(d Daemon, notify func(title, body string), changed func()) *Watch {
	return &Watch{d: d, notify: notify, changed: changed}
}

// Status is what the last Check found.
func (w *Watch) Status() sandbox.DockerStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st
}

// Check asks the daemon for its version and records whether it answered,
// with a notice when that changes after the first Check. It reports
// whether the daemon answered.
func (w *Watch) Check(ctx context.Context) bool {
	callCtx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	version, err := w.d.ServerVersion(callCtx)
	ep := w.d.Endpoint()
	st := sandbox.DockerStatus{Connected: err == nil, Version: version, Host: ep.Host}
	if ep.Source != "" {
		st.HostSource = ep.Source + ": " + ep.Why // e.g. "Colima: the first that answered a ping"
	}
	if err != nil {
		st.Error = fmt.Sprintf("%v; start Docker (sudo systemctl start docker) and Sandtray reconnects by itself", err)
	}
	w.mu.Lock()
	was, known := w.st.Connected, w.st.Host != ""
	w.st = st
	w.mu.Unlock()
	switch {
	case known && was && !st.Connected:
		w.notify("Docker went away", "Sandtray cannot reach Docker at "+st.Host+". Sandboxes are unavailable until it is back.")
	case known && !was && st.Connected:
		w.notify("Docker is back", "Sandtray reconnected to Docker "+version+".")
	default:
		w.changed()
	}
	return st.Connected
}
