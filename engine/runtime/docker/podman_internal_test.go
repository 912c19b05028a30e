package docker

import (
	"errors"
	"slices"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/events"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestEventActionsInTheRuntimesWords: Podman's "remove" reaches the engine
// as "destroy", Docker's "exec_start: sh -c …" as "exec_start", the rest as
// the daemon sent them.
func TestEventActionsInTheRuntimesWords(t *testing.T) {
	for sent, want := range map[events.Action]string{
		"remove":                "destroy",
		"destroy":               "destroy",
		"exec_start: sh -c env": "exec_start",
		"die":                   "die",
		"start":                 "start",
	} {
		m := events.Message{Action: sent, Actor: events.Actor{ID: "c1"}, TimeNano: 5}
		if got := event(m); got.Action != want || got.ContainerID != "c1" || got.Time.UnixNano() != 5 {
			t.Errorf("event %q became %+v, want action %q of container c1", sent, got, want)
		}
	}
}

// TestPodmansCommitChanges: the config Podman's commit would ignore goes as
// one change per label and variable, each value whole between the quotes
// Podman strips, line breaks as spaces (Podman ends a change at one), the
// command lists as JSON.
func TestPodmansCommitChanges(t *testing.T) {
	got := podmanChanges(runtime.ImageConfig{
		Labels: map[string]string{"b": `say "hi" = ok`, "a": "", "c": "two\nlines"},
		Env:    []string{"PATH=/bin:/usr/bin", "EMPTY="},
		Cmd:    []string{"sleep", "in\nfinity"}, User: "1000", Workdir: "/work dir",
	})
	want := []string{
		`LABEL a=""`, `LABEL b="say "hi" = ok"`, `LABEL c="two lines"`,
		`ENV PATH="/bin:/usr/bin"`, `ENV EMPTY=""`,
		`CMD ["sleep","in\nfinity"]`, "USER 1000", "WORKDIR /work dir",
	}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n%q\nwant\n%q", got, want)
	}
}

// TestPodmansConflicts: Podman's 500s for a container in the wrong state or
// a name in use are sandbox.ErrConflict, as Docker's 409s are; another 500
// stays unclassified.
func TestPodmansConflicts(t *testing.T) {
	for msg, want := range map[string]error{
		"can only create exec sessions on running containers: container state improper":                                                                  sandbox.ErrConflict,
		`the container name "x" is already in use by 49c7. You have to remove that container to be able to reuse that name: that name is already in use`: sandbox.ErrConflict,
		"runc: exec failed: something else": nil,
	} {
		if got := kindOf(cerrdefs.ErrInternal.WithMessage(msg)); got != want {
			t.Errorf("a 500 saying %q is %v, want %v", msg, got, want)
		}
	}
	if got := kindOf(errors.New("container state improper")); got != nil {
		t.Errorf("a client-side error is %v, want none: only the daemon's answers are classified", got)
	}
}
