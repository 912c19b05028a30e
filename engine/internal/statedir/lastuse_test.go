package statedir

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestLastUseFlushWaitsForTheOneUnderWay: Close's flush returns only once a
// save the timer started has written, so nothing writes the state dir
// after Close; marks within a delay are saved once.
func TestLastUseFlushWaitsForTheOneUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var saves atomic.Int32
		release := make(chan struct{})
		s := NewLastUse(func(string) {
			saves.Add(1)
			<-release
		})
		s.Mark("a")
		s.Mark("a")
		time.Sleep(LastUseSaveDelay)
		synctest.Wait() // the timer's flush is saving, held by release
		if n := saves.Load(); n != 1 {
			t.Fatalf("%d saves after the delay, want 1", n)
		}
		flushed := make(chan struct{})
		go func() { s.Flush(); close(flushed) }()
		synctest.Wait()
		select {
		case <-flushed:
			close(release)
			t.Fatal("flush returned while the timer's save was still writing")
		default:
		}
		close(release)
		<-flushed
		if n := saves.Load(); n != 1 {
			t.Errorf("%d saves in all, want 1", n)
		}
	})
}
