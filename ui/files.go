package ui

import (
	"context"
	"fmt"
	"path"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// previewLimit is how much of a file the preview reads.
const previewLimit = 64 << 10

// filesTab browses the sandbox's workdir as a tree, loading each folder when
// it is first opened, previews text files and saves a file or folder to the
// host. Tree ids are paths relative to the workdir; "" is the workdir.
type filesTab struct {
	u        *UI
	id       string                       // sandbox the tree belongs to
	entries  map[string]sandbox.FileEntry // by tree id
	children map[string][]string          // loaded folders
	loading  map[string]bool
	chosen   string
	where    *widget.Label
	hidden   *widget.Check
	save     *widget.Button
	tree     *widget.Tree
	preview  *outputView
	note     *widget.Label
}

func newFilesTab(u *UI) *filesTab {
	f := &filesTab{u: u, where: widget.NewLabel(""), note: widget.NewLabel("")}
	f.where.Truncation = fyne.TextTruncateEllipsis
	f.hidden = widget.NewCheck("Hidden files", func(bool) { f.reload() })
	f.save = widget.NewButtonWithIcon("Save to host…", theme.DownloadIcon(), f.saveChosen)
	f.tree = widget.NewTree(f.childUIDs, f.isBranch, f.createNode, f.updateNode)
	f.tree.OnSelected = func(id widget.TreeNodeID) { f.choose(id) }
	f.preview = newOutputView(u)
	f.note.Truncation = fyne.TextTruncateEllipsis
	f.clear()
	return f
}

func (f *filesTab) object() fyne.CanvasObject {
	reload := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), f.reload)
	top := container.NewBorder(nil, nil, nil, container.NewHBox(f.hidden, reload, f.save), f.where)
	right := container.NewBorder(f.note, nil, nil, nil, f.preview.object())
	split := container.NewHSplit(f.tree, right)
	split.Offset = 0.38
	return container.NewBorder(top, nil, nil, nil, split)
}

func (f *filesTab) clear() {
	f.entries = map[string]sandbox.FileEntry{}
	f.children = map[string][]string{}
	f.loading = map[string]bool{}
	f.chosen = ""
	f.preview.clear()
	f.note.SetText("Choose a file to preview it.")
}

// reset forgets the previous sandbox's tree.
func (f *filesTab) reset() {
	f.id = ""
	f.clear()
	f.tree.UnselectAll()
	f.tree.CloseAllBranches()
	f.tree.Refresh()
}

// reload drops everything loaded and lists the workdir again.
func (f *filesTab) reload() {
	id := f.id
	f.reset()
	if info, ok := f.u.m.current(); ok && id != "" {
		f.refresh(info)
	}
}

// refresh starts browsing the sandbox when the tab is first shown for it.
func (f *filesTab) refresh(info sandbox.Info) {
	if f.id == info.ID {
		return
	}
	f.id = info.ID
	workdir := info.Spec.Workdir
	if workdir == "" {
		workdir = "/workspace"
	}
	f.where.SetText(workdir)
	f.load("")
}

func (f *filesTab) childUIDs(id widget.TreeNodeID) []widget.TreeNodeID {
	kids, ok := f.children[id]
	if !ok && f.id != "" {
		f.load(id)
	}
	return kids
}

func (f *filesTab) isBranch(id widget.TreeNodeID) bool {
	return id == "" || f.entries[id].Type == "dir"
}

func (f *filesTab) createNode(bool) fyne.CanvasObject {
	name := widget.NewLabel("")
	name.Truncation = fyne.TextTruncateEllipsis
	size := widget.NewLabel("")
	return container.NewBorder(nil, nil, nil, size, name)
}

func (f *filesTab) updateNode(id widget.TreeNodeID, branch bool, o fyne.CanvasObject) {
	c := o.(*fyne.Container)
	name, size := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Label)
	e := f.entries[id]
	name.SetText(path.Base(id))
	switch {
	case e.Type == "symlink":
		name.SetText(path.Base(id) + " → " + e.Target)
		size.SetText("")
	case branch:
		size.SetText("")
	default:
		size.SetText(FormatBytes(uint64(max(0, e.Size))))
	}
}

