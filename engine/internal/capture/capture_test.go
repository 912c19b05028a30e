package capture

import (
	"archive/tar"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sandtray/sandtray/engine/sandbox"
)

func TestExportFilter(t *testing.T) {
	f := exportFilter{owned: map[string]bool{"/usr/bin/jq": true}, apt: true, pip: true, npm: true}
	for p, want := range map[string]bool{
		"/tmp/x": true, "/tmp/.sandtray/1.pid": true, "/var/cache/apt/pkgcache.bin": true, "/var/lib/dpkg/status": true,
		"/var/log/apt/history.log": true, "/etc/hostname": true, "/usr/sbin/docker-init": true, "/etc/ld.so.cache": true,
		"/workspace/a/__pycache__/m.pyc": true, "/root/.cache/pip/x": true, "/root/.npm/_cacache/y": true,
		"/usr/local/lib/python3.11/dist-packages/numpy/__init__.py": true, "/usr/local/lib/node_modules/left-pad": true,
		"/usr/bin/jq":        true,
		"/workspace/main.py": false, "/etc/issue": false, "/usr/bin/tree": false, "/tmpfile": false, "/root/.bashrc": false,
		"/workspace/dist-packages/x": false,
	} {
		if got := f.skips(p); got != want {
			t.Errorf("skips(%s) = %v, want %v", p, got, want)
		}
	}
	link := &tar.Header{Typeflag: tar.TypeSymlink, Linkname: "../lib/node_modules/left-pad/bin.js"}
	if !f.skipsEntry("/usr/local/bin/left-pad", link) {
		t.Error("npm's bin link is exported")
	}
}

func TestDockerfileQuoting(t *testing.T) {
	p := &exportPlan{
		name: "q", id: "0123456789abcdef", from: "img:1", user: "app", workdir: "/workspace",
		env:      map[string]string{"A": `x"y$z\`, "B": "two\nlines"},
		packages: []sandbox.Package{{Manager: "pip", Name: "numpy", Version: "2.1.0"}, {Manager: "apt", Name: "jq", Version: "1.6-2"}},
		roots:    []string{"/workspace/evil\nRUN rm -rf /"},
		deleted:  []string{"/etc/it's here"},
	}
	got := p.dockerfile(true)
	for _, want := range []string{
		`ENV A="x\"y\$z\\"`, "# ENV B left out", "USER root\n",
		"apt-get install -y --no-install-recommends 'jq=1.6-2'", `"$pip" install --no-cache-dir 'numpy==2.1.0'`,
		`#   "/workspace/evil\nRUN rm -rf /"`, `RUN ["rm", "-rf", "--", "/etc/it's here"]`, "USER app\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Dockerfile lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "apt-get") > strings.Index(got, "pip") {
		t.Error("apt packages should install before pip packages")
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "RUN rm") {
			t.Errorf("a path broke out of its comment: %q", line)
		}
	}
}

