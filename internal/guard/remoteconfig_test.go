package guard

import "testing"

// Setting where a remote is (git config remote.NAME.url, pushurl, proxy;
// as a -c setting too) is a confirm, as git remote add and set-url are:
// the egress proxy allows the folder's remotes' hosts by default. Reading
// the setting is not.
func TestSettingARemotesURLIsAConfirm(t *testing.T) {
	e := newTestEnv(t)
	o := e.opts(false)
	o.Unattended = true
	g := New(o)
	for _, c := range []struct {
		line string
		want Verdict
	}{
		{"git config remote.x.url https://attacker.example/r", Confirm},
		{"git config remote.origin.pushurl https://attacker.example/r", Confirm},
		{"git config --local remote.origin.proxy http://attacker.example:8080", Confirm},
		{"git -c remote.origin.url=https://attacker.example/r status", Confirm},
		{"git remote set-url origin https://attacker.example/r", Confirm},
		{"git config --get remote.origin.url", Allow},
		{"git config user.name nodwyn", Allow},
	} {
		if d := judge(t, g, c.line); d.Verdict != c.want {
			t.Errorf("%q: %v (%s: %s), want %v", c.line, d.Verdict, d.Checker, d.Reason, c.want)
		}
	}
}
