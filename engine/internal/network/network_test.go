package network

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestEnv: an egress sandbox gets the proxy's variables and its secrets'
// placeholders and CA, except where its own env names them; any other
// sandbox gets nothing.
func TestEnv(t *testing.T) {
	if env := Env(sandbox.Spec{Network: sandbox.NetworkNone, Secrets: map[string]string{"API_KEY": "x"}}); env != nil {
		t.Fatalf("a sandbox without egress gets %v", env)
	}
	env := Env(sandbox.Spec{Network: sandbox.NetworkEgress,
		Env:     map[string]string{"HTTP_PROXY": "http://elsewhere:1", "CURL_CA_BUNDLE": "/mine.pem"},
		Secrets: map[string]string{"API_KEY": "placeholder-1", "OTHER": "placeholder-2"}})
	for _, kv := range []string{"https_proxy=" + proxyURL, "NODE_USE_ENV_PROXY=1", "API_KEY=placeholder-1", "OTHER=placeholder-2",
		"SSL_CERT_FILE=" + sandboxCABundle, "NODE_EXTRA_CA_CERTS=" + sandboxCAFile} {
		if !slices.Contains(env, kv) {
			t.Errorf("env lacks %s: %v", kv, env)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "HTTP_PROXY=") || strings.HasPrefix(kv, "CURL_CA_BUNDLE=") {
			t.Errorf("env overrides the sandbox's own %s", kv)
		}
	}
	if env := Env(sandbox.Spec{Network: sandbox.NetworkEgress}); slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "SSL_CERT_FILE=") }) {
		t.Errorf("an egress sandbox without secrets is pointed at the gate's CA: %v", env)
	}
}

// publishOnly is a Host that only hears that something changed: enough for
// the part's secrets, which never reach a sandbox.
type publishOnly struct{ Host }

func (publishOnly) Publish() {}

// TestSecrets: a secret with a value gets a placeholder as long as the
// value in each new egress sandbox and a CA for its hosts; one without is
// listed with why, for the model without the host's variable names.
func TestSecrets(t *testing.T) {
	value := strings.Repeat("v", 40)
	t.Setenv("SANDTRAY_NETWORK_TEST_KEY", value)
	cfg := config.Default()
	cfg.StateDir, cfg.ConfigDir = t.TempDir(), t.TempDir()
	cfg.Secrets = map[string]config.Secret{
		"API_KEY":  {Hosts: []string{"api.example.com"}, Env: "SANDTRAY_NETWORK_TEST_KEY"},
		"NO_VALUE": {Hosts: []string{"api.example.com"}, Env: "SANDTRAY_NETWORK_TEST_NO_SUCH_KEY"},
	}
	n, ports, err := New(cfg, nil, publishOnly{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer n.CloseEgress()
	if ports == nil || ports != n.ports {
		t.Fatalf("New returned the port table %p, not its own %p", ports, n.ports)
	}
	ph := n.SecretPlaceholders()
	if len(ph) != 1 || len(ph["API_KEY"]) != len(value) || ph["API_KEY"] == value {
		t.Fatalf("placeholders %v", ph)
	}
	if again := n.SecretPlaceholders(); again["API_KEY"] == ph["API_KEY"] {
		t.Fatal("two sandboxes got the same placeholder")
	}
	ls := n.ListSecrets()
	if len(ls) != 2 || ls[0].Name != "API_KEY" || !ls[0].Available || ls[1].Available ||
		!strings.Contains(ls[1].Why, "Settings → Secrets") || strings.Contains(ls[1].Why, "SANDTRAY_NETWORK_TEST_NO_SUCH_KEY") {
		t.Fatalf("ListSecrets = %+v", ls)
	}
	if st := SecretsStatus(cfg); len(st) != 2 || !st[0].Available || st[1].Available || !strings.Contains(st[1].Why, "SANDTRAY_NETWORK_TEST_NO_SUCH_KEY") {
		t.Fatalf("SecretsStatus = %+v", st)
	}
	if _, err := os.Stat(filepath.Join(cfg.ConfigDir, egress.CACertFile)); err != nil {
		t.Fatalf("no CA for the secrets' hosts: %v", err)
	}
}
