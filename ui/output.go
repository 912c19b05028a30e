package ui

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// A tool's output can be megabytes: a build log of 25,000 lines, or 50 MB
// on one line. Fyne lays a label's text out whole, on its one thread, so
// such a text in one label froze the window for good (and, the engine
// being a goroutine of the app, held SIGTERM up with it). The window never
// shows more than shownBytes and shownLines of an output: its end (its
// start for a file), and above it how much more there is, with a link
// that writes the whole of it to a file and opens it.
const (
	shownBytes = 8 << 10
	shownLines = 200
)

// TailText is the end of s that the window shows: at most maxBytes and
// maxLines, starting on a line when it can, else on a whole character;
// cut is how many bytes of s are left out.
func TailText(s string, maxBytes, maxLines int) (shown string, cut int) {
	start := max(0, len(s)-maxBytes)
	if start > 0 {
		if nl := strings.IndexByte(s[start:], '\n'); nl >= 0 && nl < len(s)-start-1 {
			start += nl + 1 // a whole first line
		}
		for start < len(s) && !utf8.RuneStart(s[start]) {
			start++
		}
	}
	lines := 0
	for i := len(s) - 1; i >= start; i-- {
		if s[i] == '\n' && i < len(s)-1 {
			lines++
			if lines >= maxLines {
				start = i + 1
				break
			}
		}
	}
	return s[start:], start
}

// HeadText is the start of s that the window shows: at most maxBytes and
// maxLines, ending on a whole character; cut is how many bytes are left
// out.
func HeadText(s string, maxBytes, maxLines int) (shown string, cut int) {
	end := min(len(s), maxBytes)
	for end < len(s) && end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	lines := 0
	for i := 0; i < end; i++ {
		if s[i] == '\n' {
			lines++
			if lines >= maxLines {
				end = i + 1
				break
			}
		}
	}
	return s[:end], len(s) - end
}

// MoreText is the link above a cut output: "1.4 MB more: open full log".
func MoreText(cut int) string {
	return FormatBytes(uint64(cut)) + " more: open full log"
}

// outputView shows an output, bounded, with the link to the whole of it.
type outputView struct {
	u      *UI
	text   *widget.Label
	more   *widget.Button
	scroll *container.Scroll
	root   fyne.CanvasObject
	// name is the file the whole output is written to (without folder);
	// whole fetches it.
	name  string
	whole func(ctx context.Context) (string, error)
	// file, when set, is a file on the host that has the whole output
	// (the app's log): the link opens it as it is.
	file string
	gen  int // bumped by each scroll to the end: an older one's second try is void
}

func newOutputView(u *UI) *outputView {
	v := &outputView{u: u, text: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})}
	v.text.Wrapping = fyne.TextWrapBreak
	v.text.Selectable = true
	v.more = widget.NewButtonWithIcon("", theme.DocumentIcon(), v.openWhole)
	v.more.Importance = widget.LowImportance
	v.more.Alignment = widget.ButtonAlignLeading
	v.more.Hide()
	v.scroll = container.NewVScroll(v.text)
	v.root = container.NewBorder(v.more, nil, nil, nil, v.scroll)
	return v
}

func (v *outputView) object() fyne.CanvasObject { return v.root }

// showTail shows the end of text. missing counts the bytes of the whole
// output that text lacks already (the engine sent only its end); whole
// fetches all of it, for the file named name.
func (v *outputView) showTail(text string, missing int, name string, whole func(ctx context.Context) (string, error)) {
	shown, cut := TailText(text, shownBytes, shownLines)
	changed := shown != v.text.Text
	v.set(shown, cut+missing, name, whole)
	if changed {
		v.toBottom()
	}
}

// toBottom scrolls to the end of the output: now, and again once the
// window has laid the new text out (a text just set may not have its
// height yet).
func (v *outputView) toBottom() {
	v.gen++
	gen := v.gen
	v.scroll.ScrollToBottom()
	v.u.after(100*time.Millisecond, func() {
		if v.gen == gen {
			v.scroll.ScrollToBottom()
		}
	})
}

// showHead shows the start of text (a file's), as showTail its end.
func (v *outputView) showHead(text string, missing int, name string, whole func(ctx context.Context) (string, error)) {
	shown, cut := HeadText(text, shownBytes, shownLines)
	v.set(shown, cut+missing, name, whole)
}

func (v *outputView) set(shown string, cut int, name string, whole func(ctx context.Context) (string, error)) {
	v.name, v.whole = name, whole
	if v.text.Text != shown {
		v.text.SetText(shown)
	}
	if cut > 0 && (whole != nil || v.file != "") {
		if v.more.Text != MoreText(cut) {
			v.more.SetText(MoreText(cut))
		}
		v.more.Enable()
		v.more.Show()
	} else {
		v.more.Hide()
	}
}

// clear shows nothing.
func (v *outputView) clear() { v.set("", 0, "", nil) }

// openWhole writes the whole output to a file and opens it in the
// desktop's viewer; where none opens it, the message says where it is.
func (v *outputView) openWhole() {
	whole, name := v.whole, v.name
	if v.file != "" {
		v.open(v.file)
		return
	}
	if whole == nil {
		return
	}
	v.more.Disable()
	var path string
	v.u.background(func(ctx context.Context) error {
		text, err := whole(ctx)
		if err != nil {
			return err
		}
		path, err = v.u.writeOutput(name, text)
		return err
	}, func(err error) {
		v.more.Enable()
		if err != nil {
			v.u.status.showMessage("Could not write the full log: "+err.Error(), kindError)
			return
		}
		v.open(path)
	})
}

// open opens a file of the full log in the desktop's viewer; where none
// opens it, the message says where it is.
func (v *outputView) open(path string) {
	if err := v.u.openURL(&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}); err != nil {
		v.u.status.showMessage("The full log is in "+path+" (no viewer opened it: "+err.Error()+").", kindWarning)
		return
	}
	v.u.status.showMessage("Opened the full log, "+path+".", kindSuccess)
}

// writeOutput writes text to a file named after name in the output folder
// (Options.OutputDir), private to the user, and returns its path.
func (u *UI) writeOutput(name, text string) (string, error) {
	dir := u.opts.OutputDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("sandtray-output-%d", os.Getuid()))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	base := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '-'
		}
		return r
	}, name)
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.log", base, time.Now().Format("20060102-150405.000")))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return path, nil
}
