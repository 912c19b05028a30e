package ui

import (
	"io"
	"net/url"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// DocsURL is Sandtray's documentation: the README.
const DocsURL = "https://github.com/sandtray/sandtray#readme"

// logShown is how much of the log's end the log viewer reads (it shows the
// end of that: outputView; the link opens the log file).
const logShown = 256 << 10

// helpItems are the Help menu's items: About, Documentation, the log and,
// with a Diagnoser, Diagnose.
func (u *UI) helpItems() []*fyne.MenuItem {
	items := []*fyne.MenuItem{fyne.NewMenuItem("About Sandtray", u.showAbout), fyne.NewMenuItem("Documentation", u.openDocs)}
	if u.opts.LogPath != "" {
		items = append(items, fyne.NewMenuItem("Open log…", u.showLog))
	}
	if u.opts.Diagnose != nil {
		items = append(items, fyne.NewMenuItemSeparator(), fyne.NewMenuItem("Diagnose…", u.showDiagnosis))
	}
	return items
}

// AboutText is what About says: the version and commit the host gave, and
// where the documentation is.
func AboutText(about string) string {
	if about == "" {
		about = "Sandtray"
	}
	return about + "\nA local code sandbox for AI assistants.\nDocumentation: " + DocsURL
}

func (u *UI) showAbout() {
	text := widget.NewLabel(AboutText(u.opts.About))
	text.Selectable = true
	copyBtn := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { u.app.Clipboard().SetContent(text.Text) })
	dialog.NewCustom("About Sandtray", "Close", container.NewBorder(nil, copyBtn, nil, nil, text), u.win).Show()
}

// openDocs opens the documentation in the browser, or, where none can be
// opened, copies its address and says so.
func (u *UI) openDocs() {
	link, _ := url.Parse(DocsURL)
	if err := u.openURL(link); err != nil {
		u.app.Clipboard().SetContent(DocsURL)
		u.status.showMessage("No browser could be opened ("+err.Error()+"); copied "+DocsURL+" to the clipboard.", kindWarning)
	}
}

// LogTail is the end of a log file as the viewer shows it: the last max
// bytes, from the first whole line.
func LogTail(data []byte, max int) string {
	if len(data) <= max {
		return string(data)
	}
	data = data[len(data)-max:]
	for i, b := range data {
		if b == '\n' {
			return string(data[i+1:])
		}
	}
	return string(data)
}

// readTail reads the last max bytes of the file at path, and its size.
func readTail(path string, max int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	return data, st.Size(), err
}

// showLog opens a window with the end of the app's log, Refresh and Copy.
func (u *UI) showLog() {
	w := u.app.NewWindow("Sandtray log: " + u.opts.LogPath)
	out := newOutputView(u)
	out.file = u.opts.LogPath
	var tail string
	load := func() {
		data, size, err := readTail(u.opts.LogPath, logShown)
		if err != nil {
			tail = ""
			out.set("The log cannot be read: "+err.Error(), 0, "", nil)
			return
		}
		tail = LogTail(data, logShown)
		out.showTail(tail, int(size)-len(tail), "", nil)
		out.scroll.ScrollToBottom()
	}
	refresh := widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), load)
	copyBtn := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() { u.app.Clipboard().SetContent(tail) })
	w.SetContent(container.NewBorder(container.NewHBox(refresh, copyBtn), nil, nil, nil, out.object()))
	w.Resize(fyne.NewSize(980, 620))
	load()
	w.Show()
}
