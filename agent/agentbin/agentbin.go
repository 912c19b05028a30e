// Package agentbin holds the sandbox agent's binaries (sandtray-agent, for
// linux/amd64 and linux/arm64), embedded in the programs that make
// sandboxes: `make agent` builds them into bin/ before the programs are
// built. A build without them (a plain `go build`) finds the binary for its
// own architecture at $SANDTRAY_AGENT instead, which tests set.
package agentbin

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"sync"
)

//go:embed bin
var bins embed.FS

// EnvPath names a file holding the agent for this host's architecture,
// used when none is embedded for it.
const EnvPath = "SANDTRAY_AGENT"

// ErrMissing is an agent this program was built without.
var ErrMissing = errors.New("this Sandtray was built without its sandbox agent")

// maxBinary bounds an agent binary read from disk or decompressed.
const maxBinary = 64 << 20

var (
	mu    sync.Mutex
	cache = map[string][]byte{}
)

// Binary is the agent for linux/arch ("amd64", "arm64") and the hex
// SHA-256 of it.
func Binary(arch string) ([]byte, string, error) {
	mu.Lock()
	defer mu.Unlock()
	if b, ok := cache[arch]; ok {
		return b, digest(b), nil
	}
	b, err := load(arch)
	if err != nil {
		return nil, "", err
	}
	cache[arch] = b
	return b, digest(b), nil
}

func load(arch string) ([]byte, error) {
	if f, err := bins.Open("bin/sandtray-agent-linux-" + arch + ".gz"); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("the embedded agent for linux/%s: %w", arch, err)
		}
		return readAll(zr)
	}
	if p := os.Getenv(EnvPath); p != "" && arch == goruntime.GOARCH {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("the agent at $%s: %w", EnvPath, err)
		}
		defer f.Close()
		return readAll(f)
	}
	return nil, fmt.Errorf("%w for linux/%s (build it with `make agent`, or set $%s to one): %w", ErrMissing, arch, EnvPath, errors.ErrUnsupported)
}

func readAll(r io.Reader) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, maxBinary+1))
	if err != nil {
		return nil, err
	}
	if n > maxBinary {
		return nil, fmt.Errorf("the agent is over %d MB", maxBinary>>20)
	}
	return buf.Bytes(), nil
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
