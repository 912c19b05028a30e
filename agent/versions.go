//go:build linux

package agent

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// versionsCmd ("versions MANAGER NAME...") prints "NAME\tVERSION" for each
// name the manager's database has installed, read from its files (dpkg's
// status, apk's installed, Python's dist-info, npm's global package.json),
// without running a program of the sandbox's. Each file is read to a bound.
func versionsCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		return fail(stderr, "versions: which manager?")
	}
	want := map[string]bool{}
	for _, n := range args[1:] {
		want[n] = true
	}
	var found map[string]string
	switch args[0] {
	case "apt":
		found = dpkgVersions(want)
	case "apk":
		found = apkVersions(want)
	case "pip":
		found = pipVersions(want)
	case "npm":
		found = npmVersions(want)
	default:
		return fail(stderr, "versions: unknown manager %q", args[0])
	}
	for _, n := range args[1:] {
		if v, ok := found[n]; ok {
			fmt.Fprintf(stdout, "%s\t%s\n", n, v)
		}
	}
	return 0
}

// maxDB bounds a package database file the agent reads.
const maxDB = 64 << 20

// root is where the sandbox's files are: "/" but in tests.
var root = "/"

// at is p (absolute) under root.
func at(p string) string { return filepath.Join(root, p) }

// dpkgVersions reads /var/lib/dpkg/status: the installed ("install ok
// installed") versions of the names wanted (a name may carry :ARCH).
func dpkgVersions(want map[string]bool) map[string]string {
	out := map[string]string{}
	b, ok := readBounded(at("/var/lib/dpkg/status"), maxDB)
	if !ok {
		return out
	}
	for para := range bytes.SplitSeq(b, []byte("\n\n")) {
		var name, arch, version, status string
		for line := range strings.Lines(string(para)) {
			line = strings.TrimRight(line, "\n")
			switch k, v, _ := strings.Cut(line, ": "); k {
			case "Package":
				name = v
			case "Architecture":
				arch = v
			case "Version":
				version = v
			case "Status":
				status = v
			}
		}
		if status != "install ok installed" || version == "" {
			continue
		}
		for _, n := range []string{name, name + ":" + arch} {
			if want[n] {
				out[n] = version
			}
		}
	}
	return out
}

// apkVersions reads /lib/apk/db/installed (P: name, V: version lines).
func apkVersions(want map[string]bool) map[string]string {
	out := map[string]string{}
	b, ok := readBounded(at("/lib/apk/db/installed"), maxDB)
	if !ok {
		return out
	}
	name := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "P:"):
			name = line[2:]
		case strings.HasPrefix(line, "V:") && want[name]:
			out[name] = line[2:]
		}
	}
	return out
}

var pipSeparators = regexp.MustCompile(`[-_.]+`)

func normalizePip(s string) string { return strings.ToLower(pipSeparators.ReplaceAllString(s, "-")) }

// pipDirs are where pip installs, as Debian's and python.org's builds have them.
var pipDirs = []string{"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
	"/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages", "/opt/*/lib/python3*/site-packages",
	"/root/.local/lib/python3*/site-packages", "/home/*/.local/lib/python3*/site-packages"}

// pipVersions reads the METADATA of each *.dist-info in pip's folders; the
// names are compared as PEP 503 does.
func pipVersions(want map[string]bool) map[string]string {
	norm := map[string][]string{}
	for n := range want {
		norm[normalizePip(n)] = append(norm[normalizePip(n)], n)
	}
	out := map[string]string{}
	for _, g := range pipDirs {
		infos, _ := filepath.Glob(at(g) + "/*.dist-info/METADATA")
		for _, f := range infos {
			b, ok := readBounded(f, 64<<10)
			if !ok {
				continue
			}
			var name, version string
			for line := range strings.Lines(string(b)) {
				line = strings.TrimSpace(line)
				if line == "" {
					break
				}
				if v, ok := strings.CutPrefix(line, "Name: "); ok {
					name = v
				} else if v, ok := strings.CutPrefix(line, "Version: "); ok {
					version = v
				}
			}
			for _, n := range norm[normalizePip(name)] {
				if _, seen := out[n]; !seen && version != "" {
					out[n] = version
				}
			}
		}
	}
	return out
}

