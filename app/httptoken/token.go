// Package httptoken keeps the bearer token that guards Sandtray's HTTP MCP
// endpoint: 32 random bytes, URL-safe, in a file only its owner can read.
//
// It is a package of its own, not part of serve/mcpserver, because four
// places need the token and only one of them serves MCP: the host (which
// checks requests against it), `sandtray token` (which prints or rotates it),
// `sandtray install --http` (which writes it into a client's config) and the
// tests. mcpserver only needs a function that returns the current token.
package httptoken

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/adrg/xdg"
)

// FileName is the token file's name in Sandtray's config directory.
const FileName = "http-token"

// tokenBytes is how much randomness a token carries.
const tokenBytes = 32

// Path is where the token lives: $XDG_CONFIG_HOME/sandtray/http-token.
func Path() string { return filepath.Join(xdg.ConfigHome, "sandtray", FileName) }

// File is the token file at one path. Its methods are safe for concurrent
// use; Current is cheap enough to call on every HTTP request.
type File struct {
	path string

	mu     sync.Mutex // guards token and seen
	token  string     // the token last read
	seen   stamp      // the file as it was when token was read
	loaded bool
}

// stamp identifies one version of the file without reading it, and what
// checkPrivate judged: a chmod or chown changes no content, size or mtime,
// and a token file turned readable by others must be refused at once.
type stamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	mode  fs.FileMode
	uid   int
}

// Open returns the token file at path ("" means Path()). It touches nothing.
func Open(path string) *File {
	if path == "" {
		path = Path()
	}
	return &File{path: path}
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Ensure returns the token, creating the file with a new one if there is
// none.
func (f *File) Ensure() (string, error) {
	tok, err := f.Current()
	if !errors.Is(err, os.ErrNotExist) {
		return tok, err
	}
	if err := f.write(false); err != nil {
		return "", err
	}
	return f.Current()
}

// Rotate replaces the token with a new one and returns it. A server reading
// the file through Current sees the new token on its next request.
func (f *File) Rotate() (string, error) {
	if err := f.write(true); err != nil {
		return "", err
	}
	return f.Current()
}

// Current returns the token in the file, reading it again only when the file
// has changed (its mode and owner included). It refuses a file that others
// can read or that belongs to someone else, whenever that happens: such a
// token may have leaked, and `sandtray token --rotate` replaces it. A
// missing file is an error that wraps os.ErrNotExist.
func (f *File) Current() (string, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("HTTP token: %w", err)
	}
	st := stampOf(info)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.loaded && st == f.seen {
		return f.token, nil
	}
	if err := checkPrivate(f.path, info); err != nil {
		return "", err
	}
	raw, err := os.ReadFile(f.path)
	if err != nil {
		return "", fmt.Errorf("HTTP token: %w", err)
	}
	tok := strings.TrimSpace(string(raw))
	if !valid(tok) {
		return "", fmt.Errorf("HTTP token file %s does not hold a token; replace it with `sandtray token --rotate`", f.path)
	}
	f.token, f.seen, f.loaded = tok, st, true
	return tok, nil
}

// write puts a new token in place. The file is created under a temporary
// name with mode 0600 from its first byte (os.CreateTemp), so no other user
// can ever read it, then moved into place: a reader sees the old token or
// the new one, never part of one. Without replace, an existing file wins
// (two first runs racing end with one token).
func (f *File) write(replace bool) error {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("HTTP token: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+FileName+"-*")
	if err != nil {
		return fmt.Errorf("HTTP token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(generate() + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("HTTP token: %w", err)
	}
	if replace {
		err = os.Rename(tmp.Name(), f.path)
	} else if err = os.Link(tmp.Name(), f.path); errors.Is(err, os.ErrExist) {
		err = nil // another process made one first: use that
	}
	if err != nil {
		return fmt.Errorf("HTTP token: %w", err)
	}
	return nil
}

// generate returns a new token.
func generate() string {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

// valid reports whether tok looks like a token generate made: at least as
// long, and URL-safe base64 only.
func valid(tok string) bool {
	if len(tok) < base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(tok)
	return err == nil
}
