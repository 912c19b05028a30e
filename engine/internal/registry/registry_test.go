package registry

import (
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// add registers a live box, as the engine's create does.
func add(r *Registry, id, name string) *Box {
	b := &Box{ID: id, Name: name, Status: sandbox.StatusRunning}
	r.Locked(func() { r.BoxesLocked()[id] = b })
	return b
}

// TestLookup resolves a full id, a unique prefix of 4 or more, and a name,
// and refuses the rest with the error kinds the tools report.
func TestLookup(t *testing.T) {
	r := New()
	a := add(r, "abcd1111", "alpha")
	add(r, "abcd2222", "beta")
	for ref, want := range map[string]*Box{"abcd1111": a, "abcd1": a, " alpha ": a} {
		if got, err := r.Resolve(ref); got != want || err != nil {
			t.Errorf("Resolve(%q) = %v, %v; want %s", ref, got, err, want.Name)
		}
	}
	for ref, kind := range map[string]error{"": sandbox.ErrInvalid, "abcd": sandbox.ErrInvalid, "abc": sandbox.ErrNotFound, "gamma": sandbox.ErrNotFound} {
		if _, err := r.Resolve(ref); !errors.Is(err, kind) {
			t.Errorf("Resolve(%q) = %v; want %v", ref, err, kind)
		}
	}
}

// TestAcquireAndClose: a box being removed is refused, a held one is never
// picked, and once Close has begun nothing more is acquired or entered.
func TestAcquireAndClose(t *testing.T) {
	r := New()
	b := add(r, "abcd1111", "alpha")
	if _, err := r.Acquire("alpha"); err != nil {
		t.Fatal(err)
	}
	r.Locked(func() {
		if b.Pick() {
			t.Error("a busy box was picked")
		}
	})
	if _, live := r.Done(b); !live {
		t.Error("Done: the box is no longer registered")
	}
	r.Locked(func() {
		if !b.Pick() {
			t.Error("an idle box was not picked")
		}
	})
	if _, err := r.Acquire("alpha"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("Acquire of a box being removed: %v", err)
	}
	r.Unpick(b)
	r.Drop(b.ID)
	if b.Stage != Gone {
		t.Errorf("a dropped box's stage: %v", b.Stage)
	}
	r.Close()
	if r.Base().Err() == nil {
		t.Error("Close left the lifetime running")
	}
	if err := r.Enter(); !errors.Is(err, ErrClosing) {
		t.Errorf("Enter after Close: %v", err)
	}
	if !r.Closing() {
		t.Error("Closing after Close: false")
	}
}

// TestReserve counts the boxes and the creates under way against the limit.
func TestReserve(t *testing.T) {
	r := New()
	add(r, "abcd1111", "alpha")
	done, err := r.Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reserve(2); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("a third place under a limit of 2: %v", err)
	}
	done()
	if _, err := r.Reserve(2); err != nil {
		t.Errorf("the place given back: %v", err)
	}
}

// TestDefault: the first call of a session claims its default sandbox's
// create, the next ones wait for it, and once it is made they find it.
func TestDefault(t *testing.T) {
	r := New()
	if _, _, _, known := r.Default("s1"); known {
		t.Fatal("a session never started is known")
	}
	r.SessionStarted(sandbox.Owner{Session: "s1"})
	_, _, claim, _ := r.Default("s1")
	if claim == nil {
		t.Fatal("the first call has no claim")
	}
	_, wait, again, _ := r.Default("s1")
	if again != nil || wait == nil {
		t.Fatal("a second call claims too, or has nothing to wait for")
	}
	add(r, "abcd1111", "alpha")
	r.Created(claim, "abcd1111")
	select {
	case <-wait:
	case <-time.After(time.Second):
		t.Fatal("the waiting call is not woken")
	}
	if id, _, _, _ := r.Default("s1"); id != "abcd1111" {
		t.Errorf("the default sandbox: %q", id)
	}
}
