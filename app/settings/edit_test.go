package settings

import "testing"

func TestSetKey(t *testing.T) {
	tests := []struct {
		name, doc, key, lit, want string
	}{
		{"in place, keeping the comment", "[limits]\nmemory_mb = 1  # mine\n", "limits.memory_mb", "2",
			"[limits]\nmemory_mb = 2  # mine\n"},
		{"a string with # and =", "default_image = \"a#b=c\" # x\n", "default_image", `"d"`,
			"default_image = \"d\" # x\n"},
		{"multi-line array with comments", "[host]\nallowed_roots = [\n  \"/a\", # one\n  \"/b]\",\n] # end\nx = 1\n",
			"host.allowed_roots", `["/c"]`, "[host]\nallowed_roots = [\"/c\"] # end\nx = 1\n"},
		{"same key in another table untouched", "[pool]\nsize = 1\n[limits]\nsize = 5\n", "limits.size", "6",
			"[pool]\nsize = 1\n[limits]\nsize = 6\n"},
		{"dotted key at the top", "limits.memory_mb = 5\n", "limits.memory_mb", "7", "limits.memory_mb = 7\n"},
		{"quoted key", "[limits]\n\"memory_mb\" = 5\n", "limits.memory_mb", "7", "[limits]\n\"memory_mb\" = 7\n"},
		{"new key under its table", "[limits]\ncpus = 1.0\n\n[pool]\nsize = 1\n", "limits.memory_mb", "9",
			"[limits]\nmemory_mb = 9\ncpus = 1.0\n\n[pool]\nsize = 1\n"},
		{"new top-level key above the tables", "# hi\n[limits]\ncpus = 1.0\n", "default_image", `"x"`,
			"# hi\ndefault_image = \"x\"\n[limits]\ncpus = 1.0\n"},
		{"new table, file without a final newline", "[limits]\ncpus = 1.0", "pool.size", "3",
			"[limits]\ncpus = 1.0\n\n[pool]\nsize = 3\n"},
		{"multi-line string before the key", "x = \"\"\"\nmemory_mb = 1\n\"\"\"\n[limits]\nmemory_mb = 1\n", "limits.memory_mb", "2",
			"x = \"\"\"\nmemory_mb = 1\n\"\"\"\n[limits]\nmemory_mb = 2\n"},
		{"array of tables is not the table", "[[limits]]\na = 1\n", "limits.memory_mb", "2",
			"[[limits]]\na = 1\n\n[limits]\nmemory_mb = 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := setKey(tt.doc, tt.key, tt.lit); got != tt.want {
				t.Errorf("setKey =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
