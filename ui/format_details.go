package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sandtray/sandtray/engine/sandbox"
)

// TimeText renders a moment in local time with how long ago it was.
func TimeText(now, t time.Time) string {
	if t.IsZero() {
		return placeholder
	}
	return t.Local().Format("2006-01-02 15:04:05") + " (" + FormatAge(now, t) + " ago)"
}

// InfoRows is what the Details tab shows for a sandbox, by row name.
func InfoRows(info sandbox.Info, now time.Time, dockerHost string) map[string]string {
	lifetime := "Ephemeral: removed after its session ends or it idles"
	if info.Persistent {
		lifetime = "Persistent: kept until you delete it"
	}
	workdir := info.Spec.Workdir
	if workdir == "" {
		workdir = placeholder
	}
	return map[string]string{
		"Image":     info.Image,
		"ID":        info.ID,
		"Created":   TimeText(now, info.CreatedAt),
		"Last used": TimeText(now, info.LastUsed),
		"Owner":     OwnerText(info.Owner),
		"Lifetime":  lifetime,
		"Network":   NetworkText(info.Spec.Network),
		"Security":  SecurityText(info.Spec),
		"Limits":    LimitsText(info.Spec),
		"Workdir":   workdir,
		"Labels":    LabelsText(SandboxLabels(info)),
		"Terminal":  ExecCommand(info, dockerHost),
	}
}

// SandboxLabels are the Docker labels the engine puts on every sandbox it
// creates, less the create spec, whose content the other rows show.
func SandboxLabels(info sandbox.Info) map[string]string {
	labels := map[string]string{
		sandbox.LabelManaged: "true",
		sandbox.LabelName:    info.Name,
		sandbox.LabelImage:   info.Spec.Image,
	}
	if info.Spec.Image == "" {
		labels[sandbox.LabelImage] = info.Image
	}
	if !info.CreatedAt.IsZero() {
		labels[sandbox.LabelCreated] = info.CreatedAt.UTC().Format(time.RFC3339)
	}
	return labels
}

// LabelsText renders labels as sorted key=value lines.
func LabelsText(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + labels[k]
	}
	return strings.Join(lines, "\n")
}

// PidsText counts a sandbox's processes against its limit.
func PidsText(info sandbox.Info) string {
	if info.Status != sandbox.StatusRunning {
		return "none (not running)"
	}
	if info.Spec.PidsLimit > 0 {
		return fmt.Sprintf("%d of at most %d", info.Stats.Pids, info.Spec.PidsLimit)
	}
	return fmt.Sprint(info.Stats.Pids)
}

// SavedText says what a save to the host copied, and where.
func SavedText(r sandbox.CopyResult) string {
	files := "1 file"
	if r.Files != 1 {
		files = fmt.Sprintf("%d files", r.Files)
	}
	text := fmt.Sprintf("Saved %s (%s) to %s.", files, FormatBytes(uint64(max(0, r.Bytes))), r.Path)
	if n := len(r.Skipped); n > 0 {
		text += fmt.Sprintf(" Skipped %d (symlinks or special files).", n)
	}
	return text
}

// ExportText says where a Dockerfile export was written.
func ExportText(e sandbox.Export) string {
	if len(e.Files) == 0 {
		return "Saved the Dockerfile to " + e.Dir + "."
	}
	return fmt.Sprintf("Saved the Dockerfile and %d context files to %s.", len(e.Files), e.Dir)
}
