package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadText(t *testing.T, text string) (Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(p)
}

func TestSecretsLoad(t *testing.T) {
	cfg, err := loadText(t, `
[egress]
trust_ca = "/etc/ssl/private-ca.pem"

[secrets.OPENAI_API_KEY]
hosts = ["api.openai.com"]
env = "OPENAI_API_KEY"
header = "Authorization"
query = "api_key"

[secrets.GH_TOKEN]
hosts = ["api.github.com", "*.githubusercontent.com"]
body = true
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.SecretNames(); strings.Join(got, ",") != "GH_TOKEN,OPENAI_API_KEY" {
		t.Fatalf("names %v", got)
	}
	if s := cfg.Secrets["GH_TOKEN"]; !s.Body || s.Source() != "keychain" || len(s.Hosts) != 2 {
		t.Fatalf("GH_TOKEN = %+v", s)
	}
	if s := cfg.Secrets["OPENAI_API_KEY"]; s.Source() != "env OPENAI_API_KEY" || s.Header != "Authorization" || s.Query != "api_key" {
		t.Fatalf("OPENAI_API_KEY = %+v", s)
	}
	if cfg.Egress.TrustCA != "/etc/ssl/private-ca.pem" {
		t.Fatal(cfg.Egress.TrustCA)
	}
}

func TestSecretsRefused(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"[secrets.A]\n", "secrets.A.hosts is empty"},
		{"[secrets.1BAD]\nhosts=[\"x.com\"]\n", "must be an environment variable's name"},
		{"[secrets.HTTPS_PROXY]\nhosts=[\"x.com\"]\n", "Sandtray or the sandbox's programs need"},
		{"[secrets.A]\nhosts=[\"bad host\"]\n", "secrets.A.hosts[0]"},
		{"[secrets.A]\nhosts=[\"x.com\"]\nenv=\"A\"\nfile=\"/a\"\n", "both env and file"},
		{"[secrets.A]\nhosts=[\"x.com\"]\nfile=\"rel\"\n", "must be an absolute path"},
		{"[secrets.A]\nhosts=[\"x.com\"]\nvalue=\"sk-123\"\n", `unknown key "secrets.A.value"`},
		{"[egress]\ntrust_ca=\"ca.pem\"\n", "egress.trust_ca"},
		{"[secrets.A]\nhosts=[\"x.com\"]\nheader=\"Authorization: Bearer\"\n", `secrets.A.header "Authorization: Bearer" must be a header's name`},
		{"[secrets.A]\nhosts=[\"x.com\"]\nquery=\"key=1&x\"\n", `secrets.A.query "key=1&x" must be a query parameter's name`},
	} {
		_, err := loadText(t, tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.text, err, tc.want)
		}
	}
}
