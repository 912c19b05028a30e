package egress

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
)

// A request body a secret is swapped into (body = true) is streamed when
// every value is as long as its placeholder (a placeholder is, for a value
// of 32 bytes or more), so its length holds; otherwise the gate must hold
// it whole to send its new length, and every such body held at once comes
// out of one budget (F63: twelve 32 MiB bodies at once took 416 MB).

// maxSwapBody bounds one request body the gate holds whole to swap a
// secret in; a larger one is refused (413).
const maxSwapBody = 32 << 20

// swapBudget bounds the request bodies the gate holds whole at once, for
// every sandbox together; past it, a request is refused (503) until others
// are through.
const swapBudget = 2 * maxSwapBody

// budget counts bytes held against a maximum.
type budget struct {
	mu        sync.Mutex
	held, max int64
}

// take holds n more bytes, unless that would pass the maximum.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held+n > b.max {
		return false
	}
	b.held += n
	return true
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

// bodyError is a request body the gate would not swap a secret into, with
// the status of its refusal.
type bodyError struct {
	status int
	why    string
}

func (e *bodyError) Error() string { return e.why }

// usedSet notes which secrets a request's swaps used; a streamed body adds
// to it while the request is sent.
type usedSet struct {
	mu    sync.Mutex
	names []string
}

func (u *usedSet) add(name string) {
	u.mu.Lock()
	if !slices.Contains(u.names, name) {
		u.names = append(u.names, name)
	}
	u.mu.Unlock()
}

func (u *usedSet) list() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.names)
}

// swapBody swaps swaps into req's body, noting in used the secrets it puts
// in: as a stream when every swap keeps the length, else read whole within
// b, the gate's budget.
func swapBody(req *http.Request, swaps []swap, b *budget, used *usedSet) error {
	hit := func(i int) { used.add(swaps[i].name) }
	m := swapMatcher(swaps)
	if sameLengths(swaps) {
		req.Body = newReplacer(req.Body, m, hit)
		return nil
	}
	if req.ContentLength > maxSwapBody {
		req.Body.Close()
		return &bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d MiB, more than the gate holds to put a secret into it", maxSwapBody>>20)}
	}
	body, held, err := readHeld(req.Body, req.ContentLength, b)
	req.Body.Close()
	if err != nil {
		return err
	}
	// Its new length, replaced as it will be sent, without a second copy.
	n, _ := io.Copy(io.Discard, newReplacer(io.NopCloser(bytes.NewReader(body)), m, nil))
	req.Body = &heldBody{ReadCloser: newReplacer(io.NopCloser(bytes.NewReader(body)), m, hit), release: func() { b.give(held) }}
	req.ContentLength = n
	req.Header.Del("Content-Length")
	req.TransferEncoding = nil
	return nil
}

// readHeld reads r whole (size bytes, or as many as come when size is -1)
// into memory taken from b, up to maxSwapBody; held is what it took, which
// the caller gives back.
func readHeld(r io.Reader, size int64, b *budget) (body []byte, held int64, err error) {
	limit := int64(maxSwapBody)
	if size >= 0 {
		limit = size // net/http's body ends there
	}
	fail := func(e error) ([]byte, int64, error) {
		b.give(held)
		return nil, 0, e
	}
	busy := &bodyError{http.StatusServiceUnavailable, fmt.Sprintf("the gate already holds %d MiB of request bodies to put secrets into; send it again in a moment", swapBudget>>20)}
	held = limit
	if size < 0 {
		held = min(64<<10, limit)
	}
	if !b.take(held) {
		return nil, 0, busy
	}
	body = make([]byte, 0, held)
	for {
		if len(body) == cap(body) {
			if int64(len(body)) == limit {
				if n, _ := io.ReadFull(r, make([]byte, 1)); n == 0 {
					return body, held, nil
				}
				return fail(&bodyError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d MiB, more than the gate holds to put a secret into it", maxSwapBody>>20)})
			}
			grow := min(int64(cap(body)), limit-int64(cap(body)))
			if !b.take(grow) {
				return fail(busy)
			}
			held += grow
			bigger := make([]byte, len(body), int64(cap(body))+grow)
			copy(bigger, body)
			body = bigger
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		switch {
		case err == io.EOF:
			return body, held, nil
		case err != nil:
			return fail(fmt.Errorf("read the request body: %w", err))
		}
	}
}

// heldBody is a body read whole: closing it gives its memory back to the
// budget, once.
type heldBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (h *heldBody) Close() error {
	h.once.Do(h.release)
	return h.ReadCloser.Close()
}

// swapMatcher finds each swap's old, to put its new in its place.
func swapMatcher(swaps []swap) *matcher {
	m := &matcher{}
	for i, sw := range swaps {
		m.add(&pattern{text: []byte(sw.old), repl: []byte(sw.new), swap: i})
	}
	return m
}

// sameLengths reports whether each swap's new is as long as its old.
func sameLengths(swaps []swap) bool {
	for _, s := range swaps {
		if len(s.old) != len(s.new) {
			return false
		}
	}
	return true
}
