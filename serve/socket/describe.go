package socket

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"
)

// Info describes the private endpoint for diagnostics (`sandtray doctor`).
type Info struct {
	Path    string
	Exists  bool
	Owner   int         // the owning uid; -1 where unknown (Windows: see pipe_windows.go)
	Mode    fs.FileMode // permission bits; 0 where unknown
	Answers bool        // an engine accepted a connection
	DirErr  error       // the directory is not private (ErrInsecureDir) or cannot be checked
}

// describeTimeout bounds the dial that asks whether an engine answers.
const describeTimeout = 2 * time.Second

// Describe reports the endpoint at path: whether it exists, its owner and
// mode, whether its directory is private, and whether an engine answers.
// It changes nothing.
func Describe(ctx context.Context, path string) Info {
	in := Info{Path: path, Owner: -1}
	if fi, err := os.Lstat(path); err == nil {
		in.Exists = true
		in.Mode = fi.Mode().Perm()
		if uid, ok := ownerOf(fi); ok {
			in.Owner = uid
		}
	}
	in.DirErr = checkEndpointDir(path)
	ctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	if c, err := Dial(ctx, path); err == nil {
		in.Answers, in.Exists = true, true
		c.Close()
	}
	return in
}

// checkEndpointDir verifies the socket directory as Listen would, without
// creating it: a missing directory is fine (Listen creates it private).
func checkEndpointDir(path string) error {
	dir := endpointDir(path)
	if dir == "" {
		return nil
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return verifyPrivateDir(dir, os.Getuid())
}
