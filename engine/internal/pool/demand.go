package pool

import (
	"cmp"
	"slices"
	"time"
)

// burstWindow is the span whose creates count as one burst: after five
// creates of an image within it, the pool keeps five spares of that image
// (within the budget) until the image has been idle for Config.Idle.
const burstWindow = time.Minute

// defaultSpareMemory is what one spare is assumed to use until one of its
// image has been measured: a python kernel, an init and a sleep use less.
const defaultSpareMemory = 48 << 20

// imageState is what the pool knows of one image. Guarded by Pool.mu.
type imageState struct {
	configured bool        // in Config.Images: kept whether used or not
	ready      []pooled    // oldest first
	filling    int         // fills under way
	uses       []time.Time // creates asked for it, within Config.Idle
	memory     uint64      // what one spare was measured to use; 0 unknown
	retryAt    time.Time   // no fill before this, after failures
	backoff    time.Duration
	lastErr    string
}

// Note records that a sandbox of image was asked for: the pool learns the
// image (or its burst) and tops up. It never blocks.
func (p *Pool) Note(image string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	s := p.state(image)
	now := p.now()
	s.uses = append(p.recent(s, now), now)
	p.mu.Unlock()
	p.refill()
}

// recent drops the uses older than Config.Idle. Callers hold p.mu.
func (p *Pool) recent(s *imageState, now time.Time) []time.Time {
	cut := 0
	for cut < len(s.uses) && now.Sub(s.uses[cut]) > p.cfg.Idle {
		cut++
	}
	return slices.Delete(s.uses, 0, cut)
}

// want is how many spares of the image the pool wants, before the budget:
// none for an image neither configured nor used within Idle; otherwise
// Size, or the most creates within one burst window, if more.
func (p *Pool) want(s *imageState, now time.Time) int {
	s.uses = p.recent(s, now)
	if !s.configured && len(s.uses) == 0 {
		return 0
	}
	peak, j := 0, 0
	for i := range s.uses {
		for s.uses[i].Sub(s.uses[j]) > burstWindow {
			j++
		}
		peak = max(peak, i-j+1)
	}
	return min(max(p.cfg.Size, peak), p.cfg.MaxTotal)
}

// allocate divides the budget: how many spares each image may hold now.
// Configured images come first, then the most recently used; every image
// first gets up to Size, then what its bursts ask for beyond it, while the
// total stays within MaxTotal containers and MemoryMB. Callers hold p.mu.
func (p *Pool) allocate(now time.Time) map[string]int {
	type cand struct {
		image string
		s     *imageState
		want  int
	}
	var cands []cand
	for img, s := range p.images {
		if w := p.want(s, now); w > 0 {
			cands = append(cands, cand{img, s, w})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.s.configured != b.s.configured {
			if a.s.configured {
				return -1
			}
			return 1
		}
		return cmp.Or(lastUse(b.s).Compare(lastUse(a.s)), cmp.Compare(a.image, b.image))
	})
	alloc := map[string]int{}
	total, memory, budget := 0, uint64(0), uint64(p.cfg.MemoryMB)<<20
	grant := func(c cand, upTo int) {
		each := cmp.Or(c.s.memory, defaultSpareMemory)
		for alloc[c.image] < upTo && total < p.cfg.MaxTotal && memory+each <= budget {
			alloc[c.image]++
			total++
			memory += each
		}
	}
	for _, c := range cands {
		grant(c, min(c.want, p.cfg.Size))
	}
	for _, c := range cands {
		grant(c, c.want)
	}
	return alloc
}

func lastUse(s *imageState) time.Time {
	if len(s.uses) == 0 {
		return time.Time{}
	}
	return s.uses[len(s.uses)-1]
}
