package capture

import (
	"archive/tar"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// skippedTrees are never exported: temporary and virtual filesystems,
// caches, logs and the package managers' own state, which the RUN lines
// recreate. The engine's private folder (Config.Private) lies under /tmp.
var skippedTrees = []string{
	runtime.AgentDir, // the agent's read-only volume, which every sandbox gets anew
	runtime.LinkDir,  // the sandbox's link, the engine's folder, likewise
	"/tmp", "/var/tmp", "/proc", "/sys", "/dev", "/run", "/var/run",
	"/var/cache", "/var/log", "/var/lib/apt", "/var/lib/dpkg", "/lib/apk", "/var/lib/apk",
}

// skippedFiles are Docker's own: mounted into every container, or its init.
var skippedFiles = []string{
	"/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/.dockerenv",
	"/sbin/docker-init", "/usr/sbin/docker-init", "/usr/bin/docker-init",
}

// cacheDirs are skipped wherever they are.
var cacheDirs = []string{"__pycache__", ".cache", ".npm"}

// exportFilter says which sandbox paths an export leaves out.
type exportFilter struct {
	owned              map[string]bool // files of apt packages the RUN lines install, unchanged since
	apt, apk, pip, npm bool            // managers with RUN lines
}

// skips reports whether the export leaves p (absolute) out.
func (f *exportFilter) skips(p string) bool {
	if slices.Contains(skippedFiles, p) || f.owned[p] {
		return true
	}
	for _, t := range skippedTrees {
		if p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	parts := strings.Split(p, "/")
	if slices.ContainsFunc(parts, func(s string) bool { return slices.Contains(cacheDirs, s) }) {
		return true
	}
	switch {
	case (f.apt || f.apk) && p == "/etc/ld.so.cache":
		return true // rebuilt by ldconfig when packages install
	case f.apk && p == "/etc/apk/world":
		return true
	case f.pip && strings.HasPrefix(p, "/usr/") && (slices.Contains(parts, "site-packages") || slices.Contains(parts, "dist-packages")):
		return true
	case f.npm && (p == "/usr/local/lib/node_modules" || strings.HasPrefix(p, "/usr/local/lib/node_modules/")):
		return true
	}
	return false
}

// skipsEntry also leaves out npm's links to the packages it installs.
func (f *exportFilter) skipsEntry(p string, hdr *tar.Header) bool {
	if f.npm && hdr.Typeflag == tar.TypeSymlink && strings.Contains(hdr.Linkname, "lib/node_modules/") {
		return true
	}
	return f.skips(p)
}

// dpkgListFile matches the file list dpkg writes for a package it installs.
var dpkgListFile = regexp.MustCompile(`^/var/lib/dpkg/info/([^/]+)\.list$`)

// The dpkg report (sandtray-agent dpkgreport, run with an exec of its own)
// prints, for the packages given, "O path" for each file they own, "M path"
// for each of those changed since (md5sums), "V name<TAB>version", and "U
// name" for every package marked as installed by hand, read from dpkg's and
// apt's files.

// maxDpkgReport bounds what the report may print.
const maxDpkgReport = 32 << 20

// planPackages sets the filter from the manifest, and, when dpkg installed
// packages in the sandbox, leaves their unchanged files to the apt RUN line
// and adds the ones installed by hand outside install_packages to it.
func (c *Capture) planPackages(ctx context.Context, t Target, p *exportPlan, changes []runtime.Change) error {
	var lists []string
	for _, c := range changes {
		if m := dpkgListFile.FindStringSubmatch(c.Path); m != nil && c.Kind == runtime.ChangeAdded {
			lists = append(lists, m[1])
		}
	}
	p.filter.owned = map[string]bool{}
	if len(lists) > 0 {
		out, err := c.dpkgReport(ctx, t, lists)
		if err != nil {
			return err
		}
		p.packages = MergePackages(p.packages, readDpkgReport(out, p.filter.owned, p.packages))
	}
	for _, pkg := range p.packages {
		switch pkg.Manager {
		case sandbox.ManagerApt:
			p.filter.apt = true
		case sandbox.ManagerApk:
			p.filter.apk = true
		case sandbox.ManagerPip:
			p.filter.pip = true
		case sandbox.ManagerNpm:
			p.filter.npm = true
		}
	}
	if !p.filter.apt {
		p.filter.owned = nil // no RUN line would bring those files back
	}
	return nil
}

func (c *Capture) dpkgReport(ctx context.Context, t Target, pkgs []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := c.docker.ExecAgent(ctx, t.ID(), "", append([]string{"dpkgreport"}, pkgs...), nil, maxDpkgReport)
	if err != nil {
		return "", t.Gone(fmt.Errorf("read the packages installed in sandbox %s: %w", t.Name(), err))
	}
	return string(out), nil
}

// readDpkgReport fills owned with unchanged package files and returns the
// new packages installed by hand that the manifest lacks, pinned.
func readDpkgReport(out string, owned map[string]bool, manifest []sandbox.Package) []sandbox.Package {
	apt, _ := managerNamed(sandbox.ManagerApt)
	versions, manual, changed := map[string]string{}, map[string]bool{}, map[string]bool{}
	for line := range strings.Lines(out) {
		kind, rest, _ := strings.Cut(strings.TrimRight(line, "\n"), " ")
		switch kind {
		case "O":
			owned[path.Clean(rest)] = true
		case "M":
			changed[path.Clean(rest)] = true
		case "V":
			if name, v, ok := strings.Cut(rest, "\t"); ok {
				versions[name] = v
			}
		case "U":
			manual[cutAny(rest, ":")] = true
		}
	}
	for p := range changed {
		delete(owned, p) // edited by hand: exported as a file
	}
	var extra []sandbox.Package
	for name, v := range versions {
		recorded := slices.ContainsFunc(manifest, func(p sandbox.Package) bool { return p.Manager == apt.name && p.Name == name })
		if manual[name] && !recorded && apt.valid.MatchString(name) && validVersion.MatchString(v) {
			extra = append(extra, sandbox.Package{Manager: apt.name, Name: name, Version: v})
		}
	}
	return extra
}
