package snapshot

import (
	"context"
	"fmt"
	"sync"

	"github.com/sandtray/sandtray/engine/internal/hostfs"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// The snapshots' limits (limits.max_snapshots per sandbox and
// limits.max_snapshot_mb in all) hold for snapshots taken at once (F58):
// each takes a place in the ledger, under its lock, before it begins, and
// charges the ledger for every byte it writes to the host (its tmpfs
// tars, as they stream in) and for its image's layer, which is refused
// and removed when it would take the snapshots past the budget. A place
// is given back when the snapshot ends; its bytes then count as the
// snapshot's, or not at all when it failed. A fork's tars are charged the
// same way while it runs (they are deleted once its sandboxes have them).

// ledger is what the snapshots under way hold.
type ledger struct {
	mu      sync.Mutex
	taking  map[string]int // by sandbox id: snapshots under way
	pending int64          // bytes the snapshots and forks under way have written
	used    int64          // bytes of the finished snapshots, counted at each reservation
}

// Hold is one snapshot's (or fork's) place in the ledger.
type Hold struct {
	s       *Store
	id      string // the sandbox, when the place counts against limits.max_snapshots
	charged int64
}

// errBudget is a charge past limits.max_snapshot_mb.
type errBudget struct{ budget, others, left int64 }

func (e errBudget) Error() string {
	return fmt.Sprintf("the %d MB left of limits.max_snapshot_mb (%d MB; Sandtray's other snapshots take %d MB)", max(e.left, 0)>>20, e.budget>>20, e.others>>20)
}

// Reserve takes a place for a snapshot of b (count: one that counts
// against limits.max_snapshots; a fork's does not) and refuses, saying
// what to delete, when b has as many snapshots as the limit allows (those
// taken and those under way) or the snapshots fill the budget.
func (s *Store) Reserve(ctx context.Context, b Box, count bool) (*Hold, error) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	h := &Hold{s: s}
	if !count {
		return h, nil
	}
	c := s.config()
	used, err := s.bytes(ctx)
	if err != nil {
		return nil, err
	}
	have, err := s.List(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	l.used = used
	switch n := len(have) + l.taking[b.ID]; {
	case n >= c.MaxSnapshots:
		return nil, fmt.Errorf("sandbox %s already has %d snapshots (taken or being taken), the most limits.max_snapshots allows; delete one with delete_snapshot (list_snapshots shows them) and try again: %w",
			b.Name, n, sandbox.ErrConflict)
	case used+l.pending >= c.BudgetMB<<20:
		return nil, fmt.Errorf("the snapshots of Sandtray's sandboxes take %d MB, the most limits.max_snapshot_mb allows; delete one with delete_snapshot (list_snapshots shows each sandbox's) and try again: %w",
			(used+l.pending)>>20, sandbox.ErrConflict)
	}
	if l.taking == nil {
		l.taking = map[string]int{}
	}
	l.taking[b.ID]++
	h.id = b.ID
	return h, nil
}

// charge takes n more bytes for h, or refuses with errBudget when they
// would take the snapshots (and the forks under way) past the budget.
func (h *Hold) charge(n int64) error {
	l := &h.s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	budget := h.s.config().BudgetMB << 20
	others := l.used + l.pending - h.charged
	if l.used+l.pending+n > budget {
		return errBudget{budget: budget, others: others, left: budget - others}
	}
	l.pending += n
	h.charged += n
	return nil
}

// diskTake is what a tmpfs tar of h writes through (hostfs.SparseWriter):
// each run of data is charged, and must leave the host's disk its reserve.
func (h *Hold) diskTake(dir string) func(int64) error {
	return func(n int64) error {
		if err := hostfs.CheckFree(dir, n); err != nil {
			return err
		}
		return h.charge(n)
	}
}

// Release gives h's place back; kept: its bytes stay on the disk, as a
// snapshot's.
func (h *Hold) Release(kept bool) {
	l := &h.s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending -= h.charged
	if kept {
		l.used += h.charged
	}
	if h.id != "" {
		if l.taking[h.id]--; l.taking[h.id] <= 0 {
			delete(l.taking, h.id)
		}
	}
}
