package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

// verifyLeaf signs a server certificate for name (a DNS name or an IP) with
// ca, and verifies it as a sandbox's TLS client does, trusting ca alone.
func verifyLeaf(t *testing.T, ca *CA, name string) error {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert.Leaf, &key.PublicKey, ca.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name})
	return err
}

// F44: the install's CA signs for the secrets' hosts only: a certificate it
// signed for any other name or address is refused by a client that trusts
// it, so its key intercepts nothing else. It is made anew when the hosts
// change, and kept while they do not.
func TestCAIsConstrainedToTheBoundHosts(t *testing.T) {
	dir := t.TempDir()
	bound := []string{"api.test:8443", "*.corp.test", "10.1.2.3", HostAlias}
	ca, err := LoadOrCreateCA(dir, bound)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"api.test", "wiki.corp.test", "10.1.2.3", HostAlias} {
		if err := verifyLeaf(t, ca, name); err != nil {
			t.Errorf("a certificate for %s, a bound host: %v", name, err)
		}
	}
	for _, name := range []string{"evil.test", "api.test.evil.test", "pypi.org", "1.1.1.1", "10.1.2.4", "::1"} {
		if err := verifyLeaf(t, ca, name); err == nil || !strings.Contains(err.Error(), "not permitted") && !strings.Contains(err.Error(), "excluded") {
			t.Errorf("a certificate for %s, no bound host: %v; want refused by the CA's constraints", name, err)
		}
	}
	again, err := LoadOrCreateCA(dir, []string{HostAlias, "10.1.2.3", "*.corp.test", "api.test"})
	if err != nil || string(again.PEM) != string(ca.PEM) || again.Reissued {
		t.Fatalf("the same hosts again (another order, without a port): a new CA (%v, %v)", again.Reissued, err)
	}
	other, err := LoadOrCreateCA(dir, []string{"api.test"})
	if err != nil || string(other.PEM) == string(ca.PEM) || !other.Reissued || verifyLeaf(t, other, "wiki.corp.test") == nil {
		t.Fatalf("other hosts: the old CA kept (%v, %v)", other.Reissued, err)
	}
	if err := verifyLeaf(t, other, "api.test"); err != nil {
		t.Fatal(err)
	}
	// A binding to every name ("*") cannot be constrained.
	anyCA, err := LoadOrCreateCA(t.TempDir(), []string{"*"})
	if err != nil || verifyLeaf(t, anyCA, "evil.test") != nil {
		t.Fatalf("a CA for \"*\": %v", err)
	}
	// Names only: no address at all.
	names, err := LoadOrCreateCA(t.TempDir(), []string{"api.test"})
	if err != nil || verifyLeaf(t, names, "93.184.216.34") == nil {
		t.Fatalf("a CA for names signs for an address: %v", err)
	}
	// Addresses only: no name at all.
	addrs, err := LoadOrCreateCA(t.TempDir(), []string{"10.1.2.3"})
	if err != nil || verifyLeaf(t, addrs, "api.test") == nil || verifyLeaf(t, addrs, "10.1.2.3") != nil {
		t.Fatalf("a CA for an address: %v", err)
	}
}
