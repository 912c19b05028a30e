package portfwd

import (
	"errors"
	"net"
	"testing"
)

func TestSetLimitsAndCloses(t *testing.T) {
	s := NewSet()
	a, b, again, c := startForward(t, 8000, 0), startForward(t, 8001, 0),
		startForward(t, 8000, 0), startForward(t, 8002, 0)
	for _, step := range []struct {
		f           *Forward
		added, full bool
	}{
		{a, true, false}, {b, true, false},
		{again, false, false}, // port 8000 already has one
		{c, false, true},      // the limit of 2
	} {
		if added, full := s.Add("box", step.f, 2); added != step.added || full != step.full {
			t.Errorf("Add(port %d) = %v, %v; want %v, %v", step.f.o.Port, added, full, step.added, step.full)
		}
	}
	if got := s.List("box"); len(got) != 2 || got[0].Port != 8000 || got[1].Port != 8001 {
		t.Errorf("List = %+v, want ports 8000 and 8001", got)
	}
	if !s.Remove("box", 8000) || s.Remove("box", 8000) {
		t.Error("Remove(8000) twice: want true then false")
	}
	if n := s.RemoveBox("box"); n != 1 {
		t.Errorf("RemoveBox = %d, want 1", n)
	}
	// Its listener is closed (not a dial: another test's listener may get the
	// freed port at once).
	for _, f := range []*Forward{a, b} {
		if conn, err := f.ln.Accept(); !errors.Is(err, net.ErrClosed) {
			if conn != nil {
				conn.Close()
			}
			t.Errorf("the forward of port %d still accepts after it was removed: %v", f.o.Port, err)
		}
	}
}
