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
	"os"
	"path/filepath"
	"time"

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
}

// LoadOrCreateCA reads the CA in dir, or makes one (an ECDSA P-256 key, ten
// years, usable only to sign server certificates) and keeps it there with
// mode 0600.
func LoadOrCreateCA(dir string) (*CA, error) {
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
		return &CA{Cert: c, PEM: certPEM}, nil
	}
	if !errors.Is(cerr, os.ErrNotExist) && cerr != nil {
		return nil, cerr
	}
	if !errors.Is(kerr, os.ErrNotExist) && kerr != nil {
		return nil, kerr
	}
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
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(keyPath, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(certPath, certPEM, 0o600); err != nil {
		return nil, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	c.Leaf, _ = x509.ParseCertificate(der)
	return &CA{Cert: c, PEM: certPEM}, nil
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
