package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/sandtray/sandtray/internal/duration"
)

// settingsWindow edits config.toml: one form row per setting, grouped, with
// a Save that validates through the config loader and says when each change
// takes effect.
type settingsWindow struct {
	u       *UI
	win     fyne.Window
	fields  []SettingField
	inputs  map[string]settingInput
	body    *fyne.Container
	message *widget.Label
	save    *widget.Button
	restart *widget.Button  // Restart now, once a save changed something (with Options.Restart)
	secrets *secretsSection // when Settings has them (settings_secrets.go)
}

// settingInput reads one setting back from its widget.
type settingInput struct {
	value func() string
	list  func() []string
	check func() error // an entry's own validator, nil for none
}

// showSettings opens the Settings window with the file's current values.
func (u *UI) showSettings() {
	if u.opts.Settings == nil {
		return
	}
	if u.settings == nil {
		u.settings = newSettingsWindow(u)
	}
	u.settings.load()
	u.settings.win.Show()
	u.settings.win.RequestFocus()
}

func newSettingsWindow(u *UI) *settingsWindow {
	s := &settingsWindow{u: u, body: container.NewVBox(), message: widget.NewLabel("")}
	s.win = u.app.NewWindow("Sandtray settings")
	s.message.Wrapping = fyne.TextWrapWord
	s.message.Hide()
	where := widget.NewLabel("Saved in " + u.opts.Settings.Path() + ". Your comments and other keys in the file are kept.")
	where.Wrapping = fyne.TextWrapWord
	s.save = widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), s.doSave)
	s.save.Importance = widget.HighImportance
	s.restart = widget.NewButtonWithIcon("Restart now", theme.ViewRefreshIcon(), func() {
		s.restart.Disable()
		s.showMessage("Restarting Sandtray…", false)
		u.opts.Restart()
	})
	s.restart.Hide()
	closeBtn := widget.NewButton("Close", s.win.Hide)
	bottom := container.NewVBox(s.message, container.NewHBox(layout.NewSpacer(), closeBtn, s.restart, s.save))
	s.win.SetContent(container.NewBorder(where, bottom, nil, nil, container.NewVScroll(s.body)))
	s.win.Resize(fyne.NewSize(720, 680))
	s.win.SetCloseIntercept(u.guard("closing the Settings window", s.win.Hide))
	return s
}

