package engine

import (
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// noticesKept is how many recent notices snapshots carry.
const noticesKept = 20

// notify records a notice for people watching (the GUI shows it as a
// desktop notification) and publishes it.
func (e *Engine) notify(sandboxID, title, body string) {
	e.reg.Locked(func() {
		e.noticeSeq++
		e.notices = append(e.notices, sandbox.Notice{Seq: e.noticeSeq, Time: time.Now().UTC(), SandboxID: sandboxID, Title: title, Body: body})
		if len(e.notices) > noticesKept {
			e.notices = append(e.notices[:0:0], e.notices[len(e.notices)-noticesKept:]...)
		}
	})
	e.log.Info("notice", "title", title, "body", body)
	e.publish()
}
