package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/internal/egress"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// Round 4's secrets findings, from inside an egress sandbox against the
// real gate and daemon: F66 (a binding of host.sandtray.internal without a
// port), F65 (where a value goes, how it is encoded, what an echo shows)
// and F44 (the CA is trusted for the bound hosts only).

// echoPy sends $API_KEY in Authorization and $MAPS_KEY as the query
// parameter key to a URL, and prints what came back.
const echoPy = `import os,sys,urllib.request
r=urllib.request.Request(sys.argv[1]+"?key="+os.environ["MAPS_KEY"]+"&other="+os.environ["MAPS_KEY"],headers={"Authorization":"Bearer "+os.environ["API_KEY"],"X-Other":os.environ["API_KEY"]})
try: print(urllib.request.urlopen(r,timeout=30).read().decode())
except Exception as e: print("error",e)`

// handshakePy does a TLS handshake in memory between a server with the
// certificate and key given and a client trusting the system's bundle (the
// gate's CA in it), for a name, and prints "ok" or why the client refused.
const handshakePy = `import ssl,sys
s_ctx=ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER);s_ctx.load_cert_chain(sys.argv[1],sys.argv[2])
c_ctx=ssl.create_default_context()
ci,co,si,so=ssl.MemoryBIO(),ssl.MemoryBIO(),ssl.MemoryBIO(),ssl.MemoryBIO()
c=c_ctx.wrap_bio(ci,co,server_hostname=sys.argv[3]);s=s_ctx.wrap_bio(si,so,server_side=True)
def step(x):
    try: x.do_handshake();return True
    except ssl.SSLWantReadError: return False
res="no end"
try:
    for _ in range(20):
        a=step(c);d=co.read()
        if d: si.write(d)
        b=step(s);d=so.read()
        if d: ci.write(d)
        if a and b: res="ok";break
except ssl.SSLError as e: res="refused: "+str(e)
print(res)`

// signedBy is a certificate and key for name signed by the CA in dir (its
// egress-ca*.pem), as PEM.
func signedBy(t *testing.T, dir, name string) (certPEM, keyPEM string) {
	t.Helper()
	cb, _ := os.ReadFile(filepath.Join(dir, egress.CACertFile))
	kb, _ := os.ReadFile(filepath.Join(dir, egress.CAKeyFile))
	ca, err := tls.X509KeyPair(cb, kb)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(ca.Certificate[0])
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}))
}

// echoForms are ways an API might echo v.
func echoForms(v string) []string {
	j, _ := json.Marshal(v)
	return []string{v, strings.ToUpper(v), url.QueryEscape(v), string(j), base64.StdEncoding.EncodeToString([]byte("x" + v)), v[:12], v[len(v)-14:]}
}

func TestSecretsRound4FromASandbox(t *testing.T) {
	const apiValue, mapsValue = "sk-Round4+Key/0123456789abcdef&=xyz0123", "maps+key/ABCDEFGHIJ0123456789=="
	got := make(chan [3]string, 4)
	// The host's service: its certificate names host.sandtray.internal,
	// from a private CA (egress.trust_ca); it echoes what it got, in many
	// forms.
	private, err := egress.LoadOrCreateCA(t.TempDir(), []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: egress.HostAlias}, DNSNames: []string{egress.HostAlias},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, private.Cert.Leaf, &key.PublicKey, private.Cert.PrivateKey)
	svc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		got <- [3]string{auth, r.URL.Query().Get("key"), r.Header.Get("X-Other")}
		fmt.Fprintf(w, "%q %q", echoForms(auth), echoForms(r.URL.Query().Get("key")))
	}))
	svc.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	svc.StartTLS()
	t.Cleanup(svc.Close)
	port := svc.Listener.Addr().(*net.TCPAddr).Port
	trust := filepath.Join(t.TempDir(), "private-ca.pem")
	os.WriteFile(trust, private.PEM, 0o600)
	t.Setenv("SANDTRAY_TEST_API_KEY", apiValue)
	t.Setenv("SANDTRAY_TEST_MAPS_KEY", mapsValue)
	te := egressEngine(t, func(c *config.Config) {
		c.ConfigDir = t.TempDir()
		c.Egress.HostPorts = []int{port}
		c.Egress.TrustCA = trust
		c.Secrets = map[string]config.Secret{
			"API_KEY":  {Hosts: []string{egress.HostAlias}, Env: "SANDTRAY_TEST_API_KEY", Header: "Authorization"},
			"MAPS_KEY": {Hosts: []string{egress.HostAlias}, Env: "SANDTRAY_TEST_MAPS_KEY", Query: "key"},
		}
	})
	info := te.create(t, sandbox.CreateRequest{Network: sandbox.NetworkEgress})
	apiPH, mapsPH := info.Spec.Secrets["API_KEY"], info.Spec.Secrets["MAPS_KEY"]

	// F66, F65: over HTTPS to the alias (bound without a port), each value
	// goes only where its config says, the query one URL-encoded; the
	// echoes show no form of either.
	out := te.command(t, info.ID, fmt.Sprintf("python3 -c '%s' https://%s:%d/v1", echoPy, egress.HostAlias, port)).Stdout
	select {
	case g := <-got:
		if g != [3]string{apiValue, mapsValue, apiPH} {
			t.Errorf("the service got Authorization %q, key %q, X-Other %q; want the values in the first two and the placeholder in the header the config does not name", g[0], g[1], g[2])
		}
	default:
		t.Fatalf("the service got no request; the sandbox saw %q", out)
	}
	for _, v := range []string{apiValue, mapsValue} {
		for _, f := range echoForms(v) {
			if strings.Contains(out, f) {
				t.Errorf("the sandbox saw %q of a value in %s", f, out)
			}
		}
	}
	if !strings.Contains(out, apiPH) || !strings.Contains(out, mapsPH) {
		t.Errorf("the echoes do not show the placeholders: %s", out)
	}

	// F44: the sandbox trusts the gate's CA for the bound hosts only.
	for name, want := range map[string]string{egress.HostAlias: "ok", "evil.test": "refused: ", "pypi.org": "refused: "} {
		cert, key := signedBy(t, te.cfg.ConfigDir, name)
		res := te.command(t, info.ID, fmt.Sprintf("cat > /tmp/leaf.pem <<'EOF'\n%sEOF\ncat > /tmp/leaf.key <<'EOF'\n%sEOF\npython3 -c '%s' /tmp/leaf.pem /tmp/leaf.key %s", cert, key, handshakePy, name))
		if out := strings.TrimSpace(res.Stdout); !strings.HasPrefix(out, want) || want != "ok" && !strings.Contains(out, "permitted subtree violation") {
			t.Errorf("a certificate the gate's CA signed for %s: %q %q; want %q", name, out, res.Stderr, want)
		}
	}
}
