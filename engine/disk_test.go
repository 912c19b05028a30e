package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/engine/runtime"
	"github.com/sandtray/sandtray/engine/sandbox"
)

// noUpperDir hides the writable layer's folder, as a daemon on another
// machine, or one whose files the engine may not read, would.
type noUpperDir struct{ runtime.Full }

func (noUpperDir) Disk(context.Context, string) (runtime.DiskInfo, error) {
	return runtime.DiskInfo{}, nil
}

// TestDiskLimitStopsTheWriter: a call that writes past limits.disk_mb is
// stopped and told why; what it wrote is kept, and deleting files makes the
// sandbox usable again. Both ways of measuring are checked: walking the
// layer's folder (the engine runs as root here) and Docker's size API.
func TestDiskLimitStopsTheWriter(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(runtime.Full) runtime.Full
	}{
		{"walking the layer", nil},
		{"docker's size", func(d runtime.Full) runtime.Full { return noUpperDir{d} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTestEngineOn(t, c.wrap, func(cfg *config.Config) { cfg.Limits.DiskMB = 64 })
			id := te.create(t, sandbox.CreateRequest{}).ID
			// No one file outgrows the limit, however fast it is written.
			big := te.command(t, id, "head -c 80000000 /dev/zero > /workspace/big; echo rc=$?; stat -c %s /workspace/big; rm /workspace/big")
			if lines := strings.Fields(big.Stdout); len(lines) != 2 || lines[0] == "rc=0" || lines[1] != "67108864" {
				t.Errorf("an 80 MB file in a sandbox limited to 64 MB: %q %q, want a failed write stopped at 64 MiB", big.Stdout, big.Stderr)
			}
			// 40 MB each, a second apart: over the limit after the second
			// file, and slow enough for Docker's size API to see it.
			res := te.command(t, id, "for i in $(seq 8); do head -c 40000000 /dev/zero > /workspace/f$i || exit 1; sleep 1; done; echo FILLED")
			if strings.Contains(res.Stdout, "FILLED") {
				t.Fatalf("a sandbox limited to 64 MB wrote 320 MB: %+v", res)
			}
			if !strings.Contains(res.Stderr, "over its disk limit of 64 MB") || res.ExitCode != -1 {
				t.Fatalf("the result does not say the disk limit stopped it: exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			if out := te.command(t, id, "ls /workspace | head -1"); strings.TrimSpace(out.Stdout) != "f1" {
				t.Errorf("the files written before the stop are gone: %q", out.Stdout)
			}
			if out := te.command(t, id, "rm /workspace/f*; head -c 10000000 /dev/zero > /workspace/small; sleep 4; echo OK"); strings.TrimSpace(out.Stdout) != "OK" {
				t.Errorf("after deleting its files, the sandbox cannot write 10 MB: %+v", out)
			}
		})
	}
}
