package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ulikunitz/xz"
)

// fakeMirror serves one suite with the given files, its InRelease signed
// by signer.
type fakeMirror struct {
	files map[string][]byte
}

func (f *fakeMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, ok := f.files[strings.TrimPrefix(r.URL.Path, "/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// makeDeb builds a .deb whose data.tar.gz holds files (name -> content; a
// name ending in / is a folder).
func makeDeb(t *testing.T, files map[string]string, order []string) []byte {
	t.Helper()
	var data bytes.Buffer
	gz := gzip.NewWriter(&data)
	tw := tar.NewWriter(gz)
	for _, name := range order {
		content := files[name]
		if strings.HasSuffix(name, "/") {
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, Uname: "root"})
			continue
		}
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o755, Size: int64(len(content)), Uid: 0, Uname: "root"})
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	var ar bytes.Buffer
	ar.WriteString("!<arch>\n")
	member := func(name string, b []byte) {
		fmt.Fprintf(&ar, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, 0, 0, 0, "100644", len(b))
		ar.Write(b)
		if len(b)%2 == 1 {
			ar.WriteByte('\n')
		}
	}
	member("debian-binary", []byte("2.0\n"))
	member("control.tar.gz", []byte("x")) // odd length: the padding must be skipped
	member("data.tar.gz", data.Bytes())
	return ar.Bytes()
}

