package imagebuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ulikunitz/xz"
)

// debianKeyring is Debian's archive signing keys (bullseye to trixie), as
// the debian-archive-keyring package installs them: what the mirror's
// InRelease must be signed with.
//
//go:embed debian-archive-keyring.gpg
var debianKeyring []byte

// DebianKeyring returns Debian's archive keys.
func DebianKeyring() (openpgp.EntityList, error) {
	return openpgp.ReadKeyRing(bytes.NewReader(debianKeyring))
}

// maxRelease bounds an InRelease file; Debian's are about 150 KB.
const maxRelease = 4 << 20

// Mirror is one suite and architecture of a Debian archive. Everything read
// from it is checked: InRelease's signature against Keyring, the Packages
// index against InRelease's SHA256, each .deb against the index's.
type Mirror struct {
	URL     string // the archive's root, e.g. "http://deb.debian.org/debian"
	Suite   string // e.g. "bookworm"
	Arch    string // Debian's name: "amd64", "arm64"
	Keyring openpgp.EntityList
	Client  *http.Client // nil: a client with a 30 s wait for each response's headers
}

func (m *Mirror) client() *http.Client {
	if m.Client != nil {
		return m.Client
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second}}
}

// get fetches a path under the mirror's root, reading at most limit bytes.
func (m *Mirror) get(ctx context.Context, p string, limit int64, w io.Writer) error {
	u := strings.TrimRight(m.URL, "/") + "/" + p
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	res, err := m.client().Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: %s", u, res.Status)
	}
	n, err := io.Copy(w, io.LimitReader(res.Body, limit+1))
	if err != nil {
		return fmt.Errorf("fetch %s: %w", u, err)
	}
	if n > limit {
		return fmt.Errorf("fetch %s: larger than the %d bytes expected", u, limit)
	}
	return nil
}

// getChecked fetches p into w, checking its size and SHA256.
func (m *Mirror) getChecked(ctx context.Context, p string, want fileHash, w io.Writer) error {
	h := sha256.New()
	if err := m.get(ctx, p, want.size, io.MultiWriter(w, h)); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want.sha256) {
		return fmt.Errorf("%s from %s: its SHA256 is %s, not the %s the signed index gives: %w", p, m.URL, got, want.sha256, errCorrupt)
	}
	return nil
}

// release fetches dists/<suite>/InRelease, checks its signature and that it
// is the suite asked for, and returns its SHA256 list.
func (m *Mirror) release(ctx context.Context) (map[string]fileHash, error) {
	var buf bytes.Buffer
	if err := m.get(ctx, "dists/"+m.Suite+"/InRelease", maxRelease, &buf); err != nil {
		return nil, err
	}
	block, _ := clearsign.Decode(buf.Bytes())
	if block == nil {
		return nil, fmt.Errorf("%s's InRelease for %s is not a signed message", m.URL, m.Suite)
	}
	if _, err := block.VerifySignature(m.Keyring, nil); err != nil {
		return nil, fmt.Errorf("%s's InRelease for %s is not signed by a key Sandtray trusts (%v): use a Debian mirror", m.URL, m.Suite, err)
	}
	var suite, codename string
	paragraphs(bytes.NewReader(block.Plaintext), func(f map[string]string) error {
		suite, codename = f["Suite"], f["Codename"]
		return nil
	})
	if suite != m.Suite && codename != m.Suite {
		return nil, fmt.Errorf("%s's InRelease for %s is signed but names suite %q (codename %q)", m.URL, m.Suite, suite, codename)
	}
	return releaseHashes(block.Plaintext), nil
}

// Index fetches and checks the suite's main Packages index.
func (m *Mirror) Index(ctx context.Context) (*Index, error) {
	hashes, err := m.release(ctx)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"Packages.xz", "Packages.gz"} {
		p := "main/binary-" + m.Arch + "/" + name
		want, ok := hashes[p]
		if !ok {
			continue
		}
		var buf bytes.Buffer
		if err := m.getChecked(ctx, "dists/"+m.Suite+"/"+p, want, &buf); err != nil {
			return nil, err
		}
		var r io.Reader
		if name == "Packages.xz" {
			r, err = xz.NewReader(&buf)
		} else {
			r, err = gzip.NewReader(&buf)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return ParseIndex(r)
	}
	return nil, fmt.Errorf("%s has no Packages index for %s/%s in its InRelease", m.URL, m.Suite, m.Arch)
}

// Fetch downloads a package's .deb into w, checked against the index; it
// tries up to three times when the connection fails.
func (m *Mirror) Fetch(ctx context.Context, p *Package, w interface {
	io.Writer
	io.Seeker
	Truncate(int64) error
}) error {
	var err error
	for try := range 3 {
		if try > 0 {
			if _, serr := w.Seek(0, io.SeekStart); serr != nil {
				return serr
			}
			if terr := w.Truncate(0); terr != nil {
				return terr
			}
		}
		err = m.getChecked(ctx, p.Filename, fileHash{sha256: p.SHA256, size: p.Size}, w)
		if err == nil || ctx.Err() != nil || errors.Is(err, errCorrupt) {
			return err
		}
	}
	return err
}

// errCorrupt is a download whose hash is not the signed one: the mirror, or
// the way to it, is corrupt, and trying again will not help.
var errCorrupt = errors.New("the mirror or the way to it is corrupt")
