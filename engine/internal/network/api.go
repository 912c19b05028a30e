package network

import (
	"context"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// API is what this part gives the Engine's callers: the network tools
// (egress answers and requests, secrets, expose_port). Package engine
// promotes these methods, and only these, onto *engine.Engine; the rest of
// the part's exported methods are the engine's centre's to call.
type API interface {
	EgressPending() []sandbox.EgressPending
	AnswerEgress(ctx context.Context, id string, a sandbox.EgressAnswer) error
	AnswerEgressHost(ctx context.Context, ref, target string, a sandbox.EgressAnswer) (int, error)
	RequestNetwork(ctx context.Context, owner sandbox.Owner, ref string, hosts []string, reason string) (sandbox.EgressRequestResult, error)
	EgressNetwork(ctx context.Context, ref string) (sandbox.EgressNetwork, error)
	RemoveEgressRule(ctx context.Context, ref, pattern string) error
	RemoveEgressApproval(ctx context.Context, pattern string) error
	ExposePort(ctx context.Context, owner sandbox.Owner, ref string, port, hostPort int) (sandbox.PortForward, error)
	UnexposePort(ctx context.Context, owner sandbox.Owner, ref string, port int) error
	ListSecrets() []SecretInfo
}