// load lists one folder in the background and adds it to the tree.
func (f *filesTab) load(dir string) {
	if f.loading[dir] {
		return
	}
	f.loading[dir] = true
	id, all := f.id, f.hidden.Checked
	rel := dir
	if rel == "" {
		rel = "."
	}
	var listing sandbox.Listing
	f.u.background(func(ctx context.Context) (err error) {
		listing, err = f.u.b.ListFiles(ctx, owner, id, rel, 1, all)
		return err
	}, func(err error) {
		if f.id != id {
			return // another sandbox is shown now
		}
		delete(f.loading, dir)
		if err != nil {
			f.children[dir] = nil
			f.note.SetText("Could not list " + rel + ": " + err.Error())
			return
		}
		kids := make([]string, 0, len(listing.Entries))
		for _, e := range listing.Entries {
			child := path.Join(dir, e.Path)
			f.entries[child] = e
			kids = append(kids, child)
		}
		f.children[dir] = kids
		f.tree.Refresh()
	})
}

// choose previews a file, or notes what a folder is.
func (f *filesTab) choose(id string) {
	f.chosen = id
	e := f.entries[id]
	if e.Type != "file" {
		f.preview.clear()
		f.note.SetText(id + " — save it to the host to copy it with everything in it.")
		return
	}
	sandboxID := f.id
	var content sandbox.FileContent
	f.note.SetText("Reading " + id + "…")
	f.u.background(func(ctx context.Context) (err error) {
		content, err = f.u.b.ReadFile(ctx, owner, sandboxID, id, 0, previewLimit)
		return err
	}, func(err error) {
		if f.id != sandboxID || f.chosen != id {
			return
		}
		text, note := previewText(id, content, err)
		shown, _ := HeadText(text, shownBytes, shownLines)
		f.preview.set(shown, 0, "", nil)
		f.note.SetText(note)
	})
}

// previewText decides what the preview shows for a file read, and the note above it.
func previewText(name string, c sandbox.FileContent, err error) (text, note string) {
	if err != nil {
		return "", "Could not read " + name + ": " + err.Error()
	}
	data := c.Data
	if c.Truncated {
		data = trimPartialRune(data)
	}
	if !utf8.Valid(data) || containsNUL(data) {
		return "", fmt.Sprintf("%s is a binary file (%s); save it to the host to open it.", name, FormatBytes(uint64(c.Size)))
	}
	note = fmt.Sprintf("%s · %s", name, FormatBytes(uint64(c.Size)))
	if shown, _ := HeadText(string(data), shownBytes, shownLines); c.Truncated || len(shown) < len(data) {
		note += fmt.Sprintf(" · showing the first %s; Save to host… for all of it", FormatBytes(uint64(len(shown))))
	}
	return string(data), note
}

// trimPartialRune drops a UTF-8 sequence cut off by a read limit.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

func containsNUL(b []byte) bool {
	for _, c := range b {
		if c == 0 {
			return true
		}
	}
	return false
}

// saveChosen copies the chosen file or folder (the workdir when nothing is
// chosen) into a folder the person picks.
func (f *filesTab) saveChosen() {
	info, ok := f.u.m.current()
	if !ok {
		return
	}
	src := f.chosen
	if src == "" {
		src = "."
	}
	f.u.pickFolder("Save "+path.Base(src)+" into folder", func(dir string) {
		var res sandbox.CopyResult
		f.u.background(func(ctx context.Context) (err error) {
			res, err = f.u.b.SaveFiles(ctx, info.ID, src, dir)
			return err
		}, func(err error) {
			if err != nil {
				f.u.detail.showError("Save "+src, err)
				return
			}
			f.u.detail.showInfo(SavedText(res))
		})
	})
}
