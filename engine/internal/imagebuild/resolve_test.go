package imagebuild

import (
	"slices"
	"strings"
	"testing"
)

const testIndex = `Package: base-files
Priority: required
Essential: yes
Version: 12.4
Pre-Depends: awk
Filename: pool/main/b/base-files/base-files_12.4_amd64.deb
Size: 10
SHA256: 00

Package: mawk
Priority: required
Version: 1.3.4
Provides: awk
Depends: libc6 (>= 2.29)
Filename: pool/main/m/mawk/mawk_1.3.4_amd64.deb
Size: 20
SHA256: 01

Package: init-system-helpers
Priority: required
Version: 1.65
Depends: usrmerge | usr-is-merged
Filename: pool/main/i/init-system-helpers/init-system-helpers_1.65_all.deb
Size: 11
SHA256: 09

Package: usrmerge
Priority: optional
Version: 35
Depends: perl
Filename: pool/main/u/usrmerge/usrmerge_35_all.deb
Size: 12
SHA256: 0a

Package: usr-is-merged
Priority: optional
Version: 35
Filename: pool/main/u/usrmerge/usr-is-merged_35_all.deb
Size: 13
SHA256: 0b

Package: gawk
Priority: optional
Version: 5.2
Provides: awk
Filename: pool/main/g/gawk/gawk_5.2_amd64.deb
Size: 30
SHA256: 02

Package: libc6
Priority: optional
Version: 2.36
Filename: pool/main/g/glibc/libc6_2.36_amd64.deb
Size: 40
SHA256: 03
Description: the C library
 spanning two lines

Package: python3
Priority: optional
Version: 3.11.2
Depends: python3.11 (>= 3.11.2), libpython3-stdlib:any | libfoo
Filename: pool/main/p/python3/python3_3.11.2_amd64.deb
Size: 50
SHA256: 04

Package: python3.11
Priority: optional
Version: 3.11.2
Depends: libc6, mime-support | media-types
Filename: pool/main/p/python3.11/python3.11_3.11.2_amd64.deb
Size: 60
SHA256: 05

Package: media-types
Priority: optional
Version: 10
Filename: pool/main/m/media-types/media-types_10_all.deb
Size: 70
SHA256: 06

Package: libpython3-stdlib
Priority: optional
Version: 3.11.2
Filename: pool/main/p/python3/libpython3-stdlib_3.11.2_amd64.deb
Size: 80
SHA256: 07

Package: broken
Priority: optional
Version: 1
Depends: nowhere | neither
Filename: pool/main/b/broken/broken_1_amd64.deb
Size: 90
SHA256: 08
`

func parsedIndex(t *testing.T) *Index {
	t.Helper()
	ix, err := ParseIndex(strings.NewReader(testIndex))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func pkgNames(ps []*Package) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// TestResolvePicksRequiredThenWanted: the base is every required package
// with its dependencies (a virtual name served by the required provider,
// not another one); the rest is the wanted packages with theirs, taking an
// alternative the index has when the first is missing or virtual.
func TestResolvePicksRequiredThenWanted(t *testing.T) {
	ix := parsedIndex(t)
	if p, _ := ix.Get("libc6"); p == nil || p.Size != 40 || p.SHA256 != "03" {
		t.Fatalf("libc6 parsed as %+v", p)
	}
	sel, err := Resolve(ix, []string{"python3"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pkgNames(sel.Base), []string{"base-files", "init-system-helpers", "mawk", "usr-is-merged", "libc6"}; !slices.Equal(got, want) {
		t.Errorf("base = %v; want %v (awk served by mawk, never gawk; usr-is-merged, not usrmerge)", got, want)
	}
	if got, want := pkgNames(sel.Rest), []string{"python3", "python3.11", "libpython3-stdlib", "media-types"}; !slices.Equal(got, want) {
		t.Errorf("rest = %v; want %v", got, want)
	}
}

// TestResolveNamesWhatIsMissing: a wanted package or a dependency the
// mirror lacks is an error naming it, not a silently smaller image.
func TestResolveNamesWhatIsMissing(t *testing.T) {
	ix := parsedIndex(t)
	if _, err := Resolve(ix, []string{"python3", "nodejs"}); err == nil || !strings.Contains(err.Error(), "nodejs") {
		t.Errorf("missing wanted package: %v; want an error naming nodejs", err)
	}
	if _, err := Resolve(ix, []string{"broken"}); err == nil || !strings.Contains(err.Error(), "nowhere or neither") {
		t.Errorf("missing dependency: %v; want an error naming both alternatives", err)
	}
}

// TestRootPathMergesUsr: files under /bin, /lib… land in /usr, the merged
// folders themselves are left to the image's own symlinks.
func TestRootPathMergesUsr(t *testing.T) {
	for in, want := range map[string]string{
		"./bin/sh": "usr/bin/sh", "./lib/x86_64-linux-gnu/libc.so.6": "usr/lib/x86_64-linux-gnu/libc.so.6",
		"./usr/bin/python3": "usr/bin/python3", "./etc/passwd": "etc/passwd", "./libexec/x": "libexec/x",
		"./sbin/../etc/x": "etc/x",
	} {
		if got, ok := rootPath(in); !ok || got != want {
			t.Errorf("rootPath(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"./", ".", "./bin", "./lib64/", "/../.."} {
		if got, ok := rootPath(in); ok {
			t.Errorf("rootPath(%q) = %q; want it skipped", in, got)
		}
	}
}
