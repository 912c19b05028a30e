package runtime

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestCappedKeepsTheStart(t *testing.T) {
	c := NewCapped(8)
	for range 1000 {
		if n, err := c.Write([]byte("0123456789")); n != 10 || err != nil {
			t.Fatalf("Write = %d, %v: a capped writer takes every byte without failing", n, err)
		}
	}
	if c.String() != "01234567" || !c.Over() {
		t.Errorf("kept %q (over %v), want the first 8 bytes, over", c.String(), c.Over())
	}
	small := NewCapped(8)
	small.Write([]byte("abc"))
	if small.String() != "abc" || small.Over() {
		t.Errorf("kept %q (over %v), want all of it, not over", small.String(), small.Over())
	}
}

func TestStream(t *testing.T) {
	r := Stream(context.Background(), func(ctx context.Context, w io.Writer) error {
		io.WriteString(w, "archive")
		return errors.New("tar exit 2")
	})
	b, err := io.ReadAll(r)
	if string(b) != "archive" || err == nil || !strings.Contains(err.Error(), "tar exit 2") {
		t.Errorf("read %q, %v; want the output then the exec's error", b, err)
	}
	r.Close()

	// Closing early ends an exec that would write forever, and waits for it.
	ended := make(chan struct{})
	r = Stream(context.Background(), func(ctx context.Context, w io.Writer) error {
		defer close(ended)
		for ctx.Err() == nil {
			if _, err := w.Write(make([]byte, 1<<10)); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	io.ReadFull(r, make([]byte, 10))
	r.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Close returned while the exec still ran")
	}
}
