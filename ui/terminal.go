package ui

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// openTerminal opens the user's terminal emulator with a shell in the
// sandbox. Without one (or without Options.Terminal) it copies the command
// so the person can paste it into a terminal of their own.
func (u *UI) openTerminal(info sandbox.Info) {
	host := u.m.snap.Docker.Host
	if u.opts.Terminal == nil {
		u.copyExecCommand(info, host, "")
		return
	}
	args := ExecArgs(info, host)
	u.background(func(context.Context) error {
		return u.opts.Terminal.Open(args)
	}, func(err error) {
		if err != nil {
			u.copyExecCommand(info, host, "Could not open a terminal ("+err.Error()+"). ")
			return
		}
		u.detail.showInfo("Opened a terminal in " + info.Name + ".")
	})
}

// copyExecCommand puts the shell command on the clipboard and says so.
func (u *UI) copyExecCommand(info sandbox.Info, host, why string) {
	cmd := ExecCommand(info, host)
	u.app.Clipboard().SetContent(cmd)
	u.detail.showInfo(why + "Copied “" + cmd + "” to the clipboard: paste it into a terminal.")
}
