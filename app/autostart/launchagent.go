package autostart

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/sandtray/sandtray/internal/atomicfile"
)

// launchAgentLabel names the LaunchAgent; it is the app's bundle id.
const launchAgentLabel = "io.sandtray.app"

// launchAgent is ~/Library/LaunchAgents/io.sandtray.app.plist, which launchd
// loads at the next login and runs once (RunAtLoad), in the GUI session only.
type launchAgent struct{ path string }

// launchAgentPath is where the plist goes for the user whose home is home.
func launchAgentPath(home string) string {
	return filepath.Join(home, "Library", "LaunchAgents", launchAgentLabel+".plist")
}

func (l launchAgent) where() string { return l.path }

func (launchAgent) isAbs(p string) bool { return strings.HasPrefix(p, "/") }

func (l launchAgent) write(exe string) error {
	return atomicfile.Write(l.path, launchAgentPlist(exe), 0o644)
}

func (l launchAgent) remove() error {
	if err := os.Remove(l.path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

func (l launchAgent) read() (string, bool, error) {
	data, err := os.ReadFile(l.path)
	if err != nil {
		return "", false, err
	}
	exe, err := plistProgram(data)
	return exe, err == nil && exe != "", err
}

// launchAgentPlist is the plist that starts exe at login. KeepAlive is off:
// quitting from the tray means quit, not "restart me".
func launchAgentPlist(exe string) []byte {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	b.WriteString("\t<key>Label</key>\n\t<string>" + launchAgentLabel + "</string>\n")
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n\t\t<string>")
	xml.EscapeText(&b, []byte(exe))
	b.WriteString("</string>\n\t</array>\n")
	b.WriteString("\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>KeepAlive</key>\n\t<false/>\n")
	b.WriteString("\t<key>LimitLoadToSessionType</key>\n\t<string>Aqua</string>\n")
	b.WriteString("\t<key>ProcessType</key>\n\t<string>Interactive</string>\n")
	b.WriteString("</dict>\n</plist>\n")
	return b.Bytes()
}

// plistProgram reads the first ProgramArguments string of a plist.
func plistProgram(data []byte) (string, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false // the DOCTYPE is fine; we only walk elements
	var lastKey string
	inArgs := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			if end, ok := tok.(xml.EndElement); ok && end.Name.Local == "array" {
				inArgs = false
			}
			continue
		}
		switch start.Name.Local {
		case "key":
			var k string
			if err := dec.DecodeElement(&k, &start); err != nil {
				return "", err
			}
			lastKey = k
		case "array":
			inArgs = lastKey == "ProgramArguments"
		case "string":
			var s string
			if err := dec.DecodeElement(&s, &start); err != nil {
				return "", err
			}
			if inArgs {
				return s, nil
			}
		}
	}
}
