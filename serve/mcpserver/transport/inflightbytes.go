package transport

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// InFlightBytes bounds the bytes of the requests one connection has running
// at once: two requests of the largest size a line may have. Without it a
// client could keep MaxInFlight requests of MaxRequestBytes each (512 MiB at
// the defaults) in the engine's memory at once. A request larger than the
// budget (impossible: lines are capped) would take all of it.
func InFlightBytes(maxRequestBytes int) int64 {
	return 2 * int64(maxRequestBytes+envelopeSlack)
}

// requestBytes is a connection's budget of in-flight request bytes.
type requestBytes struct {
	sem *semaphore.Weighted
	max int64
}

func newRequestBytes(maxRequestBytes int) *requestBytes {
	n := InFlightBytes(maxRequestBytes)
	return &requestBytes{sem: semaphore.NewWeighted(n), max: n}
}

// acquire waits until n bytes of the budget are free, or ctx is done; it
// returns the function that gives them back.
func (r *requestBytes) acquire(ctx context.Context, n int) (release func(), err error) {
	w := min(int64(n), r.max)
	if err := r.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { r.sem.Release(w) }, nil
}
