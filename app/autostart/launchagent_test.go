package autostart

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLaunchAgentWritten(t *testing.T) {
	home := t.TempDir()
	a := &Autostart{s: launchAgent{path: launchAgentPath(home)}}
	exe := "/Applications/Sandtray & Co.app/Contents/MacOS/sandtray"
	st, err := a.Enable(exe)
	if err != nil || !st.Enabled || st.Command != exe {
		t.Fatalf("Enable = %+v, %v", st, err)
	}
	path := filepath.Join(home, "Library", "LaunchAgents", "io.sandtray.app.plist")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Well-formed XML whose keys launchd reads.
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	dec.Strict = true
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("plist is not well-formed XML: %v\n%s", err, data)
			}
			break
		}
	}
	for _, want := range []string{
		"<key>Label</key>\n\t<string>io.sandtray.app</string>",
		"<string>/Applications/Sandtray &amp; Co.app/Contents/MacOS/sandtray</string>",
		"<key>RunAtLoad</key>\n\t<true/>",
		"<key>KeepAlive</key>\n\t<false/>",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("plist lacks %q:\n%s", want, data)
		}
	}
	if st, err := a.Disable(); err != nil || st.Enabled {
		t.Fatalf("Disable = %+v, %v", st, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("plist still there: %v", err)
	}
}
