package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load(filepath.Join(dir, "absent.toml"))
	if err != nil || cfg.DefaultImage != DefaultImage || cfg.Limits.ExecTimeout.Duration != 30*time.Second {
		t.Fatalf("no file: %+v, %v; want the defaults", cfg, err)
	}
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte(`default_image = "mine:1"
[images]
javascript = "node:22"
[limits]
exec_timeout = "5s"
memory_mb = 256
[host]
allowed_roots = ["~/work"]
`), 0o600)
	cfg, err = Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultImage != "mine:1" || cfg.ImageFor("javascript") != "node:22" || cfg.ImageFor("python") != "mine:1" ||
		cfg.Limits.ExecTimeout.Duration != 5*time.Second || cfg.Limits.MemoryMB != 256 || cfg.Limits.Pids != 512 {
		t.Errorf("loaded %+v", cfg)
	}
	bad := []struct{ text, key string }{
		{"[limits]\nmemory_mb = 1\n", "limits.memory_mb"},
		{"[limits]\nexec_timeout = \"soon\"\n", "exec_timeout"},
		{"[sandbox]\nnetwork = \"host\"\n", "sandbox.network"},
		{"[sandbox]\ncap_add = [\"SYS_ADMIN\"]\n", "sandbox.cap_add"},
		{"[host]\nallowed_roots = [\"relative\"]\n", "host.allowed_roots"},
		{"[limits]\nmemroy_mb = 5\n", "limits.memroy_mb"},
		{"default_image = \n", "default_image"},
	}
	for _, b := range bad {
		p := filepath.Join(dir, "bad.toml")
		os.WriteFile(p, []byte(b.text), 0o600)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), b.key) {
			t.Errorf("config %q: error %v, want one naming %s", b.text, err, b.key)
		}
	}
}

func TestConfigSandboxUser(t *testing.T) {
	tests := []struct {
		user string
		ok   bool
	}{
		{"", true}, // the image's own user
		{"1000", true},
		{"1000:1000", true},
		{"0", false}, // root: sandbox.user is there to not be root
		{"root", false},
		{"root:staff", false},
		{"000:1000", false},
		{"nobody", true},
		{"sandbox:staff", true},
		{"_apt", true},
		{"www-data:33", true},
		{"2147483647:2147483647", true},
		{"2147483648", false}, // above what runc allows
		{"1000:99999999999", false},
		{"1000:", false},
		{":1000", false},
		{":", false},
		{"1000:1000:1000", false},
		{"-1", false},
		{"+1000", false},
		{"a b", false},
		{"-rf", false},
		{"user;id", false},
		{"$(id)", false},
		{"a-very-long-user-name-of-33-chars", false},
	}
	for _, tt := range tests {
		cfg := Default()
		cfg.Sandbox.User = tt.user
		err := cfg.Validate()
		if tt.ok && err != nil {
			t.Errorf("sandbox.user %q: %v, want it accepted", tt.user, err)
		}
		if !tt.ok && (!errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "sandbox.user") || !strings.Contains(err.Error(), tt.user)) {
			t.Errorf("sandbox.user %q: error %v, want ErrInvalid naming sandbox.user and the value", tt.user, err)
		}
	}

	p := filepath.Join(t.TempDir(), "user.toml")
	os.WriteFile(p, []byte("[sandbox]\nuser = \"1000:1000\"\n"), 0o600)
	cfg, err := Load(p)
	if err != nil || cfg.Sandbox.User != "1000:1000" {
		t.Errorf("Load: sandbox.user = %q, %v; want 1000:1000", cfg.Sandbox.User, err)
	}
	if Default().Sandbox.User != "" {
		t.Errorf("default sandbox.user = %q, want \"\" (the image's user)", Default().Sandbox.User)
	}
}

func TestHTTPConfigCheck(t *testing.T) {
	cases := []struct {
		name string
		http HTTP
		want string // "" means valid
	}{
		{"off", HTTP{}, ""},
		{"loopback", HTTP{Listen: "127.0.0.1:8765"}, ""},
		{"localhost any port", HTTP{Listen: "localhost:0"}, ""},
		{"ipv6 loopback", HTTP{Listen: "[::1]:9000"}, ""},
		{"all interfaces without TLS", HTTP{Listen: ":8765"}, "not a loopback address"},
		{"lan address without TLS", HTTP{Listen: "192.168.1.5:8765"}, "http.tls_cert"},
		{"lan address with TLS", HTTP{Listen: "0.0.0.0:8443", TLSCert: "/etc/c.pem", TLSKey: "/etc/k.pem"}, ""},
		{"cert without key", HTTP{Listen: "127.0.0.1:1", TLSCert: "/etc/c.pem"}, "set together"},
		{"relative cert", HTTP{TLSCert: "c.pem", TLSKey: "/k.pem"}, "http.tls_cert"},
		{"no port", HTTP{Listen: "127.0.0.1"}, "http.listen"},
		{"bad port", HTTP{Listen: "127.0.0.1:99999"}, "port must be"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Default()
			cfg.HTTP = c.http
			err := cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate() = %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

func TestConfigMaxImageBytes(t *testing.T) {
	for _, v := range []int{0, 1023, maxImageBytes + 1} {
		cfg := Default()
		cfg.Limits.MaxImageBytes = v
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "limits.max_image_bytes") {
			t.Errorf("max_image_bytes %d: %v, want refused", v, err)
		}
	}
}
