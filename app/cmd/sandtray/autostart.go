package main

import (
	"fmt"
	"io"

	"github.com/sandtray/sandtray/app/autostart"
)

// runAutostart is `sandtray autostart enable|disable|status`: the same entry
// the tray menu's "Start at login" item turns on and off.
func runAutostart(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("autostart needs one of enable, disable, status")
	}
	a, err := autostart.New()
	if err != nil {
		return err
	}
	var st autostart.Status
	switch args[0] {
	case "enable":
		exe, err := autostart.Executable()
		if err != nil {
			return err
		}
		st, err = a.Enable(exe)
		if err != nil {
			return err
		}
	case "disable":
		st, err = a.Disable()
	case "status":
		st, err = a.Status()
	default:
		return fmt.Errorf("autostart %s: want enable, disable or status", args[0])
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, st)
	return err
}
