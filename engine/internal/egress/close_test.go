package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCloseWritesTheRecordsOfWhatItEnds: a tunnel still open when the gate
// closes is ended by Close, and its record is in the file when Close
// returns; nothing is written to the file after that (an engine's state
// dir may be removed or moved the moment its gate is closed).
func TestCloseWritesTheRecordsOfWhatItEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	tg := newTestGate(t, Options{Allow: []string{fmt.Sprintf("echo.test:%d", port)}}, map[string][]string{"echo.test": {"127.0.0.1"}})
	for range 3 {
		c := tg.conn("box1")
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		fmt.Fprintf(c, "CONNECT echo.test:%d HTTP/1.1\r\nHost: echo.test:%d\r\n\r\n", port, port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		io.WriteString(c, "ping")
		got := make([]byte, 4)
		if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
			t.Fatalf("echo: %q %v", got, err)
		}
	}
	tg.Close()
	file := tg.dir + "/egress.jsonl"
	b, _ := os.ReadFile(file)
	if n := strings.Count(string(b), `"host":"echo.test"`); n != 3 {
		t.Fatalf("%d of the 3 tunnels Close ended were in the record file when it returned:\n%s", n, b)
	}
	st, _ := os.Stat(file)
	time.Sleep(100 * time.Millisecond) // what a late writer would need
	if st2, _ := os.Stat(file); st2.Size() != st.Size() {
		t.Fatalf("the record file grew from %d to %d bytes after Close returned", st.Size(), st2.Size())
	}
}
