package doctor

import (
	"fmt"

	"github.com/sandtray/sandtray/app/install"
)

// clientLine is one MCP client's line: the app is not found, Sandtray is not
// connected to it (and how to connect it), or it is, and whether the
// entry's command exists.
func clientLine(st install.State) Line {
	const topic = "client"
	connect := "`sandtray install " + st.Client + "`"
	switch {
	case st.Err != nil:
		return Line{Warn, topic, fmt.Sprintf("%s: its config cannot be read: %v", st.App, st.Err), "`sandtray install " + st.Client + " --print` and add the entry by hand"}
	case st.Connected && st.Command != "" && !executable(st.Command):
		return Line{Fail, topic, fmt.Sprintf("%s: Sandtray's entry runs %s, which does not exist", st.App, st.Command), connect}
	case st.Connected:
		return Line{OK, topic, st.App + ": connected", ""}
	case st.Installed:
		return Line{Info, topic, st.App + ": not connected — run " + connect, ""}
	}
	return Line{Info, topic, st.App + ": app not found", ""}
}
