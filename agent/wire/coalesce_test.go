package wire

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
)

// writeLog is a connection that records the size of every write.
type writeLog struct {
	net.Conn
	mu    sync.Mutex
	sizes []int
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.sizes = append(w.sizes, len(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

// A small data frame leaves as one write, header and body together (each
// write costs a trip through the runtime's stream), and a large one still
// arrives whole.
func TestASmallFrameIsOneWrite(t *testing.T) {
	a, b := net.Pipe()
	logged := &writeLog{Conn: a}
	client, err := Client(logged)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := Server(b)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	large := bytes.Repeat([]byte("x"), 300<<10)
	got := make(chan []byte, 1)
	go func() {
		st, err := server.AcceptStream()
		if err != nil {
			got <- nil
			return
		}
		data, _ := io.ReadAll(st)
		got <- data
	}()
	st, err := client.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	logged.mu.Lock()
	sizes := append([]int(nil), logged.sizes...)
	logged.mu.Unlock()
	if len(sizes) == 0 || sizes[len(sizes)-1] != yamuxHeaderLen+len("hello") {
		t.Errorf("writes after a 5-byte frame: %v; want the last to be header and body, %d bytes", sizes, yamuxHeaderLen+5)
	}
	if _, err := st.Write(large); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if data := <-got; !bytes.Equal(data, append([]byte("hello"), large...)) {
		t.Errorf("the server read %d bytes; want %d, in order", len(data), 5+len(large))
	}
}
