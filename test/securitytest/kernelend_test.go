package securitytest

import (
	"testing"
	"time"
)

// TestKernelRunEndIsNotForgeable: code that writes its own run's end-of-run
// line to the kernel's done descriptor (the run id is in SANDTRAY_EXEC)
// does not end the call: the call still ends at its timeout, and nothing of
// the code runs after the call returns (issue 11, item 5).
func TestKernelRunEndIsNotForgeable(t *testing.T) {
	e := newEnv(t)
	c := e.client
	id := c.sandbox(t, nil)
	forgers := map[string]string{
		"python": `import os, time
os.write(63, ("%s 0 -\n" % os.environ["SANDTRAY_EXEC"]).encode())
time.sleep(1)
open("/tmp/python-during", "w").write("x")
time.sleep(6)
open("/tmp/python-late", "w").write("x")
`,
		// bash keeps the done descriptor, closed for the run, on a saved
		// fd of its own: write the line to every descriptor it has.
		"bash": `for n in $(ls /proc/$$/fd); do [ "$n" -gt 2 ] && echo "$SANDTRAY_EXEC 0 -" >&$n; done 2>/dev/null
sleep 1; : > /tmp/bash-during; sleep 6; : > /tmp/bash-late`,
	}
	for lang, code := range forgers {
		t.Run(lang, func(t *testing.T) {
			start := time.Now()
			out := c.code(t, id, lang, code, 4)
			took := time.Since(start)
			if took < 3*time.Second || !out.timedOut {
				t.Errorf("the forged end-of-run line ended the call after %s (timed_out %v, exit %d): %s", took.Round(time.Millisecond), out.timedOut, out.code, out.text)
			}
			// A kernel runs one thing at a time: once it has run the next
			// call, the code no longer runs in it, and had the code run on
			// past the call it would have written its late file first.
			c.code(t, id, lang, map[string]string{"python": "pass", "bash": "true"}[lang], 30)
			check := c.command(t, id, "ls /tmp/"+lang+"-during /tmp/"+lang+"-late 2>/dev/null; true", 10)
			if check.stdout != "/tmp/"+lang+"-during\n" {
				t.Errorf("the code ran on after its call returned: %s", check.stdout)
			}
			c.stillServes(t, id)
		})
	}
}
