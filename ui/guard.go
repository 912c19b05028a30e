package ui

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// The engine is a goroutine of this process: a panic anywhere in the window
// would take every assistant's sandboxes down with it. So nothing the
// window runs may panic through: every callback Fyne calls (a click, a
// list's rows, a menu item), every task handed to Fyne's goroutine and
// every piece of work run off it runs under protect, which recovers a
// panic, logs it with its stack, says so in one line in the window, and
// lets the app go on. A crash in the window is a bug report, not an
// outage.
//
// Callbacks are guarded where they live: guardAll walks the windows,
// their dialogs and the menus, and wraps each exported function field it
// finds (Button.OnTapped, List.UpdateItem, MenuItem.Action, …) in place,
// whatever made it (a dialog's own buttons call the function the UI gave
// it). It runs after every guarded callback and task on Fyne's goroutine,
// so what a click builds is guarded before the next event reaches it; a
// list's rows are guarded as its CreateItem makes them.

// panicked counts the panics recovered in this process (tests read it).
var panicked atomic.Int64

// protect runs f, recovering a panic in it (see recovered).
func (u *UI) protect(where string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			u.recovered(where, r)
		}
	}()
	f()
}

// recovered logs a recovered panic with its stack and shows it in one line
// in the window.
func (u *UI) recovered(where string, r any) {
	panicked.Add(1)
	u.log.Error("the window hit a bug and skipped that step; the engine carries on", "where", where,
		"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	text := OneLine(fmt.Sprintf("The window hit a bug (%s: %v) and skipped that step. The log has the details; "+
		"your sandboxes and assistants carry on.", where, r), 300)
	u.queue(func() {
		defer func() { _ = recover() }() // a window too broken to say so stays silent
		u.status.showMessage(text, kindError)
	})
}

// guard returns f, guarded: for callbacks the UI hands to Fyne itself
// (a close intercept, a settings listener), not through a widget field.
func (u *UI) guard(where string, f func()) func() {
	if f == nil {
		return nil
	}
	return func() {
		u.protect(where, f)
		u.guardAll()
	}
}

// guardAll guards every callback of the app's windows, their dialogs and
// the menus. Runs on Fyne's goroutine.
func (u *UI) guardAll() {
	if u.walking {
		return
	}
	u.walking = true
	defer func() { u.walking = false }()
	seen := map[uintptr]bool{}
	for _, w := range u.app.Driver().AllWindows() {
		u.walk(reflect.ValueOf(w.Content()), seen)
		for _, o := range w.Canvas().Overlays().List() {
			u.walk(reflect.ValueOf(o), seen)
		}
		if m := w.MainMenu(); m != nil {
			u.walk(reflect.ValueOf(m), seen)
		}
	}
	if u.tray != nil {
		u.walk(reflect.ValueOf(u.tray.menu), seen)
	}
}

// guardTree guards the callbacks of o and what it holds. Runs on Fyne's
// goroutine.
func (u *UI) guardTree(o any) { u.walk(reflect.ValueOf(o), map[uintptr]bool{}) }

// walk guards the exported function fields of v and of what its exported
// fields hold (objects, tab and form items, menus), once per pointer.
func (u *UI) walk(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			u.walk(v.Elem(), seen)
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		if v.Elem().Kind() == reflect.Struct {
			u.walkStruct(v.Elem(), v, seen)
		}
	case reflect.Slice:
		switch v.Type().Elem().Kind() { // objects and items; never rows of text or bytes
		case reflect.Pointer, reflect.Interface:
			for i := range v.Len() {
				u.walk(v.Index(i), seen)
			}
		}
	}
}

func (u *UI) walkStruct(s, owner reflect.Value, seen map[uintptr]bool) {
	t := s.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := s.Field(i)
		switch fv.Kind() {
		case reflect.Func:
			if !fv.IsNil() && fv.CanSet() && !isGuarded(fv) {
				fv.Set(u.wrap(describe(owner, f.Name), fv, walksAfter(f.Name)))
			}
		case reflect.Struct:
			if f.Anonymous {
				u.walkStruct(fv, owner, seen)
			}
		case reflect.Pointer, reflect.Interface, reflect.Slice:
			u.walk(fv, seen)
		}
	}
}

// walksAfter says whether a callback is an event's (a click, a change),
// after which what it built is guarded, rather than one Fyne calls while
// it lays out or draws (a list's Length and UpdateItem).
func walksAfter(field string) bool {
	return strings.HasPrefix(field, "On") || field == "Action"
}

// guardedPtr is the code every guarded function runs (reflect.MakeFunc's).
var guardedPtr = reflect.MakeFunc(reflect.TypeFor[func()](), func([]reflect.Value) []reflect.Value { return nil }).Pointer()

func isGuarded(fv reflect.Value) bool { return fv.Pointer() == guardedPtr }

var canvasObjectType = reflect.TypeFor[fyne.CanvasObject]()

// wrap returns fv guarded: a panic in it is recovered and it returns zero
// values (a blank label where it makes an object); an object it makes is
// guarded before Fyne shows it.
func (u *UI) wrap(where string, fv reflect.Value, walkAfter bool) reflect.Value {
	fv = reflect.ValueOf(fv.Interface()) // the function, not the field it is about to replace
	t := fv.Type()
	return reflect.MakeFunc(t, func(args []reflect.Value) (out []reflect.Value) {
		defer func() {
			if r := recover(); r != nil {
				u.recovered(where, r)
				out = make([]reflect.Value, t.NumOut())
				for i := range out {
					out[i] = reflect.Zero(t.Out(i))
					if t.Out(i) == canvasObjectType {
						out[i] = reflect.ValueOf(fyne.CanvasObject(widget.NewLabel("")))
					}
				}
			}
		}()
		if t.IsVariadic() {
			out = fv.CallSlice(args) // MakeFunc hands the variadic part over as a slice
		} else {
			out = fv.Call(args)
		}
		for _, v := range out {
			if v.Kind() == reflect.Interface && v.Type() == canvasObjectType && !v.IsNil() {
				u.guardTree(v.Interface())
			}
		}
		if walkAfter {
			u.guardAll()
		}
		return out
	})
}

// describe names a callback for the log: its widget's type, text if it has
// one, and the field.
func describe(owner reflect.Value, field string) string {
	name := strings.TrimPrefix(owner.Type().String(), "*")
	if e := owner.Elem(); e.Kind() == reflect.Struct {
		for _, f := range []string{"Text", "Label"} {
			if tv := e.FieldByName(f); tv.IsValid() && tv.Kind() == reflect.String && tv.String() != "" {
				return fmt.Sprintf("%s %q %s", name, FirstLine(tv.String(), 40), field)
			}
		}
	}
	return name + " " + field
}