// load reads the settings and rebuilds the form.
func (s *settingsWindow) load() {
	fields, err := s.u.opts.Settings.Fields()
	s.body.RemoveAll()
	s.inputs = map[string]settingInput{}
	s.fields = fields
	if err != nil {
		s.showMessage("config.toml cannot be read, so it cannot be edited here: "+err.Error()+
			" Fix it in an editor (the line at fault is marked below), then open Settings again.", true)
		if cp, ok := s.u.opts.Settings.(ConfigProblems); ok {
			if p, bad := cp.Problem(); bad {
				s.body.Add(configExcerpt(s.u, p))
			}
		}
		s.save.Disable()
		return
	}
	s.save.Enable()
	s.message.Hide()
	// One scroll area (the window's): groups are headings over plain
	// forms, not cards, so nothing inside scrolls on its own.
	var form *widget.Form
	group := ""
	for _, f := range fields {
		if f.Group != group || form == nil {
			group = f.Group
			form = widget.NewForm()
			heading := widget.NewLabelWithStyle(group, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			heading.SizeName = theme.SizeNameSubHeadingText
			s.body.Add(heading)
			s.body.Add(form)
		}
		obj, in := s.input(f)
		s.inputs[f.Key] = in
		// The hint wraps under its entry (a form's own hint does not, and
		// would widen the window past the screen).
		hint := widget.NewLabel(f.Help + " " + appliesText(f) + " config.toml: " + f.Key + ".")
		hint.Wrapping = fyne.TextWrapWord
		hint.SizeName = theme.SizeNameCaptionText
		form.AppendItem(widget.NewFormItem(f.Label, container.NewVBox(obj, hint)))
	}
	s.addSecretsSection()
	s.body.Refresh()
}

// appliesText says when a change to f takes effect.
func appliesText(f SettingField) string {
	if f.Restart {
		return "(After a restart.)"
	}
	return "(At once; running sandboxes keep theirs.)"
}

// input builds the widget for one setting.
func (s *settingsWindow) input(f SettingField) (fyne.CanvasObject, settingInput) {
	switch f.Kind {
	case SettingBool:
		c := widget.NewCheck("", nil)
		c.SetChecked(f.Value == "true")
		return c, settingInput{value: func() string { return strconv.FormatBool(c.Checked) }}
	case SettingChoice:
		r := widget.NewRadioGroup(f.Choices, nil)
		r.Horizontal = true
		r.Required = true
		r.SetSelected(f.Value)
		return r, settingInput{value: func() string { return r.Selected }}
	case SettingFolders:
		return s.folders(f)
	}
	e := widget.NewEntry()
	// No scroller of its own: an entry's would take the mouse wheel from
	// the window's one scroll area whenever the pointer is over it.
	e.Wrapping, e.Scroll = fyne.TextWrapOff, container.ScrollNone
	e.SetText(f.Value)
	e.Validator = entryValidator(f)
	in := settingInput{value: func() string { return e.Text }}
	if e.Validator != nil {
		in.check = func() error { return e.Validator(e.Text) }
	}
	return e, in
}

// entryValidator checks what a number or duration entry holds as the
// person types, so the mistake shows at the entry.
func entryValidator(f SettingField) fyne.StringValidator {
	switch f.Kind {
	case SettingInt:
		return func(v string) error {
			if _, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
				return fmt.Errorf("%s must be a whole number", f.Key)
			}
			return nil
		}
	case SettingNumber:
		return func(v string) error {
			if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				return fmt.Errorf("%s must be a number such as 1 or 0.5", f.Key)
			}
			return nil
		}
	case SettingDuration:
		return func(v string) error {
			if _, err := duration.Parse(v); err != nil {
				return fmt.Errorf(`%s must be a duration such as "30 s" or "10 min"`, f.Key)
			}
			return nil
		}
	}
	return nil
}

// folders is a list of host folders with Remove buttons and "Add folder…".
func (s *settingsWindow) folders(f SettingField) (fyne.CanvasObject, settingInput) {
	list := slices.Clone(f.List)
	box := container.NewVBox()
	var render func()
	render = func() {
		box.RemoveAll()
		for i, dir := range list {
			l := widget.NewLabel(dir)
			l.Truncation = fyne.TextTruncateEllipsis
			rm := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
				list = slices.Delete(list, i, i+1)
				render()
			})
			box.Add(container.NewBorder(nil, nil, nil, rm, l))
		}
		if len(list) == 0 {
			none := widget.NewLabel("None: assistants cannot copy files to or from this computer.")
			none.Importance = widget.LowImportance
			box.Add(none)
		}
		box.Add(container.NewHBox(widget.NewButtonWithIcon("Add folder…", theme.FolderOpenIcon(), func() {
			s.u.pickHostFolder(s.win, func(dir string) {
				if !slices.Contains(list, dir) {
					list = append(list, dir)
				}
				render()
			})
		})))
		box.Refresh()
	}
	render()
	return box, settingInput{list: func() []string { return slices.Clone(list) }}
}

// edited returns the fields with the form's values, or the first entry's
// own validation error.
func (s *settingsWindow) edited() ([]SettingField, error) {
	out := slices.Clone(s.fields)
	for i, f := range out {
		in := s.inputs[f.Key]
		if in.check != nil {
			if err := in.check(); err != nil {
				return nil, err
			}
		}
		if in.list != nil {
			out[i].List = in.list()
		} else {
			out[i].Value = in.value()
		}
	}
	return out, nil
}

