package network

import (
	"bytes"
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/homedir"
	"github.com/sandtray/sandtray/internal/keychain"
)

// Secrets ([secrets.NAME], docs/secrets.md): the engine reads each value
// once, at start, from Sandtray's environment, a file or the OS keychain,
// and hands it to the egress gate alone. A sandbox of network "egress"
// gets NAME=<a placeholder of its own> in its environment and trusts the
// install's CA; its spec (labels, state) holds the placeholders, never a
// value.

// Where an egress sandbox finds the gate's CA: alone (Node's extra CAs),
// and added to the system's bundle, which the other variables name.
const (
	sandboxCAFile   = "/usr/local/share/ca-certificates/sandtray-egress.crt"
	sandboxCABundle = "/etc/ssl/certs/ca-certificates.crt"
)

// caEnv names the bundle with the gate's CA for the common tools.
func caEnv() []string {
	return []string{
		"SSL_CERT_FILE=" + sandboxCABundle, "REQUESTS_CA_BUNDLE=" + sandboxCABundle, "CURL_CA_BUNDLE=" + sandboxCABundle,
		"PIP_CERT=" + sandboxCABundle, "NODE_EXTRA_CA_CERTS=" + sandboxCAFile,
	}
}

// secretState is one configured secret as the engine has it.
type secretState struct {
	name  string
	cfg   config.Secret
	value string // "" when it could not be read
	why   string // why there is no value
}

// loadSecrets reads the configured secrets' values; one that cannot be read
// is kept without a value, with why (list_secrets and doctor say it).
func loadSecrets(cfg config.Config, store *keychain.Store) []secretState {
	var out []secretState
	for _, name := range cfg.SecretNames() {
		s := cfg.Secrets[name]
		st := secretState{name: name, cfg: s}
		switch {
		case s.Env != "":
			st.value = os.Getenv(s.Env)
			if st.value == "" {
				st.why = fmt.Sprintf("Sandtray's environment has no %s (secrets.%s.env)", s.Env, name)
			}
		case s.File != "":
			b, err := os.ReadFile(s.ExpandedFile())
			if err != nil {
				st.why = fmt.Sprintf("secrets.%s.file: %v", name, err)
			}
			st.value = strings.TrimRight(string(b), "\r\n")
			if err == nil && st.value == "" {
				st.why = fmt.Sprintf("secrets.%s.file %s is empty", name, s.File)
			}
		default:
			v, err := store.Get(name)
			if errors.Is(err, keychain.ErrNotFound) {
				st.why = fmt.Sprintf("no value stored for %s: add it in the Sandtray app's Settings → Secrets, or set env or file in [secrets.%s]", name, name)
			} else if err != nil {
				st.why = err.Error()
			}
			st.value = v
		}
		if st.why == "" && len(st.value) < egress.MinValue {
			st.why = fmt.Sprintf("the value of %s has %d bytes; Sandtray needs at least %d to tell it from other text in what its hosts answer", name, len(st.value), egress.MinValue)
		}
		if st.why != "" {
			st.value = ""
		}
		out = append(out, st)
	}
	return out
}

// secretsConfigDir is where the CA and the secrets' fallback file live.
func secretsConfigDir(cfg config.Config) string { return cmp.Or(cfg.ConfigDir, cfg.StateDir) }

// gateSecrets are the options of the gate for cfg's secrets: the values,
// the CA (name-constrained to their hosts, made anew when they change) and
// the roots a bound host is checked against. With no secret that has a
// value, none (and no CA is made).
func gateSecrets(cfg config.Config, secrets []secretState, log *slog.Logger) ([]egress.Secret, *egress.CA, *x509.CertPool, error) {
	var out []egress.Secret
	for _, s := range secrets {
		if s.value != "" {
			out = append(out, egress.Secret{Name: s.name, Hosts: s.cfg.Hosts, Value: s.value, Body: s.cfg.Body, Header: s.cfg.Header, Query: s.cfg.Query})
		}
	}
	if len(out) == 0 {
		return nil, nil, nil, nil
	}
	var bound []string
	for _, s := range out {
		bound = append(bound, s.Hosts...)
	}
	ca, err := egress.LoadOrCreateCA(secretsConfigDir(cfg), bound)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the egress gate's CA for secrets: %w", err)
	}
	if ca.Reissued {
		log.Info("the egress gate's CA was made anew for the secrets' hosts; egress sandboxes trust it from their next start", "hosts", bound)
	}
	roots, err := egress.UpstreamRoots(homedir.Expand(cfg.Egress.TrustCA))
	if err != nil {
		return nil, nil, nil, err
	}
	return out, ca, roots, nil
}

