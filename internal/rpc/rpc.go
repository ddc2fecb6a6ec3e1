// Package rpc is JSON-RPC 2.0 over a unix socket, one JSON message per
// line: the wire of `nodwyn daemon` (docs/rpc.md). It knows nothing of runs:
// a Server dispatches methods to handlers, a Client calls them and receives
// notifications.
//
// Only a peer of the server's own uid (or root) is served: the socket's
// directory is 0700 and the socket 0600, and each connection's credentials
// are checked with SO_PEERCRED as it is accepted, so a socket whose mode was
// loosened (or a directory shared by mistake) still serves nobody else. There
// is no TCP listener.
//
// rpc imports the standard library and golang.org/x/sys.
package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Version is the only JSON-RPC version spoken.
const Version = "2.0"

// MaxMessage is the longest line a peer may send (4 MiB): a longer one
// ends the connection with a parse error, before it is held in memory.
const MaxMessage = 4 << 20

// The JSON-RPC 2.0 error codes, and nodwyn's own (-32000 to -32099).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeNotFound     = -32001 // no run (or confirm) by that id
	CodeConflict     = -32002 // the run is not in a state for this (already ended, held by another)
	CodeRefused      = -32003 // the request asks for what nodwyn does not allow (e.g. a mode a flag must give)
	CodeShuttingDown = -32004 // the daemon is stopping
)

// message is any JSON-RPC message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID, Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object. Data says what to do, as an object:
// {"fix": "…"} at least, and what the code needs to be precise ("param",
// "known", "id").
type Error struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s (code %d)", e.Message, e.Code)
	if fix, ok := e.Data["fix"].(string); ok && fix != "" {
		s += "; " + fix
	}
	return s
}

// Errorf is an error with code and a fix for the data object.
func Errorf(code int, fix, format string, a ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, a...)}
	if fix != "" {
		e.Data = map[string]any{"fix": fix}
	}
	return e
}

// DecodeParams decodes a request's params (an object) into v, a pointer to
// a struct, refusing any parameter the struct does not have: a parameter
// not built is never ignored. The names a method knows are its struct's
// json names (Params lists them), less those unlisted names (a parameter
// the struct takes so that the handler refuses it with its own words); an
// error's data lists them as "known". A value a field's UnmarshalJSON
// refuses is named in the error, with the fix its error gives
// (FixFor(param string) string) if it has one.
func DecodeParams(raw json.RawMessage, v any, unlisted ...string) error {
	known := Params(v, unlisted...)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return &Error{Code: CodeInvalidParams, Message: "params must be an object (by name), not " + kindOf(raw),
			Data: map[string]any{"known": known, "fix": "send params as {\"name\": value, …}"}}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		data := map[string]any{"known": known}
		if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			data["param"] = name
			data["fix"] = "leave it out, or use one of: " + strings.Join(known, ", ")
			return &Error{Code: CodeInvalidParams, Message: "unknown parameter " + name, Data: data}
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" || strings.Contains(field, ".") { // a field's own UnmarshalJSON said it, or an embedded struct's path
				if p := paramOf(raw, v); p != "" {
					field = p
				}
			}
			data["param"] = field
			data["fix"] = "give " + field + " as " + jsonKind(te.Type.Kind().String())
			return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("parameter %s: %s is not %s", field, te.Value, jsonKind(te.Type.Kind().String())), Data: data}
		}
		var se *json.SyntaxError
		if name := paramOf(raw, v); name != "" && !errors.As(err, &se) {
			data["param"] = name
			data["fix"] = "give " + name + " as its documentation says"
			if f, ok := err.(interface{ FixFor(string) string }); ok {
				data["fix"] = f.FixFor(name)
			}
			return &Error{Code: CodeInvalidParams, Message: name + " " + msg, Data: data}
		}
		data["fix"] = "send one JSON object"
		return &Error{Code: CodeInvalidParams, Message: "params: " + msg, Data: data}
	}
	return nil
}

// Params are the names of the parameters v (a struct, or a pointer to
// one) takes, in its fields' order: their json names, an embedded
// struct's in its place; less unlisted.
func Params(v any, unlisted ...string) []string {
	var out []string
	for _, f := range paramFields(reflect.TypeOf(v)) {
		if !slices.Contains(unlisted, f.name) {
			out = append(out, f.name)
		}
	}
	return out
}

type paramField struct {
	name  string
	index []int
}

func paramFields(t reflect.Type) []paramField {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []paramField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			for _, sub := range paramFields(f.Type) {
				out = append(out, paramField{sub.name, append([]int{i}, sub.index...)})
			}
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, paramField{name, []int{i}})
	}
	return out
}

// paramOf is the parameter of raw whose value the field of v does not
// take, decoding them one at a time ("" when each does).
func paramOf(raw []byte, v any) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	t := reflect.TypeOf(v)
	for _, f := range paramFields(t) {
		val, ok := m[f.name]
		if !ok {
			continue
		}
		ft := t.Elem().FieldByIndex(f.index).Type
		if json.Unmarshal(val, reflect.New(ft).Interface()) != nil {
			return f.name
		}
	}
	return ""
}

// Required is an invalid-params error for a parameter that must be given;
// its data lists the parameters v takes (Params(v, unlisted...)).
func Required(name string, v any, unlisted ...string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "missing parameter " + name,
		Data: map[string]any{"param": name, "known": Params(v, unlisted...), "fix": "give " + name}}
}

func kindOf(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

func jsonKind(goKind string) string {
	switch {
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "true or false"
	case slices.Contains([]string{"int", "int64", "uint", "uint64", "float64", "int32"}, goKind):
		return "a number"
	case goKind == "slice":
		return "an array"
	}
	return "an object"
}
