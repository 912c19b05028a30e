package ui

import (
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/assets"
	"github.com/sandtray/sandtray/internal/duration"
)

// Problem is why Sandtray cannot run, as the window shows it while the
// engine cannot start: Docker unreachable, or a config file it refuses.
// From the applications menu, or at login before Docker Desktop is up,
// this window is all a person sees, so it says what to do.
type Problem struct {
	Title  string // "Sandtray cannot reach Docker"
	Detail string // the error, as the engine gave it
	Hint   string // what to do
	// Config is the config file's problem, shown with its lines.
	Config *ConfigProblem
	// StartDocker starts Docker Desktop ("Start Docker Desktop"); nil
	// where Sandtray cannot.
	StartDocker func() error
	// RetryEvery is how often Sandtray tries again by itself (0: only
	// when asked).
	RetryEvery time.Duration
}

// ConfigProblem is a config file the engine refuses: the line at fault
// (1-based, 0 when none is), and for a key it does not know, the one most
// likely meant.
type ConfigProblem struct {
	Path    string
	Line    int
	Key     string
	Suggest string
	Text    string // the file
}

// ProblemWindow shows a Problem, with Try again.
type ProblemWindow struct {
	u       *UI // only for its guard and the desktop's browser
	win     fyne.Window
	title   *widget.Label
	detail  *widget.Label
	hint    *widget.Label
	config  *fyne.Container
	status  *widget.Label
	docker  *widget.Button
	retry   *widget.Button
	current Problem
}

// NewProblemWindow makes the window (it does not show it): tryAgain runs
// when the person asks to try again, quit when they quit.
func NewProblemWindow(a fyne.App, tryAgain, quit func(), log *slog.Logger) *ProblemWindow {
	u := &UI{app: a, log: log, queue: fyne.Do}
	if u.log == nil {
		u.log = slog.Default()
	}
	u.openURL = a.OpenURL
	p := &ProblemWindow{u: u, win: a.NewWindow("Sandtray"),
		title:  widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		detail: widget.NewLabel(""), hint: widget.NewLabel(""), status: widget.NewLabel(""),
		config: container.NewVBox()}
	p.title.SizeName = theme.SizeNameSubHeadingText
	p.detail.Wrapping, p.hint.Wrapping, p.status.Wrapping = fyne.TextWrapWord, fyne.TextWrapWord, fyne.TextWrapWord
	p.detail.Importance = widget.DangerImportance
	p.detail.Selectable = true
	p.docker = widget.NewButtonWithIcon("Start Docker Desktop", theme.MediaPlayIcon(), p.startDocker)
	p.retry = widget.NewButtonWithIcon("Try again", theme.ViewRefreshIcon(), func() {
		p.Trying()
		tryAgain()
	})
	p.retry.Importance = widget.HighImportance
	quitBtn := widget.NewButton("Quit Sandtray", quit)
	icon := widget.NewIcon(fyne.NewStaticResource("sandtray.png", assets.Icon))
	head := container.NewBorder(nil, nil, container.NewGridWrap(fyne.NewSquareSize(48), icon), nil, p.title)
	body := container.NewVBox(head, p.detail, p.hint, p.config, p.status)
	buttons := container.NewHBox(layout.NewSpacer(), quitBtn, p.docker, p.retry)
	p.win.SetContent(container.NewBorder(nil, buttons, nil, nil, container.NewVScroll(container.NewPadded(body))))
	p.win.Resize(fyne.NewSize(780, 600))
	p.win.SetCloseIntercept(u.guard("closing the window", quit))
	return p
}

// Window is the problem's window.
func (p *ProblemWindow) Window() fyne.Window { return p.win }

// Show shows pr and brings the window to the front. Runs on Fyne's
// goroutine.
func (p *ProblemWindow) Show(pr Problem) {
	p.current = pr
	p.title.SetText(pr.Title)
	p.detail.SetText(OneLine(pr.Detail, 2000))
	p.hint.SetText(pr.Hint)
	p.config.RemoveAll()
	if c := pr.Config; c != nil {
		p.config.Add(configExcerpt(p.u, *c))
	}
	if pr.StartDocker != nil {
		p.docker.Show()
	} else {
		p.docker.Hide()
	}
	p.retry.Enable()
	p.status.Importance = widget.MediumImportance
	p.status.SetText("")
	if pr.RetryEvery > 0 {
		p.status.SetText("Sandtray tries again every " + duration.Text(pr.RetryEvery) + ", and opens its window as soon as it can run.")
	}
	p.u.guardAll()
	p.win.Show()
	p.win.RequestFocus()
}

// Trying says a try is under way.
func (p *ProblemWindow) Trying() {
	p.retry.Disable()
	p.status.Importance = widget.MediumImportance
	p.status.SetText("Trying again…")
}

// Close closes the window (the engine runs: the app's own window takes
// over).
func (p *ProblemWindow) Close() { p.win.Close() }

func (p *ProblemWindow) startDocker() {
	if p.current.StartDocker == nil {
		return
	}
	if err := p.current.StartDocker(); err != nil {
		p.status.Importance = widget.DangerImportance
		p.status.SetText("Could not start Docker Desktop: " + err.Error())
		return
	}
	p.status.Importance = widget.MediumImportance
	p.status.SetText("Docker Desktop is starting; Sandtray opens its window once Docker answers.")
}

// excerptLines is how many lines of a config file show around the one at
// fault.
const excerptLines = 5

// configExcerpt shows a config file's problem: the did-you-mean, the file
// with Open in editor, and the lines around the one at fault (marked, in
// red), set tight as a text editor shows them.
func configExcerpt(u *UI, c ConfigProblem) fyne.CanvasObject {
	box := container.NewVBox()
	if c.Suggest != "" {
		m := widget.NewLabelWithStyle(fmt.Sprintf("%q is not a setting: did you mean %s?", c.Key, c.Suggest), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		m.Wrapping = fyne.TextWrapWord
		box.Add(m)
	}
	where := widget.NewLabel(c.Path)
	where.Truncation = fyne.TextTruncateEllipsis
	open := widget.NewButtonWithIcon("Open config.toml in editor", theme.DocumentCreateIcon(), func() {
		if err := u.openURL(&url.URL{Scheme: "file", Path: filepath.ToSlash(c.Path)}); err != nil {
			u.log.Warn("open the config file", "path", c.Path, "err", err)
		}
	})
	box.Add(container.NewBorder(nil, nil, nil, open, where))
	lines := strings.Split(strings.TrimRight(c.Text, "\n"), "\n")
	from, to := 0, min(len(lines), 2*excerptLines+1)
	if c.Line > 0 {
		from, to = max(0, c.Line-1-excerptLines), min(len(lines), c.Line+excerptLines)
	}
	text := widget.NewRichText()
	for i := from; i < to; i++ {
		mark, color := "  ", theme.ColorNameForeground
		if i+1 == c.Line {
			mark, color = "→ ", theme.ColorNameError
		}
		text.Segments = append(text.Segments, &widget.TextSegment{
			Text:  fmt.Sprintf("%s%4d  %s", mark, i+1, FirstLine(lines[i], 200)),
			Style: widget.RichTextStyle{ColorName: color, TextStyle: fyne.TextStyle{Monospace: true}},
		})
	}
	text.Refresh()
	box.Add(text)
	return box
}