// SecretPlaceholders are a new egress sandbox's stand-ins for the secrets
// that have a value, each random and as long as its value (at least 32).
func (n *Network) SecretPlaceholders() map[string]string {
	if len(n.secrets) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, s := range n.secrets {
		if s.value != "" {
			out[s.name] = egress.NewPlaceholder(len(s.value))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// secretEnv is what an egress sandbox with placeholders gets in its
// environment: each secret's placeholder (unless spec's own env names it)
// and the CA's variables.
func secretEnv(spec sandbox.Spec) []string {
	if len(spec.Secrets) == 0 {
		return nil
	}
	var env []string
	for _, name := range slices.Sorted(maps.Keys(spec.Secrets)) {
		if _, set := spec.Env[name]; !set {
			env = append(env, name+"="+spec.Secrets[name])
		}
	}
	for _, kv := range caEnv() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := spec.Env[k]; !set {
			env = append(env, kv)
		}
	}
	return env
}

// trustCA installs the gate's CA in a running egress sandbox with
// placeholders (as root, each time it starts: idempotent).
func (n *Network) trustCA(ctx context.Context, b Box) error {
	ca := n.ca
	if ca == nil || len(b.Spec().Secrets) == 0 {
		return nil
	}
	// The agent's own trustca, as root: never the sandbox's shell or tools.
	_, err := n.execs.ExecAgent(ctx, b.ID(), "0", []string{"trustca", sandboxCAFile, sandboxCABundle}, bytes.NewReader(ca.PEM), 256)
	if err != nil {
		return fmt.Errorf("install the egress gate's CA in sandbox %s (HTTPS to the hosts of its secrets needs it): %w", b.Name(), err)
	}
	return nil
}

// SecretInfo is what list_secrets tells a model of one secret: never its
// value.
type SecretInfo = sandbox.SecretInfo

// ListSecrets lists the configured secrets for a model (list_secrets):
// name, hosts, whether the gate swaps it in bodies, and whether it has a
// value; why one has none is said without the host's paths or variables
// (doctor has them, SecretsStatus).
func (n *Network) ListSecrets() []SecretInfo {
	out := []SecretInfo{}
	for _, s := range n.secrets {
		info := SecretInfo{Name: s.name, Hosts: append([]string(nil), s.cfg.Hosts...), Body: s.cfg.Body, Header: s.cfg.Header, Query: s.cfg.Query, Available: s.value != ""}
		if !info.Available {
			info.Why = "Sandtray has no value for it; the user can add one in the Sandtray app's Settings → Secrets (`sandtray doctor` says what is missing)"
		}
		out = append(out, info)
	}
	return out
}

// SecretsBackend says where secrets without env or file are kept: the OS
// keychain, or the fallback file (doctor says which).
func SecretsBackend(cfg config.Config) (where string, keychainUsed bool) {
	return keychain.New(secretsConfigDir(cfg)).Backend()
}

// SecretsStatus is ListSecrets for cfg without an engine (doctor): each
// configured secret, and whether its value can be read now.
func SecretsStatus(cfg config.Config) []SecretInfo {
	out := []SecretInfo{}
	for _, s := range loadSecrets(cfg, keychain.New(secretsConfigDir(cfg))) {
		out = append(out, SecretInfo{Name: s.name, Hosts: s.cfg.Hosts, Body: s.cfg.Body, Header: s.cfg.Header, Query: s.cfg.Query, Available: s.value != "", Why: s.why})
	}
	return out
}
