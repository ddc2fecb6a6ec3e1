package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestLockSessionNamesHolderAndDeadHolderIsInterrupted(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := "20261202-000000-abcdef"
	if err := s.SaveState(&SessionState{ID: id, Status: "running"}); err != nil {
		t.Fatal(err)
	}
	lk, err := s.LockSession(id)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.LockSession(id)
	if !errors.Is(err, ErrSessionHeld) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("second lock: %v, want ErrSessionHeld naming pid %d", err, os.Getpid())
	}
	if list, _ := s.ListSessions(); list[0].Status != "running" {
		t.Errorf("held session listed %q, want running", list[0].Status)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListSessions(); list[0].Status != "interrupted" {
		t.Errorf("unheld running session listed %q, want interrupted", list[0].Status)
	}
	lk2, err := s.LockSession(id)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	lk2.Unlock()
}
