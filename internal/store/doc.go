// Package store keeps nodwyn's sessions on disk, under the data directory
// ($XDG_DATA_HOME/nodwyn):
//
//	sessions/<id>/state.json    the session's state, for resume (SaveState, LoadState, ListSessions)
//	sessions/<id>/state-more.jsonl  while it runs, the saves that only added to it (StateWriter)
//	sessions/<id>/events.jsonl  its event log, written as it happens (OpenLog, ReadLog, RenderLog)
//	sessions/<id>/journal.jsonl its signed journal of self-validations (JournalPath; package journal)
//	versions/index.jsonl        what file tools overwrote: one entry per backup (Backup, Versions, Restore)
//	versions/blobs/<sha256>     the old contents, by content
//	journal/key                 the ed25519 key that signs the journals (package journal, not the store)
//
// Directories are made mode 0700 and files 0600.
//
// It also makes and sweeps the sessions' scratch directories, which live in
// the system's temporary directory, not here (MakeScratch, TouchScratch,
// RemoveScratch, SweepScratch; ADR 0028 as amended 2026-10-16).
package store
