package engine

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestTheEngineAPI pins the Engine's exported methods: its own and the
// parts' APIs it promotes (engine.go). A part's exported method that is the
// centre's to call (EgressUp, WarmPool, …) is not the Engine's; one that
// shows up here has leaked through an embedding. A change that means to
// change the API updates testdata/engine-api.golden with it.
func TestTheEngineAPI(t *testing.T) {
	ty := reflect.TypeFor[*Engine]()
	var got []string
	for i := range ty.NumMethod() {
		got = append(got, ty.Method(i).Name)
	}
	slices.Sort(got)
	raw, err := os.ReadFile("testdata/engine-api.golden")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(raw))
	for _, m := range got {
		if !slices.Contains(want, m) {
			t.Errorf("*Engine has a method %s that testdata/engine-api.golden does not list: a part's method leaked through its embedding, or a new API method to add there", m)
		}
	}
	for _, m := range want {
		if !slices.Contains(got, m) {
			t.Errorf("*Engine lacks %s, which testdata/engine-api.golden lists: a part's API lost it, or remove it there with the callers", m)
		}
	}
}
