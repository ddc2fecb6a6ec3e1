package mcp

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Role is what an argument of an MCP tool names, for the guard: a path is
// judged by its rules for paths, a URL by its rules for hosts.
type Role string

const (
	RolePath Role = "path"
	RoleURL  Role = "url"
)

// ArgRole is one argument that a tool's input schema marks as a path or a
// URL. Why says what marked it: "format uri", "name", "description".
// Array is set when the argument is an array of such strings (each element
// is to be judged).
type ArgRole struct {
	Name  string
	Role  Role
	Why   string
	Array bool
}

// The formats JSON Schema gives a URL; a path has none.
var urlFormats = map[string]bool{"uri": true, "url": true, "iri": true, "uri-reference": true, "iri-reference": true, "uri-template": true}

// Argument names, split into words (camelCase, snake_case, kebab-case),
// whose last word marks a path or a URL.
var (
	pathWords = map[string]bool{
		"path": true, "paths": true, "file": true, "files": true, "filename": true, "filenames": true, "filepath": true,
		"dir": true, "dirs": true, "directory": true, "directories": true, "folder": true, "folders": true,
		"cwd": true, "workdir": true,
	}
	urlWords = map[string]bool{"url": true, "urls": true, "uri": true, "uris": true, "href": true, "endpoint": true, "link": true, "links": true, "website": true}

	// Descriptions that say the value is a path or a URL.
	pathDesc = regexp.MustCompile(`(?i)\b(absolute|relative|file|directory|folder)\s+(path|name)s?\b|\bpath\s+(to|of)\s+(the\s+|a\s+)?(file|directory|folder)|\b(file ?system|local)\s+path`)
	urlDesc  = regexp.MustCompile(`(?i)\b(url|uri)s?\b|\bhttps?://|\bweb\s+address`)
)

// ArgRoles says which top-level arguments of a tool's input schema are
// paths or URLs, by their JSON Schema format (uri and its kin: a URL), by
// their name (path, file, dir, …; url, uri, endpoint, …, as the last word
// of the name in any case style) and by their description ("file path",
// "path to the directory"; "URL"). Only string arguments and arrays of
// strings count (an argument without a type counts as a string): a
// boolean named "recursive_dir" is not a path. A URL by format wins over a
// path by name; a name over a description. Sorted by name. A schema that
// is not a JSON object gives none.
func ArgRoles(schema json.RawMessage) []ArgRole {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []ArgRole
	for name, raw := range s.Properties {
		var p propSchema
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		array := false
		if p.is("array") && p.Items != nil {
			array = true
			if p.Description == "" {
				p.Items.Description = ""
			} else {
				p.Items.Description = p.Description + " " + p.Items.Description
			}
			p = *p.Items
		}
		if !p.is("string") {
			continue
		}
		if r, why := roleOf(name, p); r != "" {
			out = append(out, ArgRole{Name: name, Role: r, Why: why, Array: array})
		}
	}
	slices.SortFunc(out, func(a, b ArgRole) int { return strings.Compare(a.Name, b.Name) })
	return out
}

type propSchema struct {
	Type        json.RawMessage `json:"type"`
	Format      string          `json:"format"`
	Description string          `json:"description"`
	Items       *propSchema     `json:"items"`
}

// is reports whether the schema's type is, or includes, t; a schema with no
// type is any type.
func (p propSchema) is(t string) bool {
	if len(p.Type) == 0 {
		return true
	}
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return one == t
	}
	var many []string
	if json.Unmarshal(p.Type, &many) == nil {
		return slices.Contains(many, t)
	}
	return false
}

func roleOf(name string, p propSchema) (Role, string) {
	if urlFormats[strings.ToLower(p.Format)] {
		return RoleURL, "format " + p.Format
	}
	words := nameWords(name)
	if len(words) > 0 {
		last := words[len(words)-1]
		switch {
		case urlWords[last]:
			return RoleURL, "name"
		case pathWords[last]:
			return RolePath, "name"
		}
	}
	switch {
	case urlDesc.MatchString(p.Description):
		return RoleURL, "description"
	case pathDesc.MatchString(p.Description):
		return RolePath, "description"
	}
	return "", ""
}

// nameWords splits an argument name into lower-case words: filePath,
// file_path and file-path are all [file path].
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
		case r >= 'A' && r <= 'Z' && i > 0 && (rs[i-1] >= 'a' && rs[i-1] <= 'z' || i+1 < len(rs) && rs[i+1] >= 'a' && rs[i+1] <= 'z' && rs[i-1] >= 'A' && rs[i-1] <= 'Z'):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}
