package engine

import (
	"context"

	"testing"

	"github.com/sandtray/sandtray/engine/internal/agentclient"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// BenchmarkAgentOps times what goes through a sandbox's agent, called on
// the engine directly (sandtray bench times the same through the MCP
// socket): execute_command `true`, write_file and read_file of 100 bytes.
func BenchmarkAgentOps(b *testing.B) {
	te := newTestEngine(b)
	ctx := context.Background()
	info, err := te.Create(ctx, te.owner, sandbox.CreateRequest{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 100)
	if _, err := te.WriteFile(ctx, te.owner, info.ID, sandbox.WriteRequest{Path: "f", Data: data}); err != nil {
		b.Fatal(err) // read runs alone too (-bench AgentOps/read)
	}
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"command", func() error {
			_, err := te.ExecCommand(ctx, te.owner, info.ID, sandbox.CommandRequest{Command: "true"})
			return err
		}},
		{"write", func() error {
			_, err := te.WriteFile(ctx, te.owner, info.ID, sandbox.WriteRequest{Path: "f", Data: data})
			return err
		}},
		{"read", func() error { _, err := te.ReadFile(ctx, te.owner, info.ID, "f", 0, 0); return err }},
		{"spawn sh -c true, no marker", func() error {
			s, err := te.execs.Session(ctx, info.ID)
			if err == nil {
				_, err = s.Run(ctx, agentclient.Process{Argv: []string{"/bin/sh", "-c", "true"}})
			}
			return err
		}},
		{"spawn sh -c true, marker", func() error {
			s, err := te.execs.Session(ctx, info.ID)
			if err == nil {
				_, err = s.Run(ctx, agentclient.Process{Argv: []string{"/bin/sh", "-c", "true"}, Marker: "m"})
			}
			return err
		}},
		{"stat (the session's round trip alone)", func() error {
			s, err := te.execs.Session(ctx, info.ID)
			if err == nil {
				_, err = s.Stat(ctx, "/")
			}
			return err
		}},
	} {
		b.Run(op.name, func(b *testing.B) {
			for b.Loop() {
				if err := op.do(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
