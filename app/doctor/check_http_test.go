package doctor

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

func TestHTTPCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "http-token")
	if err := os.WriteFile(good, []byte(strings.Repeat("A", 43)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open-token")
	if err := os.WriteFile(open, []byte(strings.Repeat("A", 43)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o644)
	tests := []struct {
		name, listen, cert, token string
		want                      Level
		says                      string
	}{
		{"off", "", "", good, Info, "off"},
		{"on", "127.0.0.1:8765", "", good, OK, "http://127.0.0.1:8765/mcp, bearer token in " + good},
		{"every interface, TLS", "0.0.0.0:8443", "c.pem", good, OK, "https://127.0.0.1:8443/mcp"},
		{"port 0", "localhost:0", "", good, OK, "http://127.0.0.1:PORT/mcp (a free port"},
		{"no token yet", "127.0.0.1:8765", "", filepath.Join(dir, "none"), OK, "made when the engine starts"},
		{"token others can read", "127.0.0.1:8765", "", open, Fail, "other users can read it"},
	}
	for _, tc := range tests {
		if tc.name == "token others can read" && runtime.GOOS == "windows" {
			continue // file modes say nothing there
		}
		e := &Env{Config: config.Default(), TokenPath: tc.token}
		e.Config.HTTP.Listen, e.Config.HTTP.TLSCert = tc.listen, tc.cert
		got := checkHTTP(context.Background(), e)[0]
		if got.Level != tc.want || !strings.Contains(got.Detail, tc.says) {
			t.Errorf("%s: %+v, want level %d saying %q", tc.name, got, tc.want, tc.says)
		}
	}
}
