package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

// The schema cache gives the same JSON a request's tools had without it,
// reuses a schema map's encoding while the next request lists the same
// map, and encodes a different map anew, even one in the same place.
func TestSchemaCache(t *testing.T) {
	a := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string", "description": "a <path> & more"}}}
	b := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	var c schemaCache
	first := c.encode([]Tool{{Name: "a", Parameters: a}, {Name: "none"}}, schemaOrEmpty)
	for i, m := range []map[string]any{a, schemaOrEmpty(nil)} {
		want, err := encodeBody(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(first[i].(json.RawMessage)); got != string(want) {
			t.Errorf("schema %d: %s, want %s", i, got, want)
		}
	}
	if !strings.Contains(string(first[0].(json.RawMessage)), "a <path> & more") {
		t.Errorf("the schema's JSON escapes HTML, as a request body does not: %s", first[0])
	}
	again := c.encode([]Tool{{Name: "a", Parameters: a}, {Name: "none"}}, schemaOrEmpty)
	if &again[0].(json.RawMessage)[0] != &first[0].(json.RawMessage)[0] {
		t.Error("the same map was encoded again")
	}
	// A new map in a's place, and a in another: each is its own.
	swapped := c.encode([]Tool{{Name: "b", Parameters: b}, {Name: "a", Parameters: a}}, schemaOrEmpty)
	if got := string(swapped[0].(json.RawMessage)); !strings.Contains(got, `"integer"`) {
		t.Errorf("a new map in the same place kept the old one's JSON: %s", got)
	}
	if got, want := string(swapped[1].(json.RawMessage)), string(first[0].(json.RawMessage)); got != want {
		t.Errorf("a's JSON in another place: %s, want %s", got, want)
	}
	// A request's whole body is the same with the cache as without.
	m := &Responses{}
	req := Request{Model: "m", Tools: []Tool{{Name: "a", Description: "d", Parameters: a}}}
	p1, _ := m.params(req, Compat{})
	p2, _ := m.params(req, Compat{})
	b1, _ := encodeBody(p1)
	b2, _ := encodeBody(p2)
	p1.Tools[0].Parameters = a
	b0, _ := encodeBody(p1)
	if string(b1) != string(b0) || string(b2) != string(b0) {
		t.Errorf("bodies differ:\n%s\n%s\n%s", b0, b1, b2)
	}
}
