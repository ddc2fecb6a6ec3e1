package session

import "testing"

// The judge's answer is its first word; anything but yes or no is neither.
func TestReadVerdict(t *testing.T) {
	for text, want := range map[string]struct {
		yes, ok bool
		reason  string
	}{
		"yes":                         {true, true, ""},
		"Yes. The task needs it.":     {true, true, "The task needs it."},
		"**No** — src is the code":    {false, true, "src is the code"},
		"no: use the test database":   {false, true, "use the test database"},
		"NO,\nit deletes the repo":    {false, true, "it deletes the repo"},
		"  yes\n\nbuild is generated": {true, true, "build is generated"},
		"Perhaps":                     {false, false, ""},
		"":                            {false, false, ""},
		"yesterday it was fine":       {false, false, ""},
		"I think yes":                 {false, false, ""},
		"nope":                        {false, false, ""},
	} {
		yes, reason, ok := readVerdict(text)
		if yes != want.yes || ok != want.ok || reason != want.reason {
			t.Errorf("%q: got %v %q %v, want %v %q %v", text, yes, reason, ok, want.yes, want.reason, want.ok)
		}
	}
}

func TestCapText(t *testing.T) {
	if got := capText("héllo", 2); got != "h…" {
		t.Errorf("capText cut inside a rune: %q", got)
	}
	if got := capText("abc", 5); got != "abc" {
		t.Errorf("capText changed a short text: %q", got)
	}
}
