package mcpserver

import (
	"context"
	"testing"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// networkArgs is what the fake records for RequestNetwork.
type networkArgs struct {
	Hosts  []string
	Reason string
}

func (f *fakeBackend) RequestNetwork(ctx context.Context, owner sandbox.Owner, ref string, hosts []string, reason string) (sandbox.EgressRequestResult, error) {
	if err := f.record("RequestNetwork", owner, ref, networkArgs{hosts, reason}); err != nil {
		return sandbox.EgressRequestResult{}, err
	}
	return sandbox.EgressRequestResult{Allowed: []string{"pypi.org"}, Pending: []string{"api.example.com"},
		Denied: []sandbox.EgressRefusal{{Host: "10.0.0.1", Why: "is an IP address no rule names"}}}, nil
}

func TestRequestNetwork(t *testing.T) {
	runToolCases(t, []toolCase{
		{
			name: "request_network passes the hosts and the reason",
			tool: "request_network", args: map[string]any{"sandbox_id": "web", "hosts": []any{"pypi.org", "api.example.com", "10.0.0.1"}, "reason": "to fetch the data"},
			wantCall: fakeCall{Method: "RequestNetwork", Ref: "web", Req: networkArgs{[]string{"pypi.org", "api.example.com", "10.0.0.1"}, "to fetch the data"}},
			want: map[string]any{"allowed": []any{"pypi.org"}, "pending": []any{"api.example.com"},
				"denied": []any{map[string]any{"host": "10.0.0.1", "why": "is an IP address no rule names"}}},
			wantText: []string{"Allowed now: pypi.org.", "Waiting for the user's answer: api.example.com", "Denied: 10.0.0.1"},
		},
	})
}
