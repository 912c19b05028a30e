package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// localAgent listens on this machine, as a sandbox's agent listens on
// the sandbox's loopback, and hands each connection on. Each session it
// gives can be ended (a dead agent) with end.
type localAgent struct {
	mu      sync.Mutex
	started int // sessions given
	current *localSession
}

type localSession struct {
	done chan struct{}
	once sync.Once
}

func (s *localSession) Done() <-chan struct{} { return s.done }

func (s *localSession) end() { s.once.Do(func() { close(s.done) }) }

func (s *localSession) Listen(_ context.Context, port int, _ string, h func(net.Conn)) (func(), error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go h(c)
		}
	}()
	return func() { l.Close() }, nil
}

// sessions is the Sessions of the local agent: a live session, or a new one.
func (a *localAgent) sessions(context.Context) (Agent, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.current != nil {
		select {
		case <-a.current.done:
		default:
			return a.current, nil
		}
	}
	a.started++
	a.current = &localSession{done: make(chan struct{})}
	return a.current, nil
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
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}, Deny: []string{"example.com"}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	proxyPort := freePort(t)
	a := &localAgent{}
	ch, err := tg.StartChannel(t.Context(), "box1", a.sessions, proxyPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	proxy := mustURL(fmt.Sprintf("http://127.0.0.1:%d", proxyPort))
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), DisableKeepAlives: true}, Timeout: 20 * time.Second}
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

// TestChannelListenerStartsAgain: when the session the channel listens on
// ends (the agent died), it listens again on the next one.
func TestChannelListenerStartsAgain(t *testing.T) {
	_, port := upstream(t)
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("mirror.test:%d", port)}}, map[string][]string{"mirror.test": {"127.0.0.1"}})
	a := &localAgent{}
	proxyPort := freePort(t)
	ch, err := tg.StartChannel(t.Context(), "box1", a.sessions, proxyPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	a.mu.Lock()
	a.current.end() // the agent died
	a.mu.Unlock()
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
	relistened := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.started == 2
	}
	deadline := time.Now().Add(15 * time.Second)
	for !relistened() {
		if time.Now().After(deadline) {
			t.Fatal("the channel did not listen again on a new session after its agent's ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for err := get(); err != nil; err = get() {
		if time.Now().After(deadline) {
			t.Fatalf("no connection through the channel after its listener died: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
