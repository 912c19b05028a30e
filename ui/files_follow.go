package ui

import (
	"context"
	"path"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// follow lists every folder the tree has loaded again, keeping what is
// open and chosen, and previews the chosen file again when it changed: the
// tab follows what calls write. Folders that went are dropped.
func (f *filesTab) follow() {
	if f.id == "" {
		return
	}
	for dir := range f.children {
		f.relist(dir)
	}
}

// relist lists a loaded folder again in the background.
func (f *filesTab) relist(dir string) {
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
			return
		}
		delete(f.loading, dir)
		if _, ok := f.children[dir]; !ok {
			return // dropped meanwhile
		}
		if err != nil {
			f.drop(dir) // it went: the tree shows it no more
			f.tree.Refresh()
			return
		}
		kept := map[string]bool{}
		kids := make([]string, 0, len(listing.Entries))
		chosenChanged := false
		for _, e := range listing.Entries {
			child := path.Join(dir, e.Path)
			if child == f.chosen && (f.entries[child].Size != e.Size || !f.entries[child].ModTime.Equal(e.ModTime)) {
				chosenChanged = true
			}
			f.entries[child] = e
			kept[child] = true
			kids = append(kids, child)
		}
		for _, old := range f.children[dir] {
			if !kept[old] {
				f.drop(old)
				delete(f.entries, old)
			}
		}
		f.children[dir] = kids
		f.tree.Refresh()
		if chosenChanged {
			f.choose(f.chosen)
		}
	})
}

// drop forgets a folder's loaded listing and everything under it.
func (f *filesTab) drop(dir string) {
	for _, kid := range f.children[dir] {
		f.drop(kid)
		if dir != "" {
			delete(f.entries, kid)
		}
	}
	delete(f.children, dir)
}
