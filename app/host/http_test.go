package host

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/serve/mcpserver"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandtray test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(priv)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	parsed, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// TestHTTPWithTLSServesHTTPSOnEveryInterface: with a certificate, a
// non-loopback listen address is allowed and served over TLS only; without
// one it is refused before anything is bound.
func TestHTTPWithTLSServesHTTPSOnEveryInterface(t *testing.T) {
	tokenPath := filepath.Join(t.TempDir(), "http-token")
	if _, err := listenHTTP(config.HTTP{Listen: "0.0.0.0:0"}, tokenPath, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("0.0.0.0 without TLS: %v", err)
	}
	cert, key, pool := selfSigned(t)
	web, err := listenHTTP(config.HTTP{Listen: "0.0.0.0:0", TLSCert: cert, TLSKey: key}, tokenPath, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(web.url, "https://127.0.0.1:") || !strings.HasSuffix(web.url, "/mcp") {
		t.Errorf("URL %s", web.url)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- web.serve(ctx, mcpserver.New(nil, mcpserver.Options{}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	defer func() {
		cancel()
		<-served
	}()
	token, err := web.tokens.Current()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer " + token, http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodPost, web.url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tls","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("HTTPS request: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("auth %q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	plain, err := http.Post(strings.Replace(web.url, "https:", "http:", 1), "application/json", strings.NewReader("{}"))
	if err == nil && plain.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP on the TLS port: %d", plain.StatusCode)
	}
	if plain != nil {
		plain.Body.Close()
	}
}
