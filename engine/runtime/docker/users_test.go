package docker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// TestCreateAsUser checks that a container created with a user runs as it
// and that its workdir, which Docker makes as root, belongs to that user,
// though every capability is dropped.
func TestCreateAsUser(t *testing.T) {
	c := dockertest.Client(t)
	tests := []struct {
		name, user, workdir string
		want                string // id -u, id -g, then the workdir's owner and mode
	}{
		{"numeric ids, workdir in the image", "1000:1000", "/workspace", "1000 1000 1000:1000 755"},
		{"a name, workdir the image lacks", "nobody", "/srv/deep/work", "65534 65534 65534:65534 755"},
		{"name and group, sticky workdir keeps its mode", "nobody:daemon", "/tmp", "65534 1 65534:1 1777"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := createOptions(t)
			o.User, o.Workdir = tt.user, tt.workdir
			id := startContainer(t, c, o)
			got := run(t, c, id, "sh", "-c", `cd "$0" && echo $(id -u) $(id -g) $(stat -c '%u:%g %a' "$PWD") && touch "$PWD/mine"`, tt.workdir)
			if strings.TrimSpace(got) != tt.want {
				t.Errorf("as %q in %s: got %q, want %q", tt.user, tt.workdir, got, tt.want)
			}
		})
	}
}

func TestUserIDs(t *testing.T) {
	c, id := newSandbox(t)
	ctx := testCtx(t)
	for user, want := range map[string][2]int{
		"nobody":         {65534, 65534},
		"daemon:nogroup": {1, 65534},
		"1000":           {1000, 0}, // not in the image's /etc/passwd: group 0, as for Docker's execs
		"1000:1000":      {1000, 1000},
	} {
		uid, gid, err := c.UserIDs(ctx, id, user)
		if err != nil || uid != want[0] || gid != want[1] {
			t.Errorf("UserIDs(%q) = %d, %d, %v; want %d, %d", user, uid, gid, err, want[0], want[1])
		}
	}
	if _, _, err := c.UserIDs(ctx, id, "no-such-user"); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("UserIDs of a user the image lacks: %v, want ErrInvalid", err)
	}

	// A name keeps the ids of its first lookup, though /etc/passwd changes;
	// another client, with nothing kept, reads the new file.
	passwd := "root:x:0:0:root:/root:/bin/sh\nnobody:x:4242:4242::/:/bin/sh\n"
	if err := c.CopyTo(ctx, id, "/etc", tarOf(t, "passwd", []byte(passwd), 0o644)); err != nil {
		t.Fatalf("CopyTo /etc/passwd: %v", err)
	}
	if uid, _, err := c.UserIDs(ctx, id, "nobody"); err != nil || uid != 65534 {
		t.Errorf("UserIDs(nobody) after /etc/passwd changed = %d, %v; want the first lookup's 65534", uid, err)
	}
	if uid, _, err := dockertest.Client(t).UserIDs(ctx, id, "nobody"); err != nil || uid != 4242 {
		t.Errorf("a new client's UserIDs(nobody) = %d, %v; want 4242 from the new /etc/passwd", uid, err)
	}
}

func TestCreateAsUnknownUserLeavesNothing(t *testing.T) {
	c := dockertest.Client(t)
	ctx := testCtx(t)
	o := createOptions(t)
	o.User = "no-such-user"
	_, err := c.Create(ctx, o)
	if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "no-such-user") {
		t.Errorf("Create as a user the image lacks: %v; want ErrInvalid naming the user", err)
	}
	if left, err := c.List(ctx, o.Labels, true); err != nil || len(left) > 0 {
		t.Errorf("after the failed Create: %d containers left (%v), want none", len(left), err)
	}
}
