package securitytest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/test/dockertest"
)

// dockerCLI runs the docker CLI, as the user would, and fails the test on an error.
func dockerCLI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// imageID is the id a tag points at, or "" when there is no such image.
func imageID(t *testing.T, ref string) string {
	t.Helper()
	out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// buildImage builds an image of the user's own (base plus a label) as tag,
// and returns its id.
func buildImage(t *testing.T, base, tag string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", "build", "-q", "-t", tag, "-")
	cmd.Stdin = strings.NewReader("FROM " + base + "\nLABEL built-by=user\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker build %s: %v: %s", tag, err, out)
	}
	return imageID(t, tag)
}

// untagLater removes the tags when the test ends; the images they point at
// stay unless nothing else tags them (the test image always stays).
func untagLater(t *testing.T, refs ...string) {
	t.Cleanup(func() {
		for _, ref := range refs {
			exec.Command("docker", "rmi", ref).Run()
		}
	})
}

// TestCommitsStayInSandtraysNamespace: commit_sandbox cannot take over a
// name the user or Docker relies on (issue 11, item 1): a model's name goes
// under sandtray-local/, a tag moves only from an image Sandtray committed,
// and the default and pool images are never written.
func TestCommitsStayInSandtraysNamespace(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.Pool.Size = 0 })
	c := e.client
	id := c.sandbox(t, nil)
	c.command(t, id, "echo model > /model.txt", 10)
	base := dockertest.Image(t)
	r := randomName()
	users := "securitytest-app-" + r + ":1"    // an image the user built
	fresh := "securitytest-fresh-" + r + ":16" // a name Docker would otherwise pull
	mine := "sandtray-local/securitytest-mine-" + r + ":1"
	untagLater(t, users, fresh, mine, "sandtray-local/"+users, "sandtray-local/"+fresh, "localhost:5000/team/env:1")
	usersID := buildImage(t, base, users)
	mineID := buildImage(t, base, mine)

	t.Run("the user's image is not replaced", func(t *testing.T) {
		res := c.ok(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": users, "overwrite": true})
		if got := imageID(t, users); got != usersID {
			t.Errorf("commit_sandbox overwrite:true replaced the user's %s (now %s, was %s)", users, got, usersID)
		}
		if res.str("image") != "sandtray-local/"+users || !strings.Contains(res.text, "sandtray-local/"+users) {
			t.Errorf("the result does not name the real reference sandtray-local/%s: %s", users, res.text)
		}
		if imageID(t, "sandtray-local/"+users) == "" {
			t.Errorf("no image sandtray-local/%s after the commit", users)
		}
	})

	t.Run("a fresh name Docker would use is not created", func(t *testing.T) {
		c.ok(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": fresh})
		if imageID(t, fresh) != "" {
			t.Errorf("commit_sandbox created %s, which docker run would now use instead of pulling", fresh)
		}
		if imageID(t, "sandtray-local/"+fresh) == "" {
			t.Errorf("no image sandtray-local/%s after the commit", fresh)
		}
	})

	t.Run("a tag in the namespace that Sandtray did not commit", func(t *testing.T) {
		c.refused(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": mine, "overwrite": true}, "not committed by Sandtray")
		if got := imageID(t, mine); got != mineID {
			t.Errorf("%s was moved from an image Sandtray did not commit (now %s)", mine, got)
		}
	})

	t.Run("a registry host is refused, saying what is allowed", func(t *testing.T) {
		c.refused(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": "localhost:5000/team/env:1"}, "sandtray-local/")
	})

	t.Run("its own commit moves only with overwrite", func(t *testing.T) {
		before := imageID(t, "sandtray-local/"+users)
		c.refused(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": users}, "overwrite")
		c.command(t, id, "echo again > /model.txt", 10)
		c.ok(t, "commit_sandbox", map[string]any{"sandbox_id": id, "image": users, "overwrite": true})
		after := imageID(t, "sandtray-local/"+users)
		if after == before || after == "" {
			t.Errorf("overwrite of Sandtray's own commit did not move the tag (%s, then %s)", before, after)
		}
		untagLater(t, before) // the untagged earlier commit
	})

	t.Run("the default and pool images are never written", func(t *testing.T) {
		committed := "sandtray-local/" + users
		pool := "sandtray-local/" + fresh
		e2 := newEnv(t, func(c *config.Config) {
			c.DefaultImage = committed
			c.Pool.Size, c.Pool.Images = 0, []string{pool}
		})
		id2 := e2.client.sandbox(t, map[string]any{"image": base})
		for _, name := range []string{committed, pool} {
			before := imageID(t, name)
			e2.client.refused(t, "commit_sandbox", map[string]any{"sandbox_id": id2, "image": name, "overwrite": true}, "never")
			if got := imageID(t, name); got != before {
				t.Errorf("%s was moved (now %s, was %s)", name, got, before)
			}
		}
	})
}
