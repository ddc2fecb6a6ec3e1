package main

import (
	"path/filepath"
	"strconv"

	"github.com/nodwyn/nodwyn/internal/journal"
	"github.com/nodwyn/nodwyn/internal/store"
	"github.com/rogpeppe/go-internal/testscript"
)

// journalAppend appends N self_validation entries to a saved session's
// journal, signed with the journal key of $XDG_DATA_HOME/nodwyn (made when
// there is none), as a run's self-check does: journaladd SESSION N.
// SESSION is resolved as `nodwyn journal verify` resolves it ('last', an id).
func journalAppend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: journaladd SESSION N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("journaladd: %v", err)
	}
	data := filepath.Join(ts.Getenv("XDG_DATA_HOME"), "nodwyn")
	st, err := store.Open(data)
	ts.Check(err)
	id, err := st.ResolveID(args[0])
	ts.Check(err)
	key, err := journal.LoadOrCreateKey(data)
	ts.Check(err)
	j, err := journal.Open(st.JournalPath(id), id, key)
	ts.Check(err)
	defer j.Close()
	for i := 0; i < n; i++ {
		_, err := j.Append("self_validation", map[string]any{
			"cmd": "sh test.sh", "exit": i % 2, "summary": "exit " + strconv.Itoa(i%2) + ": ok " + strconv.Itoa(i),
			"workdir_hash": "sha256:0", "evidence_only": true, "verdict_unchanged": true,
		})
		ts.Check(err)
	}
}