func (s *settingsWindow) doSave() {
	fields, err := s.edited()
	if err != nil {
		s.showMessage("Not saved: "+err.Error()+".", true)
		return
	}
	s.save.Disable()
	image := ""
	if i := slices.IndexFunc(fields, func(f SettingField) bool { return f.Key == "default_image" }); i >= 0 &&
		(i >= len(s.fields) || fields[i].Value != s.fields[i].Value) {
		image = strings.TrimSpace(fields[i].Value)
	}
	var saved SettingsSaved
	var st ImageState
	checked := false
	s.u.background(func(ctx context.Context) (err error) {
		// A default image Docker lacks would fail every assistant's next
		// sandbox: it is refused before it applies, unless Sandtray builds
		// it itself.
		if image != "" && s.u.opts.Images != nil {
			if st, err = s.u.opts.Images.ImageState(ctx, image); err == nil {
				checked = true
				if !st.Present && !st.Buildable {
					return fmt.Errorf("Docker has no image %s, so no sandbox could start; pull or build it first (docker pull %s), "+
						"or pick one that `docker images` lists", image, image)
				}
			}
		}
		saved, err = s.u.opts.Settings.Save(fields)
		return err
	}, func(err error) {
		s.save.Enable()
		if err != nil {
			s.showMessage("Not saved: "+err.Error()+". config.toml was not changed.", true)
			return
		}
		s.fields = fields
		text := SettingsSavedText(saved, fields, filepath.Base(s.u.opts.Settings.Path()))
		waiting := len(saved.waiting()) > 0
		if waiting && s.u.opts.Restart != nil && s.u.opts.Attached {
			text += " Restart now applies them: the engine your assistants started stops, keeping its sandboxes, and starts again in this app; assistants' open sessions end and reconnect when they next start Sandtray."
			s.restart.Enable()
			s.restart.Show()
		} else if waiting && s.u.opts.Restart != nil {
			text += " Restart now applies them: Sandtray starts again at once, and sandboxes and assistants' sessions carry on."
			s.restart.Enable()
			s.restart.Show()
		} else if waiting {
			text += " Quit Sandtray (Quit Sandtray… in the Sandtray menu) and start it again to apply them."
		}
		if !waiting {
			s.restart.Hide()
		}
		if checked && !st.Present && st.Buildable {
			text += " Docker has no " + image + " yet: Sandtray builds it when the first sandbox needs it (a few minutes)."
		}
		s.showMessage(text, saved.NotApplied != "")
	})
}

// SettingsSavedText tells the person what a save changed and when it applies.
func SettingsSavedText(saved SettingsSaved, fields []SettingField, file string) string {
	if len(saved.Changed) == 0 {
		return "Nothing changed."
	}
	label := func(key string) string {
		if i := slices.IndexFunc(fields, func(f SettingField) bool { return f.Key == key }); i >= 0 {
			return fields[i].Label
		}
		return key
	}
	waiting := saved.waiting()
	var now, later []string
	for _, key := range saved.Changed {
		if !slices.Contains(waiting, key) {
			now = append(now, label(key))
		}
	}
	for _, key := range waiting { // with those saved before and not yet applied
		later = append(later, label(key))
	}
	msg := "Saved to " + file + "."
	if saved.Rewritten {
		msg += " It could not be edited line by line, so it was written whole; your previous file, with its comments, is " + saved.Backup + "."
	}
	if saved.NotApplied != "" {
		msg += " Sandtray could not apply it now (" + saved.NotApplied + ")."
	}
	if len(now) > 0 {
		msg += " Applied now: " + strings.Join(now, ", ") + " (sandboxes created from now on; running ones keep theirs)."
	}
	if len(later) > 0 {
		msg += " When Sandtray restarts: " + strings.Join(later, ", ") + "."
	}
	return msg
}

func (s *settingsWindow) showMessage(text string, isError bool) {
	s.message.Importance = widget.SuccessImportance
	if isError {
		s.message.Importance = widget.DangerImportance
	}
	s.message.SetText(text)
	s.message.Show()
}

// showHostFolderDialog asks for a folder on top of win.
func showHostFolderDialog(win fyne.Window, done func(dir string)) {
	d := dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		done(dir.Path())
	}, win)
	d.SetTitleText("Allow assistants to copy files to and from this folder")
	d.SetConfirmText("Allow")
	d.Resize(fyne.NewSize(680, 520))
	d.Show()
}
