package testbuild

import (
	"slices"
	"testing"
)

func TestCommandBuildsAsTheTestWasBuilt(t *testing.T) {
	cmd := Command("/tmp/out", "./a", "./b")
	if got := slices.Contains(cmd.Args, "-race"); got != race {
		t.Errorf("args %q: -race present %v, but the test binary's race detector is %v", cmd.Args, got, race)
	}
	if n := len(cmd.Args); n < 4 || !slices.Equal(cmd.Args[n-4:], []string{"-o", "/tmp/out", "./a", "./b"}) {
		t.Errorf("args %q do not end with -o /tmp/out ./a ./b", cmd.Args)
	}
}
