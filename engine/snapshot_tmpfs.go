package engine

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/runtime"
)

// snapshotMounts are b's tmpfs folders a snapshot keeps: all but /tmp,
// which is scratch (and holds the engine's own files, run.PidDir).
func (e *Engine) snapshotMounts(ctx context.Context, b *box) ([]string, error) {
	m, err := e.docker.TmpfsMounts(ctx, b.id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(m, func(p string) bool { return p == "/tmp" || strings.HasPrefix(run.PidDir, p+"/") }), nil
}

// saveTmpfs writes a tar of each of b's tmpfs folders into dir.
func (e *Engine) saveTmpfs(ctx context.Context, b *box, dir string) (snapshotRecord, int64, error) {
	var rec snapshotRecord
	mounts, err := e.snapshotMounts(ctx, b)
	if err != nil {
		return rec, 0, err
	}
	var total int64
	for i, m := range mounts {
		n, err := e.saveFolder(ctx, b, m, filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"))
		if err != nil {
			return rec, 0, fmt.Errorf("snapshot of %s: save %s: %w", b.name, m, err)
		}
		total += n
		rec.Tmpfs = append(rec.Tmpfs, m)
	}
	return rec, total, nil
}

func (e *Engine) saveFolder(ctx context.Context, b *box, folder, file string) (int64, error) {
	rc, _, err := e.docker.CopyFrom(ctx, b.id, folder)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, rc)
	return n, errors.Join(err, f.Close())
}

// loadTmpfs puts the tmpfs folders of a snapshot (or a fork's) back into
// container id: each folder is emptied, then filled from its tar.
func (e *Engine) loadTmpfs(ctx context.Context, id, user string, dir string, rec snapshotRecord) error {
	for i, m := range rec.Tmpfs {
		var out strings.Builder
		code, err := e.docker.Exec(ctx, id, runtime.ExecOptions{User: user, Cmd: []string{"/bin/sh", "-c",
			`cd -- "$0" && find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +`, m}, Stdout: io.Discard, Stderr: &out})
		if err == nil && code != 0 {
			err = fmt.Errorf("empty %s: exit %d: %s", m, code, strings.TrimSpace(out.String()))
		}
		if err != nil {
			return err
		}
		f, err := os.Open(filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"))
		if err != nil {
			return err
		}
		err = e.docker.CopyTo(ctx, id, m, stripTop(f))
		f.Close()
		if err != nil {
			return fmt.Errorf("restore %s: %w", m, err)
		}
	}
	return nil
}

// stripTop passes a tar archive of one folder (CopyFrom's: its top entry is
// the folder) on with that top entry left out and every name relative to
// it, to extract into the folder itself.
func stripTop(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		tr, tw := tar.NewReader(r), tar.NewWriter(pw)
		err := func() error {
			for {
				h, err := tr.Next()
				if errors.Is(err, io.EOF) {
					return tw.Close()
				}
				if err != nil {
					return err
				}
				_, rest, ok := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
				if !ok || rest == "" {
					continue
				}
				h.Name = rest
				if err := tw.WriteHeader(h); err != nil {
					return err
				}
				if _, err := io.Copy(tw, tr); err != nil {
					return err
				}
			}
		}()
		pw.CloseWithError(err)
	}()
	return pr
}
