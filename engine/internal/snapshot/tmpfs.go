package snapshot

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

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/internal/run"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// mounts are container id's tmpfs folders a snapshot keeps: all but /tmp,
// which is scratch (and holds the engine's own files, run.PidDir).
func (s *Store) mounts(ctx context.Context, id string) ([]string, error) {
	m, err := s.rt.TmpfsMounts(ctx, id)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(m, func(p string) bool { return p == "/tmp" || strings.HasPrefix(run.PidDir, p+"/") }), nil
}

// saveTmpfs writes a tar of each of b's tmpfs folders into dir, charging
// h for what each takes of the host's disk (see saveFolder).
func (s *Store) saveTmpfs(ctx context.Context, b Box, dir string, h *Hold) (Record, int64, error) {
	var rec Record
	mounts, err := s.mounts(ctx, b.ID)
	if err != nil {
		return rec, 0, err
	}
	var total int64
	files := tmpfsFiles{max: b.Spec.MemoryMB << 20}
	for i, m := range mounts {
		n, err := s.saveFolder(ctx, b.ID, m, filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"), h, &files)
		var over errBudget
		var full errTmpfsFiles
		switch {
		case errors.As(err, &over):
			return rec, 0, fmt.Errorf("snapshot of sandbox %s refused: its folder %s holds more than %s, counting sparse files for the data they hold; "+
				"delete files there, or snapshots you no longer need with delete_snapshot (list_snapshots shows each sandbox's), and try again, or ask the user to raise limits.max_snapshot_mb: %w",
				b.Name, m, over, sandbox.ErrTooLarge)
		case errors.As(err, &full):
			return rec, 0, fmt.Errorf("snapshot of sandbox %s refused: the files in its tmpfs folders (%s among them) add up to more than %d MB at their full size, sparse files included, "+
				"and a restore writes them back whole into the sandbox's memory, which is %d MB (memory_mb); delete or truncate large files there and try again: %w",
				b.Name, m, full.size>>20, b.Spec.MemoryMB, sandbox.ErrTooLarge)
		case err != nil:
			return rec, 0, fmt.Errorf("snapshot of %s: save %s: %w", b.Name, m, err)
		}
		total += n
		rec.Tmpfs = append(rec.Tmpfs, m)
	}
	return rec, total, nil
}

// tmpfsFiles adds up the sizes of the files in a snapshot's tmpfs tars, as
// their headers give them: a restore writes them back whole, holes
// included, into the sandbox's tmpfs, whose pages count in its memory, so
// they may add up to its memory limit at most. Past it the copy stops
// before it reads the file's bytes: a sparse file of a terabyte costs a
// header.
type tmpfsFiles struct{ size, max int64 }

// errTmpfsFiles is tmpfsFiles past its max, with the size reached.
type errTmpfsFiles struct{ size int64 }

func (e errTmpfsFiles) Error() string {
	return fmt.Sprintf("the tmpfs folders' files add up to more than %d MB", e.size>>20)
}

func (t *tmpfsFiles) add(n int64) error {
	if t.size += n; t.size > t.max {
		return errTmpfsFiles{t.size}
	}
	return nil
}

// saveFolder writes a tar of container id's folder into the new file, as
// the sandbox sends it (its bytes are the model's): blocks of zeros stay
// holes, each run of data is charged to h before it is written, and the
// files' sizes are added to files before their bytes are read. It returns
// what the tar takes of the disk.
func (s *Store) saveFolder(ctx context.Context, id, folder, file string, h *Hold, files *tmpfsFiles) (int64, error) {
	rc, _, err := s.rt.CopyFrom(ctx, id, folder)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := hostfs.NewSparseWriter(f, h.diskTake(filepath.Dir(file)))
	// What the reader reads is written: the archive up to its end, each
	// file's bytes as the reader skips them.
	tr := tar.NewReader(io.TeeReader(rc, w))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := files.add(hdr.Size); err != nil {
				return 0, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return w.Data(), f.Close()
}

// LoadTmpfs puts the tmpfs folders of a snapshot (or a fork's) back into
// container id: each folder is emptied, then filled from its tar.
func (s *Store) LoadTmpfs(ctx context.Context, id, user string, dir string, rec Record) error {
	for i, m := range rec.Tmpfs {
		// The agent's own emptydir: never the sandbox's shell or find.
		if _, err := s.rt.ExecAgent(ctx, id, user, []string{"emptydir", m}, nil, 256); err != nil {
			return fmt.Errorf("empty %s: %w", m, err)
		}
		f, err := os.Open(filepath.Join(dir, "tmpfs-"+strconv.Itoa(i)+".tar"))
		if err != nil {
			return err
		}
		err = s.rt.CopyTo(ctx, id, m, stripTop(f))
		f.Close()
		if err != nil {
			return fmt.Errorf("restore %s: %w", m, err)
		}
	}
	return nil
}

// SeedTmpfs fills the tmpfs folders of fork id that its original did not
// have on tmpfs (a fork made under the strict profile of a sandbox that
// was not strict: its workdir) from the fork's image, where the files the
// original had there are, under the mounts.
func (s *Store) SeedTmpfs(ctx context.Context, id, image string, rec Record) error {
	mounts, err := s.mounts(ctx, id)
	if err != nil {
		return err
	}
	mounts = slices.DeleteFunc(mounts, func(m string) bool { return slices.Contains(rec.Tmpfs, m) })
	if len(mounts) == 0 {
		return nil
	}
	helper, done, err := s.openImage(ctx, image)
	if err != nil {
		return fmt.Errorf("open the fork's image: %w", err)
	}
	defer done()
	for _, m := range mounts {
		rc, _, err := s.rt.CopyFrom(ctx, helper, m)
		if errors.Is(err, sandbox.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		err = s.rt.CopyTo(ctx, id, m, stripTop(rc))
		rc.Close()
		if err != nil {
			return fmt.Errorf("fill %s: %w", m, err)
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
