package egress

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// F66: a secret bound to host.sandtray.internal without a port is bound to
// every port of egress.host_ports: the gate terminates the sandbox's TLS
// there like any bound host's, checks the local service's certificate
// against egress.trust_ca, and swaps the value in.
func TestSecretBoundToTheHostAlias(t *testing.T) {
	cert := leafFor(t, upstreamCA(t), HostAlias)
	got := make(chan string, 2)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		fmt.Fprintf(w, "you sent %s", r.Header.Get("Authorization"))
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.StartTLS()
	t.Cleanup(s.Close)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		io.WriteString(w, "plain")
	}))
	t.Cleanup(plain.Close)
	plainPort := plain.Listener.Addr().(*net.TCPAddr).Port
	ca, err := LoadOrCreateCA(t.TempDir(), []string{HostAlias})
	if err != nil {
		t.Fatal(err)
	}
	upRoots := x509.NewCertPool()
	upRoots.AddCert(upstreamCA(t).Cert.Leaf)
	tg := newTestGate(t, Options{HostPorts: []int{port, plainPort}, CA: ca, UpstreamRoots: upRoots,
		Secrets: []Secret{{Name: "LOCAL_KEY", Hosts: []string{HostAlias}, Value: testValue}}}, nil)
	ph := NewPlaceholder(len(testValue))
	if err := tg.Register(Sandbox{ID: "box1", Name: "sb", Placeholders: map[string]string{"LOCAL_KEY": ph}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("https://%s:%d/v1", HostAlias, port), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	resp, err := trusting(tg, ca).Do(req)
	if err != nil {
		t.Fatalf("HTTPS to the alias, trusting only the gate's CA: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "you sent Bearer "+ph || <-got != "Bearer "+testValue {
		t.Fatalf("the sandbox saw %q", body)
	}
	// Plain HTTP to the alias (the host's own loopback) gets it too.
	req, _ = http.NewRequest("GET", fmt.Sprintf("http://%s:%d/", HostAlias, plainPort), nil)
	req.Header.Set("Authorization", "Bearer "+ph)
	if resp, body := get(t, tg.client(), req); resp.StatusCode != 200 || body != "plain" || <-got != "Bearer "+testValue {
		t.Fatalf("plain HTTP to the alias: %d %q", resp.StatusCode, body)
	}
}
