package portfwd

import (
	"context"
	"time"
)

// A forward keeps one relay process started ahead of need (a spare), so a
// connection that finds it ready skips the exec's start-up (Docker's exec
// create and attach, and the helper's interpreter): the helper waits for a
// go byte on stdin before it connects. Bursts beyond the spare start
// relays of their own.

// goByte tells a waiting helper to connect.
var goByte = []byte{'\n'}

// spareMaxAge is how long a spare is trusted: an older one may have died
// with a sandbox restart, so it is replaced instead of used.
const spareMaxAge = 2 * time.Minute

// spare is a started relay process waiting for goByte.
type spare struct {
	s  Stream
	at time.Time
}

// refill starts a spare in the background unless the forward is closing.
// The spare goes into f.spares, or is closed when one is already there.
func (f *Forward) refill() {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		ctx, cancel := context.WithTimeout(f.ctx, openTimeout)
		defer cancel()
		s, err := f.o.Opener.Open(ctx, f.o.Helper.Command(f.o.Port))
		if err != nil {
			return // the next connection opens its own and tries again
		}
		select {
		case f.spares <- spare{s: s, at: time.Now()}:
		default:
			s.Close()
		}
	}()
}

// open returns a relay process told to connect: the spare when one is ready
// and fresh (and then a new spare is started), else a new process.
func (f *Forward) open() (Stream, error) {
	select {
	case sp := <-f.spares:
		f.refill()
		if time.Since(sp.at) < spareMaxAge {
			if _, err := sp.s.Write(goByte); err == nil {
				return sp.s, nil
			}
		}
		sp.s.Close()
	default:
	}
	ctx, cancel := context.WithTimeout(f.ctx, openTimeout)
	defer cancel()
	s, err := f.o.Opener.Open(ctx, f.o.Helper.Command(f.o.Port))
	if err != nil {
		return nil, err
	}
	if _, err := s.Write(goByte); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// closeSpares closes the spare left after Close has waited for everything;
// its helper reads EOF instead of goByte and exits without connecting.
func (f *Forward) closeSpares() {
	for {
		select {
		case sp := <-f.spares:
			sp.s.Close()
		default:
			return
		}
	}
}
