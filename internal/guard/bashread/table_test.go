package bashread

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestEveryProgramInTheTableIsInBothSuites: what the table says of a
// program is shown by at least one line of legit.txt and one of exfil.txt
// that run it (or a program that shares its spec: the awks, the plain
// wrappers).
func TestEveryProgramInTheTableIsInBothSuites(t *testing.T) {
	runs := func(name string) func(string) bool {
		// The guard's suites (../testdata), which judge these lines.
		b, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		return func(prog string) bool {
			re := regexp.MustCompile(`(?:^|[\s;|&({` + "`" + `/↵])` + regexp.QuoteMeta(prog) + `(?:$|[\s;|&)}↵])`)
			return slices.ContainsFunc(lines, re.MatchString)
		}
	}
	legit, exfil := runs("legit.txt"), runs("exfil.txt")
	bySpec := map[*cmdSpec][]string{}
	for name, sp := range progTable() {
		bySpec[sp] = append(bySpec[sp], name)
	}
	var missing []string
	for _, names := range bySpec {
		sort.Strings(names)
		if !slices.ContainsFunc(names, legit) {
			missing = append(missing, "legit.txt: "+strings.Join(names, " "))
		}
		if !slices.ContainsFunc(names, exfil) {
			missing = append(missing, "exfil.txt: "+strings.Join(names, " "))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("no line runs %s", m)
	}
}

// TestTheBuiltinsAreNotInTheTable: a name the shell's builtins judge is
// never reached in the table.
func TestTheBuiltinsAreNotInTheTable(t *testing.T) {
	an := (&Reader{Folder: t.TempDir()}).NewReading("", time.Now().Add(time.Minute), nopJudge{}, -1)
	for name := range progTable() {
		if _, ok := an.builtin(name, []string{"x"}, "", false); ok {
			t.Errorf("%s is a builtin and a table entry", name)
		}
	}
}

func TestSecretPrinters(t *testing.T) {
	for line, want := range map[string]bool{
		"kubectl config view --raw":                 true,
		"kubectl config view --raw=true":            true,
		"oc config view --flatten":                  true,
		"kubectl config view":                       false,
		"gcloud config config-helper --format=json": true,
		"gcloud config list":                        false,
		"az account get-access-token":               true,
		"security find-internet-password -s x -g":   true,
		"security find-generic-password -s x":       false,
		"aws configure get region":                  true,
		"aws s3 ls":                                 false,
		"gpg --export-secret-keys":                  true,
		"gpg --list-keys":                           false,
		"ssh-add -l":                                true,
		"git credential fill":                       true,
		"git credential-cache exit":                 false,
		"ps eww":                                    true,
		"ps aux":                                    false,
		"gcore 1234":                                true,
		"gdb ./app":                                 false,
	} {
		f := strings.Fields(line)
		if got := credentialPrinter(f[0], f[1:]) != ""; got != want {
			t.Errorf("%q: %v, want %v", line, got, want)
		}
	}
}

// nopJudge is told everything and judges nothing.
type nopJudge struct{}

func (nopJudge) Path(*Reading, string, string, Use)           {}
func (nopJudge) Glob(*Reading, string, string, []string) bool { return false }
func (nopJudge) Partial(*Reading, string)                     {}
func (nopJudge) Code(*Reading, string, bool)                  {}
func (nopJudge) Act(*Reading, Act)                            {}
func (nopJudge) Script(_ *Reading, _ string, read func())     { read() }
func (nopJudge) Readable(*Reading, string) bool               { return true }
