package ui

import (
	"context"
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/internal/duration"
	"github.com/sandtray/sandtray/serve/control"
)

// ImageState is an image as the window shows it, and ImageProgress the
// default image's build: the control protocol's.
type (
	ImageState    = control.ImageState
	ImageProgress = control.ImageProgress
)

// Images tells whether an image is there and builds the default one
// (control.GUIClient). Optional: without it, the app has no first-run
// screen.
type Images interface {
	// ImageState is what Docker has of ref ("" for the default image).
	ImageState(ctx context.Context, ref string) (ImageState, error)
	// BuildImage builds the default image, or joins the build under way,
	// calling progress as it goes, until it ends or ctx is done.
	BuildImage(ctx context.Context, progress func(ImageProgress)) error
}

// firstRun is the banner above the list while the default image is missing:
// it builds it at once (the first thing any sandbox needs) and shows how
// far the build is; a failure stays with Try again.
type firstRun struct {
	u     *UI
	box   *fyne.Container
	text  *widget.Label
	step  *widget.Label
	bar   *widget.ProgressBar
	retry *widget.Button
}

func newFirstRun(u *UI) *firstRun {
	f := &firstRun{u: u, text: widget.NewLabel(""), step: widget.NewLabel(""), bar: widget.NewProgressBar()}
	f.text.Wrapping = fyne.TextWrapWord
	f.step.Truncation = fyne.TextTruncateEllipsis
	f.retry = widget.NewButton("Try again", f.build)
	f.retry.Hide()
	f.box = container.NewVBox(container.NewBorder(nil, nil, nil, f.retry, f.text), f.step, f.bar, widget.NewSeparator())
	f.box.Hide()
	return f
}

// check asks whether the image is there, and builds it when it is not and
// can be.
func (f *firstRun) check() {
	var st ImageState
	f.u.background(func(ctx context.Context) (err error) {
		st, err = f.u.opts.Images.ImageState(ctx, "")
		return err
	}, func(err error) {
		switch {
		case err != nil || st.Present:
			return // Docker's state is the status line's to tell
		case !st.Buildable:
			f.show(fmt.Sprintf("The default image %s is not on this Docker, and Sandtray cannot build it: pull it (docker pull %s), or set the default image back in Settings.", st.Ref, st.Ref), kindWarning)
			f.bar.Hide()
		default:
			f.build()
		}
	})
}

// build starts (or joins) the build and follows it.
func (f *firstRun) build() {
	f.retry.Hide()
	f.show("Preparing the sandbox image, once (a few minutes). Meanwhile assistants' calls are told to call again; the first after it is ready runs.", kindInfo)
	f.bar.Show()
	f.bar.SetValue(0)
	f.u.background(func(ctx context.Context) error {
		return f.u.opts.Images.BuildImage(ctx, func(p ImageProgress) {
			f.u.do(func() { f.progress(p) })
		})
	}, func(err error) {
		f.bar.Hide()
		f.step.SetText("")
		if err != nil {
			f.show("Could not build the sandbox image: "+err.Error(), kindError)
			f.retry.Show()
			return
		}
		f.show("The sandbox image is ready.", kindSuccess)
		f.u.after(messageLife, f.box.Hide)
	})
}

func (f *firstRun) progress(st ImageProgress) {
	f.step.SetText(ImageStepText(st))
	if st.Total <= 0 { // a step that does not count: no bar left from the last one
		f.bar.Hide()
		return
	}
	f.bar.Show()
	f.bar.SetValue(float64(st.Done) / float64(st.Total))
}

// ImageStepText is the build's current step, with how far it is and about
// how long it takes yet.
func ImageStepText(st ImageProgress) string {
	text := st.Step
	switch {
	case st.Total <= 0:
	case st.Bytes:
		text = fmt.Sprintf("%s: %d of %d MB", st.Step, st.Done>>20, st.Total>>20)
	default:
		text = fmt.Sprintf("%s: %d of %d packages", st.Step, st.Done, st.Total)
	}
	if st.Left > 0 {
		text += " · about " + duration.Text(max(time.Minute, st.Left.Round(time.Minute))) + " left"
	}
	return text
}

func (f *firstRun) show(text string, k messageKind) {
	f.text.Importance = MessageImportance(k)
	f.text.SetText(text)
	f.box.Show()
}
