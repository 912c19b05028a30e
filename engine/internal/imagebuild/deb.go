package imagebuild

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// A .deb is an ar archive of three members: debian-binary, control.tar.*
// and data.tar.* (the files it installs, compressed with gzip, xz or zstd).

// arMember finds the first member of the ar archive r whose name starts
// with prefix and returns its name and a reader of its bytes.
func arMember(r io.Reader, prefix string) (string, io.Reader, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, 8)
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != "!<arch>\n" {
		return "", nil, errors.New("not a .deb (no ar header)")
	}
	hdr := make([]byte, 60)
	for {
		if _, err := io.ReadFull(br, hdr); err != nil {
			return "", nil, fmt.Errorf("no %s* member in the .deb", prefix)
		}
		name := strings.TrimRight(strings.TrimSpace(string(hdr[0:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 || string(hdr[58:60]) != "`\n" {
			return "", nil, errors.New("malformed ar header in the .deb")
		}
		if strings.HasPrefix(name, prefix) {
			return name, io.LimitReader(br, size), nil
		}
		if _, err := br.Discard(int(size + size%2)); err != nil { // members are padded to an even size
			return "", nil, fmt.Errorf("truncated .deb: %w", err)
		}
	}
}

// decompress reads a member compressed as its name's suffix says.
func decompress(name string, r io.Reader) (io.Reader, func(), error) {
	switch path.Ext(name) {
	case ".tar":
		return r, func() {}, nil
	case ".gz":
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, func() { z.Close() }, nil
	case ".xz":
		z, err := xz.NewReader(r)
		return z, func() {}, err
	case ".zst":
		z, err := zstd.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		return z, z.Close, nil
	}
	return nil, nil, fmt.Errorf("member %s: compression not supported", name)
}

// mergedDirs are the top-level folders that are symlinks into /usr on a
// merged-/usr system (Debian 12 and later): a package's ./bin/sh is written
// as usr/bin/sh.
var mergedDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// rootPath turns a member's name ("./bin/sh") into the image's path
// ("usr/bin/sh"); ok is false for the root and the merged folders
// themselves, which the image has already.
func rootPath(name string) (string, bool) {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	if p == "" {
		return "", false
	}
	top, _, _ := strings.Cut(p, "/")
	if slices.Contains(mergedDirs, top) {
		if top == p {
			return "", false
		}
		p = "usr/" + p
	}
	return p, true
}

// unpacker writes the files of .debs into one tar of a root filesystem.
type unpacker struct {
	tw   *tar.Writer
	dirs map[string]bool // folders already written
}

func newUnpacker(tw *tar.Writer) *unpacker {
	return &unpacker{tw: tw, dirs: map[string]bool{}}
}

// dir writes a folder once (root-owned, 0755 unless a package said first).
func (u *unpacker) dir(p string, mode int64) error {
	if u.dirs[p] {
		return nil
	}
	u.dirs[p] = true
	return u.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, Format: tar.FormatPAX})
}

// symlink writes a symlink.
func (u *unpacker) symlink(p, target string) error {
	return u.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: p, Linkname: target, Mode: 0o777, Format: tar.FormatPAX})
}

// file writes a regular file.
func (u *unpacker) file(p string, mode int64, data []byte) error {
	if err := u.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p, Mode: mode, Size: int64(len(data)), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := u.tw.Write(data)
	return err
}

// deb writes the files a .deb installs, with their owners, modes and
// times, folders once each.
func (u *unpacker) deb(r io.Reader) error {
	name, member, err := arMember(r, "data.tar")
	if err != nil {
		return err
	}
	dr, done, err := decompress(name, member)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer done()
	tr := tar.NewReader(dr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		p, ok := rootPath(h.Name)
		if !ok {
			continue
		}
		if h.Typeflag == tar.TypeDir {
			if u.dirs[p] {
				continue
			}
			u.dirs[p] = true
			p += "/"
		}
		h.Name, h.Uname, h.Gname = p, "", ""
		if h.Typeflag == tar.TypeLink {
			if h.Linkname, ok = rootPath(h.Linkname); !ok {
				return fmt.Errorf("%s: a hard link to %s", name, h.Name)
			}
		}
		if err := u.tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := io.Copy(u.tw, tr); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
}