func TestMergePackages(t *testing.T) {
	old := []sandbox.Package{{Manager: "pip", Name: "a", Version: "1"}, {Manager: "apt", Name: "a", Version: "9"}}
	got := MergePackages(old, []sandbox.Package{{Manager: "pip", Name: "a", Version: "2"}, {Manager: "npm", Name: "b", Version: "3"}})
	want := []sandbox.Package{{Manager: "apt", Name: "a", Version: "9"}, {Manager: "npm", Name: "b", Version: "3"}, {Manager: "pip", Name: "a", Version: "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
}

func TestAutoManager(t *testing.T) {
	all := map[string]bool{"apt": true, "pip": true, "npm": true}
	for _, tc := range []struct {
		have map[string]bool
		lang string
		pkgs []string
		want string
	}{
		{all, "", []string{"jq"}, "apt"},
		{all, "python", []string{"numpy"}, "pip"},
		{all, "javascript", []string{"left-pad"}, "npm"},
		{all, "", []string{"numpy==2.1.0"}, "pip"},
		{all, "", []string{"@types/node"}, "npm"},
		{map[string]bool{"apk": true}, "python", []string{"py3-numpy"}, "apk"},
		{map[string]bool{}, "", []string{"x"}, ""},
	} {
		if got := autoManager(tc.have, tc.lang, tc.pkgs); got != tc.want {
			t.Errorf("autoManager(%v, %q, %v) = %q, want %q", tc.have, tc.lang, tc.pkgs, got, tc.want)
		}
	}
}

func TestPackageNamesAndVersions(t *testing.T) {
	valid := map[string][]string{
		"apt": {"jq", "libc6:amd64", "curl=7.88.1-10+deb12u5", "g++"},
		"apk": {"py3-numpy", "curl=8.5.0-r0"},
		"pip": {"numpy", "numpy==2.1.0", "requests[socks]>=2", "ruamel.yaml"},
		"npm": {"left-pad", "@types/node@20.1.0", "typescript@^5"},
	}
	invalid := []string{"-y", "--force", "a b", "a;b", "$(id)", "`id`", "a|b", "a\nb", ""}
	for name, good := range valid {
		m, _ := managerNamed(name)
		for _, p := range good {
			if !m.valid.MatchString(p) {
				t.Errorf("%s refuses %q", name, p)
			}
		}
		for _, p := range invalid {
			if m.valid.MatchString(p) {
				t.Errorf("%s accepts %q", name, p)
			}
		}
	}
	for v, ok := range map[string]bool{"1.6-2.1+deb12u2": true, "1:2.3~rc1": true, "2.1.0": true, "1;rm": false, "$(x)": false, "": false, "1 2": false} {
		if validVersion.MatchString(v) != ok {
			t.Errorf("validVersion(%q) = %v", v, !ok)
		}
	}
}

func TestParseVersions(t *testing.T) {
	got := parseVersions("jq\t1.6-2\nruamel-yaml\t0.18.6\n@types/node\t20.1.0\nno-tab\n\tnameless\n")
	want := map[string]string{"jq": "1.6-2", "ruamel-yaml": "0.18.6", "@types/node": "20.1.0"}
	if !cmp.Equal(got, want) {
		t.Errorf("parseVersions = %v, want %v", got, want)
	}
}

func TestLineProgress(t *testing.T) {
	var lines []string
	l := &lineProgress{fn: func(_, _ float64, msg string) { lines = append(lines, msg) }, max: 16}
	l.Write([]byte("one\ntw"))
	l.Write([]byte("o\n\nthree four five six\n"))
	if !cmp.Equal(lines, []string{"one", "two", "three four five six"}) {
		t.Errorf("lines = %q", lines)
	}
	if out := l.output(); !strings.HasPrefix(out, "[… earlier output cut …]\n") || !strings.HasSuffix(out, "four five six\n") {
		t.Errorf("output = %q", out)
	}
}

func TestCommitTag(t *testing.T) {
	const ns = "sandtray-local/"
	for _, tt := range []struct{ in, want, err string }{
		{"foo:v1", "sandtray-local/foo:v1", ""},
		{"foo", "sandtray-local/foo:latest", ""},
		{"postgres:16", "sandtray-local/postgres:16", ""},
		{"some/app:1", "sandtray-local/some/app:1", ""},
		{"docker.io/library/postgres:16", "sandtray-local/postgres:16", ""},
		{"sandtray-local/foo:v1", "sandtray-local/foo:v1", ""},
		{" sandtray-local/foo ", "sandtray-local/foo:latest", ""},
		{"localhost:5000/team/env:1", "", "registry host"},
		{"ghcr.io/x/y:1", "", "registry host"},
		{"Not A Name", "", "not a valid image name"},
		{"", "", "not a valid image name"},
	} {
		got, err := Tag(tt.in, ns)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("Tag(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), ns)) {
			t.Errorf("Tag(%q) = %q, %v; want an error saying %q and naming %s", tt.in, got, err, tt.err, ns)
		}
	}
}

func TestValidImageUser(t *testing.T) {
	for u, want := range map[string]bool{
		"": true, "root": true, "1000": true, "1000:1000": true, "app:staff": true, "www-data": true, "svc.user_1": true,
		"nobody\nRUN touch /pwned": false, "a b": false, ":1000": false, "app:": false, "$(id)": false, "-x": false,
	} {
		if got := validImageUser(u); got != want {
			t.Errorf("validImageUser(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestInstallEnv(t *testing.T) {
	m, _ := managerNamed(sandbox.ManagerApt)
	got := installEnv(Target{Env: map[string]string{
		"PATH": "/workspace/bin", "LD_PRELOAD": "/w/x.so", "PYTHONPATH": "/w", "BASH_ENV": "/w/rc", "PIP_INDEX_URL": "http://evil",
		"GREETING": "hi", "HOME": "/workspace",
	}}, "/usr/bin:/bin", m)
	want := []string{"PATH=/usr/bin:/bin", "HOME=/root", "BASH_ENV=", "LD_PRELOAD=", "PIP_INDEX_URL=", "PYTHONPATH=", "DEBIAN_FRONTEND=noninteractive"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("installEnv (-want +got):\n%s", diff)
	}
}
