package jobs

import (
	"errors"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/config"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// TestTimingOf: a call's timeout takes the configured default (the maximum
// for background), a timeout past the maximum or a negative one is
// refused, and the wait is 0 for background, DefaultWait when not given and
// at most the maximum.
func TestTimingOf(t *testing.T) {
	l := config.Limits{ExecTimeout: config.Duration{Duration: 30 * time.Second}, MaxExecTimeout: config.Duration{Duration: 10 * time.Minute}}
	for _, c := range []struct {
		name          string
		timeout, wait time.Duration
		background    bool
		wantT, wantW  time.Duration
		wantErr       bool
	}{
		{name: "defaults", wantT: 30 * time.Second, wantW: sandbox.DefaultWait},
		{name: "background", background: true, wait: time.Minute, wantT: 10 * time.Minute, wantW: 0},
		{name: "given", timeout: time.Minute, wait: 5 * time.Second, wantT: time.Minute, wantW: 5 * time.Second},
		{name: "long wait", wait: time.Hour, wantT: 30 * time.Second, wantW: 10 * time.Minute},
		{name: "past the maximum", timeout: 11 * time.Minute, wantErr: true},
		{name: "negative timeout", timeout: -time.Second, wantErr: true},
		{name: "negative wait", wait: -time.Second, wantErr: true},
	} {
		got, err := TimingOf(l, c.timeout, c.wait, c.background, nil)
		if c.wantErr {
			if !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("%s: %+v, %v; want ErrInvalid", c.name, got, err)
			}
			continue
		}
		if err != nil || got.Timeout != c.wantT || got.Wait != c.wantW {
			t.Errorf("%s: %+v, %v; want timeout %s, wait %s", c.name, got, err, c.wantT, c.wantW)
		}
	}
}
