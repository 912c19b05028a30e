package network

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/internal/agentclient"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/keychain"
)

// The egress gate (engine/internal/egress) carries the connections of
// sandboxes with network "egress", and of installs into sandboxes without
// a network, through a channel of execs per sandbox. The engine starts a
// sandbox's channel when it runs and ends it when it stops, keeps each
// sandbox's approvals in its state, and records each decision in its
// activity log.

// proxyURL is what an egress sandbox's proxy variables name.
var proxyURL = fmt.Sprintf("http://127.0.0.1:%d", egress.ProxyPort)

// proxyEnv is the environment that makes the common tools use the proxy
// at url: curl, wget, apt, pip, requests and urllib read the lower-case
// names, others the upper-case; Node's fetch needs NODE_USE_ENV_PROXY.
func proxyEnv(url string) []string {
	return []string{
		"HTTP_PROXY=" + url, "HTTPS_PROXY=" + url, "http_proxy=" + url, "https_proxy=" + url,
		"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1", "NODE_USE_ENV_PROXY=1",
	}
}

// Env is what a sandbox of spec gets in its environment besides spec's
// own env: for an egress sandbox, the proxy's variables and its secrets'
// (spec's own values of those names win: the model may point a tool
// elsewhere, which then simply reaches nothing); for any other, nothing.
func Env(spec sandbox.Spec) []string {
	if spec.Network != sandbox.NetworkEgress {
		return nil
	}
	var env []string
	for _, kv := range proxyEnv(proxyURL) {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := spec.Env[k]; !set {
			env = append(env, kv)
		}
	}
	return append(env, secretEnv(spec)...)
}

// newGate makes the gate of cfg's [egress] rules, recording in the state dir.
func (n *Network) newGate(cfg config.Config) error {
	secrets := loadSecrets(cfg, keychain.New(secretsConfigDir(cfg)))
	for _, s := range secrets {
		if s.why != "" {
			n.log.Warn("a secret has no value; egress sandboxes do not get it", "secret", s.name, "why", s.why)
		}
	}
	values, ca, roots, err := gateSecrets(cfg, secrets, n.log)
	if err != nil {
		return err
	}
	g, err := egress.New(egress.Options{
		Secrets: values, CA: ca, UpstreamRoots: roots,
		Allow: cfg.Egress.Allow, Deny: cfg.Egress.Deny, Ask: cfg.Egress.Ask, AskTimeout: cfg.Egress.AskTimeout.Duration,
		HostPorts:  cfg.Egress.HostPorts,
		RecordFile: filepath.Join(cfg.StateDir, "egress.jsonl"), GlobalFile: filepath.Join(cfg.StateDir, "egress-approved.json"),
		Log: n.log, OnRecord: n.egressActivity, OnChange: n.host.Publish,
	})
	if err != nil {
		return err
	}
	n.gate, n.secrets, n.ca = g, secrets, ca
	return nil
}

