package ui

import "fyne.io/fyne/v2/widget"

// capCommit is the capability the engine's status names a runtime's commit
// and diff by (sandbox.DockerStatus.Lacks; engine/runtime's CapCommit):
// commit, the Dockerfile export and the snapshots need it.
const capCommit = "commit"

// lacking is why the engine's container runtime cannot do capability c, as
// the engine's last state says, or "" when it can.
func (u *UI) lacking(c string) string {
	if u.m == nil {
		return ""
	}
	return u.m.snap.Docker.Lacks[c]
}

// showWhy shows "what: why." in l when why is set, and hides l otherwise.
func showWhy(l *widget.Label, what, why string) {
	if why == "" {
		l.Hide()
		return
	}
	if text := what + ": " + why + "."; l.Text != text {
		l.SetText(text)
	}
	l.Show()
}
