package securitytest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/test/dockertest"
)

// held is what sandbox id holds on the daemon's disk beyond the test
// image: the layers its image adds over it, and its own writable layer.
func (e *env) held(t *testing.T, id string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctr, err := e.docker.Inspect(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	img, err1 := e.docker.ImageSize(ctx, ctr.ImageID)
	base, err2 := e.docker.ImageSize(ctx, dockertest.Image(t))
	rw, err3 := e.docker.SizeRw(ctx, id)
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("sizes of %s: %v %v %v", id, err1, err2, err3)
	}
	return img - base + rw
}

// TestForksCountTheirImageAgainstTheDiskLimit (F59): write 40 MB, fork,
// delete the parent, again and again, with limits.disk_mb = 64: the
// fork's image carries what its parent wrote, which counts against its
// own limit, so no sandbox ends up holding far past it.
func TestForksCountTheirImageAgainstTheDiskLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.DiskMB = 64; c.Pool.Size = 0 })
	c := e.client
	cur := c.sandbox(t, nil)
	refused := ""
	for i := range 4 {
		// The call may be stopped by the disk watch: what it wrote stays.
		c.call(t, "execute_command", map[string]any{"sandbox_id": cur, "command": fmt.Sprintf("head -c 40M /dev/urandom > f%d", i)})
		r := c.call(t, "fork_sandbox", map[string]any{"sandbox_id": cur})
		if r.isError {
			refused = r.text
			break
		}
		forks, _ := r.data["sandboxes"].([]any)
		if r.err != nil || len(forks) != 1 {
			t.Fatalf("fork_sandbox: %v", r)
		}
		c.ok(t, "delete_sandbox", map[string]any{"sandbox_id": cur})
		cur = forks[0].(map[string]any)["sandbox_id"].(string)
	}
	if held := e.held(t, cur); held > 128<<20 {
		t.Errorf("a sandbox with limits.disk_mb = 64 holds %d MB after the loop of forks (its image's layers and its own)", held>>20)
	}
	t.Log(refused)
	if !strings.Contains(refused, "limits.disk_mb") {
		t.Errorf("no fork was refused naming limits.disk_mb (last refusal: %q)", refused)
	}
}

// TestCommittedImagesHaveABudget (F59): limits.max_committed_mb bounds the
// disk that the images of commit_sandbox and fork_sandbox take together.
func TestCommittedImagesHaveABudget(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Limits.CommittedMB = 40; c.Pool.Size = 0 })
	c := e.client
	id := c.sandbox(t, nil)
	c.command(t, id, "head -c 30M /dev/urandom > data", 60)
	r := randomName()
	first, second := "securitytest-budget-"+r+":1", "securitytest-budget-"+r+":2"
	untagLater(t, "sandtray-local/"+first, "sandtray-local/"+second)
	c.ok(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": first})
	t.Log(c.refused(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": second}, "limits.max_committed_mb", "40 MB").text)
	if imageID(t, "sandtray-local/"+second) != "" {
		t.Errorf("the refused commit left sandtray-local/%s", second)
	}
	c.refused(t, "fork_sandbox", map[string]any{"sandbox_id": id}, "limits.max_committed_mb")
	if n := c.sandboxCount(t); n != 1 {
		t.Errorf("%d sandboxes after a refused fork", n)
	}
}
