//go:build unix

package main

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestStdioEngineStopsWhenTold: `sandtray serve --stdio` told to stop
// (SIGTERM: the client giving up on it, the user's kill, a logout) while
// its client keeps stdin open stops within seconds and removes its
// ephemeral sandbox on the way, as when the client closes stdin; it does
// not wait for the client's next byte.
func TestStdioEngineStopsWhenTold(t *testing.T) {
	image := dockertest.Image(t)
	env, _ := userEnv(t, image)
	cmd := exec.Command(binary, "serve", "--stdio")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		stdin.Close()
	})
	session, err := mcp.NewClient(&mcp.Implementation{Name: "signal-test", Version: "1.0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, s: session, ids: map[string]bool{}}
	id := c.call("create_sandbox", nil)["sandbox_id"].(string)
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", id).Run() })

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("sandtray serve --stdio still runs 30 s after SIGTERM, its client's stdin open")
	}
	if containerExists(id) {
		t.Error("the stopped engine left its ephemeral sandbox behind")
	}
}
