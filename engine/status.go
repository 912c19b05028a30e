package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// noticesKept is how many recent notices snapshots carry.
const noticesKept = 20

// daemonInfo is what the Docker client can say about the daemon it talks to.
type daemonInfo interface {
	ServerVersion(ctx context.Context) (string, error)
	Host() string
}

// hostSourcer says where the daemon's address came from and why it was
// chosen (docker.Client does; fakes need not).
type hostSourcer interface{ HostSource() string }

// notify records a notice for people watching (the GUI shows it as a
// desktop notification) and publishes it.
func (e *Engine) notify(sandboxID, title, body string) {
	e.mu.Lock()
	e.noticeSeq++
	e.notices = append(e.notices, sandbox.Notice{Seq: e.noticeSeq, Time: time.Now().UTC(), SandboxID: sandboxID, Title: title, Body: body})
	if len(e.notices) > noticesKept {
		e.notices = append(e.notices[:0:0], e.notices[len(e.notices)-noticesKept:]...)
	}
	e.mu.Unlock()
	e.log.Info("notice", "title", title, "body", body)
	e.publish()
}

// checkDocker asks the daemon for its version and records whether it
// answered, with a notice when that changes after start-up.
func (e *Engine) checkDocker(ctx context.Context) bool {
	d, ok := e.docker.(daemonInfo)
	if !ok {
		return true
	}
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	version, err := d.ServerVersion(callCtx)
	st := sandbox.DockerStatus{Connected: err == nil, Version: version, Host: d.Host()}
	if hs, ok := d.(hostSourcer); ok {
		st.HostSource = hs.HostSource()
	}
	if err != nil {
		st.Error = fmt.Sprintf("%v; start Docker (sudo systemctl start docker) and Sandtray reconnects by itself", err)
	}
	e.mu.Lock()
	was, known := e.dockerStatus.Connected, e.dockerStatus.Host != ""
	e.dockerStatus = st
	e.mu.Unlock()
	switch {
	case known && was && !st.Connected:
		e.notify("", "Docker went away", "Sandtray cannot reach Docker at "+st.Host+". Sandboxes are unavailable until it is back.")
	case known && !was && st.Connected:
		e.notify("", "Docker is back", "Sandtray reconnected to Docker "+version+".")
	default:
		e.publish()
	}
	return st.Connected
}
