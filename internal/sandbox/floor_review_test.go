package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests from a review that attacked the floor's reuse of its ruleset
// (Floor.fresh) and its build; each leaked a canary before its fix.

// A directory the ruleset grants whole, bind-mounted onto a denied path
// that was there at the build (by something outside the floor: a mount
// changes no directory's times), is seen by the next command's look at the
// denied path, and denied.
func TestFloorSeesAMountOntoADeniedPath(t *testing.T) {
	needFloor(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	h, quiet := quietCanaryHome(t)
	aws := filepath.Join(h.home, ".aws")
	spare := filepath.Join(h.home, "spare") // an entry of the home: granted whole
	if err := os.Mkdir(spare, 0o700); err != nil {
		t.Fatal(err)
	}
	sb := h.host(t, true)
	f := sb.Floor()
	builds := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.builds }
	untilTrusted(filepath.Dir(quiet), quiet, h.home)
	h.run(t, sb, `true`)
	n := builds()
	h.run(t, sb, `true`)
	if builds() != n {
		t.Fatalf("built again with nothing changed")
	}
	if err := unix.Mount(spare, aws, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(aws, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(aws, "credentials"), []byte(canary+" new aws key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"~/.aws/credentials", "~/spare/credentials"} {
		if o := h.run(t, sb, `cat `+p); o.ExitCode == 0 || h.leaked(t, o) {
			t.Errorf("cat %s: readable after a mount onto ~/.aws:\n%s", p, o.Text())
		}
	}
}

// secondHome is a directory the ruleset grants whole (beside the home, as
// /root beside $HOME) with a denied path in it that is not there yet,
// .config/gcloud, which h then denies; with config, its .config is there.
func secondHome(t *testing.T, h *canaryHome, quiet string, config bool) (other, deep string) {
	t.Helper()
	other = filepath.Join(quiet, "other")
	if config {
		os.MkdirAll(filepath.Join(other, ".config"), 0o755)
	} else {
		os.MkdirAll(other, 0o755)
	}
	deep = filepath.Join(other, ".config", "gcloud")
	h.deny = append(h.deny, deep)
	return other, deep
}

// A denied path made where the ruleset grants the whole directory (a second
// home), with the times put back as they were (what one who may set the
// clock can do), is still seen: only an ancestor's stamp, whose rules
// grant nothing made since, stands for a look at the path. The forgery is
// simulated: every stamp the ruleset keeps is made the one its directory
// has now, and old enough to trust.
func TestFloorDoesNotTrustTheStampOfADirectoryGrantedWhole(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	other, deep := secondHome(t, h, quiet, false)
	sb := h.host(t, true)
	f := sb.Floor()
	untilTrusted(filepath.Dir(quiet), quiet, h.home, other)
	h.run(t, sb, `true`)
	if o := h.run(t, sb, `mkdir -p `+deep); o.ExitCode != 0 {
		t.Fatal(o.Text())
	}
	f.mu.Lock()
	for a := range f.last.stamps {
		f.last.stamps[a], _ = stampOf(a)
	}
	f.last.began = time.Now().Add(time.Minute)
	stale := f.fresh(f.last)
	f.mu.Unlock()
	if stale {
		t.Error("the ruleset was kept though a denied path was made where it grants everything")
	}
	if err := os.WriteFile(filepath.Join(deep, "credentials.db"), []byte(canary+" gcloud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o := h.run(t, sb, `cat `+filepath.Join(deep, "credentials.db")); o.ExitCode == 0 || h.leaked(t, o) {
		t.Errorf("readable:\n%s", o.Text())
	}
}

// A link a command makes on the way to a denied path that is not there
// yet, in a directory granted whole, leads what is later written there
// elsewhere: the build denies where the path really is.
func TestFloorDeniesWhereALinkOnTheWayLeads(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	other, deep := secondHome(t, h, quiet, false)
	sb := h.host(t, true)
	if o := h.run(t, sb, `mkdir `+other+`/stash && ln -s stash `+other+`/.config`); o.ExitCode != 0 {
		t.Fatal(o.Text())
	}
	// the person's gcloud auth login: mkdir -p ~/.config/gcloud, and a key
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "credentials.db"), []byte(canary+" gcloud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "stash", "notes"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(deep, "credentials.db"), filepath.Join(other, "stash", "gcloud", "credentials.db")} {
		if o := h.run(t, sb, `cat `+p); o.ExitCode == 0 || h.leaked(t, o) {
			t.Errorf("cat %s: readable:\n%s", p, o.Text())
		}
	}
	if o := h.run(t, sb, `echo more >> `+other+`/stash/notes && cat `+other+`/stash/notes`); o.ExitCode != 0 {
		t.Errorf("what else is in the directory the link leads to is not granted:\n%s", o.Text())
	}
}

// A denied path a command makes a link (to a directory beside it) is
// denied where it leads.
func TestFloorDeniesWhereADeniedLinkLeads(t *testing.T) {
	needFloor(t)
	h, quiet := quietCanaryHome(t)
	other, deep := secondHome(t, h, quiet, true)
	sb := h.host(t, true)
	if o := h.run(t, sb, `mkdir `+other+`/.config/stash && ln -s stash `+deep); o.ExitCode != 0 {
		t.Fatal(o.Text())
	}
	if err := os.WriteFile(filepath.Join(deep, "credentials.db"), []byte(canary+" gcloud\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(deep, "credentials.db"), filepath.Join(other, ".config", "stash", "credentials.db")} {
		if o := h.run(t, sb, `cat `+p); o.ExitCode == 0 || h.leaked(t, o) {
			t.Errorf("cat %s: readable:\n%s", p, o.Text())
		}
	}
}
