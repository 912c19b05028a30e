package imagebuild

import (
	"archive/tar"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// stage2 is the script the first stage's container runs (stage2.sh).
//
//go:embed stage2.sh
var stage2 []byte

// stage2Path is where the first stage carries it and the .debs.
const stage2Dir = "var/cache/sandtray"

// writeFirstStage writes the first stage's root filesystem as a tar: a
// merged /usr, the files of the Base packages, dpkg's database with dpkg
// itself feigned installed (as debootstrap leaves it, so that dpkg can
// install the others), and every .deb with the lists and the script that
// install them. debDir holds <name>.deb for every selected package.
func writeFirstStage(w io.Writer, sel Selection, debDir, arch string) error {
	tw := tar.NewWriter(w)
	u := newUnpacker(tw)
	if err := u.dir("usr", 0o755); err != nil {
		return err
	}
	for _, d := range mergedDirs {
		if (d == "lib64" && arch != "amd64") || d == "lib32" || d == "libx32" {
			continue
		}
		if err := u.dir("usr/"+d, 0o755); err != nil {
			return err
		}
		if err := u.symlink(d, "usr/"+d); err != nil {
			return err
		}
	}
	for _, p := range sel.Base {
		if err := unpackFile(u, filepath.Join(debDir, p.Name+".deb")); err != nil {
			return fmt.Errorf("unpack %s: %w", p.Name, err)
		}
	}
	dpkgVersion := ""
	for _, p := range sel.Base {
		if p.Name == "dpkg" {
			dpkgVersion = p.Version
		}
	}
	if dpkgVersion == "" {
		return errors.New("the required packages have no dpkg")
	}
	for _, d := range []string{"var", "var/lib", "var/lib/dpkg", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/cache", stage2Dir, stage2Dir + "/debs"} {
		if err := u.dir(d, 0o755); err != nil {
			return err
		}
	}
	files := []struct {
		name string
		mode int64
		data string
	}{
		{"var/lib/dpkg/status", 0o644, "Package: dpkg\nVersion: " + dpkgVersion + "\nMaintainer: unknown\nStatus: install ok installed\n\n"},
		{"var/lib/dpkg/available", 0o644, ""},
		{"var/lib/dpkg/info/dpkg.list", 0o644, ""},
		{stage2Dir + "/base.list", 0o644, names(sel.Base)},
		{stage2Dir + "/rest.list", 0o644, names(sel.Rest)},
		{stage2Dir + "/stage2.sh", 0o755, string(stage2)},
	}
	for _, f := range files {
		if err := u.file(f.name, f.mode, []byte(f.data)); err != nil {
			return err
		}
	}
	for _, p := range sel.All() {
		if err := copyFile(tw, filepath.Join(debDir, p.Name+".deb"), stage2Dir+"/debs/"+p.Name+".deb"); err != nil {
			return err
		}
	}
	return tw.Close()
}

func names(ps []*Package) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Name + "\n")
	}
	return b.String()
}

func unpackFile(u *unpacker, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return u.deb(f)
}

// copyFile writes the host file src into the tar as dst.
func copyFile(tw *tar.Writer, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: 0o644, Size: fi.Size(), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// dropped are what a build container leaves that the image must not keep:
// Docker's marker and the first stage's .debs and script.
func dropped(name string) bool {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	return p == ".dockerenv" || p == stage2Dir || strings.HasPrefix(p, stage2Dir+"/")
}

// filterExport copies the tar of a finished build container to w, less
// what dropped names.
func filterExport(w io.Writer, r io.Reader) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		if dropped(h.Name) {
			continue
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}