// npmDirs are npm's global folders.
var npmDirs = []string{"/usr/local/lib/node_modules", "/usr/lib/node_modules"}

// npmVersions reads each wanted global package's package.json.
func npmVersions(want map[string]bool) map[string]string {
	out := map[string]string{}
	for n := range want {
		if strings.Contains(n, "..") {
			continue
		}
		for _, d := range npmDirs {
			b, ok := readBounded(filepath.Join(at(d), n, "package.json"), 1<<20)
			if !ok {
				continue
			}
			var doc struct {
				Version string `json:"version"`
			}
			if json.Unmarshal(b, &doc) == nil && doc.Version != "" {
				out[n] = doc.Version
				break
			}
		}
	}
	return out
}

// dpkgReportCmd ("dpkgreport PKG...") prints, for the packages given, "O
// PATH" for each file they own, "M PATH" for each of those changed since
// (their md5sums), "V NAME\tVERSION", and "U NAME" for every installed
// package apt does not mark as installed automatically: what a Dockerfile
// export needs, read from dpkg's and apt's files.
func dpkgReportCmd(args []string, stdout io.Writer) int {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	want := map[string]bool{}
	for _, p := range args {
		if strings.ContainsAny(p, "/\x00") || p == "" || p[0] == '.' {
			continue
		}
		want[p] = true
		if b, ok := readBounded(at("/var/lib/dpkg/info/"+p+".list"), maxDB); ok {
			for line := range strings.Lines(string(b)) {
				fmt.Fprintf(w, "O %s\n", strings.TrimRight(line, "\n"))
			}
		}
		if b, ok := readBounded(at("/var/lib/dpkg/info/"+p+".md5sums"), maxDB); ok {
			for line := range strings.Lines(string(b)) {
				sum, file, ok := strings.Cut(strings.TrimRight(line, "\n"), "  ")
				if ok && !sameMD5(at("/"+file), sum) {
					fmt.Fprintf(w, "M /%s\n", file)
				}
			}
		}
	}
	for n, v := range dpkgVersions(want) {
		fmt.Fprintf(w, "V %s\t%s\n", n, v)
	}
	for _, n := range manualPackages() {
		fmt.Fprintf(w, "U %s\n", n)
	}
	return 0
}

// sameMD5 reports whether file's MD5 is sum (a file that cannot be read
// counts as changed, as md5sum -c has it).
func sameMD5(file, sum string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return hex.EncodeToString(h.Sum(nil)) == sum
}

// manualPackages lists the installed packages that apt's extended_states
// does not mark as installed automatically (apt-mark showmanual).
func manualPackages() []string {
	auto := map[string]bool{}
	if b, ok := readBounded(at("/var/lib/apt/extended_states"), maxDB); ok {
		for para := range bytes.SplitSeq(b, []byte("\n\n")) {
			name, isAuto := "", false
			for line := range strings.Lines(string(para)) {
				line = strings.TrimSpace(line)
				if v, ok := strings.CutPrefix(line, "Package: "); ok {
					name = v
				} else if line == "Auto-Installed: 1" {
					isAuto = true
				}
			}
			if isAuto {
				auto[name] = true
			}
		}
	}
	var out []string
	b, ok := readBounded(at("/var/lib/dpkg/status"), maxDB)
	if !ok {
		return nil
	}
	for para := range bytes.SplitSeq(b, []byte("\n\n")) {
		var name, status string
		for line := range strings.Lines(string(para)) {
			line = strings.TrimRight(line, "\n")
			if v, ok := strings.CutPrefix(line, "Package: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "Status: "); ok {
				status = v
			}
		}
		if name != "" && status == "install ok installed" && !auto[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
