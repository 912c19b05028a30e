//go:build linux

package agent

import (
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// link serves the engine over the sandbox's link (see wire.LinkSocket), where
// the engine mounted one: PID 1 dials it at its start and again on each
// SIGUSR1 (the engine's ask, when it has no session) while no session runs
// on it, and serves a session on each connection. Nothing else ever makes
// it dial; a sandbox without the link has no socket to dial.
func link(path string) {
	kick := make(chan os.Signal, 1)
	signal.Notify(kick, syscall.SIGUSR1)
	var live atomic.Bool
	for {
		if !live.Load() {
			d := net.Dialer{Timeout: 2 * time.Second}
			if c, err := d.Dial("unix", path); err == nil {
				live.Store(true)
				go func() {
					_ = serve(c)
					_ = c.Close()
					live.Store(false)
				}()
			}
		}
		<-kick
	}
}
