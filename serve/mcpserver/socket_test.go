package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
	"github.com/sandtray/sandtray/internal/testwait"
	"github.com/sandtray/sandtray/serve/socket"
)

// socketServer is a Server on fake, serving the real engine socket.
type socketServer struct {
	path    string
	fake    *fakeBackend
	started chan sandbox.Owner // callers of the blocking command
	stopped chan error         // how each blocking command ended
}

// serveSocket listens on a socket in a private temporary directory and
// serves every connection until cleanup, which waits for all of them.
func serveSocket(t *testing.T) *socketServer {
	t.Helper()
	// Not t.TempDir: a socket path must stay under ~100 bytes.
	dir, err := os.MkdirTemp("", "sandtray")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o700); err != nil { // socket.Listen insists on it
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.sock")
	ln, err := socket.Listen(path, socket.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ss := &socketServer{path: path, fake: newFake()}
	ss.fake.onProgress = sessionProgress
	ss.started, ss.stopped = make(chan sandbox.Owner, 64), make(chan error, 64)
	ss.fake.onExec = ss.exec
	srv := newServer(ss.fake, Options{})

	ctx, cancel := context.WithCancel(context.Background())
	var conns sync.WaitGroup
	conns.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				if err := srv.ServeConn(ctx, conn); err != nil {
					t.Errorf("ServeConn: %v", err)
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		cancel()
		conns.Wait()
	})
	return ss
}

// sessionProgress reports progress naming the session's client, so that a
// client can tell whether a notification was meant for it.
func sessionProgress(owner sandbox.Owner, p sandbox.Progress) {
	p(1, 2, "pulling for "+owner.Client)
	p(2, 2, "pulled for "+owner.Client)
}

// exec echoes the command and its caller, except "block", which waits until
// its context ends.
func (ss *socketServer) exec(ctx context.Context, owner sandbox.Owner, req sandbox.CommandRequest) sandbox.ExecOutcome {
	if req.Command != "block" {
		return sandbox.ExecOutcome{SandboxID: "sb", Result: sandbox.ExecResult{Stdout: req.Command + " for " + owner.Client}}
	}
	ss.started <- owner
	select {
	case <-ctx.Done():
		ss.stopped <- ctx.Err()
	case <-time.After(testTimeout):
		ss.stopped <- errors.New("the call's context was never cancelled")
	}
	return sandbox.ExecOutcome{}
}

func (ss *socketServer) dial(t *testing.T) net.Conn {
	t.Helper()
	conn, err := socket.Dial(testContext(t), ss.path)
	if err != nil {
		t.Fatalf("dial %s: %v", ss.path, err)
	}
	return conn
}

// runClient is one client's whole session, with its calls made
// concurrently; it reports the first thing that went wrong.
func runClient(ctx context.Context, c *socketClient) error {
	calls := []func() error{
		func() error {
			n, err := c.toolCount(ctx)
			if err == nil && n != len(allTools) {
				err = fmt.Errorf("tools/list returned %d tools, want %d", n, len(allTools))
			}
			return err
		},
		func() error {
			token := "progress-of-" + c.name
			got, err := c.create(ctx, token)
			want := []string{"pulling for " + c.name + " 1", "pulled for " + c.name + " 1"}
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("progress for %s: %q, want %q", token, got, want)
			}
			return err
		},
	}
	for i := range 3 {
		calls = append(calls, func() error {
			command := fmt.Sprintf("echo %s-%d", c.name, i)
			got, err := c.command(ctx, command)
			if want := command + " for " + c.name + " 1"; err == nil && got != want {
				err = fmt.Errorf("execute_command %q returned %q, want %q", command, got, want)
			}
			return err
		})
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TestConcurrentClientsOverTheSocketEachGetTheirOwnMessages(t *testing.T) {
	for _, n := range []int{2, 20} {
		t.Run(fmt.Sprintf("%d clients", n), func(t *testing.T) {
			ss := serveSocket(t)
			base := testwait.Now()
			goroutines, fds := base.Goroutines, base.Files

			// A client that disconnects mid-call, as a killed shim does.
			quitterConn := ss.dial(t)
			quitter := mcpGoSocketClient(t, quitterConn, "quitter")
			go quitter.command(testContext(t), "block")
			if owner := <-ss.started; owner.Client != "quitter 1" {
				t.Fatalf("blocking call came from %q", owner.Client)
			}

			clients := make([]*socketClient, n)
			for i := range clients {
				kind := clientKinds[i%len(clientKinds)]
				clients[i] = kind.connect(t, ss.dial(t), fmt.Sprintf("client-%d", i))
				if kind.protocol != "" && clients[i].protocol != kind.protocol {
					t.Errorf("%s client negotiated protocol %q", kind.name, clients[i].protocol)
				}
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, c := range clients {
				wg.Go(func() { errs[i] = runClient(testContext(t), c) })
			}
			quitterConn.Close()
			if err := <-ss.stopped; !errors.Is(err, context.Canceled) {
				t.Errorf("the disconnected client's call saw %v, want context.Canceled", err)
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("client-%d (%s, protocol %s): %v", i, clientKinds[i%len(clientKinds)].name, clients[i].protocol, err)
				}
			}

			quitter.close()
			for _, c := range clients {
				c.close()
			}
			settles(t, goroutines, fds)
		})
	}
}

// settles waits until the goroutines and file descriptors that clients and
// their sessions used are released, allowing for a couple of goroutines the
// runtime or the test framework start meanwhile.
func settles(t *testing.T, goroutines, fds int) {
	t.Helper()
	testwait.Baseline{Goroutines: goroutines, Files: fds}.Settle(t, testTimeout, 2)
}
