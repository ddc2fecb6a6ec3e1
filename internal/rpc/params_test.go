package rpc

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

type base struct {
	A string `json:"a,omitempty"`
	B int    `json:"b"`
}

type positive int

func (p *positive) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	if n <= 0 {
		return notPositive{}
	}
	*p = positive(n)
	return nil
}

type notPositive struct{}

func (notPositive) Error() string              { return "is not positive" }
func (notPositive) FixFor(param string) string { return "give " + param + " above 0" }

type withBase struct {
	ID string `json:"id"`
	base
	N    positive `json:"n"`
	_    int      // not a parameter: unexported
	Skip string   `json:"-"`
}

// The names a method knows are its struct's json names, an embedded
// struct's in its place, less the unlisted ones: no hand-written list.
func TestParamsAreTheStructsJSONNames(t *testing.T) {
	if got := Params(&withBase{}); !slices.Equal(got, []string{"id", "a", "b", "n"}) {
		t.Errorf("Params = %v", got)
	}
	if got := Params(withBase{}, "id"); !slices.Equal(got, []string{"a", "b", "n"}) {
		t.Errorf("Params less id = %v", got)
	}
	var p withBase
	err := DecodeParams(json.RawMessage(`{"a":"x","zz":1}`), &p, "id")
	var re *Error
	if !errors.As(err, &re) || re.Message != "unknown parameter zz" || !slices.Equal(re.Data["known"].([]string), []string{"a", "b", "n"}) {
		t.Fatalf("unknown zz: %#v", err)
	}
	// An unlisted name is still taken: its handler refuses it in its words.
	if err := DecodeParams(json.RawMessage(`{"id":"x","a":"y","n":2}`), &p, "id"); err != nil || p.ID != "x" || p.A != "y" || p.N != 2 {
		t.Fatalf("decoded %+v, %v", p, err)
	}
	if r := Required("b", &p, "id"); !slices.Equal(r.Data["known"].([]string), []string{"a", "b", "n"}) {
		t.Errorf("Required's known: %v", r.Data["known"])
	}
}

// A value a field's UnmarshalJSON refuses is named, with its fix.
func TestAValueItsFieldRefusesIsNamed(t *testing.T) {
	var p withBase
	err := DecodeParams(json.RawMessage(`{"a":"x","n":-1}`), &p)
	var re *Error
	if !errors.As(err, &re) || re.Code != CodeInvalidParams || re.Message != "n is not positive" || re.Data["param"] != "n" || re.Data["fix"] != "give n above 0" {
		t.Fatalf("n = -1: %#v", err)
	}
	err = DecodeParams(json.RawMessage(`{"n":"many"}`), &p)
	if !errors.As(err, &re) || re.Data["param"] != "n" || re.Message != "parameter n: string is not a number" {
		t.Fatalf(`n = "many": %#v`, err)
	}
	err = DecodeParams(json.RawMessage(`{"b":"x"}`), &p)
	if !errors.As(err, &re) || re.Data["param"] != "b" || re.Message != "parameter b: string is not a number" {
		t.Fatalf(`b = "x": %#v`, err)
	}
}
