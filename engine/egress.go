package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
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

// egressSet is the engine's gate and each running egress sandbox's channel.
type egressSet struct {
	gate  *egress.Gate
	mu    sync.Mutex
	chans map[string]*egress.Channel // by sandbox id
	log   func(msg string, args ...any)
	// secrets are the configured secrets with their values, read at start
	// (secrets.go); ca is the gate's CA for their hosts, nil without any.
	secrets []secretState
	ca      *egress.CA
}

// newGate makes the gate of cfg's [egress] rules, recording in the state dir.
func (e *Engine) newGate(cfg config.Config) error {
	secrets := loadSecrets(cfg, keychain.New(secretsConfigDir(cfg)))
	for _, s := range secrets {
		if s.why != "" {
			e.log.Warn("a secret has no value; egress sandboxes do not get it", "secret", s.name, "why", s.why)
		}
	}
	values, ca, roots, err := gateSecrets(cfg, secrets, e.log)
	if err != nil {
		return err
	}
	g, err := egress.New(egress.Options{
		Secrets: values, CA: ca, UpstreamRoots: roots,
		Allow: cfg.Egress.Allow, Deny: cfg.Egress.Deny, Ask: cfg.Egress.Ask, AskTimeout: cfg.Egress.AskTimeout.Duration,
		HostPorts:  cfg.Egress.HostPorts,
		RecordFile: filepath.Join(cfg.StateDir, "egress.jsonl"), GlobalFile: filepath.Join(cfg.StateDir, "egress-approved.json"),
		Log: e.log, OnRecord: e.egressActivity, OnChange: e.publish,
	})
	if err != nil {
		return err
	}
	e.egress = &egressSet{gate: g, chans: map[string]*egress.Channel{}, log: e.log.Warn, secrets: secrets, ca: ca}
	return nil
}

// agentSessions is sandbox id's session with its agent, for its channel.
func (e *Engine) agentSessions(id string) egress.Sessions {
	return func(ctx context.Context) (egress.Agent, error) {
		s, err := e.execs.Agent(ctx, id)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

// egressUp puts a running sandbox of network "egress" on the gate: its
// rules, then its channel (once; a channel that runs is kept).
func (e *Engine) egressUp(ctx context.Context, b *box) error {
	if b.spec.Network != sandbox.NetworkEgress {
		return nil
	}
	var rules sandbox.EgressRules
	var client string
	e.locked(func() { rules, client = b.state.Egress, b.state.Owner.Client })
	if err := e.trustCA(ctx, b); err != nil {
		// Not fatal: the sandbox works, but HTTPS to its secrets' hosts
		// fails its certificate check (a read-only root, the strict
		// profile, has no trust store to add to). Its log says so.
		e.log.Warn("egress sandbox without the gate's CA", "sandbox", b.name, "err", err)
		e.record(b.id, sandbox.Activity{Tool: "network", Error: err.Error() + "; HTTPS requests to its secrets' hosts will fail the certificate check"})
	}
	if err := e.egress.gate.Register(egress.Sandbox{ID: b.id, Name: b.name, Client: client, Rules: rules, Placeholders: b.spec.Secrets,
		Save: func(r sandbox.EgressRules) {
			e.changeState(b, "egress rules", func(st *boxState) { st.Egress = r })
			e.publish()
		}}); err != nil {
		return err
	}
	s := e.egress
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.chans[b.id]; ok {
		return nil
	}
	ch, err := s.gate.StartChannel(ctx, b.id, e.agentSessions(b.id), egress.ProxyPort)
	if err != nil {
		return fmt.Errorf("sandbox %s: %w", b.name, err)
	}
	s.chans[b.id] = ch
	return nil
}

// egressSoon is egressUp off the caller's path (a start Docker reported).
func (e *Engine) egressSoon(b *box) {
	if b.spec.Network != sandbox.NetworkEgress {
		return
	}
	if err := e.enter(); err != nil {
		return
	}
	go func() {
		defer e.wg.Done()
		ctx, cancel := context.WithTimeout(e.base, time.Minute)
		defer cancel()
		if err := e.egressUp(ctx, b); err != nil {
			e.log.Warn("start the egress channel", "sandbox", b.name, "err", err)
		}
	}()
}

// egressDown takes sandbox id off the gate: its channel and connections
// end, what it had pending is refused.
func (e *Engine) egressDown(id string) {
	s := e.egress
	s.mu.Lock()
	ch := s.chans[id]
	delete(s.chans, id)
	s.mu.Unlock()
	if ch != nil {
		ch.Close()
	}
	if s.gate.Registered(id) && !e.installing(id) {
		s.gate.Unregister(id)
	}
}

// installing reports whether an install of sandbox id holds the gate now
// (installGate).
func (e *Engine) installing(id string) bool {
	held := false
	e.locked(func() {
		b, ok := e.boxes[id]
		held = ok && b.gate.window != nil
	})
	return held
}

// egressRestore starts the channels of the running egress sandboxes
// adopted at start-up, off the start's path.
func (e *Engine) egressRestore() {
	var boxes []*box
	e.locked(func() {
		for _, b := range e.boxes {
			if b.spec.Network == sandbox.NetworkEgress && b.status == sandbox.StatusRunning {
				boxes = append(boxes, b)
			}
		}
	})
	for _, b := range boxes {
		e.egressSoon(b)
	}
}

// closeEgress ends every channel and the gate (Close).
func (e *Engine) closeEgress() {
	s := e.egress
	s.mu.Lock()
	chans := s.chans
	s.chans = map[string]*egress.Channel{}
	s.mu.Unlock()
	for _, ch := range chans {
		ch.Close()
	}
	s.gate.Close()
}

// egressActivity records a decision in its sandbox's activity log, where
// sandbox_logs and the app show it.
func (e *Engine) egressActivity(r egress.Record) {
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
	e.record(r.SandboxID, a)
}

// installGate opens the way an install into b takes to its package hosts:
// b on the gate (offline, when its network is "none": nothing but the
// grant), the hosts granted for this call, and a channel of its own on
// egress.InstallPort, started after the freeze; it returns the proxy
// environment of the installer and what closes it all.
func (e *Engine) installGate(b *box) func(ctx context.Context, hosts []string) ([]string, func(), error) {
	return func(ctx context.Context, hosts []string) ([]string, func(), error) {
		g := e.egress.gate
		registered := false
		if !g.Registered(b.id) {
			var client string
			e.locked(func() { client = b.state.Owner.Client })
			if err := g.Register(egress.Sandbox{ID: b.id, Name: b.name, Client: client, Offline: b.spec.Network != sandbox.NetworkEgress}); err != nil {
				return nil, nil, err
			}
			registered = true
		}
		revoke, err := g.Grant(b.id, hosts, hostrule.SourceInstall)
		if err != nil {
			if registered {
				g.Unregister(b.id)
			}
			return nil, nil, err
		}
		// A session of its own, started after the freeze, which stopped the
		// processes of the sandbox's session.
		s, err := e.execs.NewSession(ctx, b.id)
		var ch *egress.Channel
		if err == nil {
			ch, err = g.StartChannel(ctx, b.id, func(context.Context) (egress.Agent, error) {
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
				g.Unregister(b.id)
			}
			return nil, nil, err
		}
		return proxyEnv(fmt.Sprintf("http://127.0.0.1:%d", egress.InstallPort)), func() {
			ch.Close()
			s.Close()
			revoke()
			if registered {
				g.Unregister(b.id)
			}
		}, nil
	}
}
