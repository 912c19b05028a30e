package imagebuild

import (
	"fmt"
	"slices"
	"strings"
)

// Selection is what goes into the image: Base is every package of Priority
// required or marked Essential with what they depend on (the system dpkg
// needs to run, unpacked in the first stage), Rest the wanted packages and
// their dependencies beyond Base. Each is in a stable order.
type Selection struct {
	Base []*Package
	Rest []*Package
}

// All is Base then Rest.
func (s Selection) All() []*Package { return append(slices.Clone(s.Base), s.Rest...) }

// Resolve picks the packages for an image with the wanted ones: the closure
// of Depends and Pre-Depends (not Recommends, as apt-get
// --no-install-recommends). Of a clause's alternatives, one already picked
// wins, else the first the index has, else the first package that provides
// it. A wanted name or a dependency the index lacks is an error naming it.
func Resolve(ix *Index, wanted []string) (Selection, error) {
	r := &resolver{ix: ix, picked: map[string]bool{}, provided: map[string]bool{}}
	var base []string
	for name, p := range ix.byName {
		if p.Priority == "required" || p.Essential {
			base = append(base, name)
		}
	}
	slices.Sort(base)
	if len(base) == 0 {
		return Selection{}, fmt.Errorf("the index has no package of Priority required: is it a Debian mirror's main component?")
	}
	baseSet, err := r.closure(base)
	if err != nil {
		return Selection{}, err
	}
	var missing []string
	for _, w := range wanted {
		if _, ok := ix.byName[w]; !ok {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		return Selection{}, fmt.Errorf("the mirror has no package %s", strings.Join(missing, ", "))
	}
	rest, err := r.closure(wanted)
	if err != nil {
		return Selection{}, err
	}
	return Selection{Base: r.packages(baseSet), Rest: r.packages(rest)}, nil
}

// avoided are alternatives taken only when nothing else serves: usrmerge
// converts a system to a merged /usr (and needs perl for it), which the
// builder's root filesystem already is; usr-is-merged says so.
var avoided = map[string]bool{"usrmerge": true}

type resolver struct {
	ix       *Index
	picked   map[string]bool // real names picked so far
	provided map[string]bool // virtual names a picked package provides
}

// closure picks names and what they need, returning the names it picked
// that were not picked before, in the order picked.
func (r *resolver) closure(names []string) ([]string, error) {
	var added, queue []string
	pick := func(name string) {
		if r.picked[name] {
			return
		}
		r.picked[name] = true
		for _, v := range r.ix.byName[name].Provides {
			r.provided[v] = true
		}
		added = append(added, name)
		queue = append(queue, name)
	}
	for _, n := range names {
		pick(n)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		p := r.ix.byName[name]
		for _, clause := range append(slices.Clone(p.PreDepends), p.Depends...) {
			choice, err := r.choose(clause)
			if err != nil {
				return nil, fmt.Errorf("package %s: %w", name, err)
			}
			if choice != "" {
				pick(choice)
			}
		}
	}
	return added, nil
}

// choose returns the package to pick for a clause, or "" when one already
// picked satisfies it.
func (r *resolver) choose(clause []dep) (string, error) {
	for _, d := range clause {
		if r.picked[d.name] || r.provided[d.name] {
			return "", nil
		}
	}
	for _, d := range clause {
		if _, ok := r.ix.byName[d.name]; ok && !(avoided[d.name] && len(clause) > 1) {
			return d.name, nil
		}
	}
	for _, d := range clause {
		if _, ok := r.ix.byName[d.name]; ok {
			return d.name, nil
		}
	}
	for _, d := range clause {
		if ps := r.ix.providers[d.name]; len(ps) > 0 {
			return ps[0], nil
		}
	}
	names := make([]string, len(clause))
	for i, d := range clause {
		names[i] = d.name
	}
	return "", fmt.Errorf("needs %s, which the mirror does not have", strings.Join(names, " or "))
}

func (r *resolver) packages(names []string) []*Package {
	out := make([]*Package, len(names))
	for i, n := range names {
		out[i] = r.ix.byName[n]
	}
	return out
}
