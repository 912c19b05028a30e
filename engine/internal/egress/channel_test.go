package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// localOpener runs the channel's programs on this machine, as the engine
// runs them in a sandbox with Docker execs.
type localOpener struct {
	mu    sync.Mutex
	procs []*exec.Cmd
}

type procStream struct {
	cmd *exec.Cmd
	io.Reader
	stdin io.WriteCloser
	once  sync.Once
}

func (p *procStream) Write(b []byte) (int, error) { return p.stdin.Write(b) }
func (p *procStream) CloseWrite() error           { return p.stdin.Close() }
func (p *procStream) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return nil
}

func (o *localOpener) Open(_ context.Context, cmd []string) (Stream, error) {
	name := cmd[0]
	if _, err := os.Stat("/usr/bin/" + name); err == nil {
		name = "/usr/bin/" + name // not a slow shim (pyenv's) earlier on PATH
	}
	c := exec.Command(name, cmd[1:]...)
	stdin, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.procs = append(o.procs, c)
	o.mu.Unlock()
	return &procStream{cmd: c, Reader: stdout, stdin: stdin}, nil
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestChannelCarriesConnectionsToTheGate(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this machine")
	}
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}, Deny: []string{"example.com"}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	proxyPort := freePort(t)
	ch, err := tg.StartChannel(t.Context(), "box1", &localOpener{}, proxyPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	proxy := mustURL(fmt.Sprintf("http://127.0.0.1:%d", proxyPort))
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), DisableKeepAlives: true}, Timeout: 20 * time.Second}
	// More connections at once than spare relays: the burst starts more.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			resp, err := client.Get(fmt.Sprintf("http://mirror.test:%d/%d", port, i))
			if err != nil {
				errs <- err
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(string(body), fmt.Sprintf("hello from /%d", i)) {
				errs <- fmt.Errorf("got %q", body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	resp, err := client.Get("http://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "example.com:80 is denied") {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

func TestChannelNeedsPython(t *testing.T) {
	tg := newTestGate(t, Options{}, nil)
	_, err := tg.StartChannel(t.Context(), "box1", noPython{}, freePort(t))
	if !errors.Is(err, ErrNoPython) {
		t.Fatalf("got %v", err)
	}
}

// noPython is an image without python3: the exec starts and ends at once.
type noPython struct{}

func (noPython) Open(context.Context, []string) (Stream, error) {
	a, b := net.Pipe()
	b.Close()
	return pipeStream{a}, nil
}

func TestChannelListenerStartsAgain(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 on this machine")
	}
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	o := &localOpener{}
	proxyPort := freePort(t)
	ch, err := tg.StartChannel(t.Context(), "box1", o, proxyPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	o.mu.Lock()
	o.procs[0].Process.Kill() // the listener
	o.mu.Unlock()
	get := func() error {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", proxyPort), time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET http://mirror.test:%d/again HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	deadline := time.Now().Add(15 * time.Second)
	for err := get(); err != nil; err = get() {
		if time.Now().After(deadline) {
			t.Fatalf("no connection through the channel after its listener died: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
