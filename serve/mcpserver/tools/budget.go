package tools

import (
	"encoding/json"
	"unicode/utf8"
)

// replyBudget bounds each of a reply's two forms, its structured content
// and its text, in bytes as sent. What a sandbox printed or named is
// attacker-controlled: without a budget, twelve calls that printed 2 MiB
// each made one sandbox_logs reply of about 25 MB, over what clients accept
// on one line, and the client dropped the connection. Replies that can grow
// with the sandbox's contents page instead (sandbox_logs: skip; list_files:
// offset), and one item too big for a page alone is cut.
const replyBudget = 512 << 10

// itemOverhead approximates what the text form adds per item (labels,
// separators); jsonSize measures the structured form exactly.
const itemOverhead = 256

// jsonSize is v's size as encoding/json writes it, escapes included (a '<'
// becomes six bytes).
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// fitEntry cuts an activity entry's text fields, keeping the end of each
// output (where errors are) and the start of its input, until it fits in
// budget. It always returns an entry no larger than budget, with Cut set
// when it changed it.
func fitEntry(e activityEntry, budget int) activityEntry {
	if textSize(e) > budget { // cut by length first: marshalling megabytes to learn they are too big is slow
		quarter := budget / 4
		e.Input, e.Stdout = cutHead(e.Input, quarter), cutTail(e.Stdout, quarter)
		e.Stderr, e.Error = cutTail(e.Stderr, quarter), cutHead(e.Error, quarter)
		e.Cut = true
	}
	for jsonSize(e) > budget || textSize(e) > budget {
		longest := max(len(e.Input), len(e.Stdout), len(e.Stderr), len(e.Error))
		if longest == 0 {
			break
		}
		keep := longest / 2
		e.Input = cutHead(e.Input, keep)
		e.Stdout = cutTail(e.Stdout, keep)
		e.Stderr = cutTail(e.Stderr, keep)
		e.Error = cutHead(e.Error, keep)
		e.Cut = true
	}
	return e
}

// textSize approximates an entry's size in the text form.
func textSize(e activityEntry) int {
	return len(e.Input) + len(e.Stdout) + len(e.Stderr) + len(e.Error) + itemOverhead
}

// cutHead keeps at most n bytes of s from its start, on a rune boundary.
func cutHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cutTail keeps at most n bytes of s from its end, on a rune boundary.
func cutTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// pageEntries picks, from entries (oldest first), the newest ones after
// leaving out the skip newest, at most tail of them (0: no count limit),
// that fit in the budget together: at least one, cut to fit when it alone is
// too big. It returns them oldest first, with the skip to pass for the
// entries before them (0 when there are none).
func pageEntries(entries []activityEntry, skip, tail int) (page []activityEntry, nextSkip int) {
	end := max(len(entries)-skip, 0)
	lo := 0
	if tail > 0 {
		lo = max(end-tail, 0)
	}
	used, start := 0, end
	for start > lo {
		e := entries[start-1]
		size := textSize(e)
		if used+size <= replyBudget {
			size = max(size, jsonSize(e)) // escapes can make JSON longer than the text
		}
		if used+size > replyBudget {
			if start == end { // the first entry of the page: cut it to fit
				e = fitEntry(e, replyBudget)
				page = append(page, e)
				start--
			}
			break
		}
		used += size
		page = append(page, e)
		start--
	}
	// page is newest first; the reply is oldest first.
	for i, j := 0, len(page)-1; i < j; i, j = i+1, j-1 {
		page[i], page[j] = page[j], page[i]
	}
	if start > 0 {
		nextSkip = len(entries) - start
	}
	return page, nextSkip
}

// withNote is text followed by note, text cut (saying so) where both would
// not fit in the budget.
func withNote(text, note string) string {
	if len(text)+len(note) <= replyBudget {
		return text + note
	}
	const cut = "\n[cut: too long for one reply]"
	return cutHead(text, replyBudget-len(note)-len(cut)) + cut + note
}