func newKey(t *testing.T) *openpgp.Entity {
	t.Helper()
	e, err := openpgp.NewEntity("Sandtray test archive", "", "archive@test.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// serveSuite publishes a suite whose index lists one package with deb.
func serveSuite(t *testing.T, signer *openpgp.Entity, suite string, deb []byte) (*httptest.Server, *fakeMirror) {
	t.Helper()
	index := fmt.Sprintf("Package: hello\nPriority: required\nVersion: 1.0\nFilename: pool/h/hello_1.0_amd64.deb\nSize: %d\nSHA256: %s\n\n", len(deb), sum(deb))
	var packages bytes.Buffer
	xw, err := xz.NewWriter(&packages)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(xw, index)
	xw.Close()
	release := fmt.Sprintf("Suite: %s\nCodename: %s\nSHA256:\n %s %d main/binary-amd64/Packages.xz\n", suite, suite, sum(packages.Bytes()), packages.Len())
	var signed bytes.Buffer
	cw, err := clearsign.Encode(&signed, signer.PrivateKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(cw, release)
	cw.Close()
	f := &fakeMirror{files: map[string][]byte{
		"dists/" + suite + "/InRelease":                     signed.Bytes(),
		"dists/" + suite + "/main/binary-amd64/Packages.xz": packages.Bytes(),
		"pool/h/hello_1.0_amd64.deb":                        deb,
	}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv, f
}

// TestMirrorChecksEverything: a signed suite's index and .debs are read
// and checked; an index or .deb that is not what the signed release says,
// a release signed by another key, or one for another suite, is refused.
func TestMirrorChecksEverything(t *testing.T) {
	ctx := context.Background()
	key := newKey(t)
	deb := makeDeb(t, map[string]string{"./bin/": "", "./bin/hello": "#!/bin/sh\necho hello\n"}, []string{"./bin/", "./bin/hello"})
	srv, files := serveSuite(t, key, "bookworm", deb)
	m := &Mirror{URL: srv.URL, Suite: "bookworm", Arch: "amd64", Keyring: openpgp.EntityList{key}}
	ix, err := m.Index(ctx)
	if err != nil {
		t.Fatalf("index of a good mirror: %v", err)
	}
	p, ok := ix.Get("hello")
	if !ok {
		t.Fatal("the index has no hello")
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "hello.deb"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.Fetch(ctx, p, f); err != nil {
		t.Fatalf("fetch a good .deb: %v", err)
	}

	t.Run("tampered deb", func(t *testing.T) {
		files.files["pool/h/hello_1.0_amd64.deb"] = append([]byte{}, append(deb[:len(deb)-1], 'X')...)
		defer func() { files.files["pool/h/hello_1.0_amd64.deb"] = deb }()
		f.Seek(0, io.SeekStart)
		f.Truncate(0)
		if err := m.Fetch(ctx, p, f); !errors.Is(err, errCorrupt) {
			t.Errorf("a .deb whose hash differs: %v; want errCorrupt", err)
		}
	})
	t.Run("tampered index", func(t *testing.T) {
		good := files.files["dists/bookworm/main/binary-amd64/Packages.xz"]
		files.files["dists/bookworm/main/binary-amd64/Packages.xz"] = append(append([]byte{}, good[:len(good)-1]...), good[len(good)-1]^1)
		defer func() { files.files["dists/bookworm/main/binary-amd64/Packages.xz"] = good }()
		if _, err := m.Index(ctx); !errors.Is(err, errCorrupt) {
			t.Errorf("an index whose hash differs: %v; want errCorrupt", err)
		}
	})
	t.Run("another key", func(t *testing.T) {
		other := &Mirror{URL: srv.URL, Suite: "bookworm", Arch: "amd64", Keyring: openpgp.EntityList{newKey(t)}}
		if _, err := other.Index(ctx); err == nil || !strings.Contains(err.Error(), "not signed by a key Sandtray trusts") {
			t.Errorf("a release signed by an unknown key: %v; want it refused", err)
		}
	})
	t.Run("Debian's keys", func(t *testing.T) {
		keys, err := DebianKeyring()
		if err != nil || len(keys) < 3 {
			t.Fatalf("Debian's keyring: %d keys, %v", len(keys), err)
		}
		debian := &Mirror{URL: srv.URL, Suite: "bookworm", Arch: "amd64", Keyring: keys}
		if _, err := debian.Index(ctx); err == nil {
			t.Error("a release signed by a test key passed Debian's keyring")
		}
	})
	t.Run("another suite", func(t *testing.T) {
		srv2, _ := serveSuite(t, key, "trixie", deb)
		// The trixie release served where bookworm's is asked for.
		files2 := &fakeMirror{files: map[string][]byte{}}
		resp, err := http.Get(srv2.URL + "/dists/trixie/InRelease")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		files2.files["dists/bookworm/InRelease"] = b
		srv3 := httptest.NewServer(files2)
		defer srv3.Close()
		wrong := &Mirror{URL: srv3.URL, Suite: "bookworm", Arch: "amd64", Keyring: openpgp.EntityList{key}}
		if _, err := wrong.Index(ctx); err == nil || !strings.Contains(err.Error(), `names suite "trixie"`) {
			t.Errorf("trixie's release for bookworm: %v; want it refused", err)
		}
	})
}

// TestUnpackWritesARootFilesystem: a .deb's files land under a merged /usr
// with their modes, and a folder two packages share is written once.
func TestUnpackWritesARootFilesystem(t *testing.T) {
	one := makeDeb(t, map[string]string{"./": "", "./bin/": "", "./bin/sh": "dash", "./usr/": "", "./usr/share/": ""},
		[]string{"./", "./bin/", "./bin/sh", "./usr/", "./usr/share/"})
	two := makeDeb(t, map[string]string{"./usr/": "", "./usr/share/": "", "./usr/share/doc": "docs"},
		[]string{"./usr/", "./usr/share/", "./usr/share/doc"})
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	u := newUnpacker(tw)
	for _, d := range [][]byte{one, two} {
		if err := u.deb(bytes.NewReader(d)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	var got []string
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		got = append(got, fmt.Sprintf("%s %o", h.Name, h.Mode))
	}
	want := []string{"usr/bin/sh 755", "usr/ 755", "usr/share/ 755", "usr/share/doc 755"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unpacked %v; want %v", got, want)
	}
}
