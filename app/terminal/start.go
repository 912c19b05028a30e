package terminal

import "os/exec"

// startDetached starts cmd with no stdio of ours and waits for it in a
// goroutine that ends when the terminal (or the launcher that opened it)
// exits, so no zombie is left behind.
func startDetached(cmd *exec.Cmd) error {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the terminal's exit status is the person's business
	return nil
}
