package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// fakeImages is a default image that is missing until built.
type fakeImages struct {
	st     ImageState
	steps  []ImageProgress
	err    error
	builds int
}

func (f *fakeImages) ImageState(context.Context, string) (ImageState, error) { return f.st, nil }

func (f *fakeImages) BuildImage(_ context.Context, progress func(ImageProgress)) error {
	f.builds++
	for _, s := range f.steps {
		progress(s)
	}
	if f.err == nil {
		f.st.Present = true
	}
	return f.err
}

// TestFirstRunBuildsTheImage: on the first start, with the image missing,
// the window builds it at once and shows each step and how far it is; a
// failure stays in red with Try again; success says so and goes.
func TestFirstRunBuildsTheImage(t *testing.T) {
	imgs := &fakeImages{st: ImageState{Ref: "sandtray/sandbox:latest", Buildable: true},
		steps: []ImageProgress{{Step: "Downloading 171 packages", Done: 64 << 20, Total: 128 << 20, Bytes: true}},
		err:   errors.New("the Debian mirror cannot be reached")}
	h := newHarness(t, func(o *Options) { o.Images = imgs })
	f := h.u.firstRun
	var steps []string
	h.u.queue = func(fn func()) { h.enqueue(func() { fn(); steps = append(steps, f.step.Text) }) }
	h.u.do(f.check)
	h.flush()
	if imgs.builds != 1 {
		t.Fatalf("builds %d; want the missing image built at once", imgs.builds)
	}
	if !contains(strings.Join(steps, "|"), "Downloading 171 packages: 64 of 128 MB") {
		t.Errorf("steps shown %q", steps)
	}
	if f.text.Importance != widget.DangerImportance || !strings.Contains(f.text.Text, "cannot be reached") || !f.retry.Visible() {
		t.Errorf("failure: %q (importance %d), Try again shown %t", f.text.Text, f.text.Importance, f.retry.Visible())
	}
	imgs.err = nil
	test.Tap(f.retry)
	h.flush()
	if imgs.builds != 2 || f.text.Text != "The sandbox image is ready." || f.text.Importance != widget.SuccessImportance {
		t.Errorf("after Try again: %d builds, %q", imgs.builds, f.text.Text)
	}
	h.fire(messageLife)
	if f.box.Visible() {
		t.Error("the banner stayed after the image was ready")
	}
}

// TestFirstRunLeavesAPresentImage: with the image there, nothing shows and
// nothing is built; an image Sandtray cannot build is named with what to do.
func TestFirstRunLeavesAPresentImage(t *testing.T) {
	imgs := &fakeImages{st: ImageState{Ref: "sandtray/sandbox:latest", Present: true, Buildable: true}}
	h := newHarness(t, func(o *Options) { o.Images = imgs })
	h.u.firstRun.check()
	h.flush()
	if imgs.builds != 0 || h.u.firstRun.box.Visible() {
		t.Errorf("a present image: %d builds, banner shown %t", imgs.builds, h.u.firstRun.box.Visible())
	}
	imgs.st = ImageState{Ref: "my/image:1"}
	h.u.firstRun.check()
	h.flush()
	if imgs.builds != 0 || !strings.Contains(h.u.firstRun.text.Text, "docker pull my/image:1") {
		t.Errorf("an image Sandtray cannot build: %d builds, %q", imgs.builds, h.u.firstRun.text.Text)
	}
}
