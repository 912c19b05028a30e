package portfwd

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestPortsPolicy: the policy's refusals come before any sandbox is
// reached, each with its kind and the config key to change.
func TestPortsPolicy(t *testing.T) {
	p := NewPorts(Policy{Forbidden: []int{22}, MaxPerSandbox: 2, MaxConns: 4}, nil, nil, slog.New(slog.DiscardHandler))
	for _, c := range []struct {
		port, hostPort int
		kind           error
		says           string
	}{
		{0, 0, sandbox.ErrInvalid, "not a TCP port"},
		{80, 80, sandbox.ErrInvalid, "1024 to 65535"},
		{22, 0, sandbox.ErrForbidden, "ports.forbidden"},
	} {
		if err := p.Check(c.port, c.hostPort); !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Check(%d, %d) = %v, want %v saying %q", c.port, c.hostPort, err, c.kind, c.says)
		}
	}
	if err := p.Check(8000, 0); err != nil {
		t.Errorf("Check(8000, 0) = %v", err)
	}
	off := NewPorts(Policy{}, nil, nil, slog.New(slog.DiscardHandler))
	if err := off.Check(8000, 0); !errors.Is(err, sandbox.ErrForbidden) || !strings.Contains(err.Error(), "max_per_sandbox = 0") {
		t.Errorf("forwarding off: %v", err)
	}
	sb := Sandbox{ID: "id", Name: "box"}
	if _, ok, err := p.Existing(sb, 8000, 0); ok || err != nil {
		t.Errorf("Existing with no forwards = %v, %v", ok, err)
	}
	if err := p.Full(sb); err != nil {
		t.Errorf("Full with no forwards = %v", err)
	}
	if got := p.Forwards(sb.ID); len(got) != 0 {
		t.Errorf("Forwards = %v, want none", got)
	}
}
