package statedir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/sandtray/sandtray/internal/filelock"
)

func TestOneLockAtATime(t *testing.T) {
	dir := t.TempDir()
	first, err := TakeLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = TakeLock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(process %d)", os.Getpid())) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a second lock while the first is held: %v; want ErrLocked naming this process and the dir", err)
	}
	first.Release()
	first.Release() // again: nothing
	again, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("the lock after its release: %v", err)
	}
	again.Release()
}

// TestNoLocksIsSaidApart: a file system that takes no locks (an NFS mount
// without its lock service) is ErrCannotLock, which the engine goes on
// past with a warning, not ErrLocked, which it stops at.
func TestNoLocksIsSaidApart(t *testing.T) {
	lockFile = func(*os.File) (bool, error) { return false, syscall.ENOLCK }
	t.Cleanup(func() { lockFile = filelock.TryLock })
	l, err := TakeLock(t.TempDir())
	if !errors.Is(err, ErrCannotLock) || errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "no locks available") {
		t.Fatalf("TakeLock where no lock can be taken: %v; want ErrCannotLock with the system's reason", err)
	}
	l.Release() // nil: nothing to give up
}

// TestLockEndsWithItsProcess: a killed engine leaves its state dir free
// for the next one, with nothing to clean up.
func TestLockEndsWithItsProcess(t *testing.T) {
	if dir := os.Getenv("STATEDIR_HOLD_LOCK"); dir != "" {
		if _, err := TakeLock(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		select {}
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockEndsWithItsProcess$")
	cmd.Env = append(os.Environ(), "STATEDIR_HOLD_LOCK="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the holder said %q", line)
	}
	_, err = TakeLock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(process %d)", cmd.Process.Pid)) {
		t.Fatalf("while another process holds it: %v; want ErrLocked naming process %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := TakeLock(dir)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}
