package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"
)

func TestSecretsCheck(t *testing.T) {
	e := &Env{Config: config.Default()}
	if got := checkSecrets(context.Background(), e); len(got) != 1 || got[0].Level != Info {
		t.Fatalf("no secrets: %+v", got)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	os.WriteFile(file, []byte("sk-test-0123456789\n"), 0o600)
	e.Config.ConfigDir = dir
	e.Config.Secrets = map[string]config.Secret{
		"GOOD":    {Hosts: []string{"api.example.com"}, File: file},
		"MISSING": {Hosts: []string{"api.example.com"}, Env: "SANDTRAY_TEST_NO_SUCH_VARIABLE"},
	}
	got := checkSecrets(context.Background(), e)
	if len(got) != 2 || !strings.Contains(got[0].Detail, "2 configured") {
		t.Fatalf("lines %+v", got)
	}
	// Where the values are: the OS keychain, or the file in the config dir.
	if got[0].Level == Warn && !strings.Contains(got[0].Detail, filepath.Join(dir, "secrets.json")) {
		t.Errorf("backend line %+v does not name the file", got[0])
	}
	if got[1].Level != Warn || !strings.Contains(got[1].Detail, "MISSING: no value") || !strings.Contains(got[1].Detail, "SANDTRAY_TEST_NO_SUCH_VARIABLE") {
		t.Errorf("missing value: %+v", got[1])
	}
}
