package ui

import (
	"cmp"
	"strings"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// The list's sort: by any column, either way; the newest first by default.

// defaultSort is the list's order until a header is clicked: Age, newest
// first.
const defaultSort = "Age"

// sortBy makes column the sort key, or turns the order round when it
// already is.
func (m *model) sortBy(column string) {
	if m.sortCol == column {
		m.sortDesc = !m.sortDesc
	} else {
		m.sortCol, m.sortDesc = column, false
	}
	m.refilter()
}

// less orders a before b by the sort column, then by name and id, so the
// order is stable across snapshots.
func (m *model) compare(a, b sandbox.Info) int {
	c := compareBy(m.sortColumn(), a, b)
	if m.sortDesc {
		c = -c
	}
	if c == 0 {
		c = cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	}
	return c
}

func (m *model) sortColumn() string { return cmp.Or(m.sortCol, defaultSort) }

// compareBy compares two sandboxes by a column of the list, ascending as a
// person reads it: Age from the newest, sizes from the smallest.
func compareBy(column string, a, b sandbox.Info) int {
	switch column {
	case "Name":
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	case "Image":
		return strings.Compare(a.Image, b.Image)
	case "Status":
		return strings.Compare(StatusText(a.Status), StatusText(b.Status))
	case "Owner":
		return strings.Compare(strings.ToLower(OwnerName(a.Owner)), strings.ToLower(OwnerName(b.Owner)))
	case "Lifetime":
		return cmp.Compare(boolInt(a.Persistent), boolInt(b.Persistent))
	case "Age":
		return b.CreatedAt.Compare(a.CreatedAt) // the newest first
	case "CPU":
		return cmp.Compare(a.Stats.CPUPercent, b.Stats.CPUPercent)
	case "Memory":
		return cmp.Compare(a.Stats.MemoryBytes, b.Stats.MemoryBytes)
	case "Ports":
		return cmp.Compare(firstPort(a), firstPort(b))
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstPort is the lowest sandbox port a sandbox forwards, or a large
// number for none, so those without come last.
func firstPort(info sandbox.Info) int {
	low := 1 << 20
	for _, p := range info.Ports {
		low = min(low, p.Port)
	}
	return low
}

// SortMark is the header's text for a column: an arrow on the sort column.
func SortMark(title, sortCol string, desc bool) string {
	if title != sortCol {
		return title
	}
	if desc {
		return title + " ▼"
	}
	return title + " ▲"
}

// OwnerName is the owner as the list shows it: the client's name without
// its version ("Claude Code" for "Claude Code 2.0.14"), else the session.
func OwnerName(o sandbox.Owner) string {
	name := strings.TrimSpace(o.Client)
	if i := strings.LastIndexByte(name, ' '); i > 0 {
		if v := name[i+1:]; v != "" && (v[0] >= '0' && v[0] <= '9' || v[0] == 'v' && len(v) > 1 && v[1] >= '0' && v[1] <= '9') {
			name = strings.TrimSpace(name[:i])
		}
	}
	switch {
	case name != "":
		return name
	case o.Session != "":
		return "session " + ShortID(o.Session)
	}
	return placeholder
}

// PortsText is the list's Ports cell: the first forward's URL, and how many
// more there are.
func PortsText(ports []sandbox.PortForward) string {
	switch len(ports) {
	case 0:
		return placeholder
	case 1:
		return ports[0].URL
	}
	return ports[0].URL + " (+" + itoa(len(ports)-1) + ")"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
