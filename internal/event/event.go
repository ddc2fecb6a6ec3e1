// Package event holds the types of a run's events: one struct per type,
// whose json names are the fields docs/events.md lists for it (a test in
// internal/cli holds the two equal). The session builds every event as one
// of these; the readers (the terminal's display, the trajectory, the
// daemon, 'nodwyn log') decode an event's data into the same type with
// Decode, so a field has one name and one Go type on both sides.
//
// An event's data travels as store.Event.Data, a map: Map makes it from a
// struct. The log line is that map's JSON, keys in sorted order, as it was
// when the writers built maps by hand. It imports nothing of nodwyn's, so
// store ('nodwyn log') can read events too.
package event

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Data is the data of one type of event.
type Data interface {
	// Type is the event's type, as docs/events.md names it ("run.start").
	Type() string
}

// Types are the zero values of every type, in docs/events.md's order.
func Types() []Data {
	return []Data{RunStart{}, Message{}, ModelRequest{}, ModelDelta{}, ModelReply{}, ModelAside{}, Compaction{},
		ToolCall{}, ToolDecision{}, Judge{}, ToolResult{}, NetConn{}, MCPServer{}, SelfValidation{}, Note{}, Error{}, RunEnd{}}
}

var byType = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, d := range Types() {
		m[d.Type()] = reflect.TypeOf(d)
	}
	return m
}()

// Decode reads an event's data as its type's struct (a value: RunStart,
// ToolResult …); an event of a type this package does not know (a
// daemon's confirm.ask, a later version's) is nil with no error. Numbers
// may be Go ints (an event built in this process) or float64 (one read
// back from JSON): either fills an int field. A field of the wrong JSON
// type (a log older than schema 1: docs/events.md, Changes) is left zero
// and reported in the error, the other fields decoded.
func Decode(typ string, data map[string]any) (Data, error) {
	t, ok := byType[typ]
	if !ok {
		return nil, nil
	}
	p := reflect.New(t)
	if len(data) > 0 {
		b, err := json.Marshal(data)
		if err != nil {
			return p.Elem().Interface().(Data), fmt.Errorf("event %s: %w", typ, err)
		}
		if err := json.Unmarshal(b, p.Interface()); err != nil {
			return p.Elem().Interface().(Data), fmt.Errorf("event %s: %w", typ, err)
		}
	}
	return p.Elem().Interface().(Data), nil
}

// Map is d's fields as store.Event.Data holds them: the json names as
// keys (an embedded struct's fields among its container's), a nested
// struct as a map of its own, a list of structs as []map[string]any, and
// the other values as they are (ints stay ints in this process). A field
// tagged omitempty is left out when it is "", a nil pointer, list or map
// (the event's "when" in docs/events.md); any other list or map that is
// nil is there empty ([] or {}), never null.
func Map(d Data) map[string]any {
	return structMap(reflect.ValueOf(d))
}

func structMap(v reflect.Value) map[string]any {
	m := map[string]any{}
	addFields(m, v)
	return m
}

func addFields(m map[string]any, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			addFields(m, fv)
			continue
		}
		name, omit := jsonName(f)
		if name == "" {
			continue
		}
		if omit && absent(fv) {
			continue
		}
		m[name] = value(fv)
	}
}

// jsonName is a field's json name and whether it is omitempty; "" for a
// field JSON leaves out.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" || !f.IsExported() {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, opts == "omitempty"
}

func absent(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return v.IsNil()
	}
	return false
}

func value(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return value(v.Elem())
	case reflect.Struct:
		return structMap(v)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			out := make([]map[string]any, v.Len())
			for i := range out {
				out[i] = structMap(v.Index(i))
			}
			return out
		}
		if v.IsNil() {
			return reflect.MakeSlice(v.Type(), 0, 0).Interface()
		}
	case reflect.Map:
		if v.IsNil() {
			return reflect.MakeMap(v.Type()).Interface()
		}
	}
	return v.Interface()
}
