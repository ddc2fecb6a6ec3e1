package session

import (
	"os"
	"path/filepath"
	"testing"
)

// go mod download and go get record the checksum database's latest signed
// tree head in $GOPATH/pkg/sumdb (cmd/go's cfg.SumdbDir), beside the module
// cache, on nearly every download of a new module: without it a fresh
// home's first go mod download fails ("verifying go.mod: …/pkg/sumdb/
// sum.golang.org/latest: no such file or directory"), and so does an older
// home's. The line does what go does there: MkdirAll, then the file.
func TestConfinedWritesLetGoRecordTheChecksumDatabase(t *testing.T) {
	h, home, folder, _ := confinedSession(t, map[string]string{"go.mod": "module example.com/p\n\ngo 1.22\n"}, false)
	o := confinedRun(t, h, home, folder, "mkdir -p ~/go/pkg/sumdb/sum.golang.org && echo 'go.sum database tree' > ~/go/pkg/sumdb/sum.golang.org/latest")
	if o.ExitCode != 0 {
		t.Fatalf("go's checksum database record was refused under write confinement:\n%s", o.Text())
	}
	if _, err := os.Stat(filepath.Join(home, "go", "pkg", "sumdb", "sum.golang.org", "latest")); err != nil {
		t.Fatal(err)
	}
	// The rest of ~/go stays read-only: a command cannot put a program in
	// ~/go/bin, which is on many a person's PATH.
	o = confinedRun(t, h, home, folder, "mkdir -p ~/go/bin && echo x > ~/go/bin/gofmt")
	if _, err := os.Stat(filepath.Join(home, "go", "bin", "gofmt")); err == nil || o.ExitCode == 0 {
		t.Fatalf("a command wrote ~/go/bin under write confinement:\n%s", o.Text())
	}
}
