package host

import (
	"context"
	"maps"
	"slices"

	"github.com/sandtray/sandtray/engine"
	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/serve/mcpserver"
)

// announceChanges tells MCP clients when sandboxes come or go (resource
// list-changed notifications). Stats-only snapshots are ignored. It does not
// return until ctx is done.
func announceChanges(ctx context.Context, eng *engine.Engine, srv *mcpserver.Server) {
	w := eng.Watch(ctx)
	var last []string
	for {
		snap, err := w.Next(ctx)
		if err != nil {
			return
		}
		if ids := sandboxIDs(snap); !slices.Equal(ids, last) {
			if last != nil {
				srv.SandboxesChanged()
			}
			last = ids
		}
	}
}

// sandboxIDs is the sorted set of ids and names in a snapshot; never nil.
func sandboxIDs(s sandbox.Snapshot) []string {
	set := map[string]bool{}
	for _, b := range s.Sandboxes {
		set[b.ID+"/"+b.Name] = true
	}
	return append([]string{}, slices.Sorted(maps.Keys(set))...)
}
