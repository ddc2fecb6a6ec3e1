package roles

import "testing"

func TestTheRolesAreKnownAndDistinct(t *testing.T) {
	seen := map[Role]bool{}
	for _, r := range All {
		if r == None || seen[r] || !r.Known() {
			t.Errorf("%q: none, given twice or not known", r)
		}
		seen[r] = true
	}
	if !None.Known() || Role("path").Known() || Role("Path-Read").Known() {
		t.Error("Known accepts a name that is no role, or refuses None")
	}
	for r, want := range map[Role]bool{PathRead: true, PathSearch: true, PathWrite: true, Command: false, Content: false, Pattern: false, None: false} {
		if r.IsPath() != want {
			t.Errorf("%q.IsPath() = %v", r, !want)
		}
	}
}
