package egress

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/internal/egress/hostrule"
	"github.com/sandtray/sandtray/internal/atomicfile"
)

// The files of the per-install CA in the config dir, both 0600: the gate
// signs with it the certificates it shows a sandbox for the hosts a secret
// is bound to (and only those), and each egress sandbox trusts it.
const (
	CACertFile = "egress-ca.pem"
	CAKeyFile  = "egress-ca-key.pem"
)

// CA is the gate's certificate authority for the hosts it terminates TLS
// for.
type CA struct {
	Cert tls.Certificate
	PEM  []byte // the certificate alone, what a sandbox trusts
	// Reissued is set when LoadOrCreateCA made it in place of one for
	// other hosts (or one from before CAs had name constraints).
	Reissued bool
}

// LoadOrCreateCA reads the CA in dir, or makes one (an ECDSA P-256 key, ten
// years, usable only to sign server certificates) and keeps it there with
// mode 0600. The CA is name-constrained to bound, the host patterns of the
// secrets (F44): a certificate it signs for any other name or address is
// refused by the sandbox's TLS clients, so its key can intercept nothing
// else. A CA in dir made for other hosts is replaced (a new key, too);
// a pattern "*" leaves the CA unconstrained.
func LoadOrCreateCA(dir string, bound []string) (*CA, error) {
	want, err := constraintsFor(bound)
	if err != nil {
		return nil, err
	}
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	if cerr == nil && kerr == nil {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("the egress CA in %s cannot be read (%v); remove %s and %s to make a new one", dir, err, CACertFile, CAKeyFile)
		}
		if c.Leaf == nil {
			if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
				return nil, err
			}
		}
		if want.on(c.Leaf) {
			return &CA{Cert: c, PEM: certPEM}, nil
		}
		ca, err := newCA(dir, want)
		if ca != nil {
			ca.Reissued = true
		}
		return ca, err
	}
	if !errors.Is(cerr, os.ErrNotExist) && cerr != nil {
		return nil, cerr
	}
	if !errors.Is(kerr, os.ErrNotExist) && kerr != nil {
		return nil, kerr
	}
	return newCA(dir, want)
}

// newCA makes a CA under c and keeps it in dir.
func newCA(dir string, c constraints) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Sandtray egress CA (" + host + ")", Organization: []string{"Sandtray"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	c.put(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(keyPath(dir), keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(filepath.Join(dir, CACertFile), certPEM, 0o600); err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	cert.Leaf, _ = x509.ParseCertificate(der)
	return &CA{Cert: cert, PEM: certPEM}, nil
}

func keyPath(dir string) string { return filepath.Join(dir, CAKeyFile) }

// constraints are the names and addresses a CA may sign for: DNS names
// (each with the names under it, as X.509 name constraints go) and IP
// addresses; any when a pattern is "*".
type constraints struct {
	dns []string
	ips []*net.IPNet
	any bool
}

// constraintsFor reads the secrets' host patterns: a name, *.domain (the
// domain, whose names it covers), an IP literal, or "*"; ports do not
// matter to a certificate.
func constraintsFor(bound []string) (constraints, error) {
	var c constraints
	for _, p := range bound {
		r, err := hostrule.Parse(p, hostrule.SourceConfig)
		if err != nil {
			return c, err
		}
		switch {
		case r.Wildcard && r.Host == "":
			c.any = true
		case r.IP.IsValid():
			bits := r.IP.BitLen()
			n := &net.IPNet{IP: net.IP(r.IP.AsSlice()), Mask: net.CIDRMask(bits, bits)}
			if !slices.ContainsFunc(c.ips, func(m *net.IPNet) bool { return m.String() == n.String() }) {
				c.ips = append(c.ips, n)
			}
		case !slices.Contains(c.dns, r.Host):
			c.dns = append(c.dns, r.Host)
		}
	}
	slices.Sort(c.dns)
	slices.SortFunc(c.ips, func(a, b *net.IPNet) int { return strings.Compare(a.String(), b.String()) })
	return c, nil
}

// everyIP excludes every address: what a CA for names only must not sign.
var everyIP = []*net.IPNet{{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)}, {IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}}

// put sets c on a CA's template: permitted names and addresses, every
// other address excluded, and the extension critical (RFC 5280).
func (c constraints) put(tmpl *x509.Certificate) {
	if c.any {
		return
	}
	tmpl.PermittedDNSDomainsCritical = true
	tmpl.PermittedDNSDomains = c.dns
	if len(c.dns) == 0 {
		tmpl.PermittedDNSDomains = []string{"invalid"} // a name never given (RFC 6761): no name
	}
	tmpl.PermittedIPRanges = c.ips
	if len(c.ips) == 0 {
		tmpl.ExcludedIPRanges = everyIP
	}
}

// on reports whether cert, a CA, is under exactly c.
func (c constraints) on(cert *x509.Certificate) bool {
	var t x509.Certificate
	c.put(&t)
	ips := func(l []*net.IPNet) []string {
		var out []string
		for _, n := range l {
			out = append(out, n.String())
		}
		return out
	}
	return t.PermittedDNSDomainsCritical == cert.PermittedDNSDomainsCritical &&
		slices.Equal(t.PermittedDNSDomains, cert.PermittedDNSDomains) && len(cert.ExcludedDNSDomains) == 0 &&
		slices.Equal(ips(t.PermittedIPRanges), ips(cert.PermittedIPRanges)) && slices.Equal(ips(t.ExcludedIPRanges), ips(cert.ExcludedIPRanges))
}

// UpstreamRoots is the pool a bound host's certificate is checked against:
// the system's roots plus the PEM file trustCA (egress.trust_ca; "" for
// none).
func UpstreamRoots(trustCA string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if trustCA == "" {
		return pool, nil
	}
	b, err := os.ReadFile(trustCA)
	if err != nil {
		return nil, fmt.Errorf("egress.trust_ca: %w", err)
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("egress.trust_ca %s holds no PEM certificate", trustCA)
	}
	return pool, nil
}
