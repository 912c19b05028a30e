package engine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/test/dockertest"
)

// Issue 27's "Done when", against the real daemon.

// privateTLS is an HTTPS server on the host's loopback with a certificate
// for host.sandtray.internal from a private CA, whose PEM file it returns
// (as egress.trust_ca names one). It sends each request's Authorization
// header to got, and echoes it back.
func privateTLS(t *testing.T, got chan<- string) (port int, caFile string) {
	t.Helper()
	ca, err := egress.LoadOrCreateCA(t.TempDir(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: egress.HostAlias},
		DNSNames: []string{egress.HostAlias}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert.Leaf, &key.PublicKey, ca.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Authorization"):
		default:
		}
		fmt.Fprintf(w, "you sent %s", r.Header.Get("Authorization"))
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	s.StartTLS()
	t.Cleanup(s.Close)
	caFile = filepath.Join(t.TempDir(), "private-ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return s.Listener.Addr().(*net.TCPAddr).Port, caFile
}

// sendKeyPy sends $API_KEY in Authorization to a URL with Python's urllib
// (through HTTPS_PROXY, trusting SSL_CERT_FILE) and prints the status and
// the body.
const sendKeyPy = `import os,sys,urllib.request,urllib.error
r=urllib.request.Request(sys.argv[1],headers={"Authorization":"Bearer "+os.environ["API_KEY"]})
try:
    x=urllib.request.urlopen(r,timeout=30);print(x.status,x.read().decode())
except urllib.error.HTTPError as e:
    print(e.code,e.read().decode().strip())
except Exception as e:
    print("error",e)`

func TestSecretReachesItsHostOnlyAndIsNeverStored(t *testing.T) {
	repo, _ := dockertest.ImageRepo(t) // first: its cleanup runs after the containers'
	const value = "sk-test-REALVALUE-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"
	got := make(chan string, 4)
	port, caFile := privateTLS(t, got)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	t.Cleanup(other.Close)
	otherPort := other.Listener.Addr().(*net.TCPAddr).Port
	keyFile := filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(keyFile, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exportDir := t.TempDir()
	te := egressEngine(t, func(c *config.Config) {
		c.ConfigDir = t.TempDir()
		c.Egress.HostPorts = []int{port, otherPort}
		c.Egress.TrustCA = caFile
		c.Host.AllowedRoots = []string{exportDir}
		c.Secrets = map[string]config.Secret{"API_KEY": {Hosts: []string{fmt.Sprintf("%s:%d", egress.HostAlias, port)}, File: keyFile}}
	})
	if ls := te.ListSecrets(); len(ls) != 1 || ls[0].Name != "API_KEY" || !ls[0].Available {
		t.Fatalf("ListSecrets = %+v", ls)
	}
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	ph := info.Spec.Secrets["API_KEY"]
	if len(ph) != len(value) || ph == value {
		t.Fatalf("placeholder %q", ph)
	}

	// Inside: the placeholder only.
	env := te.command(t, info.ID, "env").Stdout
	if !strings.Contains(env, "API_KEY="+ph) || strings.Contains(env, value) || !strings.Contains(env, "SSL_CERT_FILE=") {
		t.Fatalf("env in the sandbox:\n%s", env)
	}

	// The bound host gets the real value; what it echoes shows the placeholder.
	out := te.command(t, info.ID, fmt.Sprintf("python3 -c '%s' https://%s:%d/v1", sendKeyPy, egress.HostAlias, port)).Stdout
	if strings.TrimSpace(out) != "200 you sent Bearer "+ph {
		t.Fatalf("request to the bound host: %q", out)
	}
	select {
	case a := <-got:
		if a != "Bearer "+value {
			t.Fatalf("the server got Authorization %q, want the real value", a)
		}
	default:
		t.Fatal("the server got no request")
	}

	// Another allowed host: refused, naming the secret and the host.
	out = te.command(t, info.ID, fmt.Sprintf("python3 -c '%s' http://%s:%d/", sendKeyPy, egress.HostAlias, otherPort)).Stdout
	if !strings.HasPrefix(out, "403 ") || !strings.Contains(out, "secret API_KEY") || !strings.Contains(out, fmt.Sprintf("%s:%d", egress.HostAlias, otherPort)) {
		t.Fatalf("placeholder to another host: %q", out)
	}
	if n, _ := te.EgressNetwork(context.Background(), info.ID); !hasViolation(n, "API_KEY") {
		t.Fatalf("no violation recorded: %+v", n.Recent)
	}

	// Never stored: docker inspect, the state dir, an exported Dockerfile,
	// a committed image.
	inspect, err := exec.Command("docker", "inspect", info.ID).CombinedOutput()
	if err != nil || !strings.Contains(string(inspect), ph) {
		t.Fatalf("docker inspect: %v (placeholder there: %v)", err, strings.Contains(string(inspect), ph))
	}
	if strings.Contains(string(inspect), value) {
		t.Error("docker inspect shows the real value")
	}
	filepath.WalkDir(te.cfg.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), value) {
				t.Errorf("state file %s holds the real value", p)
			}
		}
		return nil
	})
	ex, err := te.ExportDockerfile(context.Background(), te.owner, info.ID, filepath.Join(exportDir, "export"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ex.Dockerfile, value) {
		t.Error("the exported Dockerfile holds the real value")
	}
	res, err := te.Commit(context.Background(), te.owner, info.ID, sandbox.CommitRequest{Image: repo + ":secrets"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The image's config, and its layer: the files the sandbox changed.
	img, err := exec.Command("docker", "image", "inspect", res.Image).CombinedOutput()
	if err != nil {
		t.Fatalf("docker image inspect: %v %s", err, img)
	}
	diff, err := exec.Command("docker", "diff", info.ID).Output()
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for _, line := range strings.Split(strings.TrimSpace(string(diff)), "\n") {
		if kind, path, ok := strings.Cut(line, " "); ok && kind != "D" {
			changed = append(changed, path)
		}
	}
	files, err := exec.Command("docker", append([]string{"exec", "-u", "0", info.ID, "sh", "-c", `for f in "$@"; do [ -f "$f" ] && cat "$f"; done; true`, "x"}, changed...)...).Output()
	if err != nil || !strings.Contains(string(files), "BEGIN CERTIFICATE") {
		t.Fatalf("read the sandbox's changed files %v: %v", changed, err)
	}
	if strings.Contains(string(img), value) || strings.Contains(string(files), value) {
		t.Error("the committed image holds the real value")
	}
	logs, _ := te.Logs(context.Background(), info.ID, 0)
	var swapped, refused bool
	for _, a := range logs {
		if strings.Contains(fmt.Sprint(a), value) {
			t.Errorf("activity log entry holds the real value: %+v", a)
		}
		swapped = swapped || a.Tool == "network" && strings.Contains(a.Input, "(secrets API_KEY put in)")
		refused = refused || a.Tool == "network" && strings.Contains(a.Error, "placeholder of secret API_KEY")
	}
	if !swapped || !refused {
		t.Errorf("the activity log lacks the swap (%v) or the refusal (%v): %+v", swapped, refused, logs)
	}
}

func hasViolation(n sandbox.EgressNetwork, name string) bool {
	for _, r := range n.Recent {
		if r.Violation == name && r.Decision == egress.DecisionDeny {
			return true
		}
	}
	return false
}

// A secret whose value cannot be read is listed as unavailable, with why,
// and egress sandboxes do not get it.
func TestSecretWithoutAValue(t *testing.T) {
	t.Setenv("SANDTRAY_TEST_SHORT_KEY", "1234567")
	te := egressEngine(t, func(c *config.Config) {
		c.ConfigDir = t.TempDir()
		c.Secrets = map[string]config.Secret{
			"API_KEY":   {Hosts: []string{"api.example.com"}, Env: "SANDTRAY_TEST_NO_SUCH_KEY"},
			"SHORT_KEY": {Hosts: []string{"api.example.com"}, Env: "SANDTRAY_TEST_SHORT_KEY"},
		}
	})
	// The model is told it has none, not where the host keeps it; doctor is.
	if ls := te.ListSecrets(); len(ls) != 2 || ls[0].Available || !strings.Contains(ls[0].Why, "Settings → Secrets") || strings.Contains(ls[0].Why, "SANDTRAY_TEST_NO_SUCH_KEY") || ls[1].Available {
		t.Fatalf("ListSecrets = %+v", ls)
	}
	// A value too short to tell from other text is none (the gate finds
	// what shows a value in an answer by runs of 8 of its bytes).
	if st := SecretsStatus(te.cfg); len(st) != 2 || st[0].Available || !strings.Contains(st[0].Why, "SANDTRAY_TEST_NO_SUCH_KEY") ||
		st[1].Available || !strings.Contains(st[1].Why, "the value of SHORT_KEY has 7 bytes; Sandtray needs at least 8") {
		t.Fatalf("SecretsStatus = %+v", st)
	}
	if p := te.networkPart.SecretPlaceholders(); p != nil {
		t.Fatalf("placeholders %v", p)
	}
	if _, err := os.Stat(filepath.Join(te.cfg.ConfigDir, egress.CACertFile)); err == nil {
		t.Fatal("a CA was made with no secret to use it")
	}
}