// agentSessions is sandbox id's session with its agent, for its channel.
func (n *Network) agentSessions(id string) egress.Sessions {
	return func(ctx context.Context) (egress.Agent, error) {
		s, err := n.execs.Agent(ctx, id)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// EgressUp puts a running sandbox of network "egress" on the gate: its
// rules, then its channel (once; a channel that runs is kept). The engine
// calls it when it starts one.
func (n *Network) EgressUp(ctx context.Context, b Box) error {
	spec := b.Spec()
	if spec.Network != sandbox.NetworkEgress {
		return nil
	}
	st := b.State()
	if err := n.trustCA(ctx, b); err != nil {
		// Not fatal: the sandbox works, but HTTPS to its secrets' hosts
		// fails its certificate check (a read-only root, the strict
		// profile, has no trust store to add to). Its log says so.
		n.log.Warn("egress sandbox without the gate's CA", "sandbox", b.Name(), "err", err)
		n.host.Record(b.ID(), sandbox.Activity{Tool: "network", Error: err.Error() + "; HTTPS requests to its secrets' hosts will fail the certificate check"})
	}
	if err := n.gate.Register(egress.Sandbox{ID: b.ID(), Name: b.Name(), Client: st.Client, Rules: st.Egress, Placeholders: spec.Secrets,
		Save: func(r sandbox.EgressRules) {
			b.SaveEgress(func(rules *sandbox.EgressRules) { *rules = r })
			n.host.Publish()
		}}); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.chans[b.ID()]; ok {
		return nil
	}
	ch, err := n.gate.StartChannel(ctx, b.ID(), n.agentSessions(b.ID()), egress.ProxyPort)
	if err != nil {
		return fmt.Errorf("sandbox %s: %w", b.Name(), err)
	}
	n.chans[b.ID()] = ch
	return nil
}

// EgressOrRemove starts a new egress sandbox's channel to the gate; a
// sandbox whose channel cannot start (no python3 in its image) is removed,
// never left behind. The engine calls it when it has made sandbox id.
func (n *Network) EgressOrRemove(ctx context.Context, owner sandbox.Owner, id string) error {
	b, ok := n.host.Lookup(id)
	if !ok || b.Spec().Network != sandbox.NetworkEgress {
		return nil
	}
	err := n.EgressUp(ctx, b)
	if err == nil {
		return nil
	}
	if derr := n.host.Delete(context.WithoutCancel(ctx), owner, id); derr != nil {
		n.log.Error("remove a sandbox whose egress channel failed", "sandbox", b.Name(), "err", derr)
	}
	return fmt.Errorf("create sandbox with network \"egress\": %w", err)
}

// EgressSoon is EgressUp off the caller's path (a start Docker reported).
func (n *Network) EgressSoon(b Box) {
	if b.Spec().Network != sandbox.NetworkEgress {
		return
	}
	n.host.Go(func(base context.Context) {
		ctx, cancel := context.WithTimeout(base, time.Minute)
		defer cancel()
		if err := n.EgressUp(ctx, b); err != nil {
			n.log.Warn("start the egress channel", "sandbox", b.Name(), "err", err)
		}
	})
}

// EgressDown takes sandbox id off the gate: its channel and connections
// end, what it had pending is refused. The engine calls it when the
// sandbox stops or goes.
func (n *Network) EgressDown(id string) {
	n.mu.Lock()
	ch := n.chans[id]
	delete(n.chans, id)
	n.mu.Unlock()
	if ch != nil {
		ch.Close()
	}
	if n.gate.Registered(id) && !n.installing(id) {
		n.gate.Unregister(id)
	}
}

// EgressRegistered reports whether sandbox id is on the gate (it runs with
// network "egress", or an install holds the gate for it).
func (n *Network) EgressRegistered(id string) bool { return n.gate.Registered(id) }

// installing reports whether an install of sandbox id holds the gate now
// (InstallGate).
func (n *Network) installing(id string) bool {
	b, ok := n.host.Lookup(id)
	return ok && b.State().Installing
}

// egressRestore starts the channels of the running egress sandboxes
// adopted at start-up, off the start's path.
func (n *Network) egressRestore() {
	for _, b := range n.host.Boxes() {
		if b.Spec().Network == sandbox.NetworkEgress && b.State().Running {
			n.EgressSoon(b)
		}
	}
}

// CloseEgress ends every channel and the gate (the engine's Close).
func (n *Network) CloseEgress() {
	n.mu.Lock()
	chans := n.chans
	n.chans = map[string]*egress.Channel{}
	n.mu.Unlock()
	for _, ch := range chans {
		ch.Close()
	}
	n.gate.Close()
}

// SetEgressRules replaces the config's rules on the gate (Reconfigure).
func (n *Network) SetEgressRules(allow, deny []string, ask bool) error {
	return n.gate.SetRules(allow, deny, ask)
}

// egressActivity records a decision in its sandbox's activity log, where
// sandbox_logs and the app show it.
func (n *Network) egressActivity(r egress.Record) {
	a := sandbox.Activity{Time: r.Time, Tool: "network", Client: r.Client, Duration: r.DurationMS,
		Input: fmt.Sprintf("%s %s: %s by %s", r.Method, egress.HostPort(r.Host, r.Port), r.Decision, r.Rule)}
	if len(r.Secrets) > 0 {
		a.Input += " (secrets " + strings.Join(r.Secrets, ", ") + " put in)"
	}
	if r.Decision == egress.DecisionAllow && r.Error == "" {
		a.Stdout = fmt.Sprintf("%d bytes up, %d bytes down", r.BytesUp, r.BytesDown)
	} else {
		a.Error = strings.TrimSpace(r.Error)
	}
	n.host.Record(r.SandboxID, a)
}

// InstallGate opens the way an install into b takes to its package hosts:
// b on the gate (offline, when its network is "none": nothing but the
// grant), the hosts granted for this call, and a channel of its own on
// egress.InstallPort, started after the freeze; it returns the proxy
// environment of the installer and what closes it all.
func (n *Network) InstallGate(b Box) func(ctx context.Context, hosts []string) ([]string, func(), error) {
	return func(ctx context.Context, hosts []string) ([]string, func(), error) {
		g := n.gate
		id := b.ID()
		registered := false
		if !g.Registered(id) {
			client := b.State().Client
			if err := g.Register(egress.Sandbox{ID: id, Name: b.Name(), Client: client, Offline: b.Spec().Network != sandbox.NetworkEgress}); err != nil {
				return nil, nil, err
			}
			registered = true
		}
		revoke, err := g.Grant(id, hosts, hostrule.SourceInstall)
		if err != nil {
			if registered {
				g.Unregister(id)
			}
			return nil, nil, err
		}
		// A session of its own, started after the freeze, which stopped the
		// processes of the sandbox's session.
		s, err := n.execs.NewSession(ctx, id)
		var ch *egress.Channel
		if err == nil {
			ch, err = g.StartChannel(ctx, id, func(context.Context) (egress.Agent, error) {
				if s.Closed() {
					return nil, agentclient.ErrClosed
				}
				return s, nil
			}, egress.InstallPort)
			if err != nil {
				s.Close()
			}
		}
		if err != nil {
			revoke()
			if registered {
				g.Unregister(id)
			}
			return nil, nil, err
		}
		return proxyEnv(fmt.Sprintf("http://127.0.0.1:%d", egress.InstallPort)), func() {
			ch.Close()
			s.Close()
			revoke()
			if registered {
				g.Unregister(id)
			}
		}, nil
	}
}
