package docker_test

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/test/dockertest"
)

// TestAttachBeforeStart: what is written to an attached container's stdin
// before its start reaches its main process, its stdout comes back on the
// attachment (its stderr set aside), and the end of what is sent closes
// the process's stdin (StdinOnce). The container has no docker-init and no
// log.
func TestAttachBeforeStart(t *testing.T) {
	c, ctx := dockertest.Client(t), testCtx(t)
	o := createOptions(t)
	o.Attached = true
	o.Cmd = []string{"/bin/sh", "-c", `read line; echo "got $line"; echo oops >&2; cat >/dev/null; echo eof; exec sleep 60`}
	id, err := c.Create(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	att, err := c.Attach(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer att.Close()
	if _, err := io.WriteString(att, "hello\n"); err != nil { // before the start
		t.Fatal(err)
	}
	if err := c.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(att)
	if line, err := r.ReadString('\n'); line != "got hello\n" {
		t.Fatalf("the main process's answer to what was written before its start: %q, %v", line, err)
	}
	if err := att.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); line != "eof\n" {
		t.Fatalf("after the attachment's input ended, the main process said %q, %v; want it to read EOF", line, err)
	}
	if got := att.(interface{ Stderr() string }).Stderr(); !strings.Contains(got, "oops") {
		t.Errorf("stderr set aside %q, want oops", got)
	}
	raw, err := c.InspectRaw(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HostConfig struct {
			Init      *bool
			LogConfig struct{ Type string }
		}
		Config struct{ OpenStdin, StdinOnce bool }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.HostConfig.Init == nil || *doc.HostConfig.Init || doc.HostConfig.LogConfig.Type != "none" || !doc.Config.OpenStdin || !doc.Config.StdinOnce {
		t.Errorf("an attached container: want no init, log driver none, stdin open once; got %s", raw)
	}
}
