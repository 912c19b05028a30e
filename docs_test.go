package sandtray

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines keeps the README to what a user needs first; the rest
// lives in docs/ (docs/architecture.md says where).
const maxReadmeLines = 320

// docFiles are the documents whose links are checked: the README,
// SECURITY.md and every page under docs/.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "SECURITY.md")}
	return append(files, pages...)
}

// TestDocsLinks checks that every relative link in the README, SECURITY.md
// and docs/*.md leads to a file in the repository, and every #anchor to a
// heading of the file it names.
func TestDocsLinks(t *testing.T) {
	files := docFiles(t, ".")
	if len(files) < 3 {
		t.Fatalf("found only %v: the docs/ pages are missing", files)
	}
	for _, f := range files {
		for _, problem := range checkLinks(".", f) {
			t.Error(problem)
		}
	}
}

// TestReadmeIsShort keeps the README at most maxReadmeLines lines: new
// material goes into a page under docs/, with a link.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the details to a page under docs/ and link it", n, maxReadmeLines)
	}
}

// TestNothingCitesFilesOutsideTheRepository keeps code and docs standing
// alone: no file may point at a design note or a shared folder that is not
// in the repository.
func TestNothingCitesFilesOutsideTheRepository(t *testing.T) {
	banned := []string{"DESIGN" + ".md", "../" + "shared"}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".sh", ".toml", ".yml", ".yaml", ".txt":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, b := range banned {
			if strings.Contains(string(data), b) {
				t.Errorf("%s cites %s, which is not in the repository: say what it says instead", p, b)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// codePath is a source file the docs name in backticks: a path from the
// repository's root, as the docs write them.
var codePath = regexp.MustCompile("`((?:agent|engine|serve|test|app|ui|internal|packaging|assets)/[A-Za-z0-9_./-]+\\.(?:go|sh|py|js|bash))`")

// TestDocsNameFilesThatExist keeps the docs' pointers into the code true:
// every source file the README, SECURITY.md and docs/*.md name in
// backticks exists, so a move of the code cannot leave a finding or a how-to
// pointing at nothing.
func TestDocsNameFilesThatExist(t *testing.T) {
	for _, f := range docFiles(t, ".") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range codePath.FindAllStringSubmatch(string(data), -1) {
			if _, err := os.Stat(m[1]); err != nil {
				t.Errorf("%s names %s, which does not exist: name the file the code is in now", f, m[1])
			}
		}
	}
}

// TestCheckLinksFindsBrokenOnes shows the link check fails where it should:
// a missing file, a missing heading, a missing heading in another page, and
// a link out of the repository; and passes links that work.
func TestCheckLinksFindsBrokenOnes(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/other.md", "# Other\n\n## The `execute_code` path: in short\n\n## Twice\n\n## Twice\n")
	write("docs/pic.png", "png")
	write("README.md", strings.Join([]string{
		"# Title",
		"## A heading",
		"[ok](docs/other.md) [ok](docs/other.md#the-execute_code-path-in-short) [ok](#a-heading)",
		"[ok](docs/other.md#twice-1) ![ok](docs/pic.png) [ok](https://example.com/x.md)",
		"`[not a link](nowhere.md)`",
		"```",
		"[not a link either](nowhere.md)",
		"```",
		"[broken](docs/missing.md)",
		"[broken anchor](#no-such-heading)",
		"[broken other anchor](docs/other.md#nope)",
		"[outside](../outside.md)",
	}, "\n")+"\n")
	write("outside.md", "")
	got := checkLinks(root, filepath.Join(root, "README.md"))
	want := []string{"docs/missing.md", "#no-such-heading", "docs/other.md#nope", "../outside.md"}
	if len(got) != len(want) {
		t.Fatalf("problems = %q, want one for each of %q", got, want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], "("+w+")") {
			t.Errorf("problem %d = %q, want one about %s", i, got[i], w)
		}
	}
}

var (
	// linkRE matches an inline link or image: [text](target) or
	// ![alt](target "title").
	linkRE       = regexp.MustCompile(`!?\[[^\]]*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	headingLinkR = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// checkLinks returns a sentence for each relative link of file that leads
// nowhere: a file that does not exist, a path outside root, or an anchor
// that is no heading of its file.
func checkLinks(root, file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{err.Error()}
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for n, line := range proseLines(string(data)) {
		if line == "" {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			target := m[1]
			if u, err := url.Parse(target); err == nil && u.Scheme != "" {
				continue // a web address; not checked offline
			}
			where := fmt.Sprintf("%s:%d: link (%s)", file, n+1, target)
			p, anchor, _ := strings.Cut(target, "#")
			dest := file
			if p != "" {
				unescaped, err := url.PathUnescape(p)
				if err != nil {
					problems = append(problems, where+": "+err.Error())
					continue
				}
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(unescaped))
				abs, err := filepath.Abs(dest)
				if err != nil || (abs != absRoot && !strings.HasPrefix(abs, absRoot+string(filepath.Separator))) {
					problems = append(problems, where+" leaves the repository")
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					problems = append(problems, where+" names a file that does not exist")
					continue
				}
			}
			if anchor == "" || path.Ext(dest) != ".md" {
				continue
			}
			anchors, err := headingAnchors(dest)
			if err != nil {
				problems = append(problems, where+": "+err.Error())
				continue
			}
			if !slices.Contains(anchors, anchor) {
				problems = append(problems, where+" names no heading of "+dest)
			}
		}
	}
	return problems
}

// proseLines is text's lines with those inside fenced code blocks blanked,
// so line numbers stay right.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors lists the anchors GitHub gives file's headings, with -1,
// -2… on repeats.
func headingAnchors(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var anchors []string
	for _, line := range proseLines(string(data)) {
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := slugify(m[1])
		if k := seen[slug]; k > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", slug, k))
		} else {
			anchors = append(anchors, slug)
		}
		seen[slug]++
	}
	return anchors, nil
}

// slugify is GitHub's anchor for a heading: its text lower-cased, links
// reduced to their text, every character but letters, digits, spaces,
// hyphens and underscores dropped, and spaces made hyphens.
func slugify(heading string) string {
	heading = headingLinkR.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
